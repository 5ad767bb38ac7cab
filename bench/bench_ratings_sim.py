"""Simulate votes from known abilities and difficulties, fit the ratings, compare the flags.

Every player has a true skill and every claim a true difficulty (logits); a vote on a pair
is correct with probability ``expit(skill - d_true - d_false)``, the model of
scoring/ratings.py. Each claim gets exactly N votes (N rounds pairing the TRUE claims with a
shuffle of the FALSE ones), each vote by a random player.

A claim is **truly too hard** when the average player, next to an average partner claim,
would be right less than half the time: ``d > mean skill`` (the partner's mean difficulty
is 0). That is what scoring/filters.py's too-hard flag (smoothed correct-vote rate under
0.5) estimates from counts alone.

Printed for each N: Spearman correlation of fitted vs true (claims and players) for the
Rasch batch fit, Glicko-2 replayed vote by vote, and the Beta-smoothed score; then
precision and recall of each too-hard flag against the truly too-hard claims, and of each
rating's hardest claims in the number the Beta 4/1 filter flags (the rankings compared as
flags, each threshold aside).

Also for Glicko-2: what each player's first ten votes move their rating (the mean and the
95th percentile of the ten changes, in rating points, and the largest), and how many players
are still provisional (deviation over 110) after them: ``--max-step`` is the most one vote
moves a player (scoring.ratings.DEFAULT_MAX_STEP, 50; 0 for Glicko-2's own step, as before
the cap), to compare the swings and the accuracy with and without it.

Usage: python bench/bench_ratings_sim.py [--players 2000] [--claims 20000]
       [--votes 5,10,20] [--seed 0] [--mean-skill 1.7] [--no-glicko] [--max-step 50]
       [--record PATH]

Pure computation: no database, no Redis (it takes neither option).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np
from scipy import special, stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from scoring.filters import fit_beta_binomial_prior, is_too_hard as beta_too_hard, smoothed_rate
from scoring.ratings import DEFAULT_MAX_STEP, Z_90, Rating, RoundVote, fit_rasch, glicko2_replay, is_provisional, is_too_hard


def simulate(
    rng: np.random.Generator,
    true_skill: np.ndarray,
    true_difficulty: np.ndarray,
    votes_per_claim: int,
) -> tuple[list[RoundVote], np.ndarray]:
    """The votes in a random casting order, and each claim's count of correct votes."""
    n_claims = true_difficulty.size
    true_ids = np.arange(0, n_claims, 2)  # even claims are TRUE, odd ones FALSE
    false_ids = np.arange(1, n_claims, 2)
    votes: list[RoundVote] = []
    correct_votes = np.zeros(n_claims, dtype=int)
    for _ in range(votes_per_claim):
        partners = rng.permutation(false_ids)
        voters = rng.integers(0, true_skill.size, size=true_ids.size)
        eta = true_skill[voters] - true_difficulty[true_ids] - true_difficulty[partners]
        correct = rng.random(true_ids.size) < special.expit(eta)
        correct_votes[true_ids[correct]] += 1
        correct_votes[partners[correct]] += 1
        votes.extend(
            RoundVote(int(v), int(t), int(f), bool(c))
            for v, t, f, c in zip(voters, true_ids, partners, correct)
        )
    order = rng.permutation(len(votes))  # the order the votes were cast in
    return [votes[i] for i in order], correct_votes


class FirstMoves:
    """Each player's rating changes over their first ``first`` votes (a ``glicko2_replay``
    ``on_vote``), and their deviation after them."""

    def __init__(self, first: int = 10) -> None:
        self.first = first
        self.moves: dict[object, list[float]] = {}
        self.deviation: dict[object, float] = {}

    def __call__(self, vote: RoundVote, before: Rating, after: Rating) -> None:
        moves = self.moves.setdefault(vote.voter, [])
        if len(moves) < self.first:
            moves.append(after.rating - before.rating)
            if len(moves) == self.first:
                self.deviation[vote.voter] = after.deviation

    def summary(self) -> tuple[float, float, float, float]:
        """Mean and 95th percentile of the absolute changes, the largest, and the share of
        players who had ``first`` votes still provisional after them."""
        changes = np.abs(np.array([m for moves in self.moves.values() for m in moves]))
        provisional = np.mean([is_provisional(d) for d in self.deviation.values()]) if self.deviation else float("nan")
        return float(changes.mean()), float(np.percentile(changes, 95)), float(changes.max()), float(provisional)


