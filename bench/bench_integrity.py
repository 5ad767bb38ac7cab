"""How many honest simulated players the improbable-player tests flag, and how fast cheaters are.

The honest population is bench/bench_ratings_sim.py's: skills N(1.7, 1) and claim
difficulties N(0, 1) in logits, each claim voted on N times by random players, pairs of a
TRUE and a FALSE claim (its ``simulate``). What that bench leaves out, and the tests need,
is how long a vote takes and how many clues it buys. Assumed here:

- each player has a typical time (log-normal, median 30 s, spread 0.6 in logs), and each
  vote varies around it (0.5 in logs), from 1.5 s to 170 s;
- each player buys clues at their own rate (gamma, mean 1), Poisson per vote, at most 6;
- reading takes time: the player's edge ``skill - d_true - d_false`` counts fully only once
  both claims are read, ``r(T) = 1 - exp(-max(T - 3, 0) / 8)`` (nothing in the first 3 s,
  about 40 words at 250 a minute for two claims and the choice; 63% by 11 s, 95% by 27 s;
  ``--read-start`` moves the 3 s), and each clue adds 0.35 logits (up to 4);
- 5% of the rounds are given up or time out (their claims then count as given up by that
  player, at that moment), the votes are spread over 30 days.

Printed, each player tested against the population *without their own votes* (as the game
tests them, ``Population.excluding``), which starts from the release's prior
(``scoring.integrity.fm2_prior``): the honest players flagged by each test at the settings'
threshold and at others (target at most 1 in 1,000), in one population of ``--players`` and
in ``--classes`` classes of 30 players, each class alone on a small instance of its own;
then for each cheater how many cheating votes it takes to be flagged, against the large
population, a class's, and an empty instance's (the prior alone):

- ``relay`` (issue 36): a new account votes right in about 1 s with no clue, each time on a
  claim another account gave up just before, beside a claim that account never saw
  (target: held within 50);
- ``replay`` (issue 24): the same in 4 s on the very pairs given up;
- right every time in 4 s, no clue, new account (target: held within 30);
- ``clue`` (issue 36, "30/30 with one clue at 8 s"): a new account buys one clue and votes
  right every time in 7.5-8.5 s (target: held within 30), and the relay played so: each vote
  on a claim another account gave up, one clue, 7.5-8.5 s (target: held within 50);
- ``streak``: right in 2-5 s, no clue, new and after 100 honest votes;
- ``slow``: a new account votes right every time, 25-40 s and one clue each (what the tests
  cannot tell from a strong player for long; large population only).

Usage: python bench/bench_integrity.py [--players 2000] [--claims 20000] [--votes 20]
       [--classes 34] [--class-claims 200] [--class-votes 10]
       [--seed 0] [--alpha 1e-4] [--read-start 3] [--no-cheaters] [--record PATH]

Pure computation: no database, no Redis (it takes neither option). With --record (or
FM2_BENCH_RECORD) the honest players flagged at the threshold (target at most 1 in 1,000)
and the votes each cheater casts before it is flagged go to the record.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import special

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import harness  # noqa: E402
from bench_ratings_sim import simulate  # noqa: E402

from scoring import integrity  # noqa: E402

DAY = 86400.0


def reading(seconds: np.ndarray, start: float) -> np.ndarray:
    return 1.0 - np.exp(-np.maximum(seconds - start, 0.0) / 8.0)


@dataclass
class World:
    """An honest population's votes as the tests see them."""

    players: int
    votes_by_player: dict[int, list[integrity.VoteFact]]
    cast_votes: list[integrity.CastVote]
    give_ups: list[integrity.GiveUp]
    skill: np.ndarray
    summary: str


