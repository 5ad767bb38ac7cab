"""A learnt fluency score against templates of page words, on pages it never trained on.

    python bench/bench_fluency.py [--fm2 ../shared/data/fm2/dev.jsonl] [--test-fold 0|all] [--examples 8000] [--epochs 2]
        [--scores-out FILE]
    python bench/bench_fluency.py --rejudge FILE [--real-share 0.0075] [--vouch-share 0.1]

The FM2 dev split's pages go into the five page-disjoint folds of ``bench_templates.py`` (same
seed, same assignment). The MiniLM encoder is fine-tuned (``retrieval.fluency.train_fluency``)
on the pages of the four other folds: their claims and sentences against the same texts with
words of their page put in at random; 30% of those pages are held out of training and set the
bar (``conformal_bar``: the k-th highest of their claims' scores, refusing at most
``--real-share`` of real claims) and the gate under which the model vouches for a text.
Nothing of the test fold is seen before it is judged, and the training never sees a template
family.

Judged on the test fold: its real claims, templates written as ``bench_templates.py`` writes
them (eight families; slots filled with any words of the page, or with content words only),
and its claims with their words shuffled (word salad). Printed, with 95% Wilson intervals: the
share refused by the word rules alone (the typo rule or the word-order rule: a fresh instance),
by the learnt score alone, and by the save with a trained model (the typo rule, the learnt
score, and the word-order rule unless the model vouches for the text); the training time and
the CPU time per check. One fold by default (a training takes about 10 minutes here);
``--test-fold all`` judges each of the five by a model trained without it and prints the
shares over all of them. ``--scores-out`` keeps every score; ``--rejudge`` judges a kept run
again under other bars without training.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from bench_templates import DEFAULT_FM2, FOLDS, fm2_folds, templates_of  # noqa: E402
from retrieval.encoder import default_model_path  # noqa: E402
from retrieval.fluency import FluencyScorer, PageTexts, TrainOptions, conformal_bar, train_fluency  # noqa: E402
from scoring.filters import wilson  # noqa: E402
from scoring.word_order import OrderModel, fluency_problem, order_model_load, reads_as_sentence  # noqa: E402

DEFAULTS = TrainOptions()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fm2", type=Path, default=DEFAULT_FM2)
    parser.add_argument("--seed", type=int, default=36, help="the folds' and the templates' seed (bench_templates.py's)")
    parser.add_argument("--test-fold", default="0", help=f"the fold judged (0 to {FOLDS - 1}), or 'all': each fold in turn, each by a model trained without it")
    parser.add_argument("--per-page", type=int, default=5, help="templates of each kind a page")
    parser.add_argument("--examples", type=int, default=DEFAULTS.examples)
    parser.add_argument("--epochs", type=int, default=DEFAULTS.epochs)
    parser.add_argument("--real-share", type=float, default=DEFAULTS.real_share)
    parser.add_argument("--model-dir", type=Path, default=None, help="keep the trained model here (default: a temporary folder; one fold only)")
    parser.add_argument("--base-model", type=Path, default=None, help="the encoder to fine-tune (default: the packaged MiniLM)")
    parser.add_argument("--vouch-share", type=float, default=DEFAULTS.vouch_share,
                        help="the share of real claims above the gate, under which the word-order rule defers to the model")
    parser.add_argument("--rejudge", type=Path, default=None,
                        help="judge again the scores a --scores-out run wrote (no training): the bars as this code sets them now")
    parser.add_argument("--scores-out", type=Path, default=None,
                        help="write every judged text's score and rule verdicts, and each fold's held-out scores, to this JSON file")
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args()
    record = harness.Record("bench_fluency", args.record)
    if not args.rejudge and not args.fm2.is_file():
        print(f"skipped: {args.fm2} not found")
        return
    folds = list(range(FOLDS)) if args.test_fold == "all" else [int(args.test_fold)]
    kinds = ("real claims", "templates, any words", "templates, content words", "claims, words shuffled")
    hits: dict[tuple[str, str], list[bool]] = {(kind, rule): [] for kind in kinds for rule in RULES}
    seconds, check_ms, single_ms = [], [], []
    if args.rejudge:
        # The scores of an earlier run, judged again by the bars this code sets on its held-out scores.
        dumped = json.loads(args.rejudge.read_text())
        folds = [int(fold) for fold in dumped]
        for fold, dump in dumped.items():
            bar, rank = conformal_bar(dump["held_out"], args.real_share)
            gate, _ = conformal_bar(dump["held_out"], args.vouch_share)
            fold_hits = judge(dump, bar, gate)
            print(f"fold {fold}: bar {bar:.3f} (rank {rank} of {len(dump['held_out'])} held-out texts), gate {gate:.3f}; the save refuses "
                  + ", ".join(f"{kind} {sum(fold_hits[(kind, RULES[2])])}/{len(dump['kinds'][kind]['scores'])}" for kind in kinds if kind in dump["kinds"]))
            for key, values in fold_hits.items():
                hits[key] += values
    else:
        rows, pages, titles, fold_of = fm2_folds(args.fm2, args.seed)
        word_order = order_model_load()
        dumped = {}
        for fold in folds:
            measured = judge_fold(args, fold, pages, titles, fold_of, word_order, keep=args.model_dir if len(folds) == 1 else None)
            dumped[fold] = measured["dump"]
            if args.scores_out:
                args.scores_out.write_text(json.dumps(dumped))
            for key, values in measured["hits"].items():
                hits[key] += values
            seconds.append(measured["seconds"])
            check_ms.append(measured["check_ms"])
            single_ms.append(measured["single_ms"])
    where = f"fold {folds[0]}" if len(folds) == 1 else f"all {FOLDS} folds, each judged by a model trained without it"
    label = f"{args.fm2.name} {where}, seed {args.seed}"
    print(f"{args.fm2.name}, {where}:")
    for kind in kinds:
        for rule in RULES:
            values = hits[(kind, rule)]
            if not values:
                continue
            count, total = sum(values), len(values)
            low, high = wilson(count, total)
            print(f"  {kind:26s} refused by {rule:13s} {count:4d}/{total} = {count / total:6.1%}  (95% CI {low:.1%} to {high:.1%})")
            record.add(label, f"{kind} refused by {rule}", round(100 * count / total, 1), f"% (95% CI {100 * low:.1f}-{100 * high:.1f}, n {total})")
    if not seconds:
        return
    print(f"training {sum(seconds) / len(seconds):.0f} s wall a fold; CPU per check in batches: {sum(check_ms) / len(check_ms):.1f} ms; "
          f"one claim at a time (as a save asks): {sum(single_ms) / len(single_ms):.1f} ms wall")
    record.add(label, "training", round(sum(seconds) / len(seconds), 1), f"s wall a fold ({args.examples} examples, {args.epochs} epochs)")
    record.add(label, "one check", round(sum(single_ms) / len(single_ms), 1), "ms wall")


RULES = ("word rules", "learnt score", "the save")


def judge(dump: dict, bar: float, gate: float | None) -> dict[tuple[str, str], list[bool]]:
    """Each text refused or not: by the word rules alone (the typo rule or the word-order rule),
    by the learnt score alone (above ``bar``), and as the save judges with a trained model: the
    typo rule, the learnt score, and the word-order rule unless the model vouches for the text
    (its score at or below ``gate``)."""
    hits = {}
    gate = -math.inf if gate is None else gate
    for kind, seen in dump["kinds"].items():
        hits[(kind, RULES[0])] = [typo or order for typo, order in zip(seen["typo"], seen["order"])]
        hits[(kind, RULES[1])] = [score > bar for score in seen["scores"]]
        hits[(kind, RULES[2])] = [
            typo or score > bar or (order and score > gate) for typo, order, score in zip(seen["typo"], seen["order"], seen["scores"])
        ]
    return hits


def judge_fold(
    args: argparse.Namespace, fold: int, pages: dict, titles: list[str], fold_of: dict[str, int], word_order: OrderModel, *, keep: Path | None
) -> dict:
    """Train on the other folds' pages, judge ``fold``'s claims and templates; print the fold's line."""
    training = {t: PageTexts(pages[t].sentences, pages[t].claims, title=t) for t in titles if fold_of[t] != fold}
    tested = [t for t in titles if fold_of[t] == fold]
    rng = random.Random(args.seed + fold)
    texts: dict[str, list[str]] = {"real claims": [], "templates, any words": [], "templates, content words": []}
    for title in tested:
        texts["real claims"] += pages[title].claims
        texts["templates, any words"] += templates_of(pages[title], content=False, count=args.per_page, rng=rng)
        texts["templates, content words"] += templates_of(pages[title], content=True, count=args.per_page, rng=rng)
    # Word salad: the fold's claims with their words shuffled (what the word-order rule is for).
    shuffler = random.Random(args.seed * 1000 + fold)
    texts["claims, words shuffled"] = [" ".join(shuffler.sample(c.split(), len(c.split()))) for c in texts["real claims"]]

    base = args.base_model or default_model_path()
    with tempfile.TemporaryDirectory() as scratch:
        folder = keep or Path(scratch) / "fluency"
        last = [0.0]

        def progress(done: int, total: int) -> None:
            if done == total or time.monotonic() - last[0] > 10:
                last[0] = time.monotonic()
                print(f"\rfold {fold}: training step {done}/{total}", end="", file=sys.stderr, flush=True)

        cpu = time.process_time()
        report = train_fluency(
            training, base_model=base, out_dir=folder,
            options=TrainOptions(examples=args.examples, epochs=args.epochs, real_share=args.real_share, seed=args.seed),
            progress=progress,
        )
        print(file=sys.stderr)
        train_cpu = time.process_time() - cpu
        scorer = FluencyScorer(folder)
        cpu = time.process_time()
        scores = {kind: scorer.scores(items) for kind, items in texts.items()}
        check_ms = (time.process_time() - cpu) * 1000 / sum(len(items) for items in texts.values())
        single = time.perf_counter()
        for text in texts["real claims"][:50]:
            scorer.refuses(text)
        single_ms = (time.perf_counter() - single) * 1000 / min(50, len(texts["real claims"]))

    dump = {"threshold": report.threshold, "gate": report.gate, "bar_rank": report.bar_rank, "held_out": report.held_out_scores, "kinds": {}}
    for kind, items in texts.items():
        typos = [fluency_problem(t) is not None for t in items]
        salad = [not reads_as_sentence(t, model=word_order) for t in items]
        dump["kinds"][kind] = {"texts": items, "scores": [float(s) for s in scores[kind]], "typo": typos, "order": salad}
    hits = judge(dump, report.threshold, report.gate)
    shares = [f"{kind} {sum(hits[(kind, RULES[2])])}/{len(items)}" for kind, items in texts.items()]
    print(f"fold {fold} ({len(tested)} pages, none trained on): trained on {report.trained_pages} pages, bar from "
          f"{report.held_out_pages} held-out pages' {report.held_out_texts} texts at their rank {report.bar_rank} from the top "
          f"({report.threshold:.3f}, refusing at most {report.real_share:.1%}); {report.examples} examples, {report.epochs} epochs, losses {report.losses}; "
          f"{report.seconds:.0f} s wall, {train_cpu:.0f} s CPU; the save refuses: {', '.join(shares)}", flush=True)
    return {"dump": dump, "hits": hits, "seconds": report.seconds, "check_ms": check_ms, "single_ms": single_ms}


if __name__ == "__main__":
    main()
