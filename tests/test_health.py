"""/health/live and /health/ready: what a load balancer routes by (docs/operations.md, Health)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.procfile_server import REPO, ProcfileServer, base_env, free_port


def _get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.django_db
def test_live_answers_without_asking_any_service(client) -> None:
    response = client.get("/health/live")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {}}
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db(transaction=True)
def test_ready_checks_the_database_migrations_services_and_models(client, settings) -> None:
    response = client.get("/health/ready")
    assert response.status_code == 200, response.json()
    expected = {"database", "migrations", "models"} | ({"redis", "broker"} if settings.REDIS_URL else set())
    assert response.json() == {"status": "ok", "checks": {name: "ok" for name in expected}}


@pytest.mark.django_db(transaction=True)
def test_a_process_still_loading_its_models_is_not_ready(client, monkeypatch) -> None:
    from foolgame import serving

    monkeypatch.setattr(serving, "_warm_state", "warming")
    response = client.get("/health/ready")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
    assert response.json()["checks"]["models"] == "the models are still loading"
    assert response.json()["checks"]["database"] == "ok"
    assert client.get("/health/live").status_code == 200
    monkeypatch.setattr(serving, "_warm_state", "warm")
    assert client.get("/health/ready").status_code == 200


@pytest.mark.slow
def test_a_web_host_whose_database_is_gone_is_not_ready_and_says_no_secret(tmp_path: Path) -> None:
    """The Procfile's web line on a PostgreSQL address where nothing listens: alive, not ready,
    and the answer names neither the host nor the user nor the password."""
    url = f"postgres://fm2user:hunter2secret@127.0.0.1:{free_port()}/fm2gone"
    server = ProcfileServer(base_env(FM2_DATA_DIR=str(tmp_path), DATABASE_URL=url, WEB_CONCURRENCY="1", DB_POOL_TIMEOUT="1",
                                     FM2_WARM_MODELS="false"),
                            log=tmp_path / "server.log")
    server.start()
    try:
        assert _get(f"{server.base}/health/live") == (200, {"status": "ok", "checks": {}})
        status, body = _get(f"{server.base}/health/ready")
        assert status == 503 and body["status"] == "unavailable", body
        assert body["checks"]["database"] != "ok" and body["checks"]["migrations"] != "ok"
        text = json.dumps(body)
        for secret in ("hunter2secret", "fm2user", "127.0.0.1", "fm2gone"):
            assert secret not in text
    finally:
        server.stop()


@pytest.mark.slow
def test_a_web_host_started_before_migrate_turns_ready_once_migrated(tmp_path: Path) -> None:
    """A fresh SQLite database, no migration applied: not ready (the release step has not run);
    after ``migrate``, ready, without a restart."""
    env = base_env(FM2_DATA_DIR=str(tmp_path), WEB_CONCURRENCY="1", FM2_WARM_MODELS="false")
    server = ProcfileServer(env, log=tmp_path / "server.log")
    server.start()
    try:
        status, body = _get(f"{server.base}/health/ready")
        assert status == 503, body
        assert body["checks"]["migrations"].endswith("migrations not applied")
        subprocess.run([sys.executable, "manage.py", "migrate", "--no-input"], cwd=REPO, env=env, check=True, capture_output=True, timeout=600)
        status, body = _get(f"{server.base}/health/ready")
        assert (status, body["status"]) == (200, "ok"), body
    finally:
        server.stop()


@pytest.mark.django_db(transaction=True)
def test_a_process_that_lost_redis_is_not_ready(client, settings) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    response = client.get("/health/ready")
    assert response.status_code == 503
    assert response.json()["checks"]["redis"] == "Redis does not answer"
    assert response.json()["checks"]["database"] == "ok"


def test_production_does_not_redirect_the_probes_to_https() -> None:
    """A balancer probes the web port over plain HTTP: SECURE_SSL_REDIRECT must not answer 301."""
    env = base_env(DJANGO_ENV="production", SECRET_KEY="x" * 60, ALLOWED_HOSTS="fm2.example.org")
    code = "from django.conf import settings; import re; print(all(any(re.search(p, path) for p in settings.SECURE_REDIRECT_EXEMPT) for path in ('health/live', 'health/ready', 'metrics')))"
    out = subprocess.run([sys.executable, "-c", f"import django; django.setup(); {code}"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr[-2000:]