def honest_world(rng: np.random.Generator, players: int, claims: int, votes: int, args: argparse.Namespace, first_id: int = 0) -> World:
    """``players`` honest players voting ``votes`` times on each of ``claims`` claims (the
    model in the docstring); player ids from ``first_id``."""
    n_claims = claims - claims % 2
    skill = rng.normal(args.mean_skill, 1.0, players)
    difficulty = rng.normal(0.0, 1.0, n_claims)
    assignments, _ = simulate(rng, skill, difficulty, votes)  # who votes on which pair, in order
    voter = np.array([v.voter for v in assignments])
    true_claim = np.array([v.true_claim for v in assignments])
    false_claim = np.array([v.false_claim for v in assignments])
    n = voter.size
    typical = np.exp(rng.normal(np.log(30.0), 0.6, players))
    clue_rate = rng.gamma(2.0, 0.5, players)
    seconds = np.clip(typical[voter] * np.exp(rng.normal(0.0, 0.5, n)), 1.5, 170.0)
    clues = np.minimum(rng.poisson(clue_rate[voter]), 6)
    edge = reading(seconds, args.read_start) * (skill[voter] - difficulty[true_claim] - difficulty[false_claim]) + 0.35 * np.minimum(clues, 4)
    correct = rng.random(n) < special.expit(edge)
    cast = np.sort(rng.uniform(0.0, 30 * DAY, n))  # the order simulate() cast them in
    gave_up = rng.random(n) < args.give_up_share
    votes_by_player: dict[int, list[integrity.VoteFact]] = {first_id + p: [] for p in range(players)}
    cast_votes: list[integrity.CastVote] = []
    give_ups: list[integrity.GiveUp] = []
    for i in range(n):
        pair = ((first_id, int(true_claim[i])), (first_id, int(false_claim[i])))
        player = first_id + int(voter[i])
        if gave_up[i]:
            give_ups.append(integrity.GiveUp(player, pair, float(cast[i])))
            continue
        fact = integrity.VoteFact(bool(correct[i]), int(clues[i]), float(seconds[i]))
        votes_by_player[player].append(fact)
        cast_votes.append(integrity.CastVote((first_id, i), player, pair, float(cast[i]), fact))
    summary = (
        f"{players} honest players (skill N({args.mean_skill}, 1)), {n_claims} claims, {votes} rounds a claim: "
        f"{int((~gave_up).sum())} votes (accuracy {correct[~gave_up].mean():.3f}), {int(gave_up.sum())} rounds given up; "
        f"seconds a vote: median {np.median(seconds):.0f}, {np.mean(seconds < 8):.1%} under 8 s; clues a vote {clues.mean():.2f}"
    )
    return World(players, votes_by_player, cast_votes, give_ups, skill, summary)


def honest_p_values(world: World, population: integrity.Population, alpha: float, window_days: float) -> tuple[np.ndarray, np.ndarray]:
    """Each honest player's p-values, (a) and (b), each tested against the population
    without their own votes (as the game tests them)."""
    ids = sorted(world.votes_by_player)
    without = {p: population.excluding(world.votes_by_player[p]) for p in ids}
    pv = []
    for p in ids:
        evidence = integrity.improbable_run(world.votes_by_player[p], without[p], alpha=alpha)
        pv.append(evidence.p_value if evidence else 1.0)
    followed = integrity.follows(world.cast_votes, world.give_ups, window_seconds=window_days * DAY)
    by_voter: dict[Hashable, dict[tuple[Hashable, Hashable], list[integrity.CastVote]]] = {}
    for key, votes in followed.items():
        by_voter.setdefault(key[0], {})[key] = votes
    fp = {}
    for voter_id, mine in by_voter.items():
        found = integrity.following_evidence(mine, without[voter_id], alpha=alpha).get(voter_id)
        fp[voter_id] = found.p_value if found else 1.0
    return np.array(pv), np.array([fp.get(p, 1.0) for p in ids])


