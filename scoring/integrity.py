"""Improbable players: right answers no person of any plausible skill gives at that speed.

Two tests, both against what the population does at the same clue use and the same speed:

(a) **Improbable accuracy.** Votes are put in buckets by clues revealed and seconds taken;
    each bucket's accuracy is the population's (smoothed towards its clue group's, then the
    overall rate). A person's chance of a right vote is that accuracy moved by their own
    skill: ``expit(logit(p_bucket) + spread_bucket * z)``, where ``z`` is the same for all
    their votes (a strong player is strong in every bucket) and ``spread_bucket`` is how far
    players' accuracies spread in that bucket (estimated from the votes: near nothing when
    nobody can read two claims in the time, about the skill spread when they can). Under
    this null the number of right votes in a run of votes is a mixture over ``z`` of
    Poisson-binomials, whose upper tail is the run's p-value: it is small only when even a
    rare strong player would seldom do it. Runs are scanned in windows of several sizes
    (a cheater may play honestly before or after), and the smallest window p-value is
    multiplied by the number of windows tested (Bonferroni), so a player's figure is a
    p-value for "some run of theirs is this improbable".

(b) **Following give-ups.** A vote whose claims another account gave up on or let time out
    shortly before (the answers are then shown to that account) *follows* that account.
    The votes of one voter following one source are tested as in (a), and the p-value is
    multiplied by the number of sources the voter follows.

A player is flagged when a p-value is under the threshold (``alpha``). Honest players are
flagged about ``alpha`` of the time when the null holds (it is a p-value), times what the
model misses; ``bench/bench_integrity.py`` measures it on simulated honest players.

Plain Python and NumPy; no Django.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

CLUE_EDGES: tuple[int, ...] = (1, 2, 3, 5)
"""Bucket edges of clues revealed: 0, 1, 2, 3-4, 5 or more."""
SECOND_EDGES: tuple[float, ...] = (4.0, 8.0, 15.0, 30.0, 60.0, 120.0)
"""Bucket edges of seconds taken (start to vote, clue penalties not counted)."""
WINDOW_SIZES: tuple[int, ...] = (20, 40, 80, 160, 320, 640)
"""Run lengths scanned; windows of each size start every half size, and one ends at the last vote."""

Bucket = tuple[int, int]


def _edge_index(value: float, edges: Sequence[float]) -> int:
    index = 0
    for edge in edges:
        if value < edge:
            break
        index += 1
    return index


def bucket_of(clues: int, seconds: float) -> Bucket:
    """The (clue bucket, time bucket) of a vote."""
    return _edge_index(clues, CLUE_EDGES), _edge_index(max(seconds, 0.0), SECOND_EDGES)


@dataclass(frozen=True)
class VoteFact:
    """One vote as the tests see it."""

    correct: bool
    clues: int
    seconds: float

    @property
    def bucket(self) -> Bucket:
        return bucket_of(self.clues, self.seconds)


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _expit(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free logistic
    return out


@dataclass(frozen=True)
class Population:
    """Per bucket, the population's accuracy and the spread (logits) of players' accuracies."""

    overall: float
    rates: Mapping[Bucket, float]
    spreads: Mapping[Bucket, float]
    clue_rates: Mapping[int, float] = field(default_factory=dict)
    default_spread: float = 1.0
    votes: int = 0

    def accuracy(self, bucket: Bucket) -> float:
        return self.rates.get(bucket, self.clue_rates.get(bucket[0], self.overall))

    def spread(self, bucket: Bucket) -> float:
        return self.spreads.get(bucket, self.default_spread)


RATE_CLAMP = (0.02, 0.995)


def population_fit(
    votes_by_player: Mapping[Hashable, Sequence[VoteFact]],
    *,
    prior_votes: float = 20.0,
    spread_default: float = 1.0,
    spread_min: float = 0.3,
    spread_max: float = 3.0,
    spread_prior_pairs: float = 200.0,
) -> Population:
    """The population's accuracy and spread per bucket, from everyone's votes.

    Accuracy: a bucket's right votes over its votes, smoothed with ``prior_votes``
    pseudo-votes at its clue group's rate (itself smoothed at the overall rate).

    Spread: the between-player variance of accuracy in a bucket by the method of moments
    (the variance of each player's right count around the bucket's expectation, less the
    binomial part, over the pairs of votes a player cast in the bucket), put on the logit
    scale and shrunk towards ``spread_default`` with ``spread_prior_pairs`` pseudo-pairs, so
    that a bucket few players revisit keeps the default; then clamped to ``[spread_min,
    spread_max]``. The default and the floor lean towards honest players: a wider spread
    makes a strong player likelier, and so flags less."""
    total = right = 0
    by_clue: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    by_bucket: dict[Bucket, list[int]] = defaultdict(lambda: [0, 0])
    per_player: list[dict[Bucket, list[int]]] = []
    for votes in votes_by_player.values():
        mine: dict[Bucket, list[int]] = defaultdict(lambda: [0, 0])
        for vote in votes:
            bucket = vote.bucket
            for counts in (by_bucket[bucket], by_clue[bucket[0]], mine[bucket]):
                counts[0] += int(vote.correct)
                counts[1] += 1
            total += 1
            right += int(vote.correct)
        per_player.append(mine)
    overall = (right + 1.0) / (total + 2.0)
    clue_rates = {
        clue: min(max((r + prior_votes * overall) / (n + prior_votes), RATE_CLAMP[0]), RATE_CLAMP[1]) for clue, (r, n) in by_clue.items()
    }
    rates = {
        bucket: min(max((r + prior_votes * clue_rates[bucket[0]]) / (n + prior_votes), RATE_CLAMP[0]), RATE_CLAMP[1])
        for bucket, (r, n) in by_bucket.items()
    }
    excess: dict[Bucket, float] = defaultdict(float)
    pairs: dict[Bucket, float] = defaultdict(float)
    for mine in per_player:
        for bucket, (r, n) in mine.items():
            if n < 2:
                continue
            p = rates[bucket]
            excess[bucket] += (r - n * p) ** 2 - n * p * (1.0 - p)
            pairs[bucket] += n * (n - 1.0)
    spreads = {}
    for bucket, p in rates.items():
        variance = max(excess[bucket], 0.0) / pairs[bucket] if pairs[bucket] else 0.0
        logit_variance = variance / (p * (1.0 - p)) ** 2
        shrunk = (pairs[bucket] * logit_variance + spread_prior_pairs * spread_default**2) / (pairs[bucket] + spread_prior_pairs)
        spreads[bucket] = min(max(math.sqrt(shrunk), spread_min), spread_max)
    return Population(overall=overall, rates=rates, spreads=spreads, clue_rates=clue_rates, default_spread=spread_default, votes=total)


# --- the tail of a run of votes ---------------------------------------------------------------

Z_GRID = np.round(np.arange(-3.0, 7.0001, 0.05), 6)
"""Skill levels (standard deviations) the mixture integrates over; above 7 the rest of the
normal's mass (1.3e-12) is counted as a sure success, so p-values never go below it."""


