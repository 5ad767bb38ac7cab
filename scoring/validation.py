"""Validation: checkers' weights, a claim's gold label, agreement and MultiNLI's statistics.

In the solo validation mode a player checks one claim against its gold evidence and answers
SUPPORTS, REFUTES or NOT ENOUGH INFO (or FLAWED: a report that the claim cannot be labelled,
which is not a label and never counts towards one). Every claim gets at least four
independent checks; hidden gold items (claims whose label is settled) are mixed in, and a
checker's record on them sets the weight of their labels (:func:`checker_weight`).

A claim's gold label follows MultiNLI (Williams et al. 2018, section 2.3): the author's label
and four validators' labels, and the label at least three of the five chose, else ``"-"``.
Here the vote is weighted (:func:`gold_label`): with every weight 1.0 and four checks it is
exactly MultiNLI's "3 of 5". :func:`validation_table` gives MultiNLI's Table 2 over claims,
and :func:`fleiss_kappa` the chance-corrected agreement of the checkers.

Plain Python, no NumPy: the Django services call these per claim and per check.
``bench/bench_validation_sim.py`` measures how much the weighting buys on a simulated crowd.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from scoring.filters import wilson

__all__ = [
    "LABELS",
    "NO_GOLD",
    "DEFAULT_PRIOR",
    "MAX_WEIGHT",
    "ValidationRow",
    "ValidationTable",
    "smoothed_accuracy",
    "checker_weight",
    "gold_label",
    "fleiss_kappa",
    "fleiss_kappa_unequal",
    "validation_table",
]

LABELS: tuple[str, str, str] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
"""The labels a check can give; anything else (FLAWED, a blank) is not a label."""

NO_GOLD = "-"
"""The gold label of a claim without a qualified majority (MultiNLI's ``-``)."""

DEFAULT_PRIOR: tuple[float, float] = (4.0, 1.0)
"""Beta prior on a checker's accuracy: 4 right and 1 wrong pseudo-answers, mean 0.8.

0.8 is the overall vote accuracy of the FM2 release (the prior of scoring/filters.py too),
a little under MultiNLI's 88.7% of individual labels matching the gold label: a new checker
is assumed about as good as the crowd, and five pseudo-answers keep a few unlucky gold items
from condemning them."""

MAX_WEIGHT = 3.0
"""The most one checker's label can weigh (the author's and a prior-mean checker's weigh 1.0).

Log-odds weights grow without bound as the accuracy nears 1; under the prior a checker needs
about 250 gold items without a miss to reach 3.0. At the clip, one checker with one ally
(the author or another check) holds 4 of 7 against three labels of weight 1: under 0.6, so
no single record, however long, settles a claim without a second ally."""

_RELATIVE_TOLERANCE = 1e-12  # 3 of 5 must qualify although 0.6 * 5 is 3.0000000000000004 in floats


def smoothed_accuracy(
    *, gold_right: int, gold_seen: int, prior: tuple[float, float] = DEFAULT_PRIOR
) -> float:
    """The posterior mean of a checker's accuracy: ``(right + a) / (seen + a + b)``."""
    a, b = prior
    if gold_seen < 0 or gold_right < 0 or gold_right > gold_seen:
        raise ValueError(f"need 0 <= gold_right <= gold_seen, got {gold_right} of {gold_seen}")
    if not (0 < a < math.inf and 0 < b < math.inf):
        raise ValueError(f"prior pseudo-counts must be finite and > 0, got {prior}")
    return (gold_right + a) / (gold_seen + a + b)


def _log_odds_weight(accuracy: float) -> float:
    """``log((K - 1) * p / (1 - p))`` for K labels: 0 for a checker who clicks at random."""
    return math.log((len(LABELS) - 1) * accuracy / (1.0 - accuracy))


def checker_weight(
    *,
    gold_right: int,
    gold_seen: int,
    min_gold: int = 5,
    min_accuracy: float = 0.6,
    prior: tuple[float, float] = DEFAULT_PRIOR,
    max_weight: float = MAX_WEIGHT,
) -> float:
    """The weight of a checker's labels, from their record on hidden gold items.

    Under Dawid & Skene's (1979) model of annotators, with one accuracy ``p`` per checker
    and errors spread evenly over the other ``K - 1`` labels (the "one-coin" model), the
    posterior log-odds of the true label given the checks is a weighted vote in which each
    checker's label counts ``log((K - 1) p / (1 - p))`` (for two labels this is Nitzan &
    Paroush's (1982) optimal weighted majority). With K = 3 that is ``log(2p / (1 - p))``:
    0 for a checker who clicks at random (p = 1/3), rising steeply near p = 1. So the weight
    is that log-odds of the checker's smoothed accuracy (a Beta ``prior`` posterior mean:
    their record on few gold items says little), divided by the log-odds of the prior's
    mean, so that an average checker weighs 1.0 like the author and a plain vote is the
    special case; clipped at ``max_weight``.

    A checker with fewer than ``min_gold`` gold items weighs 1.0 (nothing is known yet);
    from ``min_gold`` on, a smoothed accuracy under ``min_accuracy`` gives 0.0: their labels
    stop counting, as the bonus-and-block rules of crowdsourcing platforms do.
    """
    if min_gold < 0:
        raise ValueError(f"min_gold must be >= 0, got {min_gold}")
    if not 0.0 <= min_accuracy <= 1.0:
        raise ValueError(f"min_accuracy must be in [0, 1], got {min_accuracy}")
    if not max_weight >= 1.0:
        raise ValueError(f"max_weight must be >= 1 (the average checker's weight), got {max_weight}")
    accuracy = smoothed_accuracy(gold_right=gold_right, gold_seen=gold_seen, prior=prior)
    mean = prior[0] / (prior[0] + prior[1])
    if mean <= 1.0 / len(LABELS):
        raise ValueError(f"the prior's mean accuracy {mean:.3f} is no better than a random click")
    if gold_seen < min_gold:
        return 1.0
    if accuracy < min_accuracy:
        return 0.0
    weight = _log_odds_weight(accuracy) / _log_odds_weight(mean)
    return min(max(weight, 0.0), max_weight)


def record_shows_reading(
    right: int,
    seen: int,
    *,
    by_label: Sequence[tuple[int, int]] | None = None,
    min_seen: int = 10,
    min_per_label: int = 3,
    chance: float = 0.5,
    z: float = 1.96,
) -> bool:
    """Whether a checker's record on settled items (``right`` of ``seen`` answered with the
    settled label) shows reading rather than guessing: at least ``min_seen`` of them, and the
    lower end of the Wilson interval of the accuracy (95% with ``z`` 1.96) above ``chance``, the
    accuracy of a guesser between the two labels a settled claim can have. With ``by_label``
    (``(right, seen)`` for each label), also at least ``min_per_label`` items of each label and
    an accuracy of at least ``chance`` on each: a checker who answers one label to everything is
    right on every item of that label and on none of the other, however the settled items lean.
    A constant or random answerer clears the bar by luck alone about 2.5% of the times it is
    asked, and less the longer its record."""
    if seen < max(1, min_seen):
        return False
    if by_label is not None:
        for label_right, label_seen in by_label:
            if label_seen < min_per_label or label_right < chance * label_seen:
                return False
    return wilson(right, seen, z)[0] > chance


def gold_label(
    author_label: str,
    checks: Sequence[tuple[str, float]],
    *,
    min_checks: int = 4,
    share: float = 0.6,
    author_weight: float = 1.0,
) -> str:
    """The label holding at least ``share`` of the weight, else :data:`NO_GOLD`.

    The author's label counts with ``author_weight`` and each check ``(label, weight)`` with
    its weight; a label outside :data:`LABELS` (FLAWED, or an author's blank) counts for
    nothing, in its label's tally and in the total alike. While fewer than ``min_checks``
    checks with a label and a weight above 0 are in, the claim has no gold label yet. With
    every weight 1.0 and four checks this is MultiNLI's rule: 3 of 5 labels.

    ``share`` must be above one half, so that at most one label can qualify.
    """
    if not 0.5 < share <= 1.0:
        raise ValueError(f"share must be in (0.5, 1], got {share}")
    if author_weight < 0:
        raise ValueError(f"author_weight must be >= 0, got {author_weight}")
    tally = dict.fromkeys(LABELS, 0.0)
    counted = 0
    for label, weight in checks:
        if not weight >= 0 or math.isinf(weight):
            raise ValueError(f"a check's weight must be finite and >= 0, got {weight}")
        if label in tally and weight > 0:
            tally[label] += weight
            counted += 1
    if counted < min_checks:
        return NO_GOLD
    if author_label in tally:
        tally[author_label] += author_weight
    total = sum(tally.values())
    if total <= 0:
        return NO_GOLD
    for label, weight in tally.items():
        if weight >= share * total * (1.0 - _RELATIVE_TOLERANCE):
            return label
    return NO_GOLD


def _check_counts(counts: Sequence[Sequence[int]]) -> list[list[int]]:
    rows = [list(row) for row in counts]
    if not rows:
        raise ValueError("no items")
    width = len(rows[0])
    if width < 1 or any(len(row) != width for row in rows):
        raise ValueError("every item needs a count for each category, the same categories for all")
    if any(c < 0 or c != int(c) for row in rows for c in row):
        raise ValueError("counts must be whole numbers >= 0")
    return rows


def _kappa(rows: list[list[int]]) -> float:
    """Fleiss' formula over items that each have at least two raters (their own number)."""
    agreement = 0.0
    category_totals = [0] * len(rows[0])
    ratings = 0
    for row in rows:
        n = sum(row)
        agreement += sum(c * (c - 1) for c in row) / (n * (n - 1))
        for j, c in enumerate(row):
            category_totals[j] += c
        ratings += n
    observed = agreement / len(rows)
    expected = sum((t / ratings) ** 2 for t in category_totals)
    if expected == 1.0:
        return math.nan  # every rating in one category: agreement by chance is certain
    return (observed - expected) / (1.0 - expected)


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float:
    """Fleiss' (1971) kappa over an items × categories table of rating counts.

    ``counts[i][j]`` is how many raters put item ``i`` in category ``j``; every item needs the
    same number of raters, at least two. Observed agreement is the mean over items of the
    share of agreeing rater pairs; chance agreement is the sum of the squared category
    shares. 1 is perfect agreement, 0 what chance gives; NaN when every rating falls in one
    category (chance then agrees perfectly too, and kappa is 0 / 0).
    """
    rows = _check_counts(counts)
    raters = {sum(row) for row in rows}
    if len(raters) != 1:
        raise ValueError(f"every item needs the same number of raters, got {sorted(raters)}")
    if raters.pop() < 2:
        raise ValueError("kappa needs at least two raters per item")
    return _kappa(rows)


def fleiss_kappa_unequal(counts: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa when items have different numbers of raters (some checks are FLAWED).

    Each item's agreement is the share of agreeing pairs among its own raters, averaged
    over the items; chance agreement comes from the category shares of all their ratings.
    Items with fewer than two raters are left out (a lone label agrees with nobody). With
    equal raters this is :func:`fleiss_kappa` exactly; it is Fleiss' formula generalised in
    the plainest way, not an estimator with a published variance.
    """
    rows = [row for row in _check_counts(counts) if sum(row) >= 2]
    if not rows:
        raise ValueError("kappa needs an item with at least two raters")
    return _kappa(rows)


@dataclass(frozen=True, slots=True)
class ValidationRow:
    """One claim as validated: the author's label, the checks' labels, the gold label.

    ``labels`` are the checks that count (the app leaves out checkers whose weight is 0);
    FLAWED reports among them are not labels and are skipped.
    """

    author_label: str
    labels: tuple[str, ...]
    gold_label: str


class ValidationTable(TypedDict):
    """MultiNLI's Table 2 (Williams et al. 2018) over the claims with enough labels.

    Shares are fractions in [0, 1] (NaN over no claims). ``author_matches_gold``,
    ``author_differs_from_gold`` and ``no_gold`` add up to 1, as in the paper.
    """

    claims: int
    """Claims counted: those with at least ``min_checks`` labels from checkers."""
    skipped: int
    """Claims left out for having fewer labels."""
    labels_per_claim: float
    """Mean labels per counted claim, the author's included (MultiNLI: 5)."""
    unanimous: float
    """Share of claims whose labels, the author's included, are all the same."""
    individual_matches_gold: float
    """Share of checkers' labels equal to their claim's gold label (claims with one)."""
    individual_matches_author: float
    """Share of checkers' labels equal to their claim's author's label."""
    author_matches_gold: float
    """Share of claims whose gold label is the author's label."""
    author_differs_from_gold: float
    """Share of claims with a gold label other than the author's."""
    no_gold: float
    """Share of claims without a gold label (``-``)."""


def _share(part: int, whole: int) -> float:
    return part / whole if whole else math.nan


def validation_table(rows: Iterable[ValidationRow], *, min_checks: int = 4) -> ValidationTable:
    """MultiNLI's validation statistics over claims (Williams et al. 2018, Table 2).

    "Individual label" means a checker's label, as in the paper: the author's label is not
    one (else it would match itself), and labels on claims without a gold label are left out
    of the gold row (no label matches ``-``). A claim counts when it has at least
    ``min_checks`` labels in :data:`LABELS`; the table says how many did and did not.
    """
    claims = skipped = labels = unanimous = 0
    individual = matches_gold = individual_with_gold = matches_author = 0
    author_gold = author_other = no_gold = 0
    for row in rows:
        if row.gold_label not in LABELS and row.gold_label != NO_GOLD:
            raise ValueError(f"unknown gold label {row.gold_label!r}")
        checks = [label for label in row.labels if label in LABELS]
        if len(checks) < min_checks:
            skipped += 1
            continue
        claims += 1
        every = checks + ([row.author_label] if row.author_label in LABELS else [])
        labels += len(every)
        unanimous += len(set(every)) == 1 and row.author_label in LABELS
        individual += len(checks)
        matches_author += sum(label == row.author_label for label in checks)
        if row.gold_label == NO_GOLD:
            no_gold += 1
            continue
        individual_with_gold += len(checks)
        matches_gold += sum(label == row.gold_label for label in checks)
        if row.gold_label == row.author_label:
            author_gold += 1
        else:
            author_other += 1
    return ValidationTable(
        claims=claims,
        skipped=skipped,
        labels_per_claim=_share(labels, claims),
        unanimous=_share(unanimous, claims),
        individual_matches_gold=_share(matches_gold, individual_with_gold),
        individual_matches_author=_share(matches_author, individual),
        author_matches_gold=_share(author_gold, claims),
        author_differs_from_gold=_share(author_other, claims),
        no_gold=_share(no_gold, claims),
    )