def report_false_holds(name: str, players: int, pv: np.ndarray, fp: np.ndarray, alphas: list[float], args: argparse.Namespace,
                       record: harness.Record, case: str) -> None:
    print(f"\nhonest players flagged, {name}:")
    for alpha in alphas:
        a, b = int((pv < alpha).sum()), int((fp < alpha).sum())
        either = int(((pv < alpha) | (fp < alpha)).sum())
        mark = "  <- the threshold" if alpha == args.alpha else ""
        if alpha == args.alpha:
            per_thousand = either / players * 1000
            record.add(case, f"honest players flagged, {name}", round(per_thousand, 2), "per 1,000", target="<= 1 per 1,000",
                       ok=per_thousand <= 1)
        print(f"    alpha {alpha:.0e}: improbable {a}, following {b}, either {either} of {players} "
              f"= {either / players * 1000:.2f} per 1,000{mark}")
    loosest = alphas[0]
    follow_min = f"{fp.min():.2g}" if fp.min() < 1.0 else f"none under {loosest:.0e} (windows cleared by the quick bound are not computed)"
    print(f"    smallest honest p-value (a) {pv.min():.2g}; (b) {follow_min}")


def first_flag(population: integrity.Population, history: list[integrity.VoteFact], cheat: list[integrity.VoteFact], alpha: float,
               *, leave_out: bool = True) -> int | None:
    """How many cheating votes until the improbable-run test flags the account, its own
    votes (history and cheat so far) left out of ``population`` when they were in it."""
    for k in range(1, len(cheat) + 1):
        votes = history + cheat[:k]
        against = population.excluding(votes) if leave_out else population
        evidence = integrity.improbable_run(votes, against, alpha=alpha)
        if evidence is not None and evidence.flagged(alpha):
            return k
    return None


