"""The model in the loop in an export: the release's model figures. Each claim's own fields
(its verdicts, the version it was written against, whom it is hard for) are written with the
claim (:mod:`foolgame.dataset.model_fields`).

The figures (:func:`model_statistics`) read the written files back, like the other reports:
the active version on the test split with gold evidence (FM2 Table 6) and with the claims'
own retrieved evidence (Table 7) beside the claim-only baseline, all on the same test claims,
leaving out those on pages the version was trained on; ANLI's round table over the exported
claims; and how many claims are hard for whom.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from foolgame.dataset.model_fields import version_name
from foolgame.dataset.records import Progress
from foolgame.dataset.splits import SPLITS
from foolgame.dataset.writers import PK_CHUNK, claim_pks
from foolgame.pages.models import Page
from foolgame.verifier import selectors as verifier_selectors
from foolgame.verifier.models import VerifierVersion

logger = logging.getLogger(__name__)

JUDGE_BATCH = 64
"""Test claims the verifier judges in one call (with gold evidence, then retrieved)."""
RETRIEVED_SENTENCES = 2
"""End to end, the verifier reads this many sentences the project's retriever ranks first."""
HARDNESS = ("people", "model", "both", "neither", "unknown")
NO_MODEL = "no model version was active"

Read = Callable[[str], Iterable[Mapping[str, Any]]]
"""``read(split)``: the claim records of a split as written."""


def _version_order(name: str) -> int:
    return int(name[1:])


# --- The figures ---------------------------------------------------------------------------


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _figures(predicted: Sequence[str], gold: Sequence[str]) -> dict[str, Any]:
    """``verifier.services.figures`` (n, accuracy with its 95% Wilson interval, macro-F1), rounded."""
    from foolgame.verifier.services import figures

    found = figures(predicted, gold)
    return {
        "n": found["n"],
        "accuracy": _rounded(found["accuracy"]),
        "ci95": [round(bound, 4) for bound in found["ci95"]] if found["ci95"] is not None else None,
        "macro_f1": _rounded(found["macro_f1"]),
    }


def _page_titles(page_ids: Sequence[int]) -> set[str]:
    """The titles of these pages (the files name a claim's page by its title, which is unique)."""
    titles: set[str] = set()
    ids = sorted(set(page_ids))
    for start in range(0, len(ids), PK_CHUNK):
        titles.update(Page.objects.filter(pk__in=ids[start : start + PK_CHUNK]).values_list("title", flat=True))
    return titles


def _scan(read: Read) -> tuple[dict[str, Any], list[str], list[str]]:
    """One pass over every split: the hardness counts, the versions with a verdict in the
    files, and the ids of the claims written against a version."""
    counts = {split: Counter[str]() for split in SPLITS}
    versions: set[str] = set()
    written: list[str] = []
    for split in SPLITS:
        for record in read(split):
            counts[split][record["hard_for"] or "unknown"] += 1
            versions.update(record["model_verdicts"])
            if record["model_version"] is not None:
                written.append(record["id"])
    total = sum(counts.values(), Counter[str]())
    hardness = {
        "total": {kind: total[kind] for kind in HARDNESS},
        "splits": {split: {kind: counts[split][kind] for kind in HARDNESS} for split in SPLITS},
    }
    return hardness, sorted(versions, key=_version_order), written


def _rounds(written_ids: list[str], active: VerifierVersion | None) -> list[dict[str, Any]]:
    """ANLI's round table (``verifier.selectors.collection_rounds``) over the exported claims.

    Only the claims written against a version can count in it, so only their ids are passed
    (the files' ``model_version``), which keeps the id list short. The version's own figures
    on the game's frozen slice are left out: they are not about these files."""
    if not written_ids and active is None:
        return []  # no version to show (the table lists versions with claims, and the active one)
    pks = list(claim_pks(written_ids).values())
    rows = []
    for row in verifier_selectors.collection_rounds(claim_ids=pks):
        rows.append(
            {
                "version": version_name(row["version"]),
                "name": row["name"],
                "status": row["status"],
                "claims": row["claims"],
                "model_error_rate": _rounded(row["model_error_rate"]),
                "verified_claims": row["verified_claims"],
                "verified_model_error_rate": _rounded(row["verified_model_error_rate"]),
                "tries_per_claim": row["tries_per_claim"],
            }
        )
    return rows


