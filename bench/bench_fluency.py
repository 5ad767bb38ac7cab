"""A learnt fluency score against templates of page words, on pages it never trained on.

    python bench/bench_fluency.py [--fm2 ../shared/data/fm2/dev.jsonl] [--test-fold 0] [--examples 3000] [--epochs 2]

The FM2 dev split's pages go into the five page-disjoint folds of ``bench_templates.py`` (same
seed, same assignment). The MiniLM encoder is fine-tuned (``retrieval.fluency.train_fluency``)
on the pages of the four other folds: their claims and sentences against the same texts with
words of their page put in at random; a fifth of those pages is held out of training and sets
the bar (the ``--real-share`` quantile of their claims' scores). Nothing of the test fold is
seen before it is judged, and the training never sees a template family.

Judged on the test fold: its real claims, and templates written as ``bench_templates.py``
writes them (eight families; slots filled with any words of the page, or with content words
only). Printed, with 95% Wilson intervals: the share refused by the save's word rules (word
order or template rule), by the learnt score alone, and by either; the training time and the
CPU time per check. One fold, not five: a training takes minutes here (print the others with
``--test-fold``).
"""

from __future__ import annotations

import argparse
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
from retrieval.fluency import FluencyScorer, PageTexts, TrainOptions, train_fluency  # noqa: E402
from scoring.filters import wilson  # noqa: E402
from scoring.word_order import fluency_problem, order_model_load, reads_as_sentence  # noqa: E402

DEFAULTS = TrainOptions()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fm2", type=Path, default=DEFAULT_FM2)
    parser.add_argument("--seed", type=int, default=36, help="the folds' and the templates' seed (bench_templates.py's)")
    parser.add_argument("--test-fold", type=int, default=0)
    parser.add_argument("--per-page", type=int, default=5, help="templates of each kind a page")
    parser.add_argument("--examples", type=int, default=DEFAULTS.examples)
    parser.add_argument("--epochs", type=int, default=DEFAULTS.epochs)
    parser.add_argument("--real-share", type=float, default=DEFAULTS.real_share)
    parser.add_argument("--model-dir", type=Path, default=None, help="keep the trained model here (default: a temporary folder)")
    parser.add_argument("--base-model", type=Path, default=None, help="the encoder to fine-tune (default: the packaged MiniLM)")
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args()
    record = harness.Record("bench_fluency", args.record)
    if not args.fm2.is_file():
        print(f"skipped: {args.fm2} not found")
        return
    rows, pages, titles, fold_of = fm2_folds(args.fm2, args.seed)
    training = {t: PageTexts(pages[t].sentences, pages[t].claims) for t in titles if fold_of[t] != args.test_fold}
    tested = [t for t in titles if fold_of[t] == args.test_fold]

    rng = random.Random(args.seed)
    texts: dict[str, list[str]] = {"real claims": [], "templates, any words": [], "templates, content words": []}
    for title in tested:
        texts["real claims"] += pages[title].claims
        texts["templates, any words"] += templates_of(pages[title], content=False, count=args.per_page, rng=rng)
        texts["templates, content words"] += templates_of(pages[title], content=True, count=args.per_page, rng=rng)

    base = args.base_model or default_model_path()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.model_dir or Path(scratch) / "fluency"
        last = [0.0]

        def progress(done: int, total: int) -> None:
            if done == total or time.monotonic() - last[0] > 10:
                last[0] = time.monotonic()
                print(f"\rtraining: step {done}/{total}", end="", file=sys.stderr, flush=True)

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
        checks = sum(len(items) for items in texts.values())
        check_ms = (time.process_time() - cpu) * 1000 / checks
        single = time.perf_counter()
        for text in texts["real claims"][:50]:
            scorer.refuses(text)
        single_ms = (time.perf_counter() - single) * 1000 / min(50, len(texts["real claims"]))

    print(f"{args.fm2.name}: test fold {args.test_fold} of {FOLDS} ({len(tested)} pages, none trained on); "
          f"trained on {report.trained_pages} pages, bar from {report.held_out_pages} held-out pages' {report.held_out_texts} texts "
          f"at their {1 - report.real_share:.1%} quantile ({report.threshold:.3f}); {report.examples} examples, {report.epochs} epochs, "
          f"losses {report.losses}; {report.seconds:.0f} s wall, {train_cpu:.0f} s CPU")
    word_order = order_model_load()
    label = f"{args.fm2.name} fold {args.test_fold}, seed {args.seed}"
    for kind, items in texts.items():
        by_rules = [fluency_problem(t) is not None or not reads_as_sentence(t, model=word_order) for t in items]
        by_model = [bool(s > report.threshold) for s in scores[kind]]
        for name, hits in (("word rules", by_rules), ("learnt score", by_model), ("either", [a or b for a, b in zip(by_rules, by_model)])):
            count, total = sum(hits), len(items)
            low, high = wilson(count, total)
            print(f"  {kind:26s} refused by {name:13s} {count:4d}/{total} = {count / total:6.1%}  (95% CI {low:.1%} to {high:.1%})")
            record.add(label, f"{kind} refused by {name}", round(100 * count / total, 1), f"% (95% CI {100 * low:.1f}-{100 * high:.1f}, n {total})")
    print(f"CPU per check in batches: {check_ms:.1f} ms; one claim at a time (as a save asks): {single_ms:.1f} ms wall")
    record.add(label, "training", report.seconds, f"s wall ({report.examples} examples, {report.epochs} epochs)")
    record.add(label, "one check", round(single_ms, 1), "ms wall")


if __name__ == "__main__":
    main()
