"""Export jobs survive a worker crash: heartbeat, takeover of a stale job, never of a live one,
a failure with a reason after the last attempt, and the reaper that does not wait an hour."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from foolgame.dataset import jobs
from foolgame.dataset.models import Export
from foolgame.dataset.services import export_job_run, export_jobs_reap
from tests.concurrency import race_results
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

STALE = 300


@pytest.fixture(autouse=True)
def jobs_settings(settings, tmp_path):
    settings.EXPORTS_DIR = tmp_path / "exports"
    settings.FM2_JOBS = {**settings.FM2_JOBS, "EXPORT_STALE_SECONDS": STALE, "EXPORT_MAX_ATTEMPTS": 3, "TEST_EXPORT_PROGRESS_DELAY": 0.0}


def running(*, beat_seconds_ago: float | None, attempts: int = 1, owner: str = "dead-worker:1:abc") -> Export:
    """An export some worker started; its heartbeat is as old as asked (None: never beat)."""
    export = Export.objects.create(options={"seed": 1})
    beat = None if beat_seconds_ago is None else timezone.now() - timedelta(seconds=beat_seconds_ago)
    Export.objects.filter(pk=export.pk).update(
        status=Export.Status.RUNNING, attempts=attempts, owner=owner, heartbeat_at=beat, started_at=beat, stage="claims", progress=0.3
    )
    return Export.objects.get(pk=export.pk)


def test_a_live_export_is_never_taken_over_by_a_second_delivery(world) -> None:
    export = running(beat_seconds_ago=10)
    assert export_job_run(export_id=export.pk) is False
    export.refresh_from_db()
    assert (export.status, export.owner, export.attempts, export.stage) == (Export.Status.RUNNING, "dead-worker:1:abc", 1, "claims")


def test_a_stale_running_export_is_taken_over_and_finishes_from_a_clean_folder(world) -> None:
    export = running(beat_seconds_ago=STALE + 60)
    export.directory.mkdir(parents=True)
    (export.directory / "train.jsonl").write_text('{"half": "writ', encoding="utf-8")
    (export.directory / "leftover.tmp").write_text("x", encoding="utf-8")
    assert export_job_run(export_id=export.pk) is True
    export.refresh_from_db()
    assert (export.status, export.attempts, export.error) == (Export.Status.DONE, 2, "")
    assert export.owner != "dead-worker:1:abc" and export.heartbeat_at is not None
    names = {f["name"] for f in export.files}
    assert "train.jsonl" in names
    assert sorted(p.name for p in export.directory.iterdir()) == sorted(names)  # no leftover, no half file
    assert '"half"' not in (export.directory / "train.jsonl").read_text(encoding="utf-8")
    assert [p.name for p in export.directory.parent.iterdir()] == [export.directory.name]  # no attempt folder left


def test_a_running_export_that_never_beat_is_stale(world) -> None:
    export = running(beat_seconds_ago=None)
    assert export_job_run(export_id=export.pk) is True
    assert Export.objects.get(pk=export.pk).status == Export.Status.DONE


def test_an_export_whose_worker_died_on_the_last_attempt_fails_with_a_reason(world) -> None:
    export = running(beat_seconds_ago=STALE + 60, attempts=3)
    assert export_job_run(export_id=export.pk) is False
    export.refresh_from_db()
    assert export.status == Export.Status.FAILED
    assert export.error == "The worker running this export stopped (attempt 3 of 3)."
    assert export.finished_at is not None


def test_the_run_that_lost_the_job_stops_writing(world, monkeypatch) -> None:
    export = Export.objects.create(options={"seed": 1})
    real = jobs.dataset_export

    def taken_over_meanwhile(**kwargs):
        # Another delivery takes the job over while this run is at work.
        Export.objects.filter(pk=export.pk).update(owner="newer-worker:2:def", heartbeat_at=timezone.now())
        return real(**kwargs)

    monkeypatch.setattr(jobs, "dataset_export", taken_over_meanwhile)
    assert export_job_run(export_id=export.pk) is False
    export.refresh_from_db()
    assert (export.status, export.owner, export.files) == (Export.Status.RUNNING, "newer-worker:2:def", [])
    assert not export.directory.parent.exists() or not any(export.directory.parent.iterdir())


def test_a_run_that_lost_the_job_at_the_end_does_not_publish_its_files(world, monkeypatch) -> None:
    export = Export.objects.create(options={"seed": 1})
    real = jobs.dataset_export

    def taken_over_after_the_last_report(**kwargs):
        result = real(**kwargs)
        Export.objects.filter(pk=export.pk).update(owner="newer-worker:2:def")
        return result

    monkeypatch.setattr(jobs, "dataset_export", taken_over_after_the_last_report)
    assert export_job_run(export_id=export.pk) is False
    export.refresh_from_db()
    assert (export.status, export.files) == (Export.Status.RUNNING, [])
    assert not export.directory.exists()


def test_the_reaper_recovers_stale_and_lost_exports_and_fails_spent_ones(world) -> None:
    live = running(beat_seconds_ago=5)
    stale = running(beat_seconds_ago=STALE + 1)
    spent = running(beat_seconds_ago=STALE + 1, attempts=3)
    lost = Export.objects.create(options={"seed": 2})
    Export.objects.filter(pk=lost.pk).update(created=timezone.now() - timedelta(seconds=STALE + 1))
    fresh_pending = Export.objects.create(options={"seed": 3})
    done = running(beat_seconds_ago=STALE + 1)
    Export.objects.filter(pk=done.pk).update(status=Export.Status.DONE)

    # Tests run tasks in-process, so the re-queued exports run here and now.
    assert export_jobs_reap() == {"requeued": 2, "failed": 1}
    status = dict(Export.objects.values_list("pk", "status"))
    assert status == {
        live.pk: "running", stale.pk: "done", spent.pk: "failed", lost.pk: "done", fresh_pending.pk: "pending", done.pk: "done"
    }
    assert Export.objects.get(pk=spent.pk).error == "The worker running this export stopped (attempt 3 of 3)."
    # Idempotent: a second sweep (or a second beat instance) finds nothing left to do.
    assert export_jobs_reap() == {"requeued": 0, "failed": 0}


def test_the_reaper_takes_back_at_once_an_export_whose_worker_on_this_host_is_gone(world) -> None:
    import os
    import socket
    import subprocess
    import sys

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead_pid = int(gone.stdout)
    host = socket.gethostname()
    crashed_here = running(beat_seconds_ago=5, owner=f"{host}:{dead_pid}:abc")
    alive_here = running(beat_seconds_ago=5, owner=f"{host}:{os.getppid()}:def")
    elsewhere = running(beat_seconds_ago=5, owner=f"another-{host}:{dead_pid}:ghi")

    assert export_jobs_reap() == {"requeued": 1, "failed": 0}
    status = dict(Export.objects.values_list("pk", "status"))
    # The crashed worker's export ran again here and now (tasks run in-process); a live
    # process's, and another host's (whose processes cannot be looked at), wait for silence.
    assert status == {crashed_here.pk: "done", alive_here.pk: "running", elsewhere.pk: "running"}
    assert Export.objects.get(pk=crashed_here.pk).attempts == 2


def test_a_worker_sweeps_the_exports_as_it_starts() -> None:
    from celery import signals

    from foolgame import celery as worker_app

    assert worker_app._reap_exports_at_start in [ref() for _, ref in signals.worker_ready.receivers]


def test_the_reaper_is_a_periodic_task(settings) -> None:
    from foolgame.dataset.tasks import reap_stale_exports

    schedule = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert reap_stale_exports.name in schedule


def test_a_live_export_reports_its_heartbeat_and_attempts(world) -> None:
    researcher = UserFactory(username="rita")
    researcher.groups.add(Group.objects.get_or_create(name="researchers")[0])
    client = APIClient()
    client.force_authenticate(researcher)
    spent = running(beat_seconds_ago=STALE + 1, attempts=3)
    export_jobs_reap()
    detail = client.get(reverse("export-detail", args=[spent.pk])).json()
    assert (detail["status"], detail["attempts"], detail["max_attempts"]) == ("failed", 3, 3)
    assert detail["error"] == "The worker running this export stopped (attempt 3 of 3)."
    assert detail["heartbeat_at"] is not None
    assert "owner" not in detail  # the worker's host and pid stay inside


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("postgresql_only")
def test_two_deliveries_at_once_run_the_export_once(world) -> None:
    export = Export.objects.create(options={"seed": 1})
    results = race_results(2, lambda: export_job_run(export_id=export.pk))
    assert sorted(results) == [False, True]
    export.refresh_from_db()
    assert (export.status, export.attempts) == (Export.Status.DONE, 1)