def first_follow_flag(population: integrity.Population, cheat: list[integrity.VoteFact], alpha: float, *, shared: str = "pair") -> int | None:
    """The relay: a source account gives up each claim a minute before the cheater votes on
    it; ``shared`` "pair": the cheater is dealt the source's pair, "claim": only one of its
    claims, beside a claim the source never saw."""
    for k in range(1, len(cheat) + 1):
        votes = [
            integrity.CastVote(("c", i), "cheater", (("x", i), ("y", i) if shared == "pair" else ("z", i)), 60.0 * i + 60.0, cheat[i])
            for i in range(k)
        ]
        ups = [integrity.GiveUp("source", (("x", i), ("y", i)), 60.0 * i) for i in range(k)]
        found = integrity.following_evidence(integrity.follows(votes, ups, window_seconds=DAY), population, alpha=alpha)
        if "cheater" in found and found["cheater"].flagged(alpha):
            return k
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2000)
    parser.add_argument("--claims", type=int, default=20000)
    parser.add_argument("--votes", type=int, default=20, help="votes per claim")
    parser.add_argument("--classes", type=int, default=34, help="classes of 30 honest players, each its own instance")
    parser.add_argument("--class-claims", type=int, default=200, help="claims a class's instance holds")
    parser.add_argument("--class-votes", type=int, default=10, help="votes per claim in a class")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mean-skill", type=float, default=1.7)
    parser.add_argument("--alpha", type=float, default=1e-4, help="the threshold (FM2_INTEGRITY ALPHA)")
    parser.add_argument("--give-up-share", type=float, default=0.05)
    parser.add_argument("--follow-days", type=float, default=7.0)
    parser.add_argument("--read-start", type=float, default=3.0, help="seconds before reading the claims helps at all")
    parser.add_argument("--no-cheaters", action="store_true", help="only the honest populations (e.g. more seeds)")
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args()
    record = harness.Record("bench_integrity", args.record)
    case = f"{args.players} players, {args.claims} claims, {args.votes} votes a claim, seed {args.seed}, alpha {args.alpha:.0e}"
    alphas = sorted({1e-3, 1e-4, 1e-5, 1e-6, args.alpha}, reverse=True)
    loosest = alphas[0]

    rng = np.random.default_rng(args.seed)
    world = honest_world(rng, args.players, args.claims, args.votes, args)
    print(world.summary)
    tic = time.perf_counter()
    population = integrity.population_fit(world.votes_by_player)
    print(f"population fit {time.perf_counter() - tic:.1f} s over {population.votes} votes; accuracy and spread by bucket "
          "(clues, seconds from), beside the release's prior (scoring.integrity.fm2_prior) they started from:")
    for bucket in sorted(population.rates):
        if bucket[0] <= 1:
            edge_s = ([0.0] + list(integrity.SECOND_EDGES))[bucket[1]]
            prior_rate, prior_spread = integrity.fm2_prior(bucket)
            print(f"    {bucket[0]} clue{'s' if bucket[0] != 1 else ' '}, {edge_s:5.0f} s+: accuracy {population.rates[bucket]:.3f}, "
                  f"spread {population.spreads[bucket]:.2f}  (prior {prior_rate:.3f}, {prior_spread:.2f}; "
                  f"{population.tallies.get(bucket, integrity.Tally()).votes} votes)")
    tic = time.perf_counter()
    pv, fp = honest_p_values(world, population, loosest, args.follow_days)
    print(f"tested {args.players} players, each without their own votes, in {time.perf_counter() - tic:.1f} s")
    report_false_holds(f"{args.players} players", args.players, pv, fp, alphas, args, record, case)

    # Small instances: classes of 30, each on an instance of its own (its own population).
    class_case = f"{args.classes} classes of 30 players, {args.class_claims} claims, {args.class_votes} votes a claim, seed {args.seed}"
    tic = time.perf_counter()
    class_pv, class_fp = [], []
    first_class: integrity.Population | None = None
    votes_a_player = []
    for c in range(args.classes):
        small = honest_world(rng, 30, args.class_claims, args.class_votes, args, first_id=100_000 * (c + 1))
        fitted = integrity.population_fit(small.votes_by_player)
        first_class = first_class or fitted
        votes_a_player.extend(len(v) for v in small.votes_by_player.values())
        a, b = honest_p_values(small, fitted, loosest, args.follow_days)
        class_pv.append(a)
        class_fp.append(b)
    print(f"\n{args.classes} classes of 30 honest players, each alone on an instance of {args.class_claims} claims voted "
          f"{args.class_votes} times each (median {int(np.median(votes_a_player))} votes a player), {time.perf_counter() - tic:.1f} s")
    report_false_holds(f"{args.classes} classes of 30", 30 * args.classes, np.concatenate(class_pv), np.concatenate(class_fp), alphas, args,
                       record, class_case)

    if args.no_cheaters:
        return
    assert first_class is not None
    honest_history = next(votes for votes in world.votes_by_player.values() if len(votes) >= 100)[:100]
    empty = integrity.population_fit({})
    replay = [integrity.VoteFact(True, 0, 4.0) for _ in range(40)]
    relay = [integrity.VoteFact(True, 0, float(s)) for s in rng.uniform(0.8, 1.4, 48)]
    thirty = [integrity.VoteFact(True, 0, 4.0) for _ in range(60)]
    clue = [integrity.VoteFact(True, 1, float(s)) for s in rng.uniform(7.5, 8.5, 60)]
    clue_relay = [integrity.VoteFact(True, 1, float(s)) for s in rng.uniform(7.5, 8.5, 60)]
    streak = [integrity.VoteFact(True, 0, float(s)) for s in rng.uniform(2.0, 5.0, 60)]
    fresh_streak = [integrity.VoteFact(True, 0, float(s)) for s in rng.uniform(2.0, 5.0, 60)]
    slow = [integrity.VoteFact(True, 1, float(s)) for s in rng.uniform(25.0, 40.0, 400)]
    instances = [
        (f"{args.players} players", population, case),
        ("a class of 30", first_class, class_case),
        ("an empty instance", empty, f"empty instance, alpha {args.alpha:.0e}"),
    ]
    for alpha in sorted({args.alpha, 1e-5}, reverse=True):
        threshold = alpha == args.alpha
        print(f"\ncheaters, votes until flagged at alpha {alpha:.0e}{' (the threshold)' if threshold else ''}, each tested without its own votes:")
        for name, fitted, where in instances if threshold else instances[:1]:
            # The cheater's own votes are in the population, as they would be in the game's,
            # then left out (population.excluding): the same as the others' alone.
            found = {
                "relay": (first_flag(fitted, [], relay, alpha), first_follow_flag(fitted, relay, alpha, shared="claim")),
                "replay": (first_flag(fitted, [], replay, alpha), first_follow_flag(fitted, replay, alpha)),
                "thirty": first_flag(fitted, [], thirty, alpha),
                "clue": (first_flag(fitted, [], clue, alpha), first_flag(fitted, [], clue_relay, alpha),
                         first_follow_flag(fitted, clue_relay, alpha, shared="claim")),
                "streak": (first_flag(fitted, [], fresh_streak, alpha), first_flag(fitted, honest_history, streak, alpha)),
                # The slow one is not held within 400 votes where the population is small (its
                # buckets keep the prior's 80% and full spread): 400 scans each, not worth the time.
                "slow": first_flag(fitted, [], slow, alpha) if fitted is population else None,
            }
            print(f"  on {name}:")
            print(f"    relay, 48 right in about 1 s, no clue, each on a claim another account gave up (beside one it never saw): "
                  f"improbable after {found['relay'][0]}, following after {found['relay'][1]} (of 48)")
            print(f"    replay, 40 right in 4 s, no clue, on pairs another account gave up: improbable after {found['replay'][0]}, "
                  f"following after {found['replay'][1]} (of 40)")
            print(f"    right every time in 4 s, no clue, new account: after {found['thirty']} (of 60)")
            print(f"    clue, right every time in 7.5-8.5 s with one clue, new account: after {found['clue'][0]} (of 60); "
                  f"as a relay of another account's give-ups: improbable after {found['clue'][1]}, following after {found['clue'][2]} (of 60)")
            print(f"    streak, right in 2-5 s, no clue: new account after {found['streak'][0]}, "
                  f"after 100 honest votes after {found['streak'][1]} (of 60)")
            if fitted is population:
                print(f"    slow, right every time in 25-40 s with 1 clue, new account: after {found['slow']} (of 400)")
            if threshold:
                relay_at = min((k for k in found["relay"] if k is not None), default=None)
                record.add(where, "relay (48 right in ~1 s, no clue, after give-ups): votes until held", relay_at, "votes of 48",
                           target="<= 50", ok=relay_at is not None and relay_at <= 50)
                record.add(where, "right every time in 4 s, no clue, new account: votes until held", found["thirty"], "votes of 60",
                           target="<= 30", ok=found["thirty"] is not None and found["thirty"] <= 30)
                record.add(where, "streak (right in 2-5 s, no clue), new account: votes until held", found["streak"][0], "votes of 60")
                record.add(where, "clue (right every time in 7.5-8.5 s, one clue), new account: votes until held", found["clue"][0],
                           "votes of 60", target="<= 30", ok=found["clue"][0] is not None and found["clue"][0] <= 30)
                clue_relay_at = min((k for k in found["clue"][1:] if k is not None), default=None)
                record.add(where, "relay in 7.5-8.5 s with one clue, after give-ups: votes until held", clue_relay_at, "votes of 60",
                           target="<= 50", ok=clue_relay_at is not None and clue_relay_at <= 50)
                if fitted is population:
                    record.add(where, "slow (right in 25-40 s, 1 clue), new account: votes until held", found["slow"], "votes of 400")
        if threshold:
            own = first_flag(integrity.population_fit({"cheater": thirty[:30]}), [], thirty[:30], alpha, leave_out=False)
            print(f"  without leaving the suspect out, on an empty instance (the population is the cheater's own 30 votes in 4 s): "
                  f"flagged after {own} (of 30)")


if __name__ == "__main__":
    main()
