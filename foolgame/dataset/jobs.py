"""Background exports: the job a worker runs for a researcher (take the export, report its
heartbeat and progress, publish its files) and the sweep that recovers jobs whose worker died.

Below :mod:`foolgame.dataset.tasks`, which runs these; the services that queue a task
(:mod:`foolgame.dataset.services`) sit above both.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from foolgame.dataset import certify
from foolgame.dataset.models import Export
from foolgame.dataset.records import BASELINE_MAX_CLAIMS, FORMATS, ExportError, ExportOptions
from foolgame.dataset.release import dataset_export
from foolgame.dataset.splits import parse_proportions
from foolgame.dataset.storage import export_discard, export_publish, export_sweep, export_upload

logger = logging.getLogger(__name__)

# Share of the job's progress bar each stage takes (the claims dominate).
STAGE_SPAN = {
    "plan": (0.0, 0.02), "claims": (0.02, 0.6), "votes": (0.6, 0.72), "stats": (0.72, 0.75), "model": (0.75, 0.85),
    "artifacts": (0.85, 0.95), "certify": (0.95, 0.98), "card": (0.98, 1.0),
}


def export_options_from(data: dict[str, Any]) -> ExportOptions:
    """ExportOptions from an Export's stored options (the API's validated request)."""
    return ExportOptions(
        seed=int(data.get("seed", 0)),
        splits=parse_proportions(str(data.get("splits", "0.8,0.1,0.1"))),
        exclusive_test_authors=frozenset(data.get("exclusive_test_authors") or ()),
        include_removed=bool(data.get("include_removed", False)),
        resplit_release=bool(data.get("resplit_release", False)),
        formats=tuple(data.get("formats") or FORMATS),
        baseline_max_claims=int(data.get("baseline_max_claims", BASELINE_MAX_CLAIMS)),
        certify=bool(data.get("certify", False)),
    )

def _jobs(name: str) -> Any:
    return settings.FM2_JOBS[name]


def _stale_before(now: datetime) -> datetime:
    return now - timedelta(seconds=_jobs("EXPORT_STALE_SECONDS"))


def _stale_running(now: datetime) -> Q:
    """A running export nobody has heard from for the stale timeout (its worker died)."""
    return Q(status=Export.Status.RUNNING) & (Q(heartbeat_at__lt=_stale_before(now)) | Q(heartbeat_at__isnull=True))


def _stopped_message(attempts: int) -> str:
    return f"The worker running this export stopped (attempt {attempts} of {_jobs('EXPORT_MAX_ATTEMPTS')})."


class ExportSuperseded(Exception):
    """This run no longer holds the export (another delivery took it over): stop writing."""


class _JobProgress:
    """Writes the job's progress and heartbeat to its row, at most every EXPORT_HEARTBEAT_SECONDS
    within a stage (and at every stage change), only while this run still owns the job."""

    def __init__(self, export_id: int, owner: str) -> None:
        self.export_id = export_id
        self.owner = owner
        self.last = (None, 0.0)
        self.interval = float(_jobs("EXPORT_HEARTBEAT_SECONDS"))
        self.delay = float(_jobs("TEST_EXPORT_PROGRESS_DELAY"))  # test-only knob, 0 in production

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.delay:
            time.sleep(self.delay)
        start, end = STAGE_SPAN.get(stage, (0.0, 1.0))
        value = start + (end - start) * (done / total if total else 1.0)
        now = time.monotonic()
        if stage == self.last[0] and now - self.last[1] < self.interval:
            return
        self.last = (stage, now)
        beat = Export.objects.filter(pk=self.export_id, status=Export.Status.RUNNING, owner=self.owner).update(
            stage=stage, progress=round(value, 4), heartbeat_at=timezone.now()
        )
        if not beat:
            raise ExportSuperseded(f"export {self.export_id} is no longer held by {self.owner}")


def _export_take(export_id: int, owner: str) -> Export | None:
    """Claim the export for this run: a pending one, or a running one whose heartbeat is stale.

    One conditional UPDATE, so two deliveries at once cannot both win (the loser's WHERE no
    longer matches once the winner's row is committed). A stale export whose attempts are used
    up is failed instead, with a reason the researcher can read.
    """
    now = timezone.now()
    takeable = Q(status=Export.Status.PENDING) | _stale_running(now)
    taken = Export.objects.filter(takeable, pk=export_id, attempts__lt=_jobs("EXPORT_MAX_ATTEMPTS")).update(
        status=Export.Status.RUNNING, owner=owner, attempts=F("attempts") + 1, heartbeat_at=now,
        started_at=now, stage="", progress=0.0, error="", files=[], split_summary=None, quality=None,
    )
    if taken:
        return Export.objects.get(pk=export_id)
    _export_fail_exhausted(now=now, pk=export_id)
    return None


def _export_fail_exhausted(*, now: datetime, pk: int | None = None) -> int:
    """Fail the stale running exports that have used up their attempts; returns how many."""
    rows = Export.objects.filter(_stale_running(now), attempts__gte=_jobs("EXPORT_MAX_ATTEMPTS"))
    if pk is not None:
        rows = rows.filter(pk=pk)
    failed = 0
    for row_pk, attempts in rows.values_list("pk", "attempts"):
        failed += Export.objects.filter(_stale_running(now), pk=row_pk, attempts=attempts).update(
            status=Export.Status.FAILED, error=_stopped_message(attempts), finished_at=now
        )
    return failed


def _export_finish(export_id: int, owner: str, **fields: Any) -> bool:
    """Record the end of this run, only if it still holds the export."""
    return bool(
        Export.objects.filter(pk=export_id, status=Export.Status.RUNNING, owner=owner).update(
            finished_at=timezone.now(), heartbeat_at=timezone.now(), **fields
        )
    )


def export_job_run(*, export_id: int) -> bool:
    """Run a queued export, or take over one whose worker died; otherwise do nothing.

    A second delivery of a live job finds it running with a fresh heartbeat and stops; a
    delivery of a job whose heartbeat is stale takes it over (see :func:`_export_take`) and
    starts again from an empty folder. Each run writes into its own folder, moved into place
    only when the run still owns the job, so a half-written file never survives; a run that
    loses the job stops at its next progress report.
    """
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"[:100]
    export = _export_take(export_id, owner)
    if export is None:
        return False
    out_dir = export.directory
    work_dir = out_dir.with_name(f"{out_dir.name}.attempt-{export.attempts}")
    try:
        # Folders of earlier runs (a killed worker leaves its half-written one) and this one's.
        for stale_dir in out_dir.parent.glob(f"{out_dir.name}.attempt-*"):
            shutil.rmtree(stale_dir, ignore_errors=True)
        result = dataset_export(
            out_dir=work_dir, options=export_options_from(export.options), progress=_JobProgress(export.pk, owner)
        )
        # Uploaded (to an object store) before the lock: no transaction waits on the network.
        keys = export_upload(export=export, work_dir=work_dir, names=result.files)
        files = [{"name": name, "size": (work_dir / name).stat().st_size, "key": keys[name]} for name in result.files]
        with transaction.atomic():
            # The row lock keeps a takeover out between the ownership check and the move.
            if not Export.objects.select_for_update().filter(pk=export.pk, status=Export.Status.RUNNING, owner=owner).exists():
                raise ExportSuperseded(f"export {export.pk} was taken over before it finished")
            export_publish(export=export, work_dir=work_dir)
            _export_finish(
                export.pk, owner, status=Export.Status.DONE, stage="done", progress=1.0, files=files,
                split_summary=result.stats["split_summary"],
                quality=result.quality and certify.quality_summary(result.quality),
            )
    except ExportSuperseded:
        logger.warning("export %s: run %s lost the job to another delivery and stopped", export.pk, owner)
        shutil.rmtree(work_dir, ignore_errors=True)
        export_discard(export=export)
        return False
    except Exception as error:
        logger.exception("export %s failed", export.pk)
        shutil.rmtree(work_dir, ignore_errors=True)
        export_discard(export=export)
        message = str(error) if isinstance(error, ExportError) else f"{type(error).__name__}: {error}"
        _export_finish(export.pk, owner, status=Export.Status.FAILED, error=message)
        return False
    try:  # earlier runs' uploads; the export is done whatever happens here
        export_sweep(export=export, keep=list(keys.values()))
    except Exception:
        logger.warning("export %s: could not delete earlier runs' files from the store", export.pk, exc_info=True)
    return True


def _owner_dead_here(owner: str) -> bool:
    """Is ``owner`` (``host:pid:run``, as :func:`export_job_run` names itself) a process of this
    host that no longer exists? Only this host's processes can be looked at; any other
    owner, or one that cannot be read, counts as alive (its heartbeat decides)."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's (PermissionError), or nothing to tell
        return False
    return False


def _release_dead_local_owners() -> int:
    """Mark stale at once the running exports whose worker was a process of this host that
    has died (a crash, an OOM kill, a restart of the worker): a reaper or a worker coming up
    on that host takes them over now rather than after ``EXPORT_STALE_SECONDS`` of silence.
    The update is conditional on the owner, so a run that took the job meanwhile keeps it."""
    released = 0
    host_prefix = f"{socket.gethostname()}:"
    rows = Export.objects.filter(status=Export.Status.RUNNING, owner__startswith=host_prefix).values_list("pk", "owner")
    for pk, owner in rows:
        if _owner_dead_here(owner):
            released += Export.objects.filter(pk=pk, status=Export.Status.RUNNING, owner=owner).update(heartbeat_at=None)
            logger.warning("export %s: its worker %s is gone from this host; releasing it now", pk, owner)
    return released


def export_jobs_reap(*, requeue: Callable[[int], Any]) -> dict[str, int]:
    """Recover exports whose worker died, without waiting for the broker's redelivery.

    Stale running exports with attempts left, and pending ones whose task seems lost (pending
    for longer than the stale timeout), are queued again with ``requeue(export_id)`` (the
    task's ``delay``): the task's conditional takeover makes a duplicate harmless, so two
    reapers at once are safe. Stale ones with no attempts left are failed with a reason.
    A running export whose worker was a process of this host that no longer exists is stale
    at once (:func:`_release_dead_local_owners`); each worker also runs this sweep as it
    starts, so a worker restarted after a crash takes its exports back within seconds.
    """
    _release_dead_local_owners()
    now = timezone.now()
    failed = _export_fail_exhausted(now=now)
    lost = Q(status=Export.Status.PENDING, created__lt=_stale_before(now))
    stale = _stale_running(now) & Q(attempts__lt=_jobs("EXPORT_MAX_ATTEMPTS"))
    ids = list(Export.objects.filter(lost | stale).order_by("pk").values_list("pk", flat=True))
    for export_id in ids:
        logger.warning("export %s looks abandoned: queueing it again", export_id)
        requeue(export_id)
    return {"requeued": len(ids), "failed": failed}
