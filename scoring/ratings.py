"""Skill ratings for players and difficulty ratings for claims, from votes.

Chess puzzle sites rate puzzles and solvers on one scale: each attempt is a game the
solver wins by solving. Here each vote is a game between the voter and the round's pair
of claims, which the voter wins by marking the false claim. Two ways to rate:

- **Glicko-2** (Glickman, "Example of the Glicko-2 system", 2013): a rating, a deviation
  (its uncertainty) and a volatility per player and per claim, updated vote by vote by the
  pure function :func:`round_update`, or over a list of votes by :func:`glicko2_replay`.
- **A Rasch (1PL) item-response model** fitted in one batch by :func:`fit_rasch`:
  ``logit P(correct) = intercept + skill[voter] - difficulty[true] - difficulty[false]``,
  by regularised maximum likelihood (a Gaussian prior on every skill and difficulty, so a
  claim with two votes is not sent to infinity). It accounts for who voted on a claim: a
  wrong vote from a weak player says less against the claim than one from a strong player.

**A round is its two claims together.** A voter can be fooled by the false claim (well
hidden) or by the true one (it sounds false), so both claims carry a difficulty and the
round's difficulty is their sum. That is the additive ("linear logistic") Rasch model
above, and in Glicko-2 each side of a vote plays against the rest of the round combined:
the voter against the pair (ratings summed, deviations added in quadrature), each claim
against the voter less its partner. It matches :mod:`scoring.filters`, whose counts credit
every vote to both claims of the round, and rating only the false claim would leave a
misleading true claim unrated. Every claim's difficulty reads the same way whatever its
label.

**Outcomes are binary.** A correct vote bought with clues is still a win: clues are
already paid for in time and points, any partial score for them would be a made-up
number, and both models are for win/lose outcomes. Timed-out and reported rounds are not
votes and are left out by the caller.

**One scale.** Glicko-2's internal scale ``mu = (rating - 1500) / 173.7178`` is a logit:
the expected score is ``1 / (1 + exp(-g * (mu - mu_opponent)))``. The Rasch fit's skills
and difficulties are logits too, so :func:`to_rating_scale` shows them on the familiar
1500 scale. On both, a claim is **too hard** (:func:`is_too_hard`) when the average
player, voting on it next to an average partner claim, would be right less than half the
time with confidence: the lower end of its difficulty's interval lies above that break-even
difficulty (the rule of :func:`scoring.filters.is_too_hard`, a correct-vote rate under 0.5,
with the voters' skill taken out).

Plain Python and numpy/scipy, no Django: the services pass votes in and store what comes out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scoring.filters import Verdict

# SciPy (scipy.optimize, about 45 MB a process) is imported by the batch fit alone: a vote's
# update runs in every web process and needs only the logistic function, written out below.

__all__ = [
    "GLICKO_SCALE",
    "DEFAULT_RATING",
    "DEFAULT_DEVIATION",
    "DEFAULT_VOLATILITY",
    "DEFAULT_TAU",
    "Z_90",
    "Rating",
    "RoundVote",
    "Estimate",
    "RaschFit",
    "Glicko2Ratings",
    "to_rating_scale",
    "glicko2_update",
    "round_update",
    "forfeit_update",
    "glicko2_replay",
    "fit_rasch",
    "fit_fixed_skill",
    "is_too_hard",
    "pair_target",
    "conservative",
]

GLICKO_SCALE = 173.7178
"""Rating points per logit: Glicko-2's ``400 / ln(10)``."""

DEFAULT_RATING = 1500.0
DEFAULT_DEVIATION = 350.0
"""A newcomer's deviation; deviations never grow past it (Glickman's advice)."""

DEFAULT_VOLATILITY = 0.06
DEFAULT_MAX_STEP = 50.0
"""The most one vote moves a player's rating, up or down (rating points). Glicko-2 moves a
newcomer's rating by 100 to 150 a vote (deviation 350 against a pair of unknown claims:
+146, -147, +102, -102 on a new player's first four), which reads as noise; capped, the
first ten votes move a player at most 50 each, and the ratings rank the simulated population
as well as before (docs/ratings.md, "Damped first votes"). The deviation still falls as
Glicko-2 says: the cap slows the rating, not the certainty. Claims are not capped."""
PROVISIONAL_DEVIATION = 150.0
"""A rating whose deviation is above this is provisional, shown with a ``?`` as Lichess marks
its own (Lichess's line is 110; a vote tells less than a chess game, so a player's deviation
falls slower: about 180 after 10 votes, 140 after 20, 120 after 30 on the simulation, and
150 keeps the ``?`` for a player's first 15 or so votes)."""
DEFAULT_TAU = 0.5
"""Glicko-2's system constant: how fast volatility may change (Glickman: 0.3 to 1.2)."""

