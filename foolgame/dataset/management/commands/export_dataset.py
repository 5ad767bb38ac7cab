"""python manage.py export_dataset OUT_DIR: a release of the game's data for researchers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from foolgame.dataset.privacy import salt_from_file
from foolgame.dataset.records import BASELINE_MAX_CLAIMS, FORMATS, ExportError, ExportOptions
from foolgame.dataset.services import dataset_export
from foolgame.dataset.splits import RESPLIT_OPTION, SPLITS_OPTION, parse_proportions, split_summary_lines

FIXES = {
    RESPLIT_OPTION: "Add --resplit-release to split the release pages by --splits too.",
    SPLITS_OPTION: "Ask for a larger share in --splits.",
}


class _Bars:
    """One tqdm bar per stage, on stderr (stdout keeps the summary)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.stage: str | None = None
        self.bar: Any = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            self.close()
            self.stage = stage
            self.bar = tqdm(total=total, desc=stage, unit="row" if stage in ("claims", "votes") else "step",
                            file=sys.stderr, disable=not self.enabled, dynamic_ncols=True, leave=False)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _usernames(path: Path) -> frozenset[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror}") from None
    return frozenset(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))


class Command(BaseCommand):
    help = "Export claims and votes in page-disjoint train/dev/test splits, with statistics, artifact analysis and a dataset card."
    # Only the models' checks: the full system checks import the URL conf and through it every
    # view, the retrieval stack and faiss (about 25 MB), none of which an export uses, while its
    # classifier needs all the memory it can get (bench/bench_export.py: <= 300 MB).
    requires_system_checks = ["models", "database"]

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("out_dir", type=Path)
        parser.add_argument("--seed", type=int, default=0, help="orders the pages that are split by hash (default 0)")
        parser.add_argument("--splits", default="0.8,0.1,0.1", help="train,dev,test proportions of claims (default 0.8,0.1,0.1)")
        parser.add_argument("--exclusive-test-authors", type=Path, metavar="FILE", help="usernames, one a line, whose claims go to test only")
        parser.add_argument("--include-removed", action="store_true", help="also export claims moderators removed (flagged 'removed')")
        parser.add_argument("--resplit-release", action="store_true", help="split release pages by --splits like new pages (by default they keep their release split)")
        parser.add_argument("--formats", default="jsonl,csv", help="jsonl, csv or both (default jsonl,csv)")
        parser.add_argument("--salt-file", type=Path, help="keep the pseudonyms' salt in FILE (created if missing) to reuse it; by default each export draws a new salt")
        parser.add_argument("--baseline-max-claims", type=int, default=BASELINE_MAX_CLAIMS, help=f"the claim-only classifier learns from at most this many claims, sampled by hash (default {BASELINE_MAX_CLAIMS}; memory grows about 10 MB per 1000)")
        parser.add_argument("--certify", action="store_true", help="also write quality.json, the release's quality gates, and exit non-zero naming each gate that failed")
        parser.add_argument("--chunk-size", type=int, default=2000, help="rows read per query (default 2000)")

    def handle(self, *args: Any, **options: Any) -> None:
        out_dir: Path = options["out_dir"].resolve()
        try:
            splits = parse_proportions(options["splits"])
        except ValueError as error:
            raise CommandError(str(error)) from None
        formats = tuple(dict.fromkeys(f.strip() for f in options["formats"].split(",") if f.strip()))
        if not formats or set(formats) - set(FORMATS):
            raise CommandError(f"--formats takes {', '.join(FORMATS)}")
        salt = None
        if options["salt_file"]:
            salt_path: Path = options["salt_file"].resolve()
            if salt_path.is_relative_to(out_dir):
                raise CommandError("the salt file must not be inside OUT_DIR: the salt is never published")
            try:
                salt = salt_from_file(salt_path)
            except (OSError, ValueError) as error:
                raise CommandError(str(error)) from None
        exclusive = _usernames(options["exclusive_test_authors"]) if options["exclusive_test_authors"] else frozenset()
        export_options = ExportOptions(
            seed=options["seed"],
            splits=splits,
            exclusive_test_authors=exclusive,
            include_removed=options["include_removed"],
            resplit_release=options["resplit_release"],
            formats=formats,
            chunk_size=max(1, options["chunk_size"]),
            baseline_max_claims=max(10, options["baseline_max_claims"]),
            certify=options["certify"],
        )
        bars = _Bars(enabled=options["verbosity"] > 0)
        try:
            result = dataset_export(out_dir=out_dir, options=export_options, salt=salt, progress=bars)
        except ExportError as error:
            raise CommandError(str(error)) from None
        finally:
            bars.close()
        table = result.stats["table1"]
        self.stdout.write(
            " ".join(f"{split}={table[split]['claims']}" for split in ("train", "dev", "test"))
            + f" votes={result.stats['votes']} -> {out_dir}"
        )
        self.stdout.write("How the pages were split:")
        for line in split_summary_lines(result.stats["split_summary"], fixes=FIXES):
            self.stdout.write(f"  {line}")
        if result.quality is not None:
            self.stdout.write("Quality gates (quality.json):")
            for gate in result.quality["gates"]:
                verdict = "pass" if gate["passed"] else "FAIL"
                why = f" ({gate['reason']})" if gate.get("reason") else ""
                self.stdout.write(f"  {verdict} {gate['name']}: {gate['value']} (threshold {gate['threshold']}){why}")
            if result.quality["failed"]:
                raise CommandError("quality gates failed: " + ", ".join(result.quality["failed"]))