def _claim_only(train: Sequence[tuple[str, str]], test: Sequence[tuple[str, str]]) -> tuple[dict[str, Any] | None, str]:
    """The claim-only baseline on the evaluated test claims, or None and why."""
    from foolgame.dataset.lean import sklearn_import_lean
    from scoring.artifacts import claim_only_baseline

    if not train:
        return None, "train is empty"
    if len({label for _, label in train}) < 2:
        return None, "train has one label only"
    if not test:
        return None, "no test claim to evaluate"
    sklearn_import_lean()
    predicted = claim_only_baseline(train, {"test": test}).predictions["test"]
    return _figures(predicted, [label for _, label in test]), ""


def _test_figures(
    read: Read, active: VerifierVersion, *, train_sample: Callable[[], list[tuple[str, str]]], progress: Progress
) -> dict[str, Any]:
    """The active version and the claim-only baseline on the test claims not on its training pages."""
    from foolgame.verifier import runtime

    trained = _page_titles(active.trained_page_ids)

    def evaluated() -> Iterator[Mapping[str, Any]]:
        return (record for record in read("test") if record["wikipedia_page"] not in trained)

    claims = sum(1 for _ in read("test"))
    test = [(record["text"], record["label"]) for record in evaluated()]
    out: dict[str, Any] = {"claims": claims, "left_out_trained_pages": claims - len(test), "evaluated": len(test)}
    train = train_sample()
    out["claim_only"], reason = _claim_only(train, test)
    out["claim_only_train_claims"] = len(train)
    if reason:
        out["claim_only_reason"] = reason
    out["gold_evidence"] = out["retrieved_evidence"] = None
    progress("model", 0, len(test))
    try:
        verifier = runtime.loaded(active, wait=True)
        if verifier is None:
            raise RuntimeError("it did not load")
    except Exception as error:  # the files are still worth having: the figures say why they are missing
        logger.exception("export: verifier version %s could not be loaded", active.number)
        out["error"] = f"the verifier could not be loaded: {type(error).__name__}: {error}"
        return out
    records = list(evaluated())
    found = _retrieved(records)
    gold_labels: list[str] = []
    with_gold: list[str] = []
    with_retrieved: list[str] = []
    for start in range(0, len(records), JUDGE_BATCH):
        batch = records[start : start + JUDGE_BATCH]
        gold = verifier.verdicts([(r["text"], [e["text"] for e in r["gold_evidence"]]) for r in batch])
        retrieved = verifier.verdicts([(r["text"], texts) for r, texts in zip(batch, found[start : start + JUDGE_BATCH])])
        gold_labels += [r["label"] for r in batch]
        with_gold += [v.label for v in gold]
        with_retrieved += [v.label for v in retrieved]
        progress("model", len(gold_labels), len(test))
    out["gold_evidence"] = _figures(with_gold, gold_labels)
    out["retrieved_evidence"] = _figures(with_retrieved, gold_labels)
    return out


