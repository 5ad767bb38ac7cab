"""Quality filters that send claims to the moderation queue: "too hard" and "too easy".

A claim that voters keep getting wrong is more often mislabelled or missing evidence
than brilliantly tricky (FM2 paper, section 3.2), so it deserves a moderator's look; a
claim solved again and again in seconds without a clue teaches a model nothing.

Vote counts are tiny (the FM2 dev claims have 0 to 10 votes each), so the raw accuracy
``correct / votes`` is useless: one wrong vote out of one would flag a claim. Following
the paper, each claim's correct-vote rate is the posterior mean under a Beta prior of
``a`` correct and ``b`` wrong pseudo-votes (default 4 and 1: prior mean 0.8, the overall
vote accuracy of the FM2 release). The prior can also be fitted to all claims' counts
by maximum likelihood of a beta-binomial (:func:`fit_beta_binomial_prior`).

Plain Python over counts: the Django services pass a claim's counts (or its votes as
:class:`VoteFacts`) and store or display the result.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

# SciPy is imported by the two functions that use it, not here: scipy.stats alone costs a
# process about 70 MB, and every Django process imports this module (the moderation
# services), while only the quality refresh (a Celery task) and the prior fit need it.

__all__ = [
    "DEFAULT_A",
    "DEFAULT_B",
    "TOO_HARD_THRESHOLD",
    "MIN_VOTES_FOR_INTERVAL",
    "INTERVAL_MASS",
    "Prior",
    "Verdict",
    "VoteFacts",
    "ClaimQuality",
    "smoothed_rate",
    "credible_interval",
    "fit_beta_binomial_prior",
    "is_too_hard",
    "is_too_easy",
    "claim_quality",
]

DEFAULT_A = 4.0
"""Prior correct pseudo-votes (docs/rules.md)."""

DEFAULT_B = 1.0
"""Prior wrong pseudo-votes (docs/rules.md)."""

TOO_HARD_THRESHOLD = 0.5
"""A claim whose voters do no better than a coin deserves a moderator's look."""

MIN_VOTES_FOR_INTERVAL = 10
"""Votes a claim needs before its credible interval is used as well as its mean.

With the default prior (five pseudo-votes) the 90% interval of a claim with fewer than
nine votes reaches above 0.5 even when every vote was wrong, so the interval cannot
speak before about ten votes; ten is also twice the prior's weight, the point where the
claim's own votes dominate the estimate. FM2 claims rarely get more (dev: at most 10).
"""

INTERVAL_MASS = 0.9
"""Probability mass of the equal-tailed credible interval."""


def _check_counts(correct: int, votes: int) -> None:
    if votes < 0 or correct < 0 or correct > votes:
        raise ValueError(f"need 0 <= correct <= votes, got correct={correct}, votes={votes}")


def _check_prior(a: float, b: float) -> None:
    if not (a > 0 and b > 0) or math.isinf(a) or math.isinf(b):
        raise ValueError(f"prior pseudo-counts must be finite and > 0, got a={a}, b={b}")


def smoothed_rate(correct: int, votes: int, a: float = DEFAULT_A, b: float = DEFAULT_B) -> float:
    """The posterior mean of the correct-vote rate: ``(correct + a) / (votes + a + b)``.

    A claim without votes scores the prior mean, and each vote moves it by at most
    ``1 / (votes + a + b)``, so a single unlucky vote cannot flag a claim.
    """
    _check_counts(correct, votes)
    _check_prior(a, b)
    return (correct + a) / (votes + a + b)


