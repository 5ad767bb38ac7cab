"""``manage.py verifier train | evaluate FILE | list | activate V | rollback``: the operator's
handle on the model in the loop (docs/verifier.md)."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from foolgame.core.errors import ServiceError
from foolgame.pages.models import Page
from foolgame.verifier import runtime, selectors, services
from foolgame.verifier.models import VerifierVersion
from retrieval.game import retrieved_evidence_by_page


class _Bars:
    """One tqdm bar per stage, on stderr (stdout keeps the result)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled, self.stage, self.bar = enabled, "", None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if stage != self.stage:
            self.close()
            self.stage = stage
            self.bar = tqdm(total=total, desc=stage, file=sys.stderr, dynamic_ncols=True, leave=False)
        if self.bar is not None:
            self.bar.total = total
            self.bar.n = done
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class Command(BaseCommand):
    help = "Train, evaluate, list, activate and roll back the verifier versions (the model in the loop)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        train = sub.add_parser("train", help="train the next version now (if due, or --force)")
        train.add_argument("--force", action="store_true", help="train even if fewer than RETRAIN_EVERY new verified claims arrived")
        train.add_argument("--no-progress", action="store_true")
        train.add_argument("--if-due", action="store_true", help="say so and succeed when nothing is due (for `make run`, which runs it at every start)")
        evaluate = sub.add_parser("evaluate", help="accuracy, macro-F1 and n of a version on a release-format JSON Lines file")
        evaluate.add_argument("file")
        evaluate.add_argument(
            "--retrieved", action="store_true",
            help="end to end (FM2 Table 7): judge with what the project's hybrid retriever ranks first among the page's sentences in the file (every claim's gold and retrieved evidence), gold or not",
        )
        evaluate.add_argument("--top", type=int, default=2, help="retrieved sentences to read (with --retrieved; default 2)")
        evaluate.add_argument("--version", type=int, help="the version number (default: the active one)")
        evaluate.add_argument("--json", action="store_true", help="print one JSON object")
        evaluate.add_argument("--include-trained-pages", action="store_true", help="also score claims about pages the version was trained on (never a fair figure)")
        evaluate.add_argument("--no-progress", action="store_true")
        sub.add_parser("list", help="every version with its data cut and figures")
        activate = sub.add_parser("activate", help="make version V the one writers play against")
        activate.add_argument("number", type=int)
        sub.add_parser("rollback", help="go back to the version active before the current one")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        try:
            getattr(self, f"_{action}")(**options)
        except ServiceError as error:
            raise CommandError(error.message) from error

    def _train(self, *, force: bool, no_progress: bool, if_due: bool, **_: Any) -> None:
        bars = _Bars(not no_progress)
        try:
            version = services.verifier_train_now(force=force, progress=bars)
        finally:
            bars.close()
        if version is None:
            verified = services.verified_claims().count()
            if if_due and not force:
                active = services.active_version()
                self.stdout.write(f"No version due ({verified} verified claims); " + (f"v{active.number} stays active." if active else "none is active yet."))
                return
            raise CommandError(
                f"No version trained: not due ({verified} verified claims; see FM2_VERIFIER MIN_CLAIMS / RETRAIN_EVERY, or --force), "
                "fewer than two labels to learn from, or another worker is training now."
            )
        self.stdout.write(_describe(version))

    def _evaluate(self, *, file: str, retrieved: bool, top: int, version: int | None, json: bool, include_trained_pages: bool, no_progress: bool, **_: Any) -> None:
        chosen = _version(version)
        rows = _read_release(file)
        trained_titles = set(Page.objects.filter(pk__in=chosen.trained_page_ids).values_list("title", flat=True))
        kept = [row for row in rows if include_trained_pages or row["wikipedia_page"] not in trained_titles]
        # End to end: the retriever's best in each page's pool (the claims kept are on whole pages).
        evidence = retrieved_evidence_by_page(kept, services.encoder_get(), k=top) if retrieved else [[e["text"] for e in row.get("gold_evidence") or []] for row in kept]
        items = [(row["text"], texts) for row, texts in zip(kept, evidence)]
        verifier = runtime.loaded(chosen, wait=True)
        verdicts = []
        bar = tqdm(total=len(items), desc="judging", file=sys.stderr, disable=no_progress, leave=False)
        for start in range(0, len(items), 64):
            verdicts += verifier.verdicts(items[start : start + 64])
            bar.update(len(items[start : start + 64]))
        bar.close()
        result = services.figures([v.label for v in verdicts], [row["label"] for row in kept])
        result |= {
            "version": chosen.number,
            "evidence": f"retrieved (top {top})" if retrieved else "gold",
            "file": file,
            "skipped_trained_pages": len(rows) - len(kept),
        }
        if json:
            self.stdout.write(_json(result))
            return
        low, high = result["ci95"] or (0.0, 0.0)
        self.stdout.write(
            f"v{chosen.number} on {file} ({result['evidence']} evidence): accuracy {_pct(result['accuracy'])} "
            f"(95% CI {_pct(low)}-{_pct(high)}), macro-F1 {_pct(result['macro_f1'])}, n {result['n']}"
            + (f"; {result['skipped_trained_pages']} claims about pages it was trained on left out" if result["skipped_trained_pages"] else "")
        )

    def _list(self, **_: Any) -> None:
        found = list(selectors.versions())
        if not found:
            self.stdout.write("No version yet: `manage.py verifier train` trains the first once enough claims are verified.")
        for version in found:
            self.stdout.write(_describe(version))

    def _activate(self, *, number: int, **_: Any) -> None:
        self.stdout.write(_describe(services.version_activate(number=number)))

    def _rollback(self, **_: Any) -> None:
        self.stdout.write(_describe(services.version_rollback()))


def _version(number: int | None) -> VerifierVersion:
    if number is None:
        active = services.active_version()
        if active is None:
            raise CommandError("No version is active: train one, or name one with --version.")
        return active
    version = VerifierVersion.objects.filter(number=number).first()
    if version is None:
        raise CommandError(f"There is no version {number}.")
    return version


def _read_release(path: str) -> list[dict[str, Any]]:
    rows = []
    try:
        with open(path, encoding="utf-8") as handle:
            for line_number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as error:
                    raise CommandError(f"{path}:{line_number}: not JSON ({error.msg})") from error
                if not isinstance(row, dict) or not isinstance(row.get("text"), str) or row.get("label") not in services.LABEL_PAIR:
                    raise CommandError(f"{path}:{line_number}: needs text and a SUPPORTS/REFUTES label")
                row.setdefault("wikipedia_page", "")
                rows.append(row)
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from error
    if not rows:
        raise CommandError(f"{path} holds no claims")
    return rows


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _describe(version: VerifierVersion) -> str:
    slice_ = (version.figures or {}).get("slice") or {}
    baseline = slice_.get("claim_only") or {}
    return (
        f"v{version.number} [{version.status}] {version.name}: trained on {version.claims_trained} claims "
        f"({len(version.trained_page_ids)} pages, claims up to id {version.newest_claim_id}) in {version.seconds:.1f} s; "
        f"frozen slice accuracy {_pct(slice_.get('accuracy'))} (n {slice_.get('n', 0)}), claim-only {_pct(baseline.get('accuracy'))}"
        + (f"; {version.decision}" if version.decision else "")
    )
