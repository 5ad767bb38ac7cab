"""Dataset exports: the one export (command and background job run the same code) and the jobs."""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.utils import timezone

from foolgame.api.errors import ServiceError
from foolgame.dataset import reports
from foolgame.dataset.exporter import FORMATS, ExportError, ExportOptions, Progress, write_records
from foolgame.dataset.models import Export
from foolgame.dataset.privacy import Pseudonyms, new_salt
from foolgame.dataset.splits import parse_proportions

logger = logging.getLogger(__name__)

RESEARCHERS_GROUP = "researchers"
# Share of the job's progress bar each stage takes (the claims dominate).
STAGE_SPAN = {"plan": (0.0, 0.02), "claims": (0.02, 0.6), "votes": (0.6, 0.75), "stats": (0.75, 0.8), "artifacts": (0.8, 0.98), "card": (0.98, 1.0)}


@dataclass(frozen=True)
class ExportResult:
    out_dir: Path
    files: list[str]
    stats: dict[str, Any]
    artifacts: dict[str, Any]


def is_researcher(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Staff, or members of the ``researchers`` group."""
    if not user.is_authenticated:
        return False
    return bool(user.is_staff or user.groups.filter(name=RESEARCHERS_GROUP).exists())


def dataset_export(
    *, out_dir: Path, options: ExportOptions, salt: bytes | None = None, progress: Progress | None = None
) -> ExportResult:
    """Write a whole release into ``out_dir``: claims and votes, statistics, artifacts, card.

    ``salt`` makes the pseudonyms; ``None`` draws a new one, which is never written out.
    Raises :class:`ExportError` on bad options before writing anything.
    """
    report = progress or (lambda stage, done, total: None)
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
            "removed_left_out": summary.removed_left_out,
            "include_removed": options.include_removed,
            "withheld_exclusive_claims": summary.plan.withheld_exclusive_claims,
            "release_conflict_claims": summary.plan.release_conflict_claims,
            "pages_by_rule": dict(summary.plan.pages_by_rule),
            "test_exclusive_authors": len(options.exclusive_test_authors),
        },
    )
    reports.write_json(out_dir / "stats.json", stats)
    (out_dir / "stats.md").write_text(reports.statistics_markdown(stats), encoding="utf-8")
    report("stats", 1, 1)
    report("artifacts", 0, 1)
    with (out_dir / "easy_hard.jsonl").open("w", encoding="utf-8") as handle:

        def tag(claim_id: str, split: str, easy: bool) -> None:
            handle.write(json.dumps({"id": claim_id, "split": split, "easy": easy}) + "\n")

        analysis = reports.artifacts(out_dir, seed=options.seed, tag=tag, max_claims=options.baseline_max_claims)
    reports.write_json(out_dir / "artifacts.json", analysis)
    (out_dir / "artifacts.md").write_text(reports.artifacts_markdown(analysis), encoding="utf-8")
    report("artifacts", 1, 1)
    files = [*summary.files, "stats.json", "stats.md", "artifacts.json", "artifacts.md", "easy_hard.jsonl", "README.md"]
    (out_dir / "README.md").write_text(reports.dataset_card(stats, files), encoding="utf-8")
    report("card", 1, 1)
    return ExportResult(out_dir=out_dir, files=files, stats=stats, artifacts=analysis)


# --- Background jobs -----------------------------------------------------------------------


def export_options_from(data: dict[str, Any]) -> ExportOptions:
    """ExportOptions from an Export's stored options (the API's validated request)."""
    return ExportOptions(
        seed=int(data.get("seed", 0)),
        splits=parse_proportions(str(data.get("splits", "0.8,0.1,0.1"))),
        exclusive_test_authors=frozenset(data.get("exclusive_test_authors") or ()),
        include_removed=bool(data.get("include_removed", False)),
        formats=tuple(data.get("formats") or FORMATS),
    )


def export_request(
    *,
    user: AbstractBaseUser,
    seed: int = 0,
    splits: str = "0.8,0.1,0.1",
    formats: Sequence[str] = FORMATS,
    include_removed: bool = False,
    exclusive_test_authors: Sequence[str] = (),
) -> Export:
    """Queue an export for a researcher; the job starts once this transaction commits."""
    if not is_researcher(user):
        raise ServiceError("not_researcher", "Only researchers may export the dataset.", status_code=403)
    options = {
        "seed": seed,
        "splits": splits,
        "formats": list(formats),
        "include_removed": include_removed,
        "exclusive_test_authors": sorted(set(exclusive_test_authors)),
    }
    try:
        export_options_from(options)
    except ValueError as error:
        raise ServiceError("invalid_options", str(error)) from None
    export = Export.objects.create(requested_by=user, options=options)
    from foolgame.dataset.tasks import run_export

    transaction.on_commit(lambda: run_export.delay(export.pk))
    return export


class _JobProgress:
    """Writes the job's progress to its row, at most twice a second (and at every stage)."""

    def __init__(self, export_id: int) -> None:
        self.export_id = export_id
        self.last = (None, 0.0)

    def __call__(self, stage: str, done: int, total: int) -> None:
        start, end = STAGE_SPAN.get(stage, (0.0, 1.0))
        value = start + (end - start) * (done / total if total else 1.0)
        now = time.monotonic()
        if stage == self.last[0] and now - self.last[1] < 0.5:
            return
        self.last = (stage, now)
        Export.objects.filter(pk=self.export_id).update(stage=stage, progress=round(value, 4))


def export_job_run(*, export_id: int) -> bool:
    """Run a queued export; a job that is not pending (a second delivery) does nothing.

    Locking: the pending -> running step takes the row lock, so two workers given the same
    job cannot both run it.
    """
    with transaction.atomic():
        export = Export.objects.select_for_update().filter(pk=export_id, status=Export.Status.PENDING).first()
        if export is None:
            return False
        export.status = Export.Status.RUNNING
        export.started_at = timezone.now()
        export.save(update_fields=["status", "started_at"])
    out_dir = export.directory
    try:
        if out_dir.exists():
            shutil.rmtree(out_dir)
        result = dataset_export(out_dir=out_dir, options=export_options_from(export.options), progress=_JobProgress(export.pk))
    except Exception as error:
        logger.exception("export %s failed", export.pk)
        message = str(error) if isinstance(error, ExportError) else f"{type(error).__name__}: {error}"
        Export.objects.filter(pk=export.pk).update(status=Export.Status.FAILED, error=message, finished_at=timezone.now())
        return False
    files = [{"name": name, "size": (out_dir / name).stat().st_size} for name in result.files]
    Export.objects.filter(pk=export.pk).update(
        status=Export.Status.DONE, stage="done", progress=1.0, files=files, finished_at=timezone.now()
    )
    return True


def export_file_path(*, export: Export, name: str) -> Path:
    """The path of one of a finished export's files; 404 for any other name."""
    if export.status != Export.Status.DONE or name not in {f["name"] for f in export.files}:
        raise ServiceError("not_found", "No such file in this export.", status_code=404)
    return export.directory / name


__all__ = [
    "ExportError",
    "ExportOptions",
    "ExportResult",
    "dataset_export",
    "export_file_path",
    "export_job_run",
    "export_request",
    "is_researcher",
]