Z_90 = 1.6448536269514722
"""The lower end of a 90% equal-tailed interval: the mass :mod:`scoring.filters` shows."""

_CONVERGENCE = 1e-6  # Glickman's epsilon for the volatility iteration
_MIN_SCORE_VARIANCE = 1e-12  # keeps v finite when a result was all but certain


def to_rating_scale(logit: float) -> float:
    """A logit (Glicko-2's mu, or a Rasch skill or difficulty) on the 1500 rating scale."""
    return DEFAULT_RATING + GLICKO_SCALE * logit


@dataclass(frozen=True, slots=True)
class Rating:
    """A Glicko-2 rating on the 1500 scale. For a claim, ``rating`` is its difficulty."""

    rating: float = DEFAULT_RATING
    deviation: float = DEFAULT_DEVIATION
    volatility: float = DEFAULT_VOLATILITY

    @property
    def mu(self) -> float:
        return (self.rating - DEFAULT_RATING) / GLICKO_SCALE

    @property
    def phi(self) -> float:
        return self.deviation / GLICKO_SCALE

    @classmethod
    def from_internal(cls, mu: float, phi: float, volatility: float) -> Rating:
        return cls(to_rating_scale(mu), phi * GLICKO_SCALE, volatility)


def _expit(x: float) -> float:
    """The logistic function ``1 / (1 + exp(-x))``, without overflow for any finite x."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def _logit(p: float) -> float:
    """The inverse of :func:`_expit` on (0, 1)."""
    return math.log(p / (1.0 - p))


def _check(rating: Rating) -> None:
    values = (rating.rating, rating.deviation, rating.volatility)
    if not all(math.isfinite(x) for x in values) or rating.deviation <= 0 or rating.volatility <= 0:
        raise ValueError(f"need a finite rating and positive deviation and volatility: {rating}")


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, g_j: float) -> float:
    return _expit(g_j * (mu - mu_j))


def _new_volatility(delta: float, phi: float, v: float, sigma: float, tau: float) -> float:
    """Glickman's step 5: the root of f by the Illinois variant of regula falsi."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (
            2.0 * (phi * phi + v + ex) ** 2
        ) - (x - a) / (tau * tau)

    low = a
    if delta * delta > phi * phi + v:
        high = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        high = a - k * tau
    f_low, f_high = f(low), f(high)
    while abs(high - low) > _CONVERGENCE:
        middle = low + (low - high) * f_low / (f_high - f_low)
        f_middle = f(middle)
        if f_middle * f_high <= 0:
            low, f_low = high, f_high
        else:
            f_low /= 2.0
        high, f_high = middle, f_middle
    return math.exp(low / 2.0)


def glicko2_update(
    rating: Rating,
    games: Sequence[tuple[Rating, float]],
    *,
    tau: float = DEFAULT_TAU,
    max_deviation: float = DEFAULT_DEVIATION,
) -> Rating:
    """One Glicko-2 rating period: ``rating`` after ``games`` of ``(opponent, score)``.

    Scores are 1 (win), 0 (loss) or anything between (draws). All games of a period use
    the opponents' ratings as they were before the period, so the result does not depend
    on the games' order. Without games only the deviation grows (step 6). Deviations are
    capped at ``max_deviation``: a rating is never less known than a newcomer's.
    """
    _check(rating)
    if not tau > 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    mu, phi, sigma = rating.mu, rating.phi, rating.volatility
    cap = max_deviation / GLICKO_SCALE
    if not games:
        return Rating.from_internal(mu, min(math.hypot(phi, sigma), cap), sigma)
    information = 0.0
    improvement = 0.0
    for opponent, score in games:
        _check(opponent)
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"a score is between 0 and 1, got {score}")
        g_j = _g(opponent.phi)
        e_j = _expected(mu, opponent.mu, g_j)
        information += g_j * g_j * max(e_j * (1.0 - e_j), _MIN_SCORE_VARIANCE)
        improvement += g_j * (score - e_j)
    v = 1.0 / information
    new_sigma = _new_volatility(v * improvement, phi, v, sigma, tau)
    phi_star = min(math.hypot(phi, new_sigma), cap)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * improvement
    return Rating.from_internal(new_mu, new_phi, new_sigma)


