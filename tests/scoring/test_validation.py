"""scoring.validation: checker weights, weighted gold labels, Fleiss' kappa, MultiNLI's table."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.validation import (
    LABELS,
    NO_GOLD,
    ValidationRow,
    checker_weight,
    fleiss_kappa,
    fleiss_kappa_unequal,
    gold_label,
    smoothed_accuracy,
    validation_table,
)

S, R, N = LABELS
FLAWED = "FLAWED"

labels = st.sampled_from(LABELS)


# --- checker weight ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("right", "seen", "expected"),
    [
        (0, 0, 1.0),  # nothing known: neutral
        (0, 4, 1.0),  # still under min_gold, however bad
        (4, 5, 1.0),  # the prior's mean (0.8): weighs like the author
        (8, 10, 1.0),
        (5, 5, math.log(18) / math.log(8)),  # smoothed 0.9
        (3, 5, math.log(2 * 0.7 / 0.3) / math.log(8)),  # smoothed 0.7
        (2, 5, math.log(3) / math.log(8)),  # smoothed 0.6: at the bar, still counts
        (1, 5, 0.0),  # smoothed 0.5: under the bar
        (20, 40, 0.0),
        (1000, 1000, 3.0),  # clipped
    ],
)
def test_checker_weight_is_the_normalised_log_odds_of_the_smoothed_accuracy(right: int, seen: int, expected: float) -> None:
    assert checker_weight(gold_right=right, gold_seen=seen) == pytest.approx(expected, rel=1e-12)


def test_a_random_clicker_weighs_nothing_even_without_the_accuracy_bar() -> None:
    """log(2p / (1 - p)) is 0 at p = 1/3, the accuracy of a click at random over 3 labels."""
    assert checker_weight(gold_right=296, gold_seen=895, min_accuracy=0.0) == pytest.approx(0.0, abs=1e-12)  # smoothed 300/900
    assert checker_weight(gold_right=1, gold_seen=30, min_accuracy=0.0) == 0.0  # below chance: not negative


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.data())
def test_checker_weight_never_falls_as_gold_answers_come_right(seen: int, data: st.DataObject) -> None:
    right = data.draw(st.integers(0, max(seen - 1, 0)))
    if seen == 0:
        return
    lower = checker_weight(gold_right=right, gold_seen=seen)
    higher = checker_weight(gold_right=right + 1, gold_seen=seen)
    assert 0.0 <= lower <= higher <= 3.0


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.data(), st.integers(0, 20), st.floats(0.34, 0.95))
def test_checker_weight_is_zero_exactly_when_a_known_checker_is_under_the_bar(
    seen: int, data: st.DataObject, min_gold: int, bar: float
) -> None:
    right = data.draw(st.integers(0, seen))
    weight = checker_weight(gold_right=right, gold_seen=seen, min_gold=min_gold, min_accuracy=bar)
    known = seen >= min_gold
    under = smoothed_accuracy(gold_right=right, gold_seen=seen) < bar
    assert (weight == 0.0) == (known and under)
    if not known:
        assert weight == 1.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"gold_right": 3, "gold_seen": 2},
        {"gold_right": -1, "gold_seen": 2},
        {"gold_right": 1, "gold_seen": 2, "prior": (0.0, 1.0)},
        {"gold_right": 1, "gold_seen": 2, "prior": (1.0, 2.0)},  # prior mean 1/3: no better than chance
        {"gold_right": 1, "gold_seen": 2, "min_gold": -1},
        {"gold_right": 1, "gold_seen": 2, "min_accuracy": 1.5},
        {"gold_right": 1, "gold_seen": 2, "max_weight": 0.5},
    ],
)
def test_impossible_records_and_settings_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        checker_weight(**kwargs)


# --- gold label --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("author", "checks", "expected"),
    [
        (S, [S, S, R, N], S),  # 3 of 5
        (S, [R, R, R, S], R),  # 3 of 5 against the author
        (S, [S, R, R, N], NO_GOLD),  # 2, 2, 1
        (S, [R, R, N, N], NO_GOLD),
        (N, [N, N, N, N], N),
        (S, [S, S, S], NO_GOLD),  # only 3 checks: not yet
        (S, [S, S, S, FLAWED], NO_GOLD),  # FLAWED is a report, not a check
        (S, [S, S, FLAWED, FLAWED, R, R], S),  # four checks besides the reports: 3 of 5
        (S, [S, S, FLAWED, R, R, N], NO_GOLD),  # 3 of 6
        (S, [S, S, FLAWED, R, S, N], S),  # 4 of 6
        (FLAWED, [S, S, S, R], S),  # an author's non-label counts for nothing: 3 of 4
        (FLAWED, [S, S, R, R], NO_GOLD),
    ],
)
def test_gold_label_with_plain_weights_is_multinlis_majority(author: str, checks: list[str], expected: str) -> None:
    assert gold_label(author, [(label, 1.0) for label in checks]) == expected


@settings(max_examples=300, deadline=None)
@given(labels, st.lists(labels, min_size=4, max_size=4))
def test_four_plain_checks_give_exactly_the_label_three_of_five_chose(author: str, checks: list[str]) -> None:
    votes = Counter([author, *checks])
    label, count = votes.most_common(1)[0]
    expected = label if count >= 3 else NO_GOLD
    assert gold_label(author, [(c, 1.0) for c in checks]) == expected


def test_a_trusted_checker_can_carry_a_split_and_a_distrusted_one_cannot() -> None:
    split = [(S, 1.0), (R, 1.0), (R, 1.0), (N, 1.0)]
    assert gold_label(S, split) == NO_GOLD
    assert gold_label(S, [(S, 2.0), (R, 1.0), (R, 1.0), (S, 1.0)]) == S  # 4 of 6
    assert gold_label(S, [(S, 1.0), (R, 0.5), (R, 0.5), (S, 0.5)]) == S  # 2.5 of 3.5
    assert gold_label(R, [(R, 1.0), (R, 0.2), (S, 1.0), (S, 1.0)]) == NO_GOLD  # 2.2 of 4.2


def test_checks_that_weigh_nothing_do_not_count_towards_the_minimum() -> None:
    checks = [(S, 1.0), (S, 1.0), (S, 1.0), (R, 0.0)]
    assert gold_label(S, checks) == NO_GOLD
    assert gold_label(S, [*checks, (S, 0.4)]) == S


def test_one_checker_at_the_weight_clip_cannot_settle_a_claim_with_one_ally() -> None:
    assert gold_label(S, [(S, 3.0), (R, 1.0), (R, 1.0), (R, 1.0)]) == NO_GOLD
    assert gold_label(N, [(S, 3.0), (S, 1.0), (R, 1.0), (R, 1.0)]) == NO_GOLD


@settings(max_examples=300, deadline=None)
@given(
    labels,
    st.lists(st.tuples(st.sampled_from((*LABELS, FLAWED)), st.floats(0.0, 3.0)), min_size=0, max_size=8),
    st.floats(0.1, 10.0),
    st.randoms(use_true_random=False),
)
def test_gold_label_ignores_order_and_the_scale_of_the_weights(author: str, checks: list[tuple[str, float]], scale: float, rnd) -> None:
    expected = gold_label(author, checks)
    shuffled = list(checks)
    rnd.shuffle(shuffled)
    assert gold_label(author, shuffled) == expected
    scaled = [(label, weight * scale) for label, weight in checks]
    near_tie = any(  # a label at the threshold may fall on either side after rounding
        abs(sum(w for lab, w in checks if lab == label) + (author == label) - 0.6 * (sum(w for lab, w in checks if lab in LABELS) + 1)) < 1e-9
        for label in LABELS
    )
    # A weight so small (subnormal) that scaling it rounds it to 0 is a check that no longer
    # counts: fewer than four checks, no gold. That is float underflow, not the rule.
    underflow = any((weight > 0) != (weight * scale > 0) for _, weight in checks)
    if not near_tie and not underflow:
        assert gold_label(author, scaled, author_weight=scale) == expected


@settings(max_examples=300, deadline=None)
@given(labels, st.lists(st.tuples(st.sampled_from((*LABELS, FLAWED)), st.floats(0.0, 3.0)), max_size=8))
def test_a_gold_label_holds_the_share_of_the_weight(author: str, checks: list[tuple[str, float]]) -> None:
    gold = gold_label(author, checks)
    counted = [(label, w) for label, w in checks if label in LABELS and w > 0]
    if gold == NO_GOLD:
        return
    assert len(counted) >= 4
    total = sum(w for _, w in counted) + 1.0
    mine = sum(w for label, w in counted if label == gold) + (author == gold)
    assert mine >= 0.6 * total * (1 - 1e-9)


@pytest.mark.parametrize("share", [0.5, 0.3, 1.2])
def test_a_share_that_lets_two_labels_qualify_is_refused(share: float) -> None:
    with pytest.raises(ValueError):
        gold_label(S, [(S, 1.0)] * 4, share=share)


@pytest.mark.parametrize("weight", [-1.0, math.inf, math.nan])
def test_impossible_check_weights_are_refused(weight: float) -> None:
    with pytest.raises(ValueError):
        gold_label(S, [(S, 1.0)] * 3 + [(S, weight)])


# --- Fleiss' kappa -----------------------------------------------------------------------

# Fleiss (1971), Table 1: 30 patients, 6 psychiatrists each, 5 diagnoses; kappa = .430.
FLEISS_1971 = [
    [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1],
    [0, 0, 5, 0, 1], [3, 0, 0, 1, 2], [5, 1, 0, 0, 0], [0, 2, 0, 4, 0], [1, 0, 2, 0, 3],
    [0, 0, 0, 0, 6], [0, 1, 0, 5, 0], [0, 2, 0, 1, 3], [2, 0, 0, 4, 0], [1, 0, 0, 4, 1],
    [0, 5, 0, 1, 0], [4, 0, 0, 0, 2], [0, 2, 0, 4, 0], [1, 0, 5, 0, 0], [0, 0, 0, 0, 6],
]

# Wikipedia's worked example (10 items, 14 raters, 5 categories): kappa = 0.210.
WIKIPEDIA = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_reproduces_fleiss_1971() -> None:
    assert fleiss_kappa(FLEISS_1971) == pytest.approx(0.430, abs=5e-4)


def test_fleiss_kappa_reproduces_the_wikipedia_example() -> None:
    assert fleiss_kappa(WIKIPEDIA) == pytest.approx(0.210, abs=5e-4)


@st.composite
def equal_rater_tables(draw: st.DrawFn) -> list[list[int]]:
    raters = draw(st.integers(2, 8))
    categories = draw(st.integers(2, 4))
    items = draw(st.integers(1, 25))
    table = []
    for _ in range(items):
        choices = draw(st.lists(st.integers(0, categories - 1), min_size=raters, max_size=raters))
        table.append([choices.count(j) for j in range(categories)])
    return table


@settings(max_examples=300, deadline=None)
@given(equal_rater_tables())
def test_fleiss_kappa_matches_statsmodels(table: list[list[int]]) -> None:
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        reference = float(inter_rater.fleiss_kappa(np.array(table), method="fleiss"))
    mine = fleiss_kappa(table)
    if math.isnan(reference):
        assert math.isnan(mine)
    else:
        assert mine == pytest.approx(reference, abs=1e-9)


def test_fleiss_kappa_of_perfect_agreement_is_one_and_of_one_category_is_undefined() -> None:
    assert fleiss_kappa([[5, 0, 0], [0, 5, 0], [0, 0, 5]]) == pytest.approx(1.0)
    assert math.isnan(fleiss_kappa([[5, 0, 0], [5, 0, 0]]))


@pytest.mark.parametrize(
    "table",
    [
        [],
        [[2, 1], [1, 1]],  # 3 raters, then 2
        [[1, 0], [0, 1]],  # 1 rater
        [[2, 1], [1, 1, 1]],  # ragged categories
        [[-1, 4], [2, 1]],
    ],
)
def test_fleiss_kappa_refuses_tables_it_is_not_defined_on(table: list[list[int]]) -> None:
    with pytest.raises(ValueError):
        fleiss_kappa(table)


@settings(max_examples=200, deadline=None)
@given(equal_rater_tables())
def test_the_unequal_variant_is_fleiss_kappa_when_raters_are_equal(table: list[list[int]]) -> None:
    equal, unequal = fleiss_kappa(table), fleiss_kappa_unequal(table)
    assert (math.isnan(equal) and math.isnan(unequal)) or unequal == pytest.approx(equal, abs=1e-12)


def test_the_unequal_variant_leaves_out_items_with_a_lone_rater() -> None:
    assert fleiss_kappa_unequal([[4, 0], [0, 3], [1, 0], [0, 0]]) == pytest.approx(fleiss_kappa_unequal([[4, 0], [0, 3]]))
    assert fleiss_kappa_unequal([[4, 0], [0, 5], [3, 0]]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        fleiss_kappa_unequal([[1, 0], [0, 1]])


# --- validation table --------------------------------------------------------------------


def test_validation_table_reproduces_multinlis_rows_on_a_small_example() -> None:
    rows = [
        ValidationRow(S, (S, S, S, S), S),  # unanimous
        ValidationRow(S, (S, S, R, N), S),
        ValidationRow(S, (R, R, R, S), R),  # gold differs from the author's
        ValidationRow(S, (S, R, R, N), NO_GOLD),
        ValidationRow(S, (S, S, FLAWED), NO_GOLD),  # two checks short: skipped
    ]
    table = validation_table(rows)
    assert table["claims"] == 4
    assert table["skipped"] == 1
    assert table["labels_per_claim"] == pytest.approx(5.0)
    assert table["unanimous"] == pytest.approx(1 / 4)
    assert table["individual_matches_gold"] == pytest.approx((4 + 2 + 3) / 12)  # over claims with a gold label
    assert table["individual_matches_author"] == pytest.approx((4 + 2 + 1 + 1) / 16)
    assert table["author_matches_gold"] == pytest.approx(2 / 4)
    assert table["author_differs_from_gold"] == pytest.approx(1 / 4)
    assert table["no_gold"] == pytest.approx(1 / 4)


def test_flawed_reports_are_not_labels_in_the_table() -> None:
    table = validation_table([ValidationRow(N, (N, N, N, N, FLAWED), N)])
    assert table["labels_per_claim"] == pytest.approx(5.0)
    assert table["unanimous"] == 1.0
    assert table["individual_matches_gold"] == 1.0


def test_a_table_over_no_claims_has_counts_and_no_shares() -> None:
    table = validation_table([ValidationRow(S, (S,), NO_GOLD)])
    assert (table["claims"], table["skipped"]) == (0, 1)
    assert math.isnan(table["no_gold"])


def test_an_unknown_gold_label_is_refused() -> None:
    with pytest.raises(ValueError):
        validation_table([ValidationRow(S, (S, S, S, S), "ENTAILMENT")])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(labels, st.lists(st.sampled_from((*LABELS, FLAWED)), max_size=7)), max_size=30))
def test_the_author_rows_add_up_to_one_over_the_claims_counted(claims: list[tuple[str, list[str]]]) -> None:
    rows = [ValidationRow(author, tuple(checks), gold_label(author, [(c, 1.0) for c in checks])) for author, checks in claims]
    table = validation_table(rows)
    assert table["claims"] + table["skipped"] == len(rows)
    if table["claims"]:
        total = table["author_matches_gold"] + table["author_differs_from_gold"] + table["no_gold"]
        assert total == pytest.approx(1.0)
        assert table["unanimous"] <= table["author_matches_gold"] + 1e-12
        assert table["labels_per_claim"] >= 5


@pytest.mark.parametrize(
    ("right", "seen", "by_label", "shows"),
    [
        (9, 10, None, True),  # 9 of 10: the lower bound clears 0.5
        (8, 10, None, False),
        (5, 5, None, False),  # too few
        (16, 20, ((16, 16), (0, 4)), False),  # SUPPORTS to everything, settled claims leaning 4 to 1
        (17, 20, ((14, 16), (3, 4)), True),  # a reader, right on both labels
        (17, 20, ((15, 18), (2, 2)), False),  # too few of one label to tell
        (10, 20, ((5, 10), (5, 10)), False),  # a coin
    ],
)
def test_a_record_shows_reading_only_above_chance_and_on_both_labels(right, seen, by_label, shows) -> None:
    from scoring.validation import record_shows_reading

    assert record_shows_reading(right, seen, by_label=by_label) is shows