def _normal_cdf(z: np.ndarray) -> np.ndarray:
    return np.array([0.5 * math.erfc(-float(x) / math.sqrt(2.0)) for x in z])


_CDF = _normal_cdf(Z_GRID)
_TOP_MASS = 0.5 * math.erfc(float(Z_GRID[-1]) / math.sqrt(2.0))


def poisson_binomial_tail(probabilities: Sequence[float] | np.ndarray, k: int) -> float:
    """``P(S >= k)`` for ``S`` the number of successes of independent trials with these
    success probabilities (exact, by dynamic programming)."""
    p = np.asarray(probabilities, dtype=float).reshape(1, -1)
    return float(_tails(p, k)[0])


def _tails(p: np.ndarray, k: int) -> np.ndarray:
    """``P(S >= k)`` for each row of trial probabilities ``p`` (rows: skill levels). Tracks
    the counts ``0 .. k-1`` and an absorbing ``>= k`` state, so the cost is rows x n x k."""
    rows, n = p.shape
    if k <= 0:
        return np.ones(rows)
    if k > n:
        return np.zeros(rows)
    state = np.zeros((rows, k + 1))
    state[:, 0] = 1.0
    for i in range(n):
        q = p[:, i : i + 1]
        moved = state[:, :-1] * q
        state[:, :-1] *= 1.0 - q
        state[:, 1:] += moved
        # state[:, k] already held the absorbed mass; moved[:, k-1] was added to it above
    return state[:, k]


