"""The giveaway detector on the FM2 dev claims: how far wording alone gives the label away.

    python bench/bench_authoring_giveaway.py [--fm2 ../shared/data/fm2/dev.jsonl]

Trains exactly what the ``giveaway_train`` Celery task trains (``foolgame.authoring.giveaway
.train``: TF-IDF word and character n-grams, logistic regression, the pipeline of
``scoring.artifacts``) on every claim of the file, and prints its 5-fold cross-validated
accuracy twice: with stratified folds (a page's claims on both sides, as when the model
meets a new claim about a page it has seen) and with each page kept in one fold (the
honest artifact figure). Then the confidence from which it warns authors (75% precision
in cross-validation), how many claims reach it, the training time and the stored size.
The FM2 paper's claim-only BERT reaches 61.9 on dev; chance is the majority share.

Pure computation: no database, no Redis (it takes neither option). With --record (or
FM2_BENCH_RECORD) the two accuracies, the share warned and the training CPU go to the record.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

from foolgame.authoring.giveaway import train  # noqa: E402

DEFAULT_FM2 = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "fm2" / "dev.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fm2", type=Path, default=DEFAULT_FM2)
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args()
    record = harness.Record("bench_authoring_giveaway", args.record)
    if not args.fm2.is_file():
        print(f"skipped: {args.fm2} not found")
        return
    records = [json.loads(line) for line in args.fm2.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = [r["text"] for r in records]
    labels = [r["label"] for r in records]
    pages = [r["wikipedia_page"] for r in records]
    majority = max(labels.count(label) for label in set(labels)) / len(labels)
    started, cpu = time.perf_counter(), time.process_time()
    trained = train(texts, labels, groups=pages)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    figures = {
        "claims": len(texts),
        "pages": len(set(pages)),
        "majority_share": round(majority, 4),
        "cv_accuracy": round(trained.cv_accuracy, 4),
        "cv_accuracy_by_page": round(trained.cv_accuracy_by_page or 0.0, 4),
        "warning_threshold": round(trained.threshold, 4),
        "confident_share": round(trained.confident_share, 4),
        "confident_precision": round(trained.confident_precision, 4),
        "train_seconds": round(seconds, 2),
        "stored_bytes": len(trained.dumps()),
    }
    print(f"claims {figures['claims']} on {figures['pages']} pages (majority {majority:.1%})")
    print(f"5-fold CV accuracy {trained.cv_accuracy:.1%} (pages shared), {trained.cv_accuracy_by_page:.1%} (pages kept apart)")
    print(
        f"warns from p >= {trained.threshold:.3f}: {trained.confident_share:.1%} of claims, "
        f"{trained.confident_precision:.1%} right there; trained in {seconds:.1f} s"
    )
    print(json.dumps(figures))
    case = f"{args.fm2.name}, {len(texts)} claims, 5-fold CV (majority {majority:.1%})"
    record.add(case, "accuracy, pages shared across folds", round(100 * trained.cv_accuracy, 1), "%")
    record.add(case, "accuracy, each page in one fold", round(100 * (trained.cv_accuracy_by_page or 0.0), 1), "%")
    record.add(case, "claims warned", round(100 * trained.confident_share, 1), f"% (right on {trained.confident_precision:.1%} of them)")
    record.add(case, "training", round(cpu_seconds, 2), "s CPU")


if __name__ == "__main__":
    main()
