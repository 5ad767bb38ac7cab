"""The checks in an export: each claim's validation labels and gold label, and the agreement
statistics the paper reports (MultiNLI's validation table and Fleiss' kappa).

Per claim (:class:`ClaimChecks`, called by the claims' writer chunk by chunk): the labels of
its answered checks in answer order, each with its checker's pseudonym, and its gold label
(``checks.models.ClaimValidation``; ``-`` without one). Only labels that count are written:
FLAWED is a report, not a label, and a checker whose record on hidden gold items put them
under the accuracy bar counts for nothing (the refresh of the gold labels leaves them out
too), so the written labels are those the gold label was decided from. Their weights are not
written: a weight is nearly unique to its checker and would tie all of a checker's runs
together.

A checker is a player, named like an author or a voter: by *runs* (``privacy.Fragments``,
role ``checker``), at most ``RUN_CHECKS`` of one checker's labels in the order the files
hold them, cut earlier before the check points the run earned would pass the K-th best
player's (a correct answer on a hidden gold item earns points, and the public leaderboards
show them). A checker's runs are never tied to their runs as an author or a voter.

The statistics (:func:`validation_statistics`) read the written claims back, like the other
reports, and keep one count per distinct ``(group, author label, labels, gold label)``; only
kappa's table, three counts per validated claim of one group, is built while it is computed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings

from foolgame.checks.models import Check, ClaimValidation
from foolgame.checks.selectors import checker_records
from foolgame.checks.services import record_weight
from foolgame.dataset.flags import id_lookup
from foolgame.dataset.privacy import Fragments
from foolgame.dataset.splits import SPLITS
from foolgame.dataset.study_fields import StudyMarks
from scoring.validation import (
    LABELS,
    NO_GOLD,
    ValidationRow,
    fleiss_kappa,
    fleiss_kappa_unequal,
    validation_table,
)

RUN_CHECKS = 10
"""A checker pseudonym names at most this many of one checker's labels (as ``RUN_ROUNDS``
for a voter's rounds: a label, like a vote, shows at most one answer's points)."""


WEIGHT_BATCH = 900
"""Checkers whose record is read in one query."""

Answer = tuple[int, str, int]
"""An answered check: checker id, label, points it earned."""


def labels_needed() -> int:
    """Labels from checkers a claim needs before it counts as validated (MultiNLI: 4)."""
    return int(settings.FM2_CHECKS["LABELS_NEEDED"])


class ClaimChecks:
    """Reads a chunk's checks (:meth:`read`) and names their checkers (:meth:`named`) as the
    claims are written, so that a claim left out (a withheld one) takes no place in a run.

    One query for the chunk's checks and one for its gold labels; the checkers' weights are
    read once per checker (one query per chunk for those not seen yet) and kept: memory is
    one entry per checker, like ``Fragments``.
    """

    def __init__(self, checkers: Fragments, marks: StudyMarks | None = None) -> None:
        self._checkers = checkers
        self._marks = marks
        self._counts: dict[int, bool] = {}

    def _counting(self, player_ids: set[int]) -> None:
        new = player_ids - set(self._counts)
        if not new:
            return
        ordered = sorted(new)
        records: dict[int, tuple[int, int]] = {}
        for start in range(0, len(ordered), WEIGHT_BATCH):  # an IN list short enough for any database
            records.update(checker_records(player_ids=ordered[start : start + WEIGHT_BATCH]))
        for player_id in ordered:
            right, seen = records.get(player_id, (0, 0))
            self._counts[player_id] = record_weight(right, seen) > 0  # the checks app's own rule

    def read(self, ids: list[int], id_range: tuple[int, int] | None) -> dict[int, tuple[list[Answer], str]]:
        """Per claim id of the chunk: its counting labels in answer order and its gold label
        (``-`` without one, and always without a label)."""
        lookup = id_lookup("claim_id", ids, id_range)
        rows = list(
            Check.objects.filter(**lookup, answered_at__isnull=False, label__in=LABELS)
            .order_by("claim_id", "answered_at", "pk")
            .values_list("player_id", "label", "points", "claim_id")
        )
        self._counting({row[0] for row in rows})
        gold = dict(ClaimValidation.objects.filter(**lookup).order_by().values_list("claim_id", "gold_label"))
        answers: dict[int, list[Answer]] = {claim_id: [] for claim_id in ids}
        for player_id, label, points, claim_id in rows:
            if claim_id in answers and self._counts[player_id]:
                answers[claim_id].append((player_id, label, points))
        return {claim_id: (found, gold.get(claim_id, NO_GOLD) if found else NO_GOLD) for claim_id, found in answers.items()}

    def named(self, answers: list[Answer]) -> list[dict[str, str]]:
        """``validation_labels``: each label with its checker's run pseudonym. A run shows the
        check points its answers earned (only a hidden gold item answered right earns any)."""
        return [
            {
                "label": label,
                "checker": self._checkers(player_id, {"check": points, "total": points}),
                # A study's participant's label: its study and arm (study_fields); null for everyone else.
                **(self._marks.fields(player_id) if self._marks else {"study": None, "arm": None}),
            }
            for player_id, label, points in answers
        ]


# --- statistics ----------------------------------------------------------------------------

Pattern = tuple[str, tuple[str, ...], str]
"""A claim as the statistics see it: author label, sorted validation labels, gold label."""

TABLE_ROWS = (
    ("unanimous", "unanimous (author's label included)"),
    ("individual_matches_gold", "individual label = gold label"),
    ("individual_matches_author", "individual label = author's label"),
    ("author_matches_gold", "gold label = author's label"),
    ("author_differs_from_gold", "gold label ≠ author's label"),
    ("no_gold", "no gold label (`-`)"),
)


def _round(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


def _kappa(validated: Counter[Pattern]) -> dict[str, Any]:
    """Fleiss' kappa over the validated claims, the author as one more rater."""
    table = [
        [sum(1 for rater in (*labels, author) if rater == label) for label in LABELS]
        for (author, labels, _), n in sorted(validated.items())
        for _ in range(n)
    ]
    raters = sorted({sum(row) for row in table})
    if not table:
        return {"kappa": None, "kappa_method": None, "raters_per_claim": [], "kappa_ci95": None}
    method = "fleiss_kappa" if len(raters) == 1 else "fleiss_kappa_unequal"
    kappa = fleiss_kappa(table) if method == "fleiss_kappa" else fleiss_kappa_unequal(table)
    return {"kappa": _round(kappa), "kappa_method": method, "raters_per_claim": raters, "kappa_ci95": _kappa_interval(validated)}