def is_provisional(deviation: float) -> bool:
    """Is a rating with this deviation still provisional (``PROVISIONAL_DEVIATION``)?"""
    return deviation > PROVISIONAL_DEVIATION


def _damped(before: Rating, after: Rating, max_step: float | None) -> Rating:
    """``after`` with its rating moved at most ``max_step`` from ``before`` (None: as is)."""
    if max_step is None or abs(after.rating - before.rating) <= max_step:
        return after
    return Rating(before.rating + math.copysign(max_step, after.rating - before.rating), after.deviation, after.volatility)


def _combined(mu: float, phis: Iterable[float]) -> Rating:
    """A stand-in opponent: the other side of the round, its deviations in quadrature."""
    phi = math.sqrt(sum(p * p for p in phis))
    return Rating.from_internal(mu, phi, DEFAULT_VOLATILITY)


def round_update(
    voter: Rating,
    true_claim: Rating,
    false_claim: Rating,
    correct: bool,
    *,
    tau: float = DEFAULT_TAU,
    max_deviation: float = DEFAULT_DEVIATION,
    max_step: float | None = DEFAULT_MAX_STEP,
) -> tuple[Rating, Rating, Rating]:
    """The three ratings after one vote: ``(voter, true_claim, false_claim)``.

    Each vote is a rating period of one game for each of the three. The voter, at
    ``mu_v``, plays the pair at ``mu_true + mu_false`` and scores 1 when ``correct``; each
    claim plays the voter less its partner (``mu_v - mu_partner``) and scores 1 when the
    voter was fooled. All three updates read the ratings from before the vote, so the
    function is symmetric in the two claims and its result does not depend on the order
    in which the three are written back. The voter's rating moves at most ``max_step``
    (``DEFAULT_MAX_STEP``; None: Glicko-2's own step).
    """
    won = 1.0 if correct else 0.0
    options = {"tau": tau, "max_deviation": max_deviation}
    pair = _combined(true_claim.mu + false_claim.mu, (true_claim.phi, false_claim.phi))
    against_true = _combined(voter.mu - false_claim.mu, (voter.phi, false_claim.phi))
    against_false = _combined(voter.mu - true_claim.mu, (voter.phi, true_claim.phi))
    return (
        _damped(voter, glicko2_update(voter, [(pair, won)], **options), max_step),
        glicko2_update(true_claim, [(against_true, 1.0 - won)], **options),
        glicko2_update(false_claim, [(against_false, 1.0 - won)], **options),
    )


def forfeit_update(
    voter: Rating,
    true_claim: Rating,
    false_claim: Rating,
    *,
    tau: float = DEFAULT_TAU,
    max_deviation: float = DEFAULT_DEVIATION,
    max_step: float | None = DEFAULT_MAX_STEP,
) -> tuple[Rating, Rating, Rating]:
    """The three ratings after a started round given up: a wrong vote on the pair (a player
    who gives up a pair they cannot tell apart loses as much as one who guesses wrong, so
    giving up is never a way to keep a rating)."""
    return round_update(voter, true_claim, false_claim, False, tau=tau, max_deviation=max_deviation, max_step=max_step)


@dataclass(frozen=True, slots=True)
class RoundVote:
    """One vote: who voted, on which two claims, and whether they marked the false one (a
    started round given up is a vote with ``correct`` False: ``forfeit_update``)."""

    voter: Hashable
    true_claim: Hashable
    false_claim: Hashable
    correct: bool


@dataclass(frozen=True, slots=True)
class Glicko2Ratings:
    """Everyone's Glicko-2 rating after a replay of the votes."""

    players: dict[Hashable, Rating]
    claims: dict[Hashable, Rating]

    def break_even_difficulty(self) -> float:
        """The claim difficulty (logits) at which the average player is right half the
        time next to an average partner: the mean player less the mean claim."""
        return _mean(r.mu for r in self.players.values()) - _mean(
            r.mu for r in self.claims.values()
        )


