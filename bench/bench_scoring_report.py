"""Print the scoring figures of an FM2 split: fitted prior, too-hard claims, artifacts.

Usage: python bench/bench_scoring_report.py [path/to/split.jsonl]
       [--record PATH]  (default: ../shared/data/fm2/dev.jsonl beside the repository)

Pure computation: no database, no Redis (it takes neither option). With --record (or
FM2_BENCH_RECORD) the too-hard counts and the claim-only accuracies go to the record.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from scoring.artifacts import (
    claim_length_by_label,
    cross_validated_accuracy,
    examples_from_records,
    table1_stats,
    top_bigrams_by_lmi,
    top_words_by_pmi,
)
from scoring.filters import fit_beta_binomial_prior, is_too_hard

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "fm2" / "dev.jsonl"


def main(path: Path, record: harness.Record) -> None:
    with path.open(encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    counts = [(r["correct_votes"], r["total_votes"]) for r in records]
    prior = fit_beta_binomial_prior(counts)
    print(f"{len(records)} claims, {sum(v for _, v in counts)} votes, "
          f"{sum(c for c, _ in counts)} correct")
    print("fitted prior:", prior)
    for name, a, b in [("default 4/1", 4.0, 1.0), ("fitted", prior.a, prior.b)]:
        flagged = [r["id"] for r, (c, v) in zip(records, counts) if is_too_hard(c, v, a=a, b=b)]
        print(f"too hard under {name} prior: {len(flagged)} {flagged}")
        record.add(f"{path.name}, {len(records)} claims", f"too hard under the {name} prior", len(flagged), "claims")
    examples = examples_from_records(records)
    for label in ("REFUTES", "SUPPORTS"):
        print(f"LMI {label}:", [t.term for t in top_bigrams_by_lmi(examples, label)])
        print(f"PMI {label}:", [t.term for t in top_words_by_pmi(examples, label)])
    print(table1_stats(records))
    for label, stats in claim_length_by_label(examples).items():
        print(label, f"mean {stats.mean:.1f} median {stats.median} claims {stats.claims}")
    pages = [r["wikipedia_page"] for r in records]
    for seed in range(3):
        started = time.perf_counter()
        mixed = cross_validated_accuracy(examples, seed=seed)
        grouped = cross_validated_accuracy(examples, seed=seed, groups=pages)
        print(f"claim-only 5-fold CV seed {seed}: {mixed:.3f} (folds by page: {grouped:.3f}) "
              f"in {time.perf_counter() - started:.1f} s")
        if seed == 0:
            record.add(f"{path.name}, {len(records)} claims", "claim-only 5-fold CV accuracy, seed 0", round(100 * mixed, 1), "%")
            record.add(f"{path.name}, {len(records)} claims", "claim-only 5-fold CV accuracy by page, seed 0", round(100 * grouped, 1), "%")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("split", type=Path, nargs="?", default=DEFAULT)
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args()
    main(args.split, harness.Record("bench_scoring_report", args.record))