def person_tail(rates: Sequence[float], spreads: Sequence[float], right: int) -> float:
    """The chance that a person of random skill gets at least ``right`` of these votes right:
    the upper tail of the Poisson-binomial mixed over skill ``z ~ N(0, 1)``, vote ``i``
    right with ``expit(logit(rates[i]) + spreads[i] * z)``.

    Integrated on ``Z_GRID`` as an upper bound (the tail grows with ``z``, so each slice is
    counted at its upper end, and skill above the grid as certain success): a p-value that
    errs towards the player."""
    base = np.array([_logit(p) for p in rates])
    spread = np.asarray(spreads, dtype=float)
    p = _expit(base[None, :] + Z_GRID[:, None] * spread[None, :])
    tails = _tails(p, right)
    slices = np.diff(np.concatenate([[0.0], _CDF]))
    return float(min(1.0, float(np.dot(slices, tails)) + _TOP_MASS))


@dataclass(frozen=True)
class RunEvidence:
    """The most improbable run of a player's votes: where it lies (``start``, ``end``:
    indices into the votes tested, end excluded), its votes and right votes, the right
    votes a population player would expect, the run's p-value, the windows tested and the
    player's p-value (``run_p_value * windows``, at most 1)."""

    start: int
    end: int
    votes: int
    right: int
    expected: float
    run_p_value: float
    windows: int
    p_value: float

    def flagged(self, alpha: float) -> bool:
        return self.p_value < alpha

    def as_dict(self) -> dict[str, float | int]:
        return {
            "start": self.start,
            "end": self.end,
            "votes": self.votes,
            "right": self.right,
            "expected": round(self.expected, 2),
            "run_p_value": float(f"{self.run_p_value:.3g}"),
            "windows": self.windows,
            "p_value": float(f"{self.p_value:.3g}"),
        }