def top_k(difficulty: np.ndarray, k: int) -> np.ndarray:
    """Flag the ``k`` claims of highest fitted difficulty."""
    flagged = np.zeros(difficulty.size, dtype=bool)
    if k:
        flagged[np.argsort(-difficulty, kind="stable")[:k]] = True
    return flagged


def precision_and_recall(flagged: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    hits = int(np.sum(flagged & truth))
    precision = hits / flagged.sum() if flagged.any() else float("nan")
    recall = hits / truth.sum() if truth.any() else float("nan")
    return float(precision), float(recall)


def precision_recall(flagged: np.ndarray, truth: np.ndarray) -> str:
    precision, recall = precision_and_recall(flagged, truth)
    return f"flagged {int(flagged.sum()):5d}  precision {precision:.3f}  recall {recall:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2000)
    parser.add_argument("--claims", type=int, default=20000)
    parser.add_argument("--votes", default="5,10,20", help="votes per claim, comma-separated")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mean-skill", type=float, default=1.7)
    parser.add_argument("--sd-skill", type=float, default=1.0)
    parser.add_argument("--sd-difficulty", type=float, default=1.0)
    parser.add_argument(
        "--no-glicko", action="store_true", help="skip the (slower) Glicko-2 replay"
    )
    parser.add_argument(
        "--max-step", type=float, default=DEFAULT_MAX_STEP,
        help=f"the most one vote moves a player's Glicko-2 rating ({DEFAULT_MAX_STEP:g}); 0: uncapped",
    )
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args()
    record = harness.Record("bench_ratings_sim", args.record)

    rng = np.random.default_rng(args.seed)
    n_claims = args.claims - args.claims % 2
    true_skill = rng.normal(args.mean_skill, args.sd_skill, args.players)
    true_difficulty = rng.normal(0.0, args.sd_difficulty, n_claims)
    truly_hard = true_difficulty > true_skill.mean()
    print(
        f"{args.players} players (skill N({args.mean_skill}, {args.sd_skill})), {n_claims} claims "
        f"(difficulty N(0, {args.sd_difficulty})), seed {args.seed}; truly too hard: "
        f"{int(truly_hard.sum())} claims ({truly_hard.mean():.1%})"
    )
    beta_flag = functools.lru_cache(maxsize=None)(
        lambda c, v, a, b: bool(beta_too_hard(c, v, a=a, b=b))
    )

    for n in (int(x) for x in args.votes.split(",")):
        started = time.perf_counter()
        votes, correct = simulate(rng, true_skill, true_difficulty, n)
        accuracy = np.mean([v.correct for v in votes])
        print(f"\n== {n} votes per claim: {len(votes)} votes, accuracy {accuracy:.3f}")

        tic, cpu = time.perf_counter(), time.process_time()
        rasch = fit_rasch(votes)
        rasch_seconds, rasch_cpu = time.perf_counter() - tic, time.process_time() - cpu
        case = f"{args.players} players, {n_claims} claims, {n} votes a claim, seed {args.seed}"
        record.add(case, "Rasch fit", round(rasch_cpu, 2), "s CPU")
        r_diff = np.array([rasch.claims[i].value for i in range(n_claims)])
        r_se = np.array([rasch.claims[i].se for i in range(n_claims)])
        r_skill = np.array([rasch.players[i].value if i in rasch.players else np.nan
                            for i in range(args.players)])
        voted = ~np.isnan(r_skill)
        r_even = rasch.break_even_difficulty()
        print(f"Rasch fit {rasch_seconds:.1f} s, converged {rasch.converged}, "
              f"intercept {rasch.intercept:.2f}, break-even {r_even:.2f} "
              f"(true {true_skill.mean():.2f})")
        rho_rasch = float(stats.spearmanr(r_diff, true_difficulty)[0])
        print(f"  Spearman claims  Rasch {rho_rasch:.3f}", end="")
        beta_score = np.array([smoothed_rate(int(correct[i]), n) for i in range(n_claims)])
        rho_beta = float(stats.spearmanr(-beta_score, true_difficulty)[0])
        print(f"   Beta score {rho_beta:.3f}", end="")
        record.add(case, "Spearman of claims' difficulty, Rasch", round(rho_rasch, 3), "")
        record.add(case, "Spearman of claims' difficulty, Beta score", round(rho_beta, 3), "")
        glicko = None
        if not args.no_glicko:
            tic = time.perf_counter()
            first = FirstMoves()
            glicko = glicko2_replay(votes, max_step=args.max_step or None, on_vote=first)
            glicko_seconds = time.perf_counter() - tic
            g_diff = np.array([glicko.claims[i].mu for i in range(n_claims)])
            g_se = np.array([glicko.claims[i].phi for i in range(n_claims)])
            g_skill = np.array([glicko.players[i].mu if i in glicko.players else np.nan
                                for i in range(args.players)])
            rho_glicko = float(stats.spearmanr(g_diff, true_difficulty)[0])
            print(f"   Glicko-2 {rho_glicko:.3f}", end="")
            record.add(case, "Spearman of claims' difficulty, Glicko-2", round(rho_glicko, 3), "")
        print()
        players_rho = stats.spearmanr(r_skill[voted], true_skill[voted])[0]
        print(f"  Spearman players Rasch {players_rho:.3f}", end="")
        record.add(case, "Spearman of players' skill, Rasch", round(float(players_rho), 3), "")
        if glicko is not None:
            g_players_rho = float(stats.spearmanr(g_skill[voted], true_skill[voted])[0])
            print(f"   Glicko-2 {g_players_rho:.3f} (replay {glicko_seconds:.1f} s)", end="")
        print()
        if glicko is not None:
            mean, p95, largest, provisional = first.summary()
            step = f"at most {args.max_step:g} a vote" if args.max_step else "uncapped"
            print(f"  first ten votes of a player, Glicko-2 ({step}): |change| mean {mean:.1f}, "
                  f"95th percentile {p95:.1f}, largest {largest:.1f}; provisional after them {provisional:.1%}")
            record.add(case, f"Spearman of players' skill, Glicko-2 ({step})", round(g_players_rho, 3), "")
            record.add(case, f"first ten votes' rating change, mean ({step})", round(mean, 1), "points")
            record.add(case, f"first ten votes' rating change, 95th percentile ({step})", round(p95, 1), "points")

        prior = fit_beta_binomial_prior(zip(correct.tolist(), [n] * n_claims))
        rows = [
            ("Beta 4/1 prior (filters.py)",
             np.array([beta_flag(int(c), n, 4.0, 1.0) for c in correct])),
            (f"Beta fitted prior {prior.a:.1f}/{prior.b:.1f}",
             np.array([beta_flag(int(c), n, prior.a, prior.b) for c in correct])),
        ]
        for z, name in ((0.0, "estimate"), (Z_90, "90% lower end")):
            rows.append((f"Rasch, {name}", np.array([
                bool(is_too_hard(d, s, break_even=r_even, z=z)) for d, s in zip(r_diff, r_se)
            ])))
        if glicko is not None:
            g_even = glicko.break_even_difficulty()
            for z, name in ((0.0, "estimate"), (Z_90, "90% lower end")):
                rows.append((f"Glicko-2, {name}", np.array([
                    bool(is_too_hard(d, s, break_even=g_even, z=z)) for d, s in zip(g_diff, g_se)
                ])))
        # The same flag budget: each rating's k hardest claims, k = what the Beta 4/1 filter
        # flags. At equal counts precision and recall both follow the hits, so this compares
        # the rankings as flags, apart from where each rule puts its threshold.
        k = int(rows[0][1].sum())
        rows.append((f"Rasch, top {k} (Beta 4/1's count)", top_k(r_diff, k)))
        if glicko is not None:
            rows.append((f"Glicko-2, top {k} (Beta 4/1's count)", top_k(g_diff, k)))
        print(f"  too hard vs truly too hard ({int(truly_hard.sum())} claims):")
        for number, (name, flagged) in enumerate(rows):
            print(f"    {name:32s} {precision_recall(flagged, truly_hard)}")
            if number == 0 or name.startswith("Rasch, top"):
                precision, recall = precision_and_recall(flagged, truly_hard)
                label = "Beta 4/1 prior" if number == 0 else "Rasch's hardest, as many"
                record.add(case, f"too hard, {label}: precision", round(precision, 3), "")
                record.add(case, f"too hard, {label}: recall", round(recall, 3), "")
        print(f"  ({time.perf_counter() - started:.1f} s for this vote count)")


if __name__ == "__main__":
    main()