def _mean(values: Iterable[float]) -> float:
    array = np.fromiter(values, dtype=float)
    return float(array.mean()) if array.size else 0.0


def glicko2_replay(
    votes: Iterable[RoundVote],
    *,
    players: Mapping[Hashable, Rating] | None = None,
    claims: Mapping[Hashable, Rating] | None = None,
    tau: float = DEFAULT_TAU,
    max_deviation: float = DEFAULT_DEVIATION,
    max_step: float | None = DEFAULT_MAX_STEP,
    on_vote: Callable[[RoundVote, Rating, Rating], None] | None = None,
) -> Glicko2Ratings:
    """Apply :func:`round_update` vote by vote, in the order given (``on_vote``: told each
    vote with its voter's rating before and after it).

    Glicko-2 is order-dependent, so pass the votes in the order they were cast (by the
    vote's time, then its id for ties): replaying the same list gives the same ratings.
    Unknown players and claims start at :class:`Rating`'s defaults. A player who is also
    an author keeps one rating as a voter; claims are rated apart from their authors.
    """
    player_ratings = dict(players or {})
    claim_ratings = dict(claims or {})
    newcomer = Rating()
    for vote in votes:
        if vote.true_claim == vote.false_claim:
            raise ValueError(f"a round has two different claims: {vote}")
        before = player_ratings.get(vote.voter, newcomer)
        voter, true_claim, false_claim = round_update(
            before,
            claim_ratings.get(vote.true_claim, newcomer),
            claim_ratings.get(vote.false_claim, newcomer),
            vote.correct,
            tau=tau,
            max_deviation=max_deviation,
            max_step=max_step,
        )
        if on_vote is not None:
            on_vote(vote, before, voter)
        player_ratings[vote.voter] = voter
        claim_ratings[vote.true_claim] = true_claim
        claim_ratings[vote.false_claim] = false_claim
    return Glicko2Ratings(player_ratings, claim_ratings)


@dataclass(frozen=True, slots=True)
class Estimate:
    """A fitted skill or difficulty in logits, with its standard error."""

    value: float
    se: float
    votes: int

    def lower(self, z: float = Z_90) -> float:
        return self.value - z * self.se

    def upper(self, z: float = Z_90) -> float:
        return self.value + z * self.se


@dataclass(frozen=True, slots=True)
class RaschFit:
    """The fitted Rasch model: ``logit P(correct) = intercept + skill - d_true - d_false``.

    Skills and difficulties are deviations from the average player and claim (their
    prior mean is 0); the intercept carries the overall accuracy. Standard errors come
    from the diagonal of the penalised likelihood's Hessian at the optimum: each one is
    the uncertainty of that skill or difficulty with everything else held at its estimate,
    which is a little optimistic for the sparsely connected, but needs no inverse of a
    matrix as large as players plus claims squared.
    """

    intercept: float
    players: dict[Hashable, Estimate]
    claims: dict[Hashable, Estimate]
    log_posterior: float
    converged: bool
    prior_sd_skill: float
    prior_sd_difficulty: float

    def break_even_difficulty(self) -> float:
        """The claim difficulty at which the average player is right half the time next
        to an average partner: ``intercept + mean skill - mean difficulty``."""
        return (
            self.intercept
            + _mean(e.value for e in self.players.values())
            - _mean(e.value for e in self.claims.values())
        )

    def as_glicko2(self, *, volatility: float = DEFAULT_VOLATILITY) -> Glicko2Ratings:
        """The fit as Glicko-2 ratings to go on from, vote by vote: a player at ``intercept
        + skill``, a claim at its difficulty, each with its standard error as deviation
        (capped at a newcomer's). Glicko-2's expected score is then the fit's
        ``solve_probability`` (up to the deviations' ``g`` factor)."""

        def rating(mu: float, se: float) -> Rating:
            phi = min(max(se, 1e-6), DEFAULT_DEVIATION / GLICKO_SCALE)
            return Rating.from_internal(mu, phi, volatility)

        return Glicko2Ratings(
            {k: rating(self.intercept + e.value, e.se) for k, e in self.players.items()},
            {k: rating(e.value, e.se) for k, e in self.claims.items()},
        )

    def solve_probability(
        self, voter: Hashable, true_claim: Hashable, false_claim: Hashable
    ) -> float:
        """The fitted chance that ``voter`` marks the false claim of this pair."""
        eta = (
            self.intercept
            + self.players[voter].value
            - self.claims[true_claim].value
            - self.claims[false_claim].value
        )
        return _expit(eta)


