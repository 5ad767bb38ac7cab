"""A real Celery worker is SIGKILLed in the middle of an export: the export still ends ``done``.

Services pass only (PostgreSQL and Redis): the test sends the task to the broker itself (the
suite otherwise runs tasks in-process) and runs a real ``celery worker`` subprocess on this
test's database. The worker sleeps at each progress report (``FM2_TEST_EXPORT_PROGRESS_DELAY``,
a test-only knob) so that it can be killed mid-run. With ``--pool solo`` and acks_late the
killed worker's message stays unacknowledged in Redis until the visibility timeout (an hour):
the reaper is what brings the export back within seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from foolgame.celery import app
from foolgame.dataset.models import Export
from foolgame.dataset.services import export_jobs_reap
from foolgame.dataset.tasks import run_export
from tests.procfile_server import current_database_url
from tests.waiting import wait_for

REPO = Path(__file__).resolve().parents[2]
STALE_SECONDS = 3

pytestmark = pytest.mark.skipif(
    not django_settings.REDIS_URL or not os.environ.get("DATABASE_URL"),
    reason="needs the real services (REDIS_URL and a PostgreSQL DATABASE_URL)",
)


@contextmanager
def tasks_go_to_the_broker() -> Iterator[None]:
    app.conf.task_always_eager = False
    try:
        yield
    finally:
        app.conf.task_always_eager = True


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen:
    name = f"crashtest-{uuid.uuid4().hex[:8]}@localhost"
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "foolgame", "worker", "--pool", "solo", "--loglevel", "INFO", "-n", name,
             "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
        )


def stop(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        worker.terminate()
        try:
            worker.wait(timeout=10)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


@pytest.mark.django_db(transaction=True)
def test_an_export_whose_worker_is_killed_mid_run_ends_done(world, settings, tmp_path: Path) -> None:
    import redis

    exports = tmp_path / "exports"
    settings.EXPORTS_DIR = exports
    settings.FM2_JOBS = {**settings.FM2_JOBS, "EXPORT_STALE_SECONDS": STALE_SECONDS, "TEST_EXPORT_PROGRESS_DELAY": 0.0}
    env = {
        **os.environ,
        "DATABASE_URL": current_database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CONN_MAX_AGE": "0",
        "FM2_EXPORTS_DIR": str(exports),
        "FM2_EXPORT_STALE_SECONDS": str(STALE_SECONDS),
        "FM2_TEST_EXPORT_PROGRESS_DELAY": "0.7",
        "CELERY_TASK_ALWAYS_EAGER": "false",
    }
    broker = redis.Redis.from_url(settings.REDIS_URL)
    broker.delete("celery", "unacked", "unacked_index", *broker.scan_iter("celery-task-meta-*"))
    log = tmp_path / "workers.log"
    export = Export.objects.create(options={"seed": 1})
    first = start_worker(env, log)
    second = None
    try:
        with tasks_go_to_the_broker():
            run_export.delay(export.pk)
        wait_for(lambda: Export.objects.filter(pk=export.pk, status="running", stage__in=["claims", "votes", "stats"]).exists(),
                 seconds=120, what="the first worker to get into the export", every=0.2)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        killed = Export.objects.get(pk=export.pk)
        assert (killed.status, killed.attempts) == (Export.Status.RUNNING, 1)

        second = start_worker(env, log)
        # The reaper (a beat task every minute) finds the export once its heartbeat is stale.
        wait_for(lambda: export_jobs_reap_to_broker()["requeued"] == 1, seconds=30, what="the export to look stale", every=0.2)
        wait_for(lambda: Export.objects.get(pk=export.pk).status in ("done", "failed"), seconds=180,
                 what="the second worker to finish the export", every=0.2)
    finally:
        stop(first)
        if second is not None:
            stop(second)
        broker.delete("celery", "unacked", "unacked_index")
    export.refresh_from_db()
    assert (export.status, export.attempts, export.error) == (Export.Status.DONE, 2, ""), log.read_text(errors="replace")[-3000:]
    assert {f["name"] for f in export.files} == {p.name for p in export.directory.iterdir()}
    assert [p.name for p in exports.iterdir()] == [export.directory.name]  # the killed run's folder is gone
    # task_ignore_result: the second worker ran the export to the end and stored no result.
    assert list(broker.scan_iter("celery-task-meta-*")) == []


def export_jobs_reap_to_broker() -> dict[str, int]:
    with tasks_go_to_the_broker():
        return export_jobs_reap()