def _retrieved(records: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """End to end (FM2 Table 7): for each claim, the RETRIEVED_SENTENCES sentences the project's
    hybrid retriever ranks first in its page's pool, gold or not. The pool is every evidence
    sentence the file gives for any claim of the page (gold and retrieved): a release's lists
    are unranked and hold every gold sentence, and a game claim's clues put its gold last, so
    neither list's first sentences are a retrieval."""
    from foolgame.evidence.services import encoder_get
    from retrieval.game import retrieved_evidence_by_page

    return retrieved_evidence_by_page(records, encoder_get(), k=RETRIEVED_SENTENCES)


def model_statistics(
    read: Read,
    *,
    active: VerifierVersion | None,
    train_sample: Callable[[], list[tuple[str, str]]],
    progress: Progress,
) -> dict[str, Any]:
    """``stats.json``'s ``model_in_the_loop``: the figures of the version active when the
    export started, from the files as written. ``train_sample()`` gives the train claims
    (text, label) the claim-only baseline learns from."""
    hardness, verdict_versions, written = _scan(read)
    section: dict[str, Any] = {
        "active_version": None,
        "verdict_versions": verdict_versions,
        "retrieved_sentences": RETRIEVED_SENTENCES,
        "test": None,
    }
    if active is None:
        section["reason"] = NO_MODEL
        progress("model", 0, 0)
    else:
        section["active_version"] = {
            "version": version_name(active.number),
            "name": active.name,
            "kind": active.kind,
            "trained_pages": len(set(active.trained_page_ids)),
        }
        section["test"] = _test_figures(read, active, train_sample=train_sample, progress=progress)
    section["rounds"] = _rounds(written, active)
    section["hardness"] = hardness
    return section


# --- Markdown ------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _figure_row(title: str, figures: Mapping[str, Any] | None, why: str = "") -> str:
    if figures is None or figures["accuracy"] is None:
        return f"| {title} | {figures['n'] if figures else 0:,} | n/a{f' ({why})' if why else ''} | | |"
    low, high = figures["ci95"]
    return f"| {title} | {figures['n']:,} | {_pct(figures['accuracy'])} | {_pct(low)} to {_pct(high)} | {figures['macro_f1']:.3f} |"


def model_markdown(section: Mapping[str, Any]) -> list[str]:
    """The model-in-the-loop section of ``stats.md`` (and so of the card), as lines."""
    lines = ["## The model in the loop", ""]
    active = section["active_version"]
    if active is None:
        lines += [
            "No model version was active when this export was made: there are no test figures, and every",
            "claim's `hard_for` is null.",
        ]
    else:
        test, name = section["test"], active["version"]
        lines += [
            f"Version {name} ({active['kind']}, `{active['name']}`) was active when this export was made. Its",
            f"figures on the test split leave out the claims on the {active['trained_pages']:,} pages it was trained on:",
            f"{test['left_out_trained_pages']:,} of the {test['claims']:,} test claims were left out, {test['evaluated']:,} evaluated.",
            "Every row is on those same claims: accuracy with its 95% Wilson interval and macro-F1 over",
            f"SUPPORTS and REFUTES. End to end, {name} reads the {section['retrieved_sentences']} sentences the project's hybrid",
            "retriever (BM25 and MiniLM) ranks first for the claim among its page's sentences in the file",
            "(every claim's gold and retrieved evidence), gold or not. The claim-only baseline (TF-IDF",
            "and logistic regression over the claim alone) learns from the train split.",
            "",
            "| model | claims | accuracy | 95% CI | macro-F1 |",
            "| --- | ---: | ---: | ---: | ---: |",
            _figure_row("claim only", test["claim_only"], test.get("claim_only_reason", "")),
            _figure_row(f"{name} with gold evidence (FM2 Table 6)", test["gold_evidence"], test.get("error", "")),
            _figure_row(f"{name} with retrieved evidence (FM2 Table 7)", test["retrieved_evidence"], test.get("error", "")),
        ]
    lines += [
        "",
        "Collection rounds (ANLI): per version, the exported claims written against it, the share its",
        "verdict at the save got wrong, the share it got wrong whose label people confirmed, and the",
        "drafts it judged per claim.",
        "",
    ]
    if section["rounds"]:
        lines += [
            "| version | status | claims | model error rate | verified model error rate | tries per claim |",
            "| --- | --- | ---: | ---: | ---: | ---: |",
        ]
        for row in section["rounds"]:
            tries = "n/a" if row["tries_per_claim"] is None else f"{row['tries_per_claim']:.2f}"
            lines.append(
                f"| {row['version']} | {row['status']} | {row['claims']:,} | {_pct(row['model_error_rate'])} "
                f"| {_pct(row['verified_model_error_rate'])} | {tries} |"
            )
    else:
        lines.append("No exported claim was written against a version.")
    lines += [
        "",
        "Hard for whom (`hard_for`): people when the smoothed share of correct votes is under one half,",
        "the model when the active version's verdict with gold evidence is wrong; unknown without votes",
        "or without that verdict.",
        "",
        "| split | " + " | ".join(HARDNESS) + " |",
        "| --- |" + " ---: |" * len(HARDNESS),
    ]
    hardness = section["hardness"]
    for name, counts in (*hardness["splits"].items(), ("total", hardness["total"])):
        lines.append(f"| {name} | " + " | ".join(f"{counts[kind]:,}" for kind in HARDNESS) + " |")
    return lines
