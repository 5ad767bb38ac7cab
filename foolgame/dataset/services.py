"""Dataset exports: the one export (command and background job run the same code) and the jobs."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, Group
from django.core.files import File
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from foolgame.core import events
from foolgame.core.errors import ServiceError
from foolgame.dataset import certify, reports
from foolgame.dataset.exporter import write_records
from foolgame.dataset.lean import large_allocations_mapped
from foolgame.dataset.models import Export
from foolgame.dataset.privacy import Pseudonyms, new_salt
from foolgame.dataset.records import BASELINE_MAX_CLAIMS, FORMATS, ExportError, ExportOptions, Progress
from foolgame.dataset.splits import parse_proportions, split_summary
from foolgame.dataset.storage import export_key, export_publish, exports_storage
from foolgame.players.roles import is_researcher
from foolgame.players.services import player_role_set, role_group_ensure

logger = logging.getLogger(__name__)

RESEARCHERS_GROUP = "researchers"
RESEARCHER_PERMISSION = ("dataset", "export_dataset")
# Share of the job's progress bar each stage takes (the claims dominate).
STAGE_SPAN = {
    "plan": (0.0, 0.02), "claims": (0.02, 0.6), "votes": (0.6, 0.72), "stats": (0.72, 0.75), "model": (0.75, 0.85),
    "artifacts": (0.85, 0.95), "certify": (0.95, 0.98), "card": (0.98, 1.0),
}


@dataclass(frozen=True)
class ExportResult:
    out_dir: Path
    files: list[str]
    stats: dict[str, Any]
    artifacts: dict[str, Any]
    quality: dict[str, Any] | None = None
    """``quality.json``'s gates, when the export was certified."""


def researchers_group_ensure() -> Group:
    """The ``researchers`` group with the export permission (migration 0003 makes it; this
    makes it again after a flushed test database, like the moderators group)."""
    return role_group_ensure(name=RESEARCHERS_GROUP, permissions=[RESEARCHER_PERMISSION])


def researcher_set(*, username: str, researcher: bool = True) -> AbstractBaseUser:
    """Add a player to the researchers group (or take them out of it)."""
    return player_role_set(username=username, group=researchers_group_ensure(), member=researcher)


def dataset_export(
    *, out_dir: Path, options: ExportOptions, salt: bytes | None = None, progress: Progress | None = None
) -> ExportResult:
    """Write a whole release into ``out_dir``: claims and votes, statistics, artifacts, card.

    ``salt`` makes the pseudonyms; ``None`` draws a new one, which is never written out.
    Raises :class:`ExportError` on bad options before writing anything.
    """
    report = progress or (lambda stage, done, total: None)
    large_allocations_mapped()
    pseudonyms = Pseudonyms(salt if salt is not None else new_salt())
    summary = write_records(out_dir=out_dir, options=options, pseudonyms=pseudonyms, progress=report)
    assert summary.plan is not None
    report("stats", 0, 1)
    stats = reports.statistics(
        out_dir,
        extra={
            "seed": options.seed,
            "proportions": list(options.splits),
            "votes": summary.votes,
            "rounds_left_out": dict(summary.rounds_left_out),
            "voided_rounds": summary.voided_rounds,
            "removed_left_out": summary.removed_left_out,
            "include_removed": options.include_removed,
            "withheld_exclusive_claims": summary.plan.withheld_exclusive_claims,
            "release_conflict_claims": summary.plan.release_conflict_claims,
            "pages_by_rule": dict(summary.plan.pages_by_rule),
            "test_exclusive_authors": len(options.exclusive_test_authors),
            "resplit_release": options.resplit_release,
            "split_summary": split_summary(
                summary.plan, proportions=options.splits, resplit_release=options.resplit_release
            ),
        },
    )
    report("stats", 1, 1)
    # The model in the loop judges the test split: its own stage, in batches.
    stats["model_in_the_loop"] = reports.model_in_the_loop(
        out_dir, active=summary.active_version, seed=options.seed, max_claims=options.baseline_max_claims, progress=report
    )
    reports.write_json(out_dir / "stats.json", stats)
    (out_dir / "stats.md").write_text(reports.statistics_markdown(stats), encoding="utf-8")
    report("artifacts", 0, 1)
    with (out_dir / "easy_hard.jsonl").open("w", encoding="utf-8") as handle:

        def tag(claim_id: str, split: str, easy: bool) -> None:
            handle.write(json.dumps({"id": claim_id, "split": split, "easy": easy}) + "\n")

        analysis = reports.artifacts(out_dir, seed=options.seed, tag=tag, max_claims=options.baseline_max_claims)
    reports.write_json(out_dir / "artifacts.json", analysis)
    (out_dir / "artifacts.md").write_text(reports.artifacts_markdown(analysis), encoding="utf-8")
    report("artifacts", 1, 1)
    files = [*summary.files, "stats.json", "stats.md", "artifacts.json", "artifacts.md", "easy_hard.jsonl"]
    quality = None
    if options.certify:
        report("certify", 0, 1)
        quality = certify.release_quality(out_dir=out_dir, options=options, stats=stats, artifacts=analysis)
        reports.write_json(out_dir / certify.QUALITY, quality)
        files.append(certify.QUALITY)
        report("certify", 1, 1)
    files.append("README.md")
    listed = [*files, certify.CROISSANT, certify.MANIFEST, certify.SHA256SUMS]
    (out_dir / "README.md").write_text(reports.dataset_card(stats, listed, out_dir=out_dir), encoding="utf-8")
    # Croissant lists every file before it; the manifest every file, Croissant's included;
    # SHA256SUMS every file, the manifest's included.
    certify.write_croissant(out_dir, files, stats)
    certify.write_manifest(out_dir, [*files, certify.CROISSANT])
    certify.write_sha256sums(out_dir, [*files, certify.CROISSANT, certify.MANIFEST])
    report("card", 1, 1)
    return ExportResult(out_dir=out_dir, files=listed, stats=stats, artifacts=analysis, quality=quality)


