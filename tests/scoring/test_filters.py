"""Quality filters (scoring/filters.py): smoothed score, fitted prior, too hard, too easy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from scoring.filters import (
    ClaimQuality,
    VoteFacts,
    claim_quality,
    credible_interval,
    fit_beta_binomial_prior,
    is_too_easy,
    is_too_hard,
    smoothed_rate,
)

DEV = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "fm2" / "dev.jsonl"


def dev_counts() -> list[tuple[int, int]]:
    if not DEV.exists():
        pytest.skip(f"FM2 dev data not found at {DEV}")
    with DEV.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    return [(row["correct_votes"], row["total_votes"]) for row in rows]


# --- smoothed rate and interval --------------------------------------------------------


@pytest.mark.parametrize(
    ("correct", "votes", "expected"),
    [
        (0, 0, 0.8),  # no votes: the prior mean
        (1, 1, 5 / 6),
        (0, 1, 4 / 6),
        (0, 3, 0.5),
        (0, 4, 4 / 9),
        (3, 10, 7 / 15),
        (10, 10, 14 / 15),
    ],
)
def test_smoothed_rate_adds_four_correct_and_one_wrong_pseudo_vote(
    correct: int, votes: int, expected: float
) -> None:
    assert smoothed_rate(correct, votes) == pytest.approx(expected)


def test_smoothed_rate_takes_another_prior() -> None:
    assert smoothed_rate(2, 4, a=1, b=1) == pytest.approx(0.5)


@pytest.mark.parametrize(("correct", "votes"), [(-1, 2), (3, 2), (0, -1)])
def test_impossible_counts_are_refused(correct: int, votes: int) -> None:
    with pytest.raises(ValueError):
        smoothed_rate(correct, votes)
    with pytest.raises(ValueError):
        credible_interval(correct, votes)


@pytest.mark.parametrize(("a", "b"), [(0, 1), (4, 0), (-1, 1), (float("inf"), 1)])
def test_improper_priors_are_refused(a: float, b: float) -> None:
    with pytest.raises(ValueError):
        smoothed_rate(1, 2, a, b)


def test_interval_is_the_equal_tailed_beta_posterior_interval() -> None:
    low, high = credible_interval(3, 10, 4, 1, mass=0.9)
    assert low == pytest.approx(stats.beta(7, 8).ppf(0.05))
    assert high == pytest.approx(stats.beta(7, 8).ppf(0.95))


@settings(max_examples=300, deadline=None)
@given(
    votes=st.integers(min_value=0, max_value=200),
    share=st.floats(min_value=0, max_value=1),
    a=st.floats(min_value=1, max_value=50),
    b=st.floats(min_value=0.05, max_value=50),
)
def test_interval_contains_the_smoothed_rate_when_a_is_at_least_one(
    votes: int, share: float, a: float, b: float
) -> None:
    correct = round(share * votes)
    low, high = credible_interval(correct, votes, a, b)
    assert 0 <= low <= smoothed_rate(correct, votes, a, b) <= high <= 1


def test_interval_narrows_as_votes_come_in() -> None:
    widths = [np.subtract(*credible_interval(n // 2, n)[::-1]) for n in (0, 4, 16, 64)]
    assert widths == sorted(widths, reverse=True)


# --- fitted prior ----------------------------------------------------------------------


def test_fitted_prior_on_fm2_dev_matches_the_pooled_accuracy() -> None:
    counts = dev_counts()
    assert sum(c for c, _ in counts) == 1935
    assert sum(v for _, v in counts) == 2402
    prior = fit_beta_binomial_prior(counts)
    assert prior.converged
    assert prior.n_claims == sum(1 for _, v in counts if v > 0)
    assert prior.mean == pytest.approx(1935 / 2402, abs=0.01)
    assert prior.a > 0 and prior.b > 0
    assert np.isfinite(prior.log_likelihood) and prior.log_likelihood < 0


@pytest.mark.parametrize(("a", "b"), [(4.0, 1.0), (2.0, 3.0), (12.0, 3.0)])
def test_fit_recovers_the_mean_of_a_known_beta_binomial(a: float, b: float) -> None:
    rng = np.random.default_rng(7)
    votes = rng.integers(1, 12, size=3000)
    rates = rng.beta(a, b, size=votes.size)
    correct = rng.binomial(votes, rates)
    prior = fit_beta_binomial_prior(zip(correct.tolist(), votes.tolist()))
    assert prior.converged
    assert prior.mean == pytest.approx(a / (a + b), abs=0.02)
    # the strength a + b is harder to pin down with so few votes per claim
    assert prior.a + prior.b == pytest.approx(a + b, rel=0.5)


def test_claims_without_votes_do_not_change_the_fit() -> None:
    pairs = [(3, 4), (1, 3), (5, 5), (2, 2), (0, 2), (4, 6)] * 20
    with_empty = fit_beta_binomial_prior(pairs + [(0, 0)] * 500)
    without = fit_beta_binomial_prior(pairs)
    assert with_empty.n_claims == without.n_claims == len(pairs)
    assert with_empty.a == pytest.approx(without.a)
    assert with_empty.b == pytest.approx(without.b)


def test_fit_needs_some_votes() -> None:
    with pytest.raises(ValueError):
        fit_beta_binomial_prior([(0, 0), (0, 0)])


def test_fit_reports_no_convergence_when_claims_do_not_vary() -> None:
    # Every claim at exactly the same rate: less spread than binomial noise, so the
    # likelihood keeps rising with a + b and the optimizer stops at its bound.
    prior = fit_beta_binomial_prior([(5, 10)] * 200)
    assert not prior.converged
    assert prior.mean == pytest.approx(0.5, abs=0.01)


# --- too hard --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("correct", "votes", "kwargs", "flagged", "confident"),
    [
        (0, 0, {}, False, False),  # no votes: prior mean 0.8
        (0, 3, {}, False, False),  # 4/8 = 0.5 is not under 0.5
        (0, 4, {}, True, False),  # 4/9 = 0.44
        (1, 5, {}, False, False),  # 5/10 = 0.5
        (1, 6, {}, True, False),  # 5/11
        (3, 10, {}, True, False),  # 7/15 = 0.47, but the interval reaches 0.66
        (0, 10, {}, True, True),  # 4/15 and the interval tops out at 0.47
        (0, 10, {"min_votes_for_interval": 11}, True, False),
        (8, 10, {}, False, False),
        (3, 10, {"threshold": 0.4}, False, False),
        (1, 6, {"a": 12.75, "b": 3.09}, False, False),  # a stronger prior forgives more
        (0, 4, {"a": 1.0, "b": 1.0}, True, False),
    ],
)
def test_too_hard_table(
    correct: int, votes: int, kwargs: dict[str, float], flagged: bool, confident: bool
) -> None:
    verdict = is_too_hard(correct, votes, **kwargs)
    assert bool(verdict) is flagged
    assert verdict.flagged is flagged
    assert ("even the top" in verdict.reason) is confident
    assert (verdict.reason.startswith("too hard")) is flagged


@settings(max_examples=500)
@given(votes=st.integers(min_value=0, max_value=300), share=st.floats(min_value=0, max_value=1))
def test_too_hard_is_the_smoothed_rate_rule_under_the_default_prior(
    votes: int, share: float
) -> None:
    correct = round(share * votes)
    assert bool(is_too_hard(correct, votes)) == (smoothed_rate(correct, votes) < 0.5)


def test_fm2_dev_too_hard_counts() -> None:
    counts = dev_counts()
    default = sum(bool(is_too_hard(c, v)) for c, v in counts)
    prior = fit_beta_binomial_prior(counts)
    fitted = sum(bool(is_too_hard(c, v, a=prior.a, b=prior.b)) for c, v in counts)
    assert default == 2
    assert fitted == 0


# --- too easy --------------------------------------------------------------------------

FAST = VoteFacts(correct=True, clues_revealed=0, points=120)
JUST_FAST_ENOUGH = VoteFacts(correct=True, clues_revealed=0, points=100)
SLOW = VoteFacts(correct=True, clues_revealed=0, points=99)
WITH_CLUE = VoteFacts(correct=True, clues_revealed=1, points=110)
WRONG = VoteFacts(correct=False, clues_revealed=0, points=0)


@pytest.mark.parametrize(
    ("votes", "kwargs", "flagged"),
    [
        ([], {}, False),
        ([FAST, FAST], {}, False),  # too few votes to tell
        ([FAST, FAST, FAST], {}, True),
        ([FAST, JUST_FAST_ENOUGH, FAST, FAST], {}, True),
        ([FAST, FAST, SLOW], {}, False),
        ([FAST, FAST, FAST, WITH_CLUE], {}, False),
        ([FAST, FAST, FAST, WRONG], {}, False),
        ([FAST, FAST], {"min_votes": 2}, True),
        ([FAST, FAST, SLOW], {"min_points": 90}, True),
    ],
)
def test_too_easy_table(votes: list[VoteFacts], kwargs: dict[str, int], flagged: bool) -> None:
    verdict = is_too_easy(votes, **kwargs)
    assert bool(verdict) is flagged
    assert verdict.reason.startswith("too easy") is flagged


# --- combined result -------------------------------------------------------------------


def test_claim_quality_gathers_score_interval_and_reasons() -> None:
    quality = claim_quality(correct=0, votes=10)
    assert isinstance(quality, ClaimQuality)
    assert quality.score == pytest.approx(4 / 15)
    assert quality.interval == pytest.approx(credible_interval(0, 10))
    assert quality.too_hard and not quality.too_easy and quality.flagged
    assert len(quality.reasons) == 1 and "0 of 10" in quality.reasons[0]


def test_claim_quality_of_an_easy_claim() -> None:
    quality = claim_quality(correct=3, votes=3, vote_facts=[FAST] * 3)
    assert quality.too_easy and not quality.too_hard
    assert quality.reasons == (is_too_easy([FAST] * 3).reason,)


def test_claim_quality_of_an_unremarkable_claim() -> None:
    quality = claim_quality(correct=2, votes=3)
    assert not quality.flagged and quality.reasons == ()


def test_the_wilson_interval_matches_its_published_values() -> None:
    """Wilson (1927) score interval at 95%: 5 of 10 is (0.2366, 0.7634); 0 of 10 is (0, 0.2775);
    no trials says nothing."""
    from scoring.filters import wilson

    assert [round(x, 4) for x in wilson(5, 10)] == [0.2366, 0.7634]
    assert [round(x, 4) for x in wilson(0, 10)] == [0.0, 0.2775]
    assert wilson(0, 0) == (0.0, 1.0)