KAPPA_RESAMPLES = 1000
"""Bootstrap resamples of the validated claims behind ``kappa_ci95``."""


def _kappa_interval(validated: Counter[Pattern]) -> list[float] | None:
    """A 95% percentile-bootstrap interval of the kappa above: the validated claims drawn
    again with replacement (a multinomial over their distinct patterns, seed 0, so the same
    files give the same interval), kappa recomputed each time. Null when kappa is undefined
    in most draws (every label the same) or there are fewer than two claims."""
    import numpy  # the statistics' own dependency (scikit-learn's); loaded when a kappa is computed

    patterns = [(author, labels) for (author, labels, _), n in sorted(validated.items()) if len(labels) + 1 >= 2]
    weights = [n for (author, labels, _), n in sorted(validated.items()) if len(labels) + 1 >= 2]
    if sum(weights) < 2:
        return None
    rows = numpy.array([[sum(1 for rater in (*labels, author) if rater == label) for label in LABELS] for author, labels in patterns], float)
    raters = rows.sum(axis=1)
    agreement = (rows * (rows - 1)).sum(axis=1) / (raters * (raters - 1))
    draws = numpy.random.default_rng(0).multinomial(sum(weights), numpy.array(weights) / sum(weights), size=KAPPA_RESAMPLES)
    observed = draws @ agreement / draws.sum(axis=1)
    totals = draws @ rows
    expected = ((totals / totals.sum(axis=1, keepdims=True)) ** 2).sum(axis=1)
    defined = expected < 1.0
    if defined.sum() < KAPPA_RESAMPLES / 2:
        return None
    kappas = (observed[defined] - expected[defined]) / (1.0 - expected[defined])
    low, high = numpy.percentile(kappas, [2.5, 97.5])
    return [round(float(low), 4), round(float(high), 4)]