def _index(keys: Iterable[Hashable]) -> tuple[dict[Hashable, int], np.ndarray]:
    positions: dict[Hashable, int] = {}
    indices = [positions.setdefault(key, len(positions)) for key in keys]
    return positions, np.asarray(indices, dtype=np.intp)


def fit_rasch(
    votes: Sequence[RoundVote],
    *,
    prior_sd_skill: float = 1.0,
    prior_sd_difficulty: float = 1.0,
    max_iterations: int = 2000,
) -> RaschFit:
    """Fit the additive Rasch model to all votes at once by penalised maximum likelihood.

    The negative log posterior is the logistic loss of every vote plus
    ``skill**2 / (2 * prior_sd_skill**2)`` for every player and the same for every
    difficulty (the intercept is free). It is convex, so L-BFGS with the exact gradient
    finds the single optimum; the result does not depend on the votes' order. Players
    and claims are keyed as given; the dictionaries keep their first appearance's order.
    """
    if not votes:
        raise ValueError("no votes: nothing to fit")
    from scipy import optimize, special

    if not (prior_sd_skill > 0 and prior_sd_difficulty > 0):
        raise ValueError("prior standard deviations must be > 0")
    player_index, voter = _index(v.voter for v in votes)
    claim_index, both = _index(c for v in votes for c in (v.true_claim, v.false_claim))
    true_claim, false_claim = both[0::2], both[1::2]
    if np.any(true_claim == false_claim):
        raise ValueError("a round has two different claims")
    y = np.fromiter((1.0 if v.correct else 0.0 for v in votes), dtype=float, count=len(votes))
    n_players, n_claims = len(player_index), len(claim_index)
    skill_precision = 1.0 / prior_sd_skill**2
    difficulty_precision = 1.0 / prior_sd_difficulty**2

    def unpack(x: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        return float(x[0]), x[1 : 1 + n_players], x[1 + n_players :]

    def linear(x: np.ndarray) -> np.ndarray:
        intercept, skill, difficulty = unpack(x)
        return intercept + skill[voter] - difficulty[true_claim] - difficulty[false_claim]

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        _, skill, difficulty = unpack(x)
        eta = linear(x)
        loss = float(np.sum(np.logaddexp(0.0, eta) - y * eta))
        penalty = 0.5 * (
            skill_precision * skill @ skill + difficulty_precision * difficulty @ difficulty
        )
        residual = special.expit(eta) - y
        d_claims = -(
            np.bincount(true_claim, residual, n_claims)
            + np.bincount(false_claim, residual, n_claims)
        )
        gradient = np.concatenate(
            (
                [residual.sum()],
                np.bincount(voter, residual, n_players) + skill_precision * skill,
                d_claims + difficulty_precision * difficulty,
            )
        )
        return loss + float(penalty), gradient

    # Start at the pooled accuracy's logit (smoothed by one vote each way).
    start = np.zeros(1 + n_players + n_claims)
    start[0] = special.logit((y.sum() + 1.0) / (y.size + 2.0))
    result = optimize.minimize(
        objective,
        start,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iterations, "gtol": 1e-6},
    )
    intercept, skill, difficulty = unpack(result.x)
    p = special.expit(linear(result.x))
    weight = p * (1.0 - p)
    skill_se = 1.0 / np.sqrt(np.bincount(voter, weight, n_players) + skill_precision)
    claim_weight = np.bincount(true_claim, weight, n_claims) + np.bincount(
        false_claim, weight, n_claims
    )
    difficulty_se = 1.0 / np.sqrt(claim_weight + difficulty_precision)
    player_votes = np.bincount(voter, minlength=n_players)
    claim_votes = np.bincount(both, minlength=n_claims)
    return RaschFit(
        intercept=intercept,
        players={
            key: Estimate(float(skill[i]), float(skill_se[i]), int(player_votes[i]))
            for key, i in player_index.items()
        },
        claims={
            key: Estimate(float(difficulty[i]), float(difficulty_se[i]), int(claim_votes[i]))
            for key, i in claim_index.items()
        },
        log_posterior=-float(result.fun),
        converged=bool(result.success),
        prior_sd_skill=prior_sd_skill,
        prior_sd_difficulty=prior_sd_difficulty,
    )