def wilson(hits: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``hits / total`` (95% by default): the
    benchmarks' intervals on shares of claims and checks. ``(0, 1)`` for no trials."""
    if total == 0:
        return 0.0, 1.0
    p = hits / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return max(0.0, centre - half), min(1.0, centre + half)


def credible_interval(
    correct: int,
    votes: int,
    a: float = DEFAULT_A,
    b: float = DEFAULT_B,
    mass: float = INTERVAL_MASS,
) -> tuple[float, float]:
    """The equal-tailed ``mass`` interval of the posterior ``Beta(a + correct, b + wrong)``.

    It shows the moderator how much the score can be trusted: a 0.45 from 2 votes and a
    0.45 from 40 votes are not the same evidence.
    """
    _check_counts(correct, votes)
    _check_prior(a, b)
    if not 0 < mass < 1:
        raise ValueError(f"mass must be in (0, 1), got {mass}")
    from scipy import stats

    posterior = stats.beta(a + correct, b + votes - correct)
    tail = (1 - mass) / 2
    return float(posterior.ppf(tail)), float(posterior.ppf(1 - tail))


@dataclass(frozen=True, slots=True)
class Prior:
    """A Beta prior on claims' correct-vote rates, fitted to observed vote counts.

    ``converged`` is False when the optimizer failed or ran into its bounds, which
    happens when the claims vary no more than binomial noise would explain (the
    likelihood then keeps rising as ``a + b`` grows): the mean is still a fair estimate
    but ``a`` and ``b`` are only lower bounds of the prior's strength.
    """

    a: float
    b: float
    mean: float
    n_claims: int
    log_likelihood: float
    converged: bool


_LOG_LIMIT = 12.0  # a and b within [6e-6, 1.6e5]: far beyond any real prior
_LOG_BOUNDS = (-_LOG_LIMIT, _LOG_LIMIT)


def fit_beta_binomial_prior(pairs: Iterable[tuple[int, int]]) -> Prior:
    """Fit the Beta prior by maximum likelihood of a beta-binomial over ``(correct, votes)``.

    Each claim's correct votes are binomial with the claim's own rate, and the rates
    are Beta(a, b) across claims; integrating the rate out gives the beta-binomial:
    ``log P(k | n) = log C(n, k) + betaln(k + a, n - k + b) - betaln(a, b)``.
    The fitted prior is the one the data supports (empirical Bayes), instead of the
    paper's hand-set 4 and 1. The optimizer works on ``log a`` and ``log b`` so both
    stay positive, with the exact gradient from digamma.

    Claims with no votes are skipped: their likelihood is 1 whatever the prior.
    """
    counts = [(int(c), int(v)) for c, v in pairs]
    for c, v in counts:
        _check_counts(c, v)
    voted = [(c, v) for c, v in counts if v > 0]
    if not voted:
        raise ValueError("no claim has votes: nothing to fit the prior on")
    from scipy import optimize, special

    k = np.array([c for c, _ in voted], dtype=float)
    n = np.array([v for _, v in voted], dtype=float)
    log_binom = float(
        np.sum(special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1))
    )

    def negative_log_likelihood(theta: np.ndarray) -> float:
        a, b = np.exp(theta)
        return -float(np.sum(special.betaln(k + a, n - k + b) - special.betaln(a, b)))

    def gradient(theta: np.ndarray) -> np.ndarray:
        a, b = np.exp(theta)
        common = special.digamma(a + b) - special.digamma(n + a + b)
        d_a = np.sum(special.digamma(k + a) - special.digamma(a) + common)
        d_b = np.sum(special.digamma(n - k + b) - special.digamma(b) + common)
        return -np.array([d_a * a, d_b * b])  # chain rule through exp

    # Start from the pooled rate with the paper's prior strength of five pseudo-votes.
    pooled = float(np.clip(k.sum() / n.sum(), 0.01, 0.99))
    start = np.log([5 * pooled, 5 * (1 - pooled)])
    result = optimize.minimize(
        negative_log_likelihood,
        start,
        jac=gradient,
        method="L-BFGS-B",
        bounds=[_LOG_BOUNDS, _LOG_BOUNDS],
    )
    a, b = (float(x) for x in np.exp(result.x))
    at_bound = bool(np.any(np.abs(result.x) >= _LOG_LIMIT - 1e-6))
    return Prior(
        a=a,
        b=b,
        mean=a / (a + b),
        n_claims=len(voted),
        log_likelihood=log_binom - float(result.fun),
        converged=bool(result.success) and not at_bound,
    )


@dataclass(frozen=True, slots=True)
class Verdict:
    """A filter's answer with the reason a moderator will read. Truthy when flagged."""

    flagged: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.flagged