# --- Background jobs -----------------------------------------------------------------------


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


def export_request(
    *,
    user: AbstractBaseUser,
    seed: int = 0,
    splits: str = "0.8,0.1,0.1",
    formats: Sequence[str] = FORMATS,
    include_removed: bool = False,
    resplit_release: bool = False,
    exclusive_test_authors: Sequence[str] = (),
    baseline_max_claims: int = BASELINE_MAX_CLAIMS,
    certify: bool = False,
) -> Export:
    """Queue an export for a researcher; the job starts once this transaction commits."""
    if not is_researcher(user):
        raise ServiceError("not_researcher", "Only researchers may export the dataset.", status_code=403)
    options = {
        "seed": seed,
        "splits": splits,
        "formats": list(formats),
        "include_removed": include_removed,
        "resplit_release": resplit_release,
        "exclusive_test_authors": sorted(set(exclusive_test_authors)),
        "baseline_max_claims": baseline_max_claims,
        "certify": certify,
    }
    try:
        export_options_from(options)
    except ValueError as error:
        raise ServiceError("invalid_options", str(error)) from None
    export = Export.objects.create(requested_by=user, options=options)
    from foolgame.dataset.tasks import run_export

    events.task_on_commit(run_export, export.pk)  # a send lost with the broker: the reaper queues it again
    return export


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
        files = [{"name": name, "size": (work_dir / name).stat().st_size} for name in result.files]
        with transaction.atomic():
            # The row lock keeps a takeover out between the ownership check and the move.
            if not Export.objects.select_for_update().filter(pk=export.pk, status=Export.Status.RUNNING, owner=owner).exists():
                raise ExportSuperseded(f"export {export.pk} was taken over before it finished")
            export_publish(export=export, work_dir=work_dir, names=result.files)
            _export_finish(
                export.pk, owner, status=Export.Status.DONE, stage="done", progress=1.0, files=files,
                split_summary=result.stats["split_summary"],
                quality=result.quality and certify.quality_summary(result.quality),
            )
    except ExportSuperseded:
        logger.warning("export %s: run %s lost the job to another delivery and stopped", export.pk, owner)
        shutil.rmtree(work_dir, ignore_errors=True)
        return False
    except Exception as error:
        logger.exception("export %s failed", export.pk)
        shutil.rmtree(work_dir, ignore_errors=True)
        message = str(error) if isinstance(error, ExportError) else f"{type(error).__name__}: {error}"
        _export_finish(export.pk, owner, status=Export.Status.FAILED, error=message)
        return False
    return True


def export_jobs_reap() -> dict[str, int]:
    """Recover exports whose worker died, without waiting for the broker's redelivery.

    Stale running exports with attempts left, and pending ones whose task seems lost (pending
    for longer than the stale timeout), are queued again: the task's conditional takeover
    makes a duplicate harmless, so two reapers at once are safe. Stale ones with no attempts
    left are failed with a reason.
    """
    from foolgame.dataset.tasks import run_export

    now = timezone.now()
    failed = _export_fail_exhausted(now=now)
    lost = Q(status=Export.Status.PENDING, created__lt=_stale_before(now))
    stale = _stale_running(now) & Q(attempts__lt=_jobs("EXPORT_MAX_ATTEMPTS"))
    ids = list(Export.objects.filter(lost | stale).order_by("pk").values_list("pk", flat=True))
    for export_id in ids:
        logger.warning("export %s looks abandoned: queueing it again", export_id)
        run_export.delay(export_id)
    return {"requeued": len(ids), "failed": failed}


def export_file_open(*, export: Export, name: str) -> File:
    """One of a finished export's files, opened for reading from the exports storage (this
    host's disk, or the object store); 404 for any other name."""
    if export.status != Export.Status.DONE or name not in {f["name"] for f in export.files}:
        raise ServiceError("not_found", "No such file in this export.", status_code=404)
    return exports_storage().open(export_key(export, name), "rb")


__all__ = [
    "ExportError",
    "ExportOptions",
    "ExportResult",
    "dataset_export",
    "export_file_open",
    "export_job_run",
    "export_jobs_reap",
    "export_request",
    "researcher_set",
    "researchers_group_ensure",
]
