# fm2: one command to play, one to test. Both create .venv/ when it is missing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
HOST   ?= 127.0.0.1
PORT   ?= 8000

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: run test setup setup-test migrate demo indexes verifier serve worker beat bench typecheck clean

## run: install, migrate, load the demo data into an empty database, encode its sentences, train the model in the loop, serve on http://127.0.0.1:8000
run: setup migrate demo indexes verifier serve

## test: install with the test extras and run the whole suite
test: setup-test
	$(PY) -m pytest

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

# axe-core for the accessibility browser tests (package.json), when npm is here: without it
# those tests skip and say why. npm ci writes node_modules/.package-lock.json last.
node_modules/.package-lock.json: package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then npm ci --no-audit --no-fund; \
	else echo "npm is not on the PATH: the accessibility tests (axe-core) will skip"; fi

setup: $(VENV)/.installed
setup-test: $(VENV)/.installed-test node_modules/.package-lock.json

migrate: setup
	$(PY) manage.py migrate --no-input

demo: setup
	$(PY) manage.py load_demo

# Eager tasks (no Redis) do not encode during imports: encode what is missing here, once
# (about 10 s for the demo's 1,365 sentences, 20 s on a machine that has never exported
# the model to ONNX; a re-run checks and encodes nothing in about a second).
indexes: setup
	$(PY) manage.py build_indexes --all

# The first verifier version, from the demo's claims (a few seconds; a re-run finds nothing due).
verifier: setup
	$(PY) manage.py verifier train --if-due

serve: setup
	@echo "fm2 is serving on http://$(HOST):$(PORT)/ (Ctrl-C stops it)"
	$(VENV)/bin/uvicorn foolgame.asgi:application --host $(HOST) --port $(PORT) --forwarded-allow-ips "$${FORWARDED_ALLOW_IPS:-}" --lifespan off --ws websockets-sansio --ws-per-message-deflate false --ws-max-size $${FM2_WS_MAX_FRAME_BYTES:-4096} --timeout-graceful-shutdown $${WEB_SHUTDOWN_TIMEOUT:-20}

worker: setup
	$(VENV)/bin/celery -A foolgame worker --loglevel INFO

beat: setup
	$(VENV)/bin/celery -A foolgame beat --loglevel INFO

## bench: the benchmarks (SLOW=1: the slow ones too), their figures written to docs/performance.md
## (BENCH_DATABASE_URL / BENCH_REDIS_URL: PostgreSQL and Redis for every bench that takes them; ONLY=bench_a,bench_b;
## RUNS=N: every bench N times, its figures the median; default 3 for the socket and REST benches, 1 for the others)
SLOW ?=
ONLY ?=
RUNS ?=
BENCH_DATABASE_URL ?=
BENCH_REDIS_URL ?=
bench: $(VENV)/.installed-test
	$(PY) bench/run_all.py $(if $(SLOW),--slow) $(if $(BENCH_DATABASE_URL),--database-url $(BENCH_DATABASE_URL)) $(if $(BENCH_REDIS_URL),--redis-url $(BENCH_REDIS_URL)) $(if $(ONLY),--only $(ONLY)) $(if $(RUNS),--runs $(RUNS))

typecheck: setup-test
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache .mypy_cache node_modules
