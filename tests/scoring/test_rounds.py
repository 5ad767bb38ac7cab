"""The voting round's clock and points (scoring/rounds.py), against GAME.md's numbers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.rounds import (
    POT,
    Award,
    AwardKind,
    AwardRole,
    Outcome,
    remaining_seconds,
    round_awards,
    round_deadline,
    voter_points,
)

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)

seconds = st.floats(min_value=0, max_value=1_000, allow_nan=False)
reveal_counts = st.integers(min_value=0, max_value=30)
players = st.sampled_from(["ada", "bob", "cy", "dee"])


def at(seconds_after_start: float) -> datetime:
    return T0 + timedelta(seconds=seconds_after_start)


# --- the clock -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("elapsed", "reveals", "expected"),
    [
        (0, 0, 180.0),
        (30, 0, 150.0),
        (30, 2, 130.0),
        (0.5, 1, 169.5),
        (179, 0, 1.0),
        (180, 0, 0.0),
        (170, 1, 0.0),
        (200, 3, -50.0),
    ],
)
def test_remaining_is_duration_minus_elapsed_minus_ten_seconds_per_clue(
    elapsed: float, reveals: int, expected: float
) -> None:
    assert remaining_seconds(started_at=T0, now=at(elapsed), reveals=reveals) == expected
    assert remaining_seconds(started_at=100.0, now=100.0 + elapsed, reveals=reveals) == expected


def test_clock_stepping_back_never_adds_time() -> None:
    assert remaining_seconds(started_at=T0, now=at(-5), reveals=0) == 180.0
    assert remaining_seconds(started_at=T0, now=at(-5), reveals=1) == 170.0


def test_settings_change_the_clock() -> None:
    assert remaining_seconds(started_at=0, now=20, reveals=2, duration=60, clue_cost=5) == 30


def test_mixing_datetime_and_seconds_is_refused() -> None:
    with pytest.raises(TypeError):
        remaining_seconds(started_at=T0, now=5.0, reveals=0)


@pytest.mark.parametrize("reveals", [-1, -10])
def test_negative_reveals_are_refused(reveals: int) -> None:
    with pytest.raises(ValueError):
        remaining_seconds(started_at=0, now=0, reveals=reveals)


@settings(max_examples=300)
@given(reveals=reveal_counts)
def test_remaining_is_zero_at_the_stored_deadline(reveals: int) -> None:
    deadline = round_deadline(started_at=T0, reveals=reveals)
    if deadline >= T0:
        assert remaining_seconds(started_at=T0, now=deadline, reveals=reveals) == 0.0


# --- voter points ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("remaining", "expected"),
    [
        (180.0, 120),
        (120.0, 120),
        (119.99, 119),
        (100.5, 100),
        (1.0, 1),
        (0.99, 0),
        (0.0, 0),
        (-7.5, 0),
        (float("inf"), 120),
        (float("-inf"), 0),
    ],
)
def test_voter_points_are_whole_seconds_left_capped_at_the_pot(
    remaining: float, expected: int
) -> None:
    assert voter_points(remaining) == expected


def test_voter_points_refuse_nan() -> None:
    with pytest.raises(ValueError):
        voter_points(float("nan"))


@settings(max_examples=1000)
@given(
    elapsed=seconds,
    more_elapsed=seconds,
    reveals=reveal_counts,
    more_reveals=st.integers(min_value=0, max_value=5),
)
def test_voter_points_never_rise_with_time_or_clues(
    elapsed: float, more_elapsed: float, reveals: int, more_reveals: int
) -> None:
    before = voter_points(remaining_seconds(started_at=0.0, now=elapsed, reveals=reveals))
    later = voter_points(
        remaining_seconds(started_at=0.0, now=elapsed + more_elapsed, reveals=reveals)
    )
    with_clue = voter_points(
        remaining_seconds(started_at=0.0, now=elapsed, reveals=reveals + more_reveals)
    )
    assert 0 <= later <= before <= POT
    assert 0 <= with_clue <= before


# --- awards ----------------------------------------------------------------------------


def verify(player: str, amount: int) -> Award:
    return Award(player, amount, AwardKind.VERIFY, AwardRole.VOTER)


def fool_true(player: str, amount: int) -> Award:
    return Award(player, amount, AwardKind.FOOL, AwardRole.TRUE_CLAIM_AUTHOR)


def fool_false(player: str, amount: int) -> Award:
    return Award(player, amount, AwardKind.FOOL, AwardRole.FALSE_CLAIM_AUTHOR)


@pytest.mark.parametrize(
    ("remaining", "true_author", "false_author", "expected"),
    [
        # fast, no clue: the voter takes the whole pot, authors get nothing
        (175.0, "t", "f", [verify("v", 120)]),
        (120.0, "t", "f", [verify("v", 120)]),
        # 100 points to the voter, 20 left on the table, split evenly
        (100.7, "t", "f", [verify("v", 100), fool_true("t", 10), fool_false("f", 10)]),
        # odd remainder: the false claim's author gets the extra point
        (99.2, "t", "f", [verify("v", 99), fool_true("t", 10), fool_false("f", 11)]),
        # one point left on the table: only the false claim's author is paid
        (119.5, "t", "f", [verify("v", 119), fool_false("f", 1)]),
        # under a second left: the voter's zero row is not emitted
        (0.4, "t", "f", [fool_true("t", 60), fool_false("f", 60)]),
        # one author wrote both claims: two rows, one per claim, summing right
        (57.0, "a", "a", [verify("v", 57), fool_true("a", 31), fool_false("a", 32)]),
    ],
)
def test_correct_vote_splits_the_pot(
    remaining: float, true_author: str, false_author: str, expected: list[Award]
) -> None:
    awards = round_awards(
        outcome="correct",
        remaining=remaining,
        voter="v",
        true_claim_author=true_author,
        false_claim_author=false_author,
    )
    assert awards == expected
    assert sum(a.amount for a in awards) == POT


@pytest.mark.parametrize("outcome", ["wrong", "timeout", "reported", Outcome.WRONG])
def test_wrong_timeout_or_report_pays_nobody(outcome: str) -> None:
    assert (
        round_awards(
            outcome=outcome, remaining=90, voter="v", true_claim_author="t", false_claim_author="f"
        )
        == []
    )


def test_unknown_outcome_is_refused() -> None:
    with pytest.raises(ValueError):
        round_awards(
            outcome="draw", remaining=90, voter="v", true_claim_author="t", false_claim_author="f"
        )


@pytest.mark.parametrize("remaining", [0.0, -3.0, float("nan")])
def test_correct_vote_without_time_left_is_a_timeout_not_a_payout(remaining: float) -> None:
    with pytest.raises(ValueError):
        round_awards(
            outcome="correct",
            remaining=remaining,
            voter="v",
            true_claim_author="t",
            false_claim_author="f",
        )


@settings(max_examples=2000)
@given(
    remaining=st.floats(min_value=1e-9, max_value=1e6, allow_nan=False),
    voter=players,
    true_author=players,
    false_author=players,
    pot=st.integers(min_value=0, max_value=500),
)
def test_correct_vote_is_zero_sum_and_never_negative(
    remaining: float, voter: str, true_author: str, false_author: str, pot: int
) -> None:
    awards = round_awards(
        outcome="correct",
        remaining=remaining,
        voter=voter,
        true_claim_author=true_author,
        false_claim_author=false_author,
        pot=pot,
    )
    assert sum(a.amount for a in awards) == pot
    assert all(a.amount > 0 for a in awards)
    paid_to_voter = [a for a in awards if a.kind is AwardKind.VERIFY]
    assert sum(a.amount for a in paid_to_voter) == voter_points(remaining, pot)
    assert all(a.player == voter for a in paid_to_voter)
    shares = {a.role: a.amount for a in awards if a.kind is AwardKind.FOOL}
    true_share = shares.get(AwardRole.TRUE_CLAIM_AUTHOR, 0)
    false_share = shares.get(AwardRole.FALSE_CLAIM_AUTHOR, 0)
    assert 0 <= false_share - true_share <= 1


@settings(max_examples=1000)
@given(
    outcome=st.sampled_from(["wrong", "timeout", "reported"]),
    remaining=st.floats(allow_nan=True),
    voter=players,
    true_author=players,
    false_author=players,
)
def test_nothing_is_awarded_unless_the_vote_is_correct(
    outcome: str, remaining: float, voter: str, true_author: str, false_author: str
) -> None:
    assert (
        round_awards(
            outcome=outcome,
            remaining=remaining,
            voter=voter,
            true_claim_author=true_author,
            false_claim_author=false_author,
        )
        == []
    )


@settings(max_examples=1000)
@given(elapsed=seconds, reveals=reveal_counts)
def test_a_round_played_end_to_end_respects_the_rules(elapsed: float, reveals: int) -> None:
    remaining = remaining_seconds(started_at=T0, now=at(elapsed), reveals=reveals)
    outcome = "correct" if remaining > 0 else "timeout"
    awards = round_awards(
        outcome=outcome, remaining=remaining, voter=1, true_claim_author=2, false_claim_author=3
    )
    assert sum(a.amount for a in awards) == (POT if remaining > 0 else 0)
