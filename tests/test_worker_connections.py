"""A Celery worker keeps its PostgreSQL connection from one task to the next.

Celery's Django fixup closed every connection before and after each task, and with the
psycopg pool the whole pool: each task opened a new connection (a PostgreSQL server process
forked for it), a fifth of the worker's time on the rooms benchmark. Now the task's
connection goes back to the pool (``foolgame.celery``), which keeps it open. The Procfile's
worker line runs against this test's own redis-server and the test database; its connections
are told apart by their ``application_name``.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
from django.db import connection

from foolgame.celery import app
from tests.core.test_events_redis_restart import RedisServer, free_port
from tests.procfile_server import base_env, current_database_url
from tests.test_worker_redis_restart import WAIT_SECONDS, log_tails, start, stop
from tests.waiting import wait_for

pytestmark = [
    pytest.mark.services,
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server (apt-get install redis-server)"),
    pytest.mark.usefixtures("postgresql_only"),
]


def worker_backends(name: str) -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", [name])
        return {pid for (pid,) in cursor.fetchall()}


def test_a_worker_runs_its_tasks_on_one_kept_connection(tmp_path: Path) -> None:
    redis_server = RedisServer(free_port())
    redis_server.start()
    broker_url = f"redis://127.0.0.1:{redis_server.port}/0"
    name = f"fm2-worker-{uuid.uuid4().hex[:8]}"
    env = base_env(
        DATABASE_URL=current_database_url(f"application_name={name}"),
        REDIS_URL=broker_url,
        CONN_MAX_AGE="0",
        CELERY_CONCURRENCY="1",  # one child: every task on the same process
    )
    log = tmp_path / "worker.log"
    worker = start("worker", env, log)
    try:
        wait_for(lambda: " ready." in log.read_text(errors="replace"), what="the worker to start", seconds=WAIT_SECONDS, explain=log_tails(log))
        seen = []
        for n in range(1, 4):
            with app.connection_for_write(broker_url) as broker:
                app.send_task("foolgame.voting.tasks.sweep_rounds", connection=broker)
            wait_for(lambda: log.read_text(errors="replace").count("succeeded") >= n, what=f"task {n} to run", seconds=WAIT_SECONDS, explain=log_tails(log))
            seen.append(worker_backends(name))
        assert seen[0], "the task's connection is kept open in the worker's pool"
        assert seen[0] == seen[1] == seen[2], f"one connection for every task, not a new one each: {seen}"
        assert len(seen[0]) <= 2, "no more than the Procfile's pool size"
    finally:
        stop(worker)
        redis_server.stop()