def is_too_hard(
    correct: int,
    votes: int,
    *,
    a: float = DEFAULT_A,
    b: float = DEFAULT_B,
    threshold: float = TOO_HARD_THRESHOLD,
    min_votes_for_interval: int = MIN_VOTES_FOR_INTERVAL,
    mass: float = INTERVAL_MASS,
) -> Verdict:
    """Flag a claim whose voters fail too often: likely mislabelled or missing evidence.

    Flagged when the smoothed rate is under ``threshold`` (the docs/rules.md rule), or, once
    the claim has ``min_votes_for_interval`` votes, when even the upper end of its
    credible interval is under it. With a prior of ``a >= 1`` the upper end is never
    below the mean, so the second test adds no claims; it strengthens the reason
    ("confidently") so the queue can put the surest cases first. It would add claims
    only under a fitted prior with ``a < 1``, whose posterior is skewed enough for the
    mean to lie above the upper quantile.
    """
    score = smoothed_rate(correct, votes, a, b)
    low, high = credible_interval(correct, votes, a, b, mass)
    confident = votes >= min_votes_for_interval and high < threshold
    percent = round(mass * 100)
    if confident:
        return Verdict(
            True,
            f"too hard: {correct} of {votes} votes correct; even the top of the {percent}% "
            f"interval ({low:.2f}-{high:.2f}) is under {threshold:.2f}",
        )
    if score < threshold:
        return Verdict(
            True,
            f"too hard: {correct} of {votes} votes correct; smoothed score {score:.2f} "
            f"is under {threshold:.2f} ({percent}% interval {low:.2f}-{high:.2f})",
        )
    return Verdict(False)


@dataclass(frozen=True, slots=True)
class VoteFacts:
    """What the too-easy filter needs to know of one vote on the claim.

    ``clues_revealed`` counts the clues revealed in the round before the vote (on
    either claim: a clue on the other claim helps solve this one too); ``points`` are
    the voter points the vote earned (0 when wrong).
    """

    correct: bool
    clues_revealed: int
    points: int


def is_too_easy(
    votes: Sequence[VoteFacts],
    *,
    min_votes: int = 3,
    min_points: int = 100,
) -> Verdict:
    """Flag a claim solved again and again, fast, without a single clue.

    Every vote must be correct, clue-free and worth at least ``min_points`` (100 by
    default: answered within 80 s of a 180 s round), and there must be at least
    ``min_votes`` of them so that one quick expert does not flag a claim. One slow,
    wrong or clue-aided vote clears it: the claim fooled or challenged someone.
    """
    if len(votes) < min_votes:
        return Verdict(False)
    for vote in votes:
        if not vote.correct or vote.clues_revealed > 0 or vote.points < min_points:
            return Verdict(False)
    return Verdict(
        True,
        f"too easy: all {len(votes)} votes correct, without any clue, "
        f"each worth at least {min_points} points",
    )


@dataclass(frozen=True, slots=True)
class ClaimQuality:
    """Everything the moderation queue shows about a claim's votes, in one value."""

    correct: int
    votes: int
    score: float
    interval: tuple[float, float]
    too_hard: bool
    too_easy: bool
    reasons: tuple[str, ...]

    @property
    def flagged(self) -> bool:
        return self.too_hard or self.too_easy


def claim_quality(
    *,
    correct: int,
    votes: int,
    vote_facts: Sequence[VoteFacts] = (),
    a: float = DEFAULT_A,
    b: float = DEFAULT_B,
    threshold: float = TOO_HARD_THRESHOLD,
    min_votes_for_interval: int = MIN_VOTES_FOR_INTERVAL,
    mass: float = INTERVAL_MASS,
    min_votes_too_easy: int = 3,
    min_points_too_easy: int = 100,
) -> ClaimQuality:
    """Score a claim and run both filters.

    The counts come separately from ``vote_facts`` because imported FM2 claims carry
    ``correct_votes`` and ``total_votes`` but no per-vote records; such claims can be
    too hard but never too easy.
    """
    hard = is_too_hard(
        correct,
        votes,
        a=a,
        b=b,
        threshold=threshold,
        min_votes_for_interval=min_votes_for_interval,
        mass=mass,
    )
    easy = is_too_easy(vote_facts, min_votes=min_votes_too_easy, min_points=min_points_too_easy)
    return ClaimQuality(
        correct=correct,
        votes=votes,
        score=smoothed_rate(correct, votes, a, b),
        interval=credible_interval(correct, votes, a, b, mass),
        too_hard=hard.flagged,
        too_easy=easy.flagged,
        reasons=tuple(v.reason for v in (hard, easy) if v.flagged),
    )
