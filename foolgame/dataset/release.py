"""The one export: a whole release written into a folder. The command and the background
job (:mod:`foolgame.dataset.jobs`) run the same code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foolgame.dataset import certify, reports
from foolgame.dataset.exporter import write_records
from foolgame.dataset.lean import large_allocations_mapped
from foolgame.dataset.privacy import Pseudonyms, new_salt
from foolgame.dataset.records import ExportOptions, Progress
from foolgame.dataset.splits import split_summary


@dataclass(frozen=True)
class ExportResult:
    out_dir: Path
    files: list[str]
    stats: dict[str, Any]
    artifacts: dict[str, Any]
    quality: dict[str, Any] | None = None
    """``quality.json``'s gates, when the export was certified."""


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
    stats["studies"] = summary.studies.statistics() if summary.studies is not None else []
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
