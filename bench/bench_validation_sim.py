"""Validation on a simulated crowd: does weighting checkers by hidden gold items pay?

    python bench/bench_validation_sim.py [--checkers 300] [--claims 20000] [--seed 0]
        [--accuracy-beta 8,2] [--spammers 0.1] [--gold-share 0.1] [--author-right 0.9]
        [--mix 0.4,0.4,0.2] [--shares 0.6,0.55] [--checks 4] [--activity-sigma 1]
        [--players 50] [--seconds-per-check 20] [--pool 2000]

The crowd: ``--checkers`` players, each with a true accuracy drawn from a Beta
(``--accuracy-beta``), except a share of spammers (``--spammers``) who click at random
(accuracy 1/3). A checker who errs picks one of the two other labels at random (the
one-coin model that scoring.validation's weights assume). How much each plays is
lognormal (``--activity-sigma``): a few play a lot, most a little. Of the items a checker
is dealt, ``--gold-share`` are hidden gold items; their record on them (gold items seen
before their real checks, right with their accuracy) gives their weight, from their final
record (scoring.validation.checker_weight with its defaults: min 5 gold items, bar 0.6).

The claims: a true label from ``--mix`` (SUPPORTS, REFUTES, NOT ENOUGH INFO), an author's
label right with ``--author-right`` (else one of the other two), checked by distinct
checkers drawn by how much they play.

Printed, each with a 95% Wilson interval, over all claims:
- recovered: the gold label is the true label; wrong: it is another label; none: ``-``;
  and precision (recovered over claims with a gold label);
- for the weighted gold label (checks are dealt until ``--checks`` checkers of weight > 0
  are in, as the app deals them), again with each further share of ``--shares``, the same
  checks with weights cut to 0 or 1 (the bar alone), the plain majority of the first
  ``--checks`` checkers (all weights 1.0: MultiNLI's 3 of 5), and the author's label alone;
then MultiNLI's validation table (Williams et al. 2018, Table 2) for the weighted and the
plain gold labels, Fleiss' kappa of the first checks, and the play it takes: from
``--players`` playing, ``--seconds-per-check`` per item (gold items included) and the gold
share, how many checks per hour, how many claims reach their checks per hour, and how many
checks per claim per hour a pool of ``--pool`` claims waiting gets.

The app weighs labels as the "bar only (0/1)" row does by default (``FM2_CHECK_WEIGHTS=bar``);
the "weighted" rows are ``FM2_CHECK_WEIGHTS=log_odds``.

One run (python bench/bench_validation_sim.py, defaults, seed 0; about 1 s):

    300 checkers: 42 spammers (accuracy 1/3), the others' accuracy Beta(8, 2) (mean 0.791); 20000 claims, mix 0.4,0.4,0.2, author right 90%; gold share 10%; seed 0
    records: median 17 gold items per checker (mean 29.5); 38 checkers under 5 (weight 1.0); cut to 0: 51 (36 of 42 spammers, 15 honest); weights of the rest: median 1.00, max 2.31
    checks by spammers: 15.7% of the first 4 per claim; the weighted mode dealt 5.23 checks per claim to get 4 of weight > 0

                                        recovered                  wrong            no gold (-)              precision
    weighted                 91.5% [91.1%, 91.9%]    0.3% [ 0.3%,  0.4%]    8.1% [ 7.8%,  8.5%]   99.6% [99.5%, 99.7%]
    weighted, share 0.55     95.2% [94.9%, 95.5%]    0.7% [ 0.6%,  0.8%]    4.1% [ 3.9%,  4.4%]   99.3% [99.2%, 99.4%]
    bar only (0/1)           96.5% [96.2%, 96.7%]    0.9% [ 0.8%,  1.1%]    2.6% [ 2.3%,  2.8%]   99.0% [98.9%, 99.2%]
    plain majority           90.9% [90.4%, 91.2%]    2.8% [ 2.6%,  3.1%]    6.3% [ 6.0%,  6.6%]   97.0% [96.7%, 97.2%]
    author alone             90.1% [89.7%, 90.5%]    9.9% [ 9.5%, 10.3%]                          90.1% [89.7%, 90.5%]

    MultiNLI's validation table (Williams et al. 2018, Table 2; MultiNLI's figures right):
                                     weighted      plain   MultiNLI
      claims counted                    20000      20000
      labels per claim                   5.00       5.00          5
      unanimous                         38.8%      23.6%      58.2%
      individual_matches_gold           84.4%      75.9%      88.7%
      individual_matches_author         74.1%      66.1%      85.2%
      author_matches_gold               84.3%      84.8%      92.6%
      author_differs_from_gold           7.5%       8.9%       5.6%
      no_gold                            8.1%       6.3%       1.8%
      Fleiss' kappa of the first 4 checks: 0.323

    Play: 50 players, 20 s per item, 10% gold items: 9,000 items per hour, 8,100 real checks, of which 6,197 count (weight > 0); 1,549 claims reach 4 counting checks per hour; a pool of 2000 claims gets 4.05 checks per claim per hour, 1.3 hours to validate it all

What it says: dealing checks until four checkers of weight > 0 are in, and cutting those
under the bar (36 of 42 spammers), is what pays: 96.5% of claims get the true label, against
90.9% for the plain majority and 90.1% for the author alone, and 0.9% get a wrong one
(plain: 2.8%). The continuous weights on top, under the share rule, buy precision with
coverage: a 3-to-2 split sits exactly at 0.6 with equal weights, so any spread of weights
sends about half of those claims to "-" (8.1% without a gold label against 2.6%; wrong 0.3%
against 0.9%). At a share of 0.55 they stand between. With records this short (median 17
gold items) and accuracies this close (Beta(8, 2)), the weights are mostly noise beside the
bar; ``--accuracy-beta 4,2 --gold-share 0.2`` and ``--spammers 0.3`` tell the same story.
The simulated checkers are worse than MultiNLI's (individual labels matching the gold label
84% against 88.7%), so its Table 2 is not reproduced, only its shape.
Pure computation: no database, no Redis (it takes neither option). With --record (or
FM2_BENCH_RECORD) each mode's recovered, wrong and precision shares go to the record.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

from scoring.filters import wilson  # noqa: E402
from scoring.validation import (  # noqa: E402
    LABELS,
    NO_GOLD,
    ValidationRow,
    checker_weight,
    fleiss_kappa,
    gold_label,
    validation_table,
)

CANDIDATES = 16  # checkers drawn per claim, in dealing order; the weighted mode walks down it


def share(hits: int, total: int) -> str:
    low, high = wilson(hits, total)
    return f"{hits / total:6.1%} [{low:5.1%}, {high:5.1%}]" if total else "   n/a"


def answer(rng: np.random.Generator, truth: int, accuracy: float) -> int:
    """A label: the true one with ``accuracy``, else one of the other two at random."""
    if rng.random() < accuracy:
        return truth
    return (truth + 1 + int(rng.integers(0, 2))) % 3


def pair(text: str, kind: type = float) -> list:
    return [kind(x) for x in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkers", type=int, default=300)
    parser.add_argument("--claims", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--accuracy-beta", default="8,2", help="Beta a,b of honest checkers' accuracy")
    parser.add_argument("--spammers", type=float, default=0.1, help="share who click at random")
    parser.add_argument("--activity-sigma", type=float, default=1.0, help="lognormal spread of play")
    parser.add_argument("--gold-share", type=float, default=0.1, help="share of dealt items that are gold")
    parser.add_argument("--author-right", type=float, default=0.9)
    parser.add_argument("--mix", default="0.4,0.4,0.2", help="shares of SUPPORTS,REFUTES,NOT ENOUGH INFO")
    parser.add_argument("--shares", default="0.6,0.55", help="share a gold label needs; the first for every mode, the rest weighted only")
    parser.add_argument("--checks", type=int, default=4, help="checks per claim (MultiNLI: 4)")
    parser.add_argument("--players", type=int, default=50, help="players checking at once")
    parser.add_argument("--seconds-per-check", type=float, default=20.0)
    parser.add_argument("--pool", type=int, default=2000, help="claims waiting for checks")
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args()
    record = harness.Record("bench_validation_sim", args.record)
    started = time.perf_counter()

    rng = np.random.default_rng(args.seed)
    a, b = pair(args.accuracy_beta)
    accuracy = rng.beta(a, b, args.checkers)
    spammer = rng.random(args.checkers) < args.spammers
    accuracy[spammer] = 1.0 / 3.0
    activity = rng.lognormal(0.0, args.activity_sigma, args.checkers)
    activity /= activity.sum()
    mix = np.array(pair(args.mix))
    truth = rng.choice(3, size=args.claims, p=mix / mix.sum())
    author = np.array([t if rng.random() < args.author_right else (t + 1 + rng.integers(0, 2)) % 3 for t in truth])

    # Dealing order of checkers per claim, and every candidate's label (drawn once, so the
    # modes compare the same answers).
    order = np.array([rng.choice(args.checkers, size=CANDIDATES, replace=False, p=activity) for _ in range(args.claims)])
    said = np.array([[answer(rng, int(truth[i]), float(accuracy[k])) for k in row] for i, row in enumerate(order)])

    # Records on hidden gold items: gold items dealt among a checker's first-round checks
    # (the few replacement checks are left out), each right with the checker's accuracy.
    real = np.bincount(order[:, : args.checks].ravel(), minlength=args.checkers)
    gold_seen = np.array([rng.negative_binomial(n, 1 - args.gold_share) if n else 0 for n in real])
    gold_right = rng.binomial(gold_seen, accuracy)
    weight = np.array([checker_weight(gold_right=int(r), gold_seen=int(s)) for r, s in zip(gold_right, gold_seen)])

    shares = pair(args.shares)
    modes: dict[str, list[str]] = {"weighted": []}
    modes.update({f"weighted, share {x:g}": [] for x in shares[1:]})
    modes.update({"bar only (0/1)": [], "plain majority": []})
    dealt = []
    rows: dict[str, list[ValidationRow]] = {"weighted": [], "plain majority": []}
    for i in range(args.claims):
        mine = LABELS[author[i]]
        plain = [(LABELS[said[i, j]], 1.0) for j in range(args.checks)]
        counted, j = [], 0
        while len(counted) < args.checks and j < CANDIDATES:
            k = order[i, j]
            if weight[k] > 0:
                counted.append((LABELS[said[i, j]], float(weight[k])))
            j += 1
        dealt.append(j)
        weighted = gold_label(mine, counted, share=shares[0])
        modes["weighted"].append(weighted)
        for x in shares[1:]:
            modes[f"weighted, share {x:g}"].append(gold_label(mine, counted, share=x))
        modes["bar only (0/1)"].append(gold_label(mine, [(label, 1.0) for label, _ in counted], share=shares[0]))
        majority = gold_label(mine, plain, share=shares[0])
        modes["plain majority"].append(majority)
        rows["weighted"].append(ValidationRow(mine, tuple(label for label, _ in counted), weighted))
        rows["plain majority"].append(ValidationRow(mine, tuple(label for label, _ in plain), majority))

    n = args.claims
    honest = accuracy[~spammer]
    cut = (weight == 0) & (gold_seen >= 5)
    print(
        f"{args.checkers} checkers: {int(spammer.sum())} spammers (accuracy 1/3), the others' accuracy "
        f"Beta({a:g}, {b:g}) (mean {honest.mean():.3f}); {n} claims, mix {args.mix}, author right "
        f"{args.author_right:.0%}; gold share {args.gold_share:.0%}; seed {args.seed}"
    )
    print(
        f"records: median {int(np.median(gold_seen))} gold items per checker (mean {gold_seen.mean():.1f}); "
        f"{int((gold_seen < 5).sum())} checkers under 5 (weight 1.0); cut to 0: {int(cut.sum())} "
        f"({int((cut & spammer).sum())} of {int(spammer.sum())} spammers, {int((cut & ~spammer).sum())} honest); "
        f"weights of the rest: median {np.median(weight[weight > 0]):.2f}, max {weight.max():.2f}"
    )
    spam_checks = spammer[order[:, : args.checks]].mean()
    print(
        f"checks by spammers: {spam_checks:.1%} of the first {args.checks} per claim; the weighted mode dealt "
        f"{np.mean(dealt):.2f} checks per claim to get {args.checks} of weight > 0"
    )
    print(f"\n{'':22s} {'recovered':>22s} {'wrong':>22s} {'no gold (-)':>22s} {'precision':>22s}")
    true_labels = [LABELS[t] for t in truth]
    for name, golds in modes.items():
        right = sum(g == t for g, t in zip(golds, true_labels))
        none = sum(g == NO_GOLD for g in golds)
        wrong = n - right - none
        print(f"{name:22s} {share(right, n):>22s} {share(wrong, n):>22s} {share(none, n):>22s} {share(right, n - none):>22s}")
        case = f"{name}: {args.checkers} checkers ({args.spammers:.0%} spammers), {n} claims, {args.checks} checks, seed {args.seed}"
        record.add(case, "gold label recovered", round(100 * right / n, 1), "% of claims")
        record.add(case, "gold label wrong", round(100 * wrong / n, 1), "% of claims")
        record.add(case, "precision", round(100 * right / (n - none), 1) if n - none else None, "%")
    right = int(np.sum(author == truth))
    print(f"{'author alone':22s} {share(right, n):>22s} {share(n - right, n):>22s} {'':>22s} {share(right, n):>22s}")

    print("\nMultiNLI's validation table (Williams et al. 2018, Table 2; MultiNLI's figures right):")
    tables = {name: validation_table(r) for name, r in rows.items()}
    multinli = {
        "unanimous": "58.2%",
        "individual_matches_gold": "88.7%",
        "individual_matches_author": "85.2%",
        "author_matches_gold": "92.6%",
        "author_differs_from_gold": "5.6%",
        "no_gold": "1.8%",
    }
    print(f"  {'':28s} {'weighted':>10s} {'plain':>10s} {'MultiNLI':>10s}")
    print(f"  {'claims counted':28s} {tables['weighted']['claims']:>10d} {tables['plain majority']['claims']:>10d}")
    print(f"  {'labels per claim':28s} {tables['weighted']['labels_per_claim']:>10.2f} {tables['plain majority']['labels_per_claim']:>10.2f} {'5':>10s}")
    for key, theirs in multinli.items():
        print(f"  {key:28s} {tables['weighted'][key]:>10.1%} {tables['plain majority'][key]:>10.1%} {theirs:>10s}")  # type: ignore[literal-required]
    counts = [[int(np.sum(said[i, : args.checks] == c)) for c in range(3)] for i in range(n)]
    print(f"  Fleiss' kappa of the first {args.checks} checks: {fleiss_kappa(counts):.3f}")

    per_hour = args.players * 3600.0 / args.seconds_per_check
    real_per_hour = per_hour * (1 - args.gold_share)
    counting = real_per_hour * args.checks / float(np.mean(dealt))
    print(
        f"\nPlay: {args.players} players, {args.seconds_per_check:g} s per item, {args.gold_share:.0%} gold items: "
        f"{per_hour:,.0f} items per hour, {real_per_hour:,.0f} real checks, of which {counting:,.0f} count "
        f"(weight > 0); {counting / args.checks:,.0f} claims reach {args.checks} counting checks per hour; "
        f"a pool of {args.pool} claims gets {real_per_hour / args.pool:.2f} checks per claim per hour, "
        f"{args.pool * args.checks / counting:.1f} hours to validate it all"
    )
    print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
