"""Improbable players: right answers no person of any plausible skill gives at that speed.

Two tests, both against what the population does at the same clue use and the same speed:

(a) **Improbable accuracy.** Votes are put in buckets by clues revealed and seconds taken;
    each bucket's accuracy is the population's, smoothed towards a prior taken from the FM2
    release's voting (``fm2_prior``: 80% right once the pair is read, chance before), and
    a suspect is tested against everyone *else*'s votes (``Population.excluding``), so that
    on an empty instance or in a small class the bar is the prior's, not the suspect's own
    record. A person's chance of a right vote is that accuracy moved by their own
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

(b) **Following give-ups.** A vote one of whose claims another account gave up on or let
    time out shortly before (the answers are then shown to that account) *follows* that
    account: the same claim is enough, whatever it was paired with in either round (one
    claim's label tells which of a pair is false).
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
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

CLUE_EDGES: tuple[int, ...] = (1, 2, 3, 5)
"""Bucket edges of clues revealed: 0, 1, 2, 3-4, 5 or more."""
SECOND_EDGES: tuple[float, ...] = (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 12.0, 15.0, 20.0, 30.0, 60.0, 120.0)
"""Bucket edges of seconds taken (start to vote, clue penalties not counted): a second wide up
to 10 s, where reading the pair (and a clue) is still under way and a second more changes
what a person can know. A bucket's prior is read at its middle, so a wider bucket measured a
vote at its low end against what people manage seconds later (until issue 36, 8-15 s: 30 of
30 with a clue at 8 s were judged against 11.5 s)."""
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
    bucket: Bucket = field(init=False, repr=False, compare=False)
    """Its (clue, seconds) bucket, worked out once: the fits and scans read it many times."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "bucket", bucket_of(self.clues, self.seconds))


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _expit(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free logistic
    return out


# --- the prior: the FM2 release's human voting ------------------------------------------------

FM2_ACCURACY = 0.80
"""The share of the release's votes that were right: "80% of votes are correct" (Eisenschlos
et al. 2021, section 3.2, the prior of its too-hard filter); the dev split's counts agree
(1,935 right of 2,402 votes, 0.806)."""
CHANCE = 0.5
"""One claim of the two is false: a vote cast without reading is right half the time."""
CLAIM_TOKENS = 15
"""Tokens of a claim, on average (the paper's Table 1: 15 in every split)."""
READING_TOKENS_PER_SECOND = 4.2
"""About 250 words a minute, an adult's silent reading (an assumption: the paper times no
reading). Both claims, 2 x ``CLAIM_TOKENS``, take about 7 s."""
LOOKING_SECONDS = 2.5
"""Seconds of a vote not spent reading: the pair appears and the eyes find the first claim,
then the choice is made and clicked (an assumption, as the reading speed)."""
SKILL_SPREAD = 1.0
"""How far players' accuracies spread (logits) once they have read the pair."""
SPREAD_FLOOR = 0.3
"""The least spread assumed anywhere: some players guess luckier than others for a while."""


CLUE_TOKENS = 24
"""Tokens of a clue, on average: the FM2 dev split's retrieved evidence sentences, the
sentences a clue shows, average 24 words (12,050 sentences of 1,169 claims; measured with
``len(text.split())``, the split's claims averaging 14 the same way)."""
CLUE_CLICK_SECONDS = 1.0
"""Seconds a clue takes that are not reading: finding and pressing its button, and its text
arriving (an assumption, as ``LOOKING_SECONDS``)."""
CLUES_OF_BUCKET: tuple[int, ...] = (0, 1, 2, 3, 5)
"""The clues a clue bucket's prior assumes were read: its fewest (the least reading, the
highest prior: the bar leans towards the player)."""


def read_share(seconds: float, clues: int = 0) -> float:
    """How much of what the round shows a player can have read in a vote of ``seconds``:
    nothing for the first ``LOOKING_SECONDS``, then an exponential approach whose time
    constant is the time to read both claims and the ``clues`` bought (63% of what reading
    does by then, 95% by three times it)."""
    needed = (2 * CLAIM_TOKENS + clues * CLUE_TOKENS) / READING_TOKENS_PER_SECOND
    return 1.0 - math.exp(-max(seconds - LOOKING_SECONDS - clues * CLUE_CLICK_SECONDS, 0.0) / needed)


def fm2_prior(bucket: Bucket) -> tuple[float, float]:
    """The accuracy and spread (logits) a bucket starts from before the game has votes in it,
    from the release: a vote is right ``FM2_ACCURACY`` of the time once what it shows is
    read (both claims, and the clues bought), and by chance before, moving with
    ``read_share`` in logits (at the middle of the bucket's seconds; from 120 s on, fully
    read); players spread as far as they have read, at least ``SPREAD_FLOOR``.

    A clue is one more sentence to read (``CLUE_TOKENS``): the release's 80% is of votes
    with and without clues alike, and the paper gives no accuracy by clue count or time, so
    a vote that bought clues is not assumed to be right more often, only to have more to
    read first. (Until issue 36 a clue vote started at 80% at any speed, so a script that
    bought one clue and answered in a second was right 30 times of 30 at p = 0.13.)"""
    clue_bucket, seconds = bucket
    if seconds >= len(SECOND_EDGES):
        share = 1.0
    else:
        lower = SECOND_EDGES[seconds - 1] if seconds else 0.0
        share = read_share((lower + SECOND_EDGES[seconds]) / 2, CLUES_OF_BUCKET[min(clue_bucket, len(CLUES_OF_BUCKET) - 1)])
    rate = float(_expit(np.array(share * _logit(FM2_ACCURACY))))
    return rate, max(SPREAD_FLOOR, share * SKILL_SPREAD)


Prior = Callable[[Bucket], tuple[float, float]]
"""A bucket's accuracy and spread before any vote (``fm2_prior``)."""

ALL_BUCKETS: tuple[Bucket, ...] = tuple((c, s) for c in range(len(CLUE_EDGES) + 1) for s in range(len(SECOND_EDGES) + 1))


# --- the population -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Tally:
    """A bucket's sufficient statistics: right votes and votes, and over the players with at
    least two votes in it the sums the spread's method of moments needs (``r`` a player's
    right votes there, ``n`` their votes): sum r^2, sum r n, sum n^2, sum n, sum n (n - 1).
    Kept so that one player's votes can be taken out exactly (``Population.excluding``)."""

    right: int = 0
    votes: int = 0
    rr: float = 0.0
    rn: float = 0.0
    nn: float = 0.0
    n: float = 0.0
    pairs: float = 0.0

    def add(self, r: int, n: int, sign: int = 1) -> Tally:
        multi = n >= 2
        return Tally(
            right=max(self.right + sign * r, 0),
            votes=max(self.votes + sign * n, 0),
            rr=max(self.rr + sign * r * r * multi, 0.0),
            rn=max(self.rn + sign * r * n * multi, 0.0),
            nn=max(self.nn + sign * n * n * multi, 0.0),
            n=max(self.n + sign * n * multi, 0.0),
            pairs=max(self.pairs + sign * n * (n - 1) * multi, 0.0),
        )

    def excess(self, p: float) -> float:
        """sum over players of ``(r - n p)^2 - n p (1 - p)``: the variance of players' right
        counts beyond the binomial's."""
        return self.rr - 2 * p * self.rn + p * p * self.nn - p * (1.0 - p) * self.n


@dataclass(frozen=True)
class FitOptions:
    """How ``population_fit`` smooths: ``prior_votes`` pseudo-votes at the prior's accuracy
    (or, without a prior, at the bucket's clue group's, itself at the overall rate); the
    spread shrunk towards the prior's (or ``spread_default``) with ``spread_prior_pairs``
    pseudo-pairs, then clamped to ``[spread_min, spread_max]``."""

    prior: Prior | None = None
    prior_votes: float = 20.0
    spread_default: float = 1.0
    spread_min: float = 0.3
    spread_max: float = 3.0
    spread_prior_pairs: float = 200.0


@dataclass(frozen=True)
class Population:
    """Per bucket, the population's accuracy and the spread (logits) of players' accuracies."""

    overall: float
    rates: Mapping[Bucket, float]
    spreads: Mapping[Bucket, float]
    clue_rates: Mapping[int, float] = field(default_factory=dict)
    default_spread: float = 1.0
    votes: int = 0
    tallies: Mapping[Bucket, Tally] = field(default_factory=dict)
    options: FitOptions | None = None
    vote_ids: tuple[Hashable, Hashable] | None = None
    """The first and last ids of the votes fitted, as the caller names votes (so that it can
    find which of a player's votes are in; ``excluding`` needs exactly those)."""

    def accuracy(self, bucket: Bucket) -> float:
        return self.rates.get(bucket, self.clue_rates.get(bucket[0], self.overall))

    def spread(self, bucket: Bucket) -> float:
        return self.spreads.get(bucket, self.default_spread)

    def excluding(self, votes: Iterable[VoteFact]) -> Population:
        """The population without these votes (one player's, all of those it was fitted
        on): exact, by taking their counts out of the tallies and finishing the fit again.
        A suspect is tested against everyone else, so a new class or a small population is
        not its own cheater's alibi. A population made by hand (no tallies) is returned as
        it is."""
        if self.options is None:
            return self
        mine: dict[Bucket, list[int]] = defaultdict(lambda: [0, 0])
        for vote in votes:
            counts = mine[vote.bucket]
            counts[0] += int(vote.correct)
            counts[1] += 1
        if not mine:
            return self
        tallies = dict(self.tallies)
        for bucket, (r, n) in mine.items():
            tallies[bucket] = tallies.get(bucket, Tally()).add(r, n, sign=-1)
        return _finish(tallies, self.options, self.vote_ids)


RATE_CLAMP = (0.02, 0.995)


def population_fit(
    votes_by_player: Mapping[Hashable, Sequence[VoteFact]],
    *,
    prior: Prior | None = fm2_prior,
    prior_votes: float = 20.0,
    spread_default: float = 1.0,
    spread_min: float = 0.3,
    spread_max: float = 3.0,
    spread_prior_pairs: float = 200.0,
    vote_ids: tuple[Hashable, Hashable] | None = None,
) -> Population:
    """The population's accuracy and spread per bucket, from everyone's votes.

    Accuracy: a bucket's right votes over its votes, smoothed with ``prior_votes``
    pseudo-votes at the ``prior``'s accuracy for the bucket (by default ``fm2_prior``, the
    release's voting, so that an empty instance starts from what people do); with
    ``prior=None``, at its clue group's rate (itself smoothed at the overall rate).

    Spread: the between-player variance of accuracy in a bucket by the method of moments
    (the variance of each player's right count around the bucket's expectation, less the
    binomial part, over the pairs of votes a player cast in the bucket), put on the logit
    scale and shrunk towards the prior's spread (or ``spread_default``) with
    ``spread_prior_pairs`` pseudo-pairs, so that a bucket few players revisit keeps the
    prior's; then clamped to ``[spread_min, spread_max]``. The default and the floor lean
    towards honest players: a wider spread makes a strong player likelier, and so flags less.

    The result keeps each bucket's tallies, so that ``Population.excluding`` can take one
    player's votes out exactly."""
    tallies: dict[Bucket, Tally] = {}
    for votes in votes_by_player.values():
        mine: dict[Bucket, list[int]] = defaultdict(lambda: [0, 0])
        for vote in votes:
            counts = mine[vote.bucket]
            counts[0] += int(vote.correct)
            counts[1] += 1
        for bucket, (r, n) in mine.items():
            tallies[bucket] = tallies.get(bucket, Tally()).add(r, n)
    options = FitOptions(prior, prior_votes, spread_default, spread_min, spread_max, spread_prior_pairs)
    return _finish(tallies, options, vote_ids)


def _finish(tallies: Mapping[Bucket, Tally], options: FitOptions, vote_ids: tuple[Hashable, Hashable] | None) -> Population:
    """Rates and spreads from the tallies (``population_fit``'s rules)."""
    total = sum(t.votes for t in tallies.values())
    right = sum(t.right for t in tallies.values())
    overall = (right + 1.0) / (total + 2.0)
    by_clue: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for (clue, _), tally in tallies.items():
        by_clue[clue][0] += tally.right
        by_clue[clue][1] += tally.votes
    w = options.prior_votes
    clue_rates = {clue: min(max((r + w * overall) / (n + w), RATE_CLAMP[0]), RATE_CLAMP[1]) for clue, (r, n) in by_clue.items()}
    buckets = ALL_BUCKETS if options.prior is not None else tuple(b for b, t in tallies.items() if t.votes)
    rates: dict[Bucket, float] = {}
    spreads: dict[Bucket, float] = {}
    for bucket in buckets:
        tally = tallies.get(bucket, Tally())
        if options.prior is not None:
            start, spread_start = options.prior(bucket)
        else:
            start, spread_start = clue_rates.get(bucket[0], overall), options.spread_default
        p = min(max((tally.right + w * start) / (tally.votes + w), RATE_CLAMP[0]), RATE_CLAMP[1])
        variance = max(tally.excess(p), 0.0) / tally.pairs if tally.pairs else 0.0
        logit_variance = variance / (p * (1.0 - p)) ** 2
        shrunk = (tally.pairs * logit_variance + options.spread_prior_pairs * spread_start**2) / (tally.pairs + options.spread_prior_pairs)
        rates[bucket] = p
        spreads[bucket] = min(max(math.sqrt(shrunk), options.spread_min), options.spread_max)
    return Population(
        overall=overall, rates=rates, spreads=spreads, clue_rates=clue_rates, default_spread=options.spread_default, votes=total,
        tallies=dict(tallies), options=options, vote_ids=vote_ids,
    )


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
