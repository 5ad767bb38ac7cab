"""The socket and REST benches print each figure beside their floors, with the game's ratio to
each, and judge a target against the committing floor; run small on PostgreSQL and Redis,
their committing floors' rows are counted in the database."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def bench(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def figures(**values: float) -> dict:
    return {"cpu_percent": {"server": 10.0}, **values}


def test_the_socket_table_has_both_floors_and_the_ratio_to_each_and_judges_the_committing_one(tmp_path, capsys) -> None:
    rounds = bench("bench_rounds_ws")
    record = rounds.Record("bench_rounds_ws", tmp_path / "run.jsonl")
    game = figures(vote_ack_ms_p99=16.0, vote_ack_ms_p50=7.0, tick_lateness_ms_p99=4.0)
    floors = {"floor_commit": figures(vote_ack_ms_p99=4.0, vote_ack_ms_p50=2.0, tick_lateness_ms_p99=1.0),
              "floor_bare": figures(vote_ack_ms_p99=0.8, vote_ack_ms_p50=0.5, tick_lateness_ms_p99=1.0)}
    ratios = rounds.report(record, "3 rounds postgresql", game, floors, rounds.COMPARED, {}, rounds.ENOUGH)
    rounds.record_cpu(record, "3 rounds postgresql", game, floors)
    printed = capsys.readouterr().out
    head, *lines = [line for line in printed.splitlines() if line.strip()]
    assert ["committing", "no-database", "game", "/committing", "/no-database"] == [c for c in head.split()[4:9]]
    p99 = next(line for line in lines if "vote_ack_ms_p99" in line).split()
    assert p99[1:6] == ["4.0", "0.8", "16.0", "4.0x", "20.0x"] and p99[-1] == "ok"  # 4x the committing floor: held
    p50 = next(line for line in lines if "vote_ack_ms_p50" in line)
    assert "3.5x" in p50 and "14.0x" in p50 and p50.endswith("MISSED")  # over 3x the committing floor
    assert next(line for line in lines if "tick_lateness_ms_p99" in line).endswith("ok")  # 4x, but under 5 ms
    assert ratios["floor_commit"]["vote_ack_ms_p99"] == 4.0 and ratios["floor_bare"]["vote_ack_ms_p99"] == 20.0
    recorded = {line["figure"]: line for line in map(json.loads, (tmp_path / "run.jsonl").read_text().splitlines())}
    assert recorded["vote_ack_ms_p99"]["floor"] == 4.0 and recorded["vote_ack_ms_p99"]["ratio"] == 4.0
    assert recorded["vote_ack_ms_p99"]["floors"] == {"committing": 4.0, "no-database": 0.8}
    assert recorded["vote_ack_ms_p99"]["ratios"] == {"committing": 4.0, "no-database": 20.0}
    assert recorded["cpu_percent_server"]["floors"] == {"committing": 10.0, "no-database": 10.0}


def test_the_rest_table_has_the_floor_and_the_ratio_and_judges_throughput_and_p99(tmp_path, capsys) -> None:
    rest = bench("bench_rest_pool")
    record = rest.Record("bench_rest_pool", tmp_path / "run.jsonl")
    game = {"requests_per_s": 40.0, "latency_ms_p50": 30.0, "latency_ms_p95": 60.0, "latency_ms_p99": 90.0, "web_cpu_ms_per_request": 12.0}
    floor = {"requests_per_s": 100.0, "latency_ms_p50": 10.0, "latency_ms_p95": 20.0, "latency_ms_p99": 30.0, "web_cpu_ms_per_request": 3.0}
    rest.report(record, "5 clients", game, floor)
    lines = capsys.readouterr().out.splitlines()
    assert "REST floor" in lines[1] and "game/floor" in lines[1]
    throughput = next(line for line in lines if "requests_per_s" in line)
    assert "0.4x" in throughput and throughput.endswith(">= 0.5x floor MISSED")
    p99 = next(line for line in lines if "latency_ms_p99" in line)
    assert "3.0x" in p99 and p99.endswith("<= 3x floor ok")
    assert "4.0x" in next(line for line in lines if "web_cpu_ms_per_request" in line)


def services_urls() -> tuple[str, str]:
    database, redis = os.environ.get("DATABASE_URL", ""), os.environ.get("REDIS_URL", "")
    if not (database.startswith("postgres") and redis):
        if os.environ.get("FM2_REQUIRE_SERVICES"):
            pytest.fail("FM2_REQUIRE_SERVICES is set but DATABASE_URL is not PostgreSQL or REDIS_URL is unset")
        pytest.skip("the benches' floors are run on PostgreSQL and Redis (set DATABASE_URL and REDIS_URL)")
    return database, redis


def run_bench(name: str, *args: str) -> str:
    database, redis = services_urls()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, f"bench/{name}.py", *args, "--database-url", database, "--redis-url", redis], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


@pytest.mark.services
def test_a_small_rounds_run_counts_the_committing_floors_rows_and_prints_both_floors() -> None:
    out = run_bench("bench_rounds_ws", "--rounds", "3", "--warmup", "2", "--seconds", "1", "--vote-window", "1")
    assert "committing floor (postgresql): 5 vote rows committed and counted in the database" in out  # 2 warm-up rounds + 3
    assert "/committing" in out and "/no-database" in out
    assert "<= 4x committing floor" in next(line for line in out.splitlines() if "vote_ack_ms_p99" in line)


@pytest.mark.services
def test_a_small_rest_run_counts_the_rest_floors_rows_and_prints_it_beside_the_game() -> None:
    out = run_bench("bench_rest_pool", "--clients", "3", "--seconds", "2")
    rows = next(line for line in out.splitlines() if line.startswith("REST floor (postgresql):"))
    floor_requests = json.loads(next(line for line in out.splitlines() if line.startswith("{")))["floor"]["requests"]
    assert f"{floor_requests} request rows committed" in rows and floor_requests > 0
    assert "game/floor" in out and ">= 0.5x floor" in next(line for line in out.splitlines() if "requests_per_s " in line)
