"""The Celery worker and beat outlive a Redis restart (issue 24, item 7).

The Procfile's ``worker`` and ``beat`` lines run as subprocesses against a redis-server of
this test's own and the test database (PostgreSQL). Redis is killed (-9) while the worker
runs an export, then started again on the same port; with nobody touching the worker or
beat, an export queued afterwards finishes and a periodic job (the reaper, which re-queues
an export whose task was lost) runs. Before the fix the worker died at the kill with
"Unrecoverable error: AttributeError('NoneType' object has no attribute 'hostname')".
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from foolgame.celery import app
from foolgame.dataset.models import Export
from foolgame.dataset.services import export_request, researcher_set
from foolgame.dataset.tasks import run_export
from tests.factories import UserFactory
from tests.procfile_server import REPO, base_env, procfile_command, current_database_url
from tests.core.test_events_redis_restart import RedisServer, free_port
from tests.waiting import wait_for

pytestmark = [
    pytest.mark.services,
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server (apt-get install redis-server)"),
    pytest.mark.usefixtures("postgresql_only"),
]

STALE_SECONDS = 3  # the worker's FM2_EXPORT_STALE_SECONDS: a pending export older than this is re-queued
WAIT_SECONDS = 90


def log_tails(*logs: Path) -> Callable[[], str]:
    """What a failed wait shows: the end of each process's log."""
    return lambda: "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-4000:]}" for log in logs if log.exists())


def start(role: str, env: dict[str, str], log: Path, *extra: str) -> subprocess.Popen:
    """The Procfile's line for ``role`` (its ``celery`` the venv's), in a session of its own."""
    command = procfile_command(role).replace("celery -A", f"{shlex.quote(sys.executable)} -m celery -A", 1)
    command = " ".join([command, *map(shlex.quote, extra)])
    with log.open("ab") as out:
        return subprocess.Popen(["bash", "-c", command], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()  # a warm shutdown (bash execs the Procfile's command)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@contextmanager
def exports_queued_on(broker_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The export service's ``run_export`` (sent after the commit by ``core.events``) goes to
    ``broker_url`` (the suite otherwise runs tasks in-process), on a connection of its own."""
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = False
    try:
        with app.connection_for_write(broker_url) as broker, monkeypatch.context() as patch:
            send = run_export.apply_async
            patch.setattr(run_export, "apply_async", lambda args=None, kwargs=None, **options: send(args, kwargs, connection=broker, **options))
            yield
    finally:
        app.conf.task_always_eager = eager


def status(export: Export) -> str:
    return Export.objects.get(pk=export.pk).status


def test_worker_and_beat_carry_on_after_redis_is_killed_and_restarted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    redis_server = RedisServer(free_port())
    redis_server.start()
    broker_url = f"redis://127.0.0.1:{redis_server.port}/0"
    env = base_env(
        DATABASE_URL=current_database_url(),
        REDIS_URL=broker_url,
        CONN_MAX_AGE="0",
        FM2_EXPORTS_DIR=str(tmp_path / "exports"),
        FM2_EXPORT_STALE_SECONDS=str(STALE_SECONDS),
        # Each export takes a few seconds (a sleep at each progress report), so that one is
        # running, its message unacknowledged, when Redis goes.
        FM2_TEST_EXPORT_PROGRESS_DELAY="0.5",
        FM2_TEST_BEAT_SECONDS="2",
    )
    worker_log, beat_log = tmp_path / "worker.log", tmp_path / "beat.log"
    waits = {"seconds": WAIT_SECONDS, "explain": log_tails(worker_log, beat_log)}
    researcher = UserFactory(username="researcher")
    researcher_set(username=researcher.username)
    worker = start("worker", env, worker_log)
    beat = None
    try:
        wait_for(lambda: " ready." in worker_log.read_text(errors="replace"), what="the worker to start", **waits)
        # Beat starts once the worker is ready, so that no backlog of periodic jobs is waiting.
        beat = start("beat", env, beat_log, "--schedule", str(tmp_path / "beat-schedule"))
        wait_for(lambda: "Sending due task" in beat_log.read_text(errors="replace"), what="beat to send a job", **waits)
        with exports_queued_on(broker_url, monkeypatch):
            before = export_request(user=researcher, seed=1)
        wait_for(lambda: status(before) == Export.Status.RUNNING, what="the worker to start the first export", **waits)

        redis_server.process.kill()  # kill -9, with the export running
        redis_server.process.wait()
        wait_for(lambda: "Connection to broker lost" in worker_log.read_text(errors="replace"), what="the worker to notice", **waits)
        wait_for(lambda: any(failed in beat_log.read_text(errors="replace") for failed in ("Message Error", "beat: Connection error")),
                 what="beat to fail a send", **waits)
        redis_server.start()  # the same port, no data kept

        with exports_queued_on(broker_url, monkeypatch):
            after = export_request(user=researcher, seed=2)
        # A pending export whose task never reached Redis (requested while it was down):
        # only the periodic reaper, sent by beat and run by the worker, can start it.
        lost = Export.objects.create(requested_by=researcher, options={"seed": 3})
        Export.objects.filter(pk=lost.pk).update(created=timezone.now() - timedelta(hours=1))

        for export, what in ((after, "the export queued after the restart"), (lost, "the reaper to run the lost export"),
                             (before, "the export running across the restart")):
            wait_for(lambda: status(export) in (Export.Status.DONE, Export.Status.FAILED), what=f"{what} to finish", **waits)
            assert status(export) == Export.Status.DONE, Export.objects.get(pk=export.pk).error
        assert worker.poll() is None and beat.poll() is None, "the worker or beat exited"
    finally:
        stop(worker)
        if beat is not None:
            stop(beat)
        redis_server.stop()