def windows_of(n: int, sizes: Sequence[int] = WINDOW_SIZES) -> list[tuple[int, int]]:
    """The runs scanned in ``n`` votes: for each size up to ``n``, windows starting every
    half size plus the one ending at the last vote; and all ``n`` votes when ``n`` is not a
    size (shorter than the smallest too)."""
    found: set[tuple[int, int]] = set()
    for size in sizes:
        if size > n:
            continue
        step = max(size // 2, 1)
        found.update((start, start + size) for start in range(0, n - size + 1, step))
        found.add((n - size, n))
    if n and n not in sizes and (n < max(sizes, default=0) or not sizes):
        found.add((0, n))
    return sorted(found)


def _quick_bound(rates: np.ndarray, spreads: np.ndarray, right: int, z: float = 3.0) -> float:
    """A lower bound on a run's p-value without the dynamic program: skill above ``z`` has
    mass ``Q(z)``, and there the tail is at least a half when ``right`` is at most the mean
    right count at ``z`` (a Poisson-binomial's median is its mean rounded). 0 when it
    says nothing."""
    mean = float(np.sum(_expit(np.log(rates / (1.0 - rates)) + z * spreads)))
    if right <= math.floor(mean):
        return 0.5 * 0.5 * math.erfc(z / math.sqrt(2.0))
    return 0.0


def improbable_run(
    votes: Sequence[VoteFact], population: Population, *, alpha: float = 1.0, sizes: Sequence[int] = WINDOW_SIZES
) -> RunEvidence | None:
    """The most improbable window of these votes (in the order cast) under ``population``,
    with the player's Bonferroni p-value over all windows tested; None without votes.

    Windows whose p-value cannot reach ``alpha / windows`` (a quick bound) are not computed
    exactly, so with ``alpha`` below 1 the evidence returned is only exact when flagged."""
    n = len(votes)
    if not n:
        return None
    buckets = [vote.bucket for vote in votes]
    rates = np.array([population.accuracy(b) for b in buckets])
    spreads = np.array([population.spread(b) for b in buckets])
    right = np.array([int(vote.correct) for vote in votes])
    cumulative = np.concatenate([[0], np.cumsum(right)])
    windows = windows_of(n, sizes)
    cutoff = alpha / len(windows)
    best: tuple[float, int, int] | None = None
    for start, end in windows:
        k = int(cumulative[end] - cumulative[start])
        if alpha < 1.0 and _quick_bound(rates[start:end], spreads[start:end], k) >= cutoff:
            continue
        p = person_tail(rates[start:end].tolist(), spreads[start:end].tolist(), k)
        if best is None or p < best[0]:
            best = (p, start, end)
    if best is None:  # every window was cleared by the quick bound: report the whole run
        return RunEvidence(0, n, n, int(cumulative[n]), float(rates.sum()), 1.0, len(windows), 1.0)
    p, start, end = best
    k = int(cumulative[end] - cumulative[start])
    return RunEvidence(start, end, end - start, k, float(rates[start:end].sum()), p, len(windows), min(1.0, p * len(windows)))


# --- following another account's give-ups -----------------------------------------------------


@dataclass(frozen=True)
class GiveUp:
    """A round an account gave up on or let time out: from ``ended`` (seconds, any epoch) on,
    that account can see both claims' answers."""

    player: Hashable
    claims: tuple[Hashable, Hashable]
    ended: float


@dataclass(frozen=True)
class CastVote:
    """A vote with who cast it, on which claims, and when (seconds, the give-ups' epoch)."""

    id: Hashable
    player: Hashable
    claims: tuple[Hashable, Hashable]
    cast: float
    fact: VoteFact


@dataclass(frozen=True)
class FollowEvidence:
    """A voter's votes on claims that one source account had given up on shortly before."""

    voter: Hashable
    source: Hashable
    vote_ids: tuple[Hashable, ...]
    claims: tuple[Hashable, ...]
    votes: int
    right: int
    expected: float
    run_p_value: float
    sources: int
    p_value: float

    def flagged(self, alpha: float) -> bool:
        return self.p_value < alpha


def follows(votes: Iterable[CastVote], give_ups: Iterable[GiveUp], *, window_seconds: float) -> dict[tuple[Hashable, Hashable], list[CastVote]]:
    """``{(voter, source): votes}``: each vote whose claims the source (another account) gave
    up on within ``window_seconds`` before the vote was cast. A vote follows each such
    source once, however many of its claims that source gave up."""
    ended: dict[Hashable, list[tuple[float, Hashable]]] = defaultdict(list)
    for give_up in give_ups:
        for claim in give_up.claims:
            ended[claim].append((give_up.ended, give_up.player))
    found: dict[tuple[Hashable, Hashable], list[CastVote]] = defaultdict(list)
    for vote in votes:
        sources = {
            source
            for claim in vote.claims
            for moment, source in ended.get(claim, ())
            if source != vote.player and vote.cast - window_seconds <= moment <= vote.cast
        }
        for source in sources:
            found[(vote.player, source)].append(vote)
    return dict(found)


def following_evidence(
    followed: Mapping[tuple[Hashable, Hashable], Sequence[CastVote]], population: Population, *, alpha: float = 1.0
) -> dict[Hashable, FollowEvidence]:
    """Per voter, the source whose give-ups the voter's votes follow most improbably well:
    the tail of the followed votes' right count under the population's mixture null,
    times the number of sources that voter follows (Bonferroni). Voters whose every source
    is cleared by the quick bound are left out when ``alpha`` is below 1."""
    by_voter: dict[Hashable, list[tuple[Hashable, Sequence[CastVote]]]] = defaultdict(list)
    for (voter, source), votes in followed.items():
        by_voter[voter].append((source, votes))
    found: dict[Hashable, FollowEvidence] = {}
    for voter, sources in by_voter.items():
        cutoff = alpha / len(sources)
        best: FollowEvidence | None = None
        for source, votes in sorted(sources, key=lambda item: repr(item[0])):
            buckets = [vote.fact.bucket for vote in votes]
            rates = np.array([population.accuracy(b) for b in buckets])
            spreads = np.array([population.spread(b) for b in buckets])
            k = sum(int(vote.fact.correct) for vote in votes)
            if alpha < 1.0 and _quick_bound(rates, spreads, k) >= cutoff:
                continue
            p = person_tail(rates.tolist(), spreads.tolist(), k)
            if best is None or p < best.run_p_value:
                claims = tuple(dict.fromkeys(claim for vote in votes for claim in vote.claims))
                best = FollowEvidence(
                    voter, source, tuple(vote.id for vote in votes), claims, len(votes), k, float(rates.sum()), p, len(sources),
                    min(1.0, p * len(sources)),
                )
        if best is not None:
            found[voter] = best
    return found