def fit_fixed_skill(
    games: Sequence[tuple[float, bool]],
    *,
    prior_mu: float = 0.0,
    prior_sd: float = 1.0,
    iterations: int = 50,
) -> Estimate:
    """One newcomer's skill (logits, on the players' Glicko-2 scale) from ``games`` against
    items held fixed: each game is ``(pair difficulty, correct)`` with the pair at ``mu_true +
    mu_false``, scored as a vote is (``P(correct) = expit(mu - pair)``). A model version is
    rated this way from its answers to settled rounds, without moving the claims' ratings.

    Penalised maximum likelihood (a normal prior at ``prior_mu``, ``prior_sd``) by Newton's
    method; the standard error is the curvature's at the optimum."""
    if prior_sd <= 0:
        raise ValueError(f"prior_sd must be > 0, got {prior_sd}")
    pairs = np.asarray([pair for pair, _ in games], dtype=float)
    won = np.asarray([1.0 if correct else 0.0 for _, correct in games], dtype=float)
    mu = prior_mu
    precision = 1.0 / (prior_sd * prior_sd)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(mu - pairs)))
        gradient = float(np.sum(won - p)) - (mu - prior_mu) * precision
        curvature = float(np.sum(p * (1.0 - p))) + precision
        step = gradient / curvature
        mu += step
        if abs(step) < 1e-9:
            break
    p = 1.0 / (1.0 + np.exp(-(mu - pairs)))
    se = 1.0 / math.sqrt(float(np.sum(p * (1.0 - p))) + precision)
    return Estimate(value=mu, se=se, votes=len(games))


def is_too_hard(
    difficulty: float,
    se: float,
    *,
    break_even: float,
    z: float = Z_90,
) -> Verdict:
    """Flag a claim the average player would get wrong more often than right.

    ``difficulty`` and ``se`` are logits (a Rasch :class:`Estimate`'s ``value`` and
    ``se``, or a Glicko-2 rating's ``mu`` and ``phi``), ``break_even`` the fit's
    ``break_even_difficulty()``. Flagged when even the lower end of the interval,
    ``difficulty - z * se``, is above break-even: with ``z = 0`` this is the point
    estimate, like :func:`scoring.filters.is_too_hard`'s smoothed mean under 0.5; the
    default asks for the lower end of the 90% interval, since a rating, unlike the
    Beta score, already takes out who happened to vote.
    """
    values = (difficulty, se, break_even, z)
    if not all(math.isfinite(x) for x in values) or se < 0 or z < 0:
        raise ValueError(f"need finite values, se >= 0 and z >= 0, got {values}")
    low = difficulty - z * se
    if low <= break_even:
        return Verdict(False)
    solve = _expit(break_even - difficulty)
    return Verdict(
        True,
        f"too hard: an average player would be right {solve:.0%} of the time on it "
        f"(difficulty {to_rating_scale(difficulty):.0f} +- {GLICKO_SCALE * se:.0f}, "
        f"break-even {to_rating_scale(break_even):.0f})",
    )



def pair_target(player: Rating, solve_chance: float) -> float:
    """The claim difficulty (1500 scale) at which ``player`` marks the false claim of a pair
    of two such claims with probability ``solve_chance``: each claim carries half of the
    pair's ``mu_player - logit(solve_chance)``. The dealer reads the claims nearest it.

    The deviations' ``g`` factor is left out: it only flattens the curve toward 1/2, and the
    target is a place to start looking, not a prediction.
    """
    _check(player)
    if not 0.0 < solve_chance < 1.0:
        raise ValueError(f"solve_chance must be strictly between 0 and 1, got {solve_chance}")
    return to_rating_scale((player.mu - _logit(solve_chance)) / 2.0)


def conservative(rating: Rating, k: float = 2.0) -> float:
    """``rating - k * deviation``: a rating the player is very likely above, so a newcomer
    lucky in three votes does not top a skill table over a player sure after three hundred."""
    _check(rating)
    return rating.rating - k * rating.deviation
