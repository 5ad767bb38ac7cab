"""The default claim verifier (MiniLM + trained head) on the FM2 dev claims.

    python bench/bench_verifier.py [--fm2 ../shared/data/fm2/dev.jsonl] [--round-size 200] [--json]

Prints, each accuracy with its Wilson 95% interval and n:

1. page-disjoint 5-fold cross-validation (StratifiedGroupKFold by page, seed 0) of the
   claim-only TF-IDF baseline (``scoring.artifacts.claim_only_pipeline``), the head with
   the gold evidence (the FM2 paper's Table 6 setting), and the head end to end with two
   retrieved sentences, picked by MiniLM cosine to the claim from (a) the release's
   ``retrieved_evidence`` list of the claim (10-12 sentences that always include the gold
   ones) and (b) the whole pool of the claim's page (every sentence any claim of the page
   cites, as the game seeds its pages). Then the paired difference head-gold minus
   claim-only, with a 95% interval from a paired bootstrap over pages (2,000 resamples).
2. a learning curve: 25/50/100% of each training fold (whole pages drawn at random), and
   a log-linear fit extrapolated to 10,000 training claims. An extrapolation from a few
   hundred claims, nothing more.
3. training time on the whole file (encoding included; the model already loaded) and the
   size of the stored head.
4. verdict latency in process: one claim and its gold sentences per call, 300 calls after
   a warm-up.
5. the retraining loop, simulated: 20% of the pages are frozen as an evaluation slice from
   the start; the other claims arrive page by page in a fixed shuffled order, in rounds of
   ``--round-size``. After each round the next version trains on every claim so far and is
   scored on the frozen slice beside the claim-only baseline trained on the same claims;
   it is promoted only if it is not worse than the active version by more than 1 point.

No figure is asserted: the numbers are for docs and for deciding. With --record (or
FM2_BENCH_RECORD) the cross-validated accuracies, the difference, the training time and the
verdict latency go to the record. Pure computation: no database, no Redis (it takes neither
option).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import harness  # noqa: E402
import numpy as np  # noqa: E402

from retrieval.encoder import Encoder, TextEncoder  # noqa: E402
from retrieval.verifier import HeadVerifier, train_head_verifier, verdict  # noqa: E402
from scoring.artifacts import claim_only_pipeline  # noqa: E402
from scoring.filters import wilson  # noqa: E402

DEFAULT_FM2 = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "fm2" / "dev.jsonl"
FOLDS = 5
SEED = 0
BOOTSTRAP = 2000
RETRIEVED_K = 2
FRACTIONS = (0.25, 0.5, 1.0)
CURVE_REPEATS = 3  # page draws per fraction below 100%
EXTRAPOLATE_TO = 10_000
LATENCY_CALLS = 300
PROMOTION_SLACK = 0.01


class MemoEncoder:
    """The real encoder behind a per-text memo, so the folds do not re-encode the same
    sentences (vectors are identical either way). Not used for the timing figures."""

    def __init__(self, encoder: TextEncoder) -> None:
        self.encoder = encoder
        self.model_name = encoder.model_name
        self.dimension = encoder.dimension
        self.vectors: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            for text, vector in zip(missing, self.encoder.encode(missing, show_progress=show_progress)):
                self.vectors[text] = vector
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.vectors[t] for t in texts])


def interval(hits: int, n: int) -> dict[str, Any]:
    low, high = wilson(hits, n)
    return {"accuracy": hits / n if n else float("nan"), "ci95": [low, high], "n": n}


def macro_f1(truth: Sequence[str], predicted: Sequence[str]) -> float:
    scores = []
    for label in sorted(set(truth)):
        tp = sum(t == label and p == label for t, p in zip(truth, predicted))
        fp = sum(t != label and p == label for t, p in zip(truth, predicted))
        fn = sum(t == label and p != label for t, p in zip(truth, predicted))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return statistics.fmean(scores)


def page_bootstrap(
    pages: Sequence[str], statistic: Any, seed: int = SEED, resamples: int = BOOTSTRAP
) -> tuple[float, float]:
    """Percentile 95% interval of ``statistic(indices)`` over pages drawn with replacement."""
    by_page: dict[str, list[int]] = {}
    for i, page in enumerate(pages):
        by_page.setdefault(page, []).append(i)
    groups = list(by_page.values())
    rng = random.Random(seed)
    values = []
    for _ in range(resamples):
        indices = [i for _ in groups for i in rng.choice(groups)]
        values.append(statistic(indices))
    values.sort()
    return values[int(0.025 * resamples)], values[int(0.975 * resamples) - 1]


def summarise(name: str, truth: Sequence[str], predicted: Sequence[str], pages: Sequence[str]) -> dict[str, Any]:
    hits = sum(t == p for t, p in zip(truth, predicted))
    figures = interval(hits, len(truth))
    figures["macro_f1"] = macro_f1(truth, predicted)
    figures["macro_f1_ci95"] = list(
        page_bootstrap(pages, lambda idx: macro_f1([truth[i] for i in idx], [predicted[i] for i in idx]))
    )
    figures["name"] = name
    return figures


def top_by_cosine(claim: str, candidates: Sequence[str], vectors: MemoEncoder, k: int) -> list[str]:
    if not candidates:
        return []
    query = vectors.encode([claim])[0]
    scores = vectors.encode(list(candidates)) @ query
    return [candidates[i] for i in np.argsort(-scores, kind="stable")[:k]]


def head_predictions(
    train: Sequence[int],
    test: Sequence[int],
    claims: Sequence[str],
    evidence: Sequence[Sequence[str]],
    labels: Sequence[str],
    pages: Sequence[str],
    encoder: TextEncoder,
) -> tuple[list[str], HeadVerifier]:
    head = train_head_verifier(
        [claims[i] for i in train],
        [evidence[i] for i in train],
        [labels[i] for i in train],
        encoder=encoder,
        groups=[pages[i] for i in train],
        seed=SEED,
    )
    return [v.label for v in head.verdicts([(claims[i], evidence[i]) for i in test])], head


def claim_only_predictions(train: Sequence[int], test: Sequence[int], claims: Sequence[str], labels: Sequence[str]) -> list[str]:
    model = claim_only_pipeline(SEED)
    model.fit([claims[i] for i in train], [labels[i] for i in train])
    return [str(p) for p in model.predict([claims[i] for i in test])]


def draw_pages(train: Sequence[int], pages: Sequence[str], fraction: float, seed: int) -> list[int]:
    """Whole pages of ``train`` at random until ``fraction`` of its claims are in."""
    if fraction >= 1.0:
        return list(train)
    by_page: dict[str, list[int]] = {}
    for i in train:
        by_page.setdefault(pages[i], []).append(i)
    order = sorted(by_page)
    random.Random(seed).shuffle(order)
    chosen: list[int] = []
    for page in order:
        if len(chosen) >= fraction * len(train):
            break
        chosen.extend(by_page[page])
    return sorted(chosen)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--fm2", type=Path, default=DEFAULT_FM2)
    parser.add_argument("--round-size", type=int, default=200)
    parser.add_argument("--json", action="store_true", help="print one JSON object with every figure")
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args(argv)
    record = harness.Record("bench_verifier", args.record)
    if not args.fm2.is_file():
        print(f"skipped: {args.fm2} not found")
        return
    from sklearn.model_selection import StratifiedGroupKFold

    out = (lambda *a, **k: None) if args.json else print
    records = [json.loads(line) for line in args.fm2.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [r for r in records if r["label"] in ("SUPPORTS", "REFUTES")]
    claims = [r["text"] for r in records]
    labels = [r["label"] for r in records]
    pages = [r["wikipedia_page"] for r in records]
    gold = [[e["text"] for e in r["gold_evidence"]] for r in records]
    pools: dict[str, list[str]] = {}
    for r in records:
        pool = pools.setdefault(r["wikipedia_page"], [])
        for e in [*r["gold_evidence"], *r["retrieved_evidence"]]:
            if e["text"] not in pool:
                pool.append(e["text"])

    started = time.perf_counter()
    encoder = Encoder()
    encoder.encode(["warm up"])
    load_seconds = time.perf_counter() - started
    memo = MemoEncoder(encoder)
    memo.encode([*claims, *(t for pool in pools.values() for t in pool)])
    listed = [top_by_cosine(c, [e["text"] for e in r["retrieved_evidence"]], memo, RETRIEVED_K) for c, r in zip(claims, records)]
    pooled = [top_by_cosine(c, pools[p], memo, RETRIEVED_K) for c, p in zip(claims, pages)]
    figures: dict[str, Any] = {
        "claims": len(claims),
        "pages": len(set(pages)),
        "majority_share": max(labels.count(label) for label in set(labels)) / len(labels),
        "encoder": encoder.model_name,
        "encoder_load_seconds": round(load_seconds, 2),
    }
    out(f"FM2 {args.fm2.name}: {len(claims)} claims on {len(set(pages))} pages, majority {figures['majority_share']:.1%}; encoder {encoder.model_name}")

    # 1. page-disjoint cross-validation ----------------------------------------------------
    splitter = StratifiedGroupKFold(n_splits=FOLDS, shuffle=True, random_state=SEED)
    folds = list(splitter.split(claims, labels, groups=pages))
    settings = {
        "claim_only": None,
        "head_gold": gold,
        "head_retrieved_list_top2": listed,
        "head_retrieved_pool_top2": pooled,
    }
    predicted: dict[str, list[str]] = {name: [""] * len(claims) for name in settings}
    chosen_c: list[float] = []
    for train, test in folds:
        for name, evidence in settings.items():
            if evidence is None:
                guesses = claim_only_predictions(train, test, claims, labels)
            else:
                guesses, head = head_predictions(train, test, claims, evidence, labels, pages, memo)
                if name == "head_gold":
                    chosen_c.append(head.head.regularisation)
            for i, guess in zip(test, guesses):
                predicted[name][i] = guess
    cv: dict[str, Any] = {name: summarise(name, labels, predicted[name], pages) for name in settings}
    cv["head_gold"]["chosen_C_per_fold"] = chosen_c
    for name, evidence in (("head_retrieved_list_top2", listed), ("head_retrieved_pool_top2", pooled)):
        cv[name]["gold_in_top2"] = sum(any(t in g for t in e) for e, g in zip(evidence, gold)) / len(claims)
    right_head = [p == t for p, t in zip(predicted["head_gold"], labels)]
    right_base = [p == t for p, t in zip(predicted["claim_only"], labels)]
    difference = (sum(right_head) - sum(right_base)) / len(labels)
    diff_ci = page_bootstrap(pages, lambda idx: sum(right_head[i] - right_base[i] for i in idx) / len(idx))
    cv["difference_head_gold_minus_claim_only"] = {
        "points": difference,
        "ci95": list(diff_ci),
        "method": f"paired bootstrap over pages, {BOOTSTRAP} resamples, percentile interval",
        "head_only_right": sum(h and not b for h, b in zip(right_head, right_base)),
        "claim_only_only_right": sum(b and not h for h, b in zip(right_head, right_base)),
    }
    figures["cross_validation"] = cv
    out(f"\n1. page-disjoint {FOLDS}-fold CV (StratifiedGroupKFold by page, seed {SEED}); accuracy [Wilson 95%], macro-F1 [page bootstrap 95%]")
    labels_text = {
        "claim_only": "claim only (TF-IDF + LR)",
        "head_gold": "head, gold evidence",
        "head_retrieved_list_top2": "head, top 2 of the release's retrieved_evidence by MiniLM cosine",
        "head_retrieved_pool_top2": "head, top 2 of the page's whole pool by MiniLM cosine",
    }
    for name in settings:
        f = cv[name]
        extra = f"  (a gold sentence in the top 2: {f['gold_in_top2']:.1%})" if "gold_in_top2" in f else ""
        out(
            f"   {labels_text[name]:<66} {f['accuracy']:.1%} [{f['ci95'][0]:.1%}, {f['ci95'][1]:.1%}] n={f['n']}"
            f"  macro-F1 {f['macro_f1']:.3f} [{f['macro_f1_ci95'][0]:.3f}, {f['macro_f1_ci95'][1]:.3f}]{extra}"
        )
    d = cv["difference_head_gold_minus_claim_only"]
    out(
        f"   head-gold minus claim-only: {100 * d['points']:+.1f} points [{100 * d['ci95'][0]:+.1f}, {100 * d['ci95'][1]:+.1f}] "
        f"({d['method']}; discordant claims: head alone right {d['head_only_right']}, claim-only alone right {d['claim_only_only_right']})"
    )
    out(f"   C chosen per fold by grouped CV inside the training fold: {chosen_c}")

    # 2. learning curve ------------------------------------------------------------------------
    curve = []
    for fraction in FRACTIONS:
        repeats = 1 if fraction >= 1.0 else CURVE_REPEATS
        accuracies, sizes = [], []
        for repeat in range(repeats):
            guesses = [""] * len(claims)
            for fold, (train, test) in enumerate(folds):
                subset = draw_pages(train, pages, fraction, seed=1000 * repeat + fold)
                sizes.append(len(subset))
                fold_guesses, _ = head_predictions(subset, test, claims, gold, labels, pages, memo)
                for i, guess in zip(test, fold_guesses):
                    guesses[i] = guess
            accuracies.append(sum(g == t for g, t in zip(guesses, labels)))
        hits = round(statistics.fmean(accuracies))
        point = interval(hits, len(labels))
        point.update({"fraction": fraction, "mean_training_claims": statistics.fmean(sizes), "repeats": repeats})
        curve.append(point)
    xs = np.log([p["mean_training_claims"] for p in curve])
    ys = np.array([p["accuracy"] for p in curve])
    slope, intercept = np.polyfit(xs, ys, 1)
    extrapolated = float(intercept + slope * math.log(EXTRAPOLATE_TO))
    figures["learning_curve"] = {
        "points": curve,
        "fit": "accuracy = a + b ln(training claims), least squares over the points",
        "a": float(intercept),
        "b": float(slope),
        "per_doubling_points": float(100 * slope * math.log(2)),
        "extrapolated_accuracy_at_10000": extrapolated,
        "note": "an extrapolation of a three-point fit far beyond the data, not a measurement",
    }
    out("\n2. learning curve, head with gold evidence (same folds; whole pages drawn from each training fold)")
    for p in curve:
        out(
            f"   {p['fraction']:>4.0%} of the training fold (~{p['mean_training_claims']:.0f} claims, {p['repeats']} draw(s)): "
            f"{p['accuracy']:.1%} [{p['ci95'][0]:.1%}, {p['ci95'][1]:.1%}] n={p['n']}"
        )
    out(
        f"   fit: accuracy = {intercept:.3f} + {slope:.4f} ln(claims), {100 * slope * math.log(2):+.1f} points per doubling; "
        f"EXTRAPOLATED to {EXTRAPOLATE_TO:,} claims: {extrapolated:.1%} (a guess from three points, not a measurement)"
    )

    # 3. training time and stored size -------------------------------------------------------
    started = time.perf_counter()
    full = train_head_verifier(claims, gold, labels, encoder=encoder, groups=pages, seed=SEED)
    train_seconds = time.perf_counter() - started
    blob = full.dumps()
    figures["training"] = {
        "seconds": round(train_seconds, 2),
        "claims": len(claims),
        "stored_head_bytes": len(blob),
        "chosen_C": full.head.regularisation,
        "cv_accuracy_of_chosen_C": full.head.cv_accuracy,
        "threads": os.cpu_count(),
    }
    out(
        f"\n3. training on all {len(claims)} claims: {train_seconds:.1f} s on {os.cpu_count()} cores (encoding every text included, "
        f"encoder already loaded in {load_seconds:.1f} s); stored head {len(blob):,} bytes; C={full.head.regularisation}"
    )

    # 4. latency ---------------------------------------------------------------------------------
    rng = random.Random(SEED)
    order = list(range(len(claims)))
    for i in order[:20]:
        verdict(full, claims[i], gold[i])
    calls = [rng.randrange(len(claims)) for _ in range(LATENCY_CALLS)]
    timings = []
    for i in calls:
        started = time.perf_counter()
        verdict(full, claims[i], gold[i])
        timings.append(1000 * (time.perf_counter() - started))
    timings.sort()
    figures["latency_ms"] = {
        "p50": round(timings[len(timings) // 2], 2),
        "p95": round(timings[int(0.95 * len(timings)) - 1], 2),
        "max": round(timings[-1], 2),
        "calls": LATENCY_CALLS,
        "evidence_sentences_mean": statistics.fmean(len(gold[i]) for i in calls),
    }
    lat = figures["latency_ms"]
    out(
        f"\n4. verdict latency in process (one claim + its {lat['evidence_sentences_mean']:.2f} gold sentences on average, "
        f"{LATENCY_CALLS} calls after warm-up): p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms, max {lat['max']:.1f} ms"
    )

    # 5. the retraining loop ----------------------------------------------------------------------
    all_pages = sorted(set(pages))
    random.Random(SEED).shuffle(all_pages)
    frozen_pages = set(all_pages[: round(0.2 * len(all_pages))])
    arriving_pages = all_pages[round(0.2 * len(all_pages)) :]
    frozen = [i for i in range(len(claims)) if pages[i] in frozen_pages]
    arrival = [i for page in arriving_pages for i in range(len(claims)) if pages[i] == page]
    frozen_truth = [labels[i] for i in frozen]
    rounds = []
    active: dict[str, Any] | None = None
    for end in range(args.round_size, len(arrival) + args.round_size, args.round_size):
        seen = arrival[: min(end, len(arrival))]
        guesses, _ = head_predictions(seen, frozen, claims, gold, labels, pages, memo)
        baseline = claim_only_predictions(seen, frozen, claims, labels)
        accuracy = sum(g == t for g, t in zip(guesses, frozen_truth)) / len(frozen)
        base_accuracy = sum(g == t for g, t in zip(baseline, frozen_truth)) / len(frozen)
        promoted = active is None or accuracy >= active["accuracy"] - PROMOTION_SLACK
        row = {
            "version": len(rounds) + 1,
            "claims_so_far": len(seen),
            "accuracy": accuracy,
            "ci95": list(wilson(round(accuracy * len(frozen)), len(frozen))),
            "claim_only_baseline": base_accuracy,
            "active_before": None if active is None else active["version"],
            "promoted": promoted,
        }
        if promoted:
            active = row
        rounds.append(row)
    figures["loop"] = {
        "round_size": args.round_size,
        "frozen_pages": len(frozen_pages),
        "frozen_claims": len(frozen),
        "arriving_claims": len(arrival),
        "rule": f"promoted if accuracy on the frozen slice >= the active version's - {PROMOTION_SLACK:.0%}; the first version is promoted",
        "rounds": rounds,
        "active_version": None if active is None else active["version"],
    }
    out(
        f"\n5. retraining loop: {len(frozen)} claims on {len(frozen_pages)} frozen pages (20%) held out; "
        f"{len(arrival)} claims arrive page by page in rounds of {args.round_size}"
    )
    out(f"   {'version':>7} {'claims':>6} {'head acc [Wilson 95%]':>24} {'claim-only':>10}  promoted?")
    for row in rounds:
        was = "" if row["active_before"] is None else f" (vs v{row['active_before']})"
        out(
            f"   {row['version']:>7} {row['claims_so_far']:>6} {row['accuracy']:>8.1%} [{row['ci95'][0]:.1%}, {row['ci95'][1]:.1%}] "
            f"{row['claim_only_baseline']:>10.1%}  {'yes' if row['promoted'] else 'no'}{was}"
        )
    out(f"   active at the end: v{figures['loop']['active_version']}")
    case = f"{args.fm2.name}, {len(claims)} claims, page-disjoint {FOLDS}-fold CV"
    for name in settings:
        f = cv[name]
        record.add(case, f"accuracy, {labels_text[name]}", round(100 * f["accuracy"], 1),
                   f"% (95% CI {100 * f['ci95'][0]:.1f}-{100 * f['ci95'][1]:.1f})")
    record.add(case, "head-gold minus claim-only", round(100 * d["points"], 1), f"points (95% CI {100 * d['ci95'][0]:+.1f} to {100 * d['ci95'][1]:+.1f})")
    record.add(f"{args.fm2.name}, all {len(claims)} claims", "training (encoding included)", figures["training"]["seconds"], "s")
    record.add("verdict in process, one claim and its gold sentences", "p50", lat["p50"], "ms")
    record.add("verdict in process, one claim and its gold sentences", "p95", lat["p95"], "ms")
    if args.json:
        print(json.dumps(figures, default=float))


if __name__ == "__main__":
    main()