def _group(patterns: Counter[Pattern], min_labels: int) -> dict[str, Any]:
    validated = Counter({p: n for p, n in patterns.items() if len(p[1]) >= min_labels})
    rows = (ValidationRow(author, labels, gold) for (author, labels, gold), n in sorted(patterns.items()) for _ in range(n))
    table: dict[str, Any] = dict(validation_table(rows, min_checks=min_labels))
    with_gold = [(p, n) for p, n in validated.items() if p[2] != NO_GOLD]
    counts = {
        "claims": table["claims"],
        "not_yet_validated": table["skipped"],
        "labels": sum(len(labels) * n for (_, labels, _), n in validated.items()),
        "unanimous": sum(n for (author, labels, _), n in validated.items() if set(labels) == {author}),
        "individual_matches_gold": sum(labels.count(gold) * n for (_, labels, gold), n in with_gold),
        "individual_matches_author": sum(labels.count(author) * n for (author, labels, _), n in validated.items()),
        "author_matches_gold": sum(n for (author, _, gold), n in with_gold if gold == author),
        "author_differs_from_gold": sum(n for (author, _, gold), n in with_gold if gold != author),
        "no_gold": sum(n for (_, _, gold), n in validated.items() if gold == NO_GOLD),
    }
    shares = {key: _round(table[key]) for key in ("labels_per_claim", *(key for key, _ in TABLE_ROWS))}
    return {"counts": counts, "shares": shares, **_kappa(validated)}


def validation_statistics(records: Iterable[tuple[str, Mapping[str, Any]]], *, min_labels: int | None = None) -> dict[str, Any]:
    """MultiNLI's validation table and Fleiss' kappa, overall, per split and per category,
    from ``(split, claim record)`` pairs as written."""
    need = labels_needed() if min_labels is None else min_labels
    overall: Counter[Pattern] = Counter()
    splits: dict[str, Counter[Pattern]] = {split: Counter() for split in SPLITS}
    categories: dict[str, Counter[Pattern]] = {}
    for split, record in records:
        pattern = (record["label"], tuple(sorted(v["label"] for v in record["validation_labels"])), record["gold_label"])
        overall[pattern] += 1
        splits.setdefault(split, Counter())[pattern] += 1
        categories.setdefault(record["category"], Counter())[pattern] += 1
    return {
        "labels_needed": need,
        "overall": _group(overall, need),
        "splits": {split: _group(patterns, need) for split, patterns in splits.items()},
        "categories": {name: _group(categories[name], need) for name in sorted(categories)},
    }


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _kappa_cell(group: Mapping[str, Any]) -> str:
    if group["kappa_method"] is None:
        return "n/a"
    kappa = "n/a" if group["kappa"] is None else f"{group['kappa']:.3f}"
    return kappa + ("" if group["kappa_method"] == "fleiss_kappa" else " *")


def validation_markdown(validation: Mapping[str, Any]) -> list[str]:
    """The validation section of ``stats.md`` (and so of the card), as lines."""
    need = validation["labels_needed"]
    groups = [("overall", validation["overall"])]
    groups += [(f"split {name}", group) for name, group in validation["splits"].items()]
    groups += [(f"category {name}", group) for name, group in validation["categories"].items()]
    header = ["group", "validated claims", "not yet validated", "labels per claim", *(title for _, title in TABLE_ROWS), "Fleiss' κ"]
    lines = [
        "## Validation",
        "",
        f"MultiNLI's validation statistics (Williams et al. 2018, Table 2) over the claims with at least {need}",
        "labels from independent checkers (`validation_labels`); claims with fewer are counted apart as not yet",
        "validated. Labels per claim count the author's. An individual label is a checker's; the gold-label",
        "row leaves out claims without a gold label. Each share is followed by its count (claims, or labels for",
        "the individual rows). Fleiss' κ takes the author as one more rater, as MultiNLI's five: Fleiss' (1971)",
        "kappa when every claim has the same number of raters, else (marked *) its plain generalisation to",
        "unequal numbers of raters (`scoring.validation.fleiss_kappa_unequal`).",
        "",
        "| " + " | ".join(header) + " |",
        "| --- |" + " ---: |" * (len(header) - 1),
    ]
    for name, group in groups:
        counts, shares = group["counts"], group["shares"]
        per_claim = "n/a" if shares["labels_per_claim"] is None else f"{shares['labels_per_claim']:.2f}"
        cells = [f"{_pct(shares[key])} ({counts[key]:,})" for key, _ in TABLE_ROWS]
        lines.append(
            f"| {name} | {counts['claims']:,} | {counts['not_yet_validated']:,} | {per_claim} | " + " | ".join(cells) + f" | {_kappa_cell(group)} |"
        )
    return lines
