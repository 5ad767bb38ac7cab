"""The word-order rule on the FM2 dev claims: real claims kept, their shuffles refused.

    python bench/bench_word_salad.py [--fm2 ../shared/data/fm2/dev.jsonl] [--seed 24]

Runs the check a claim's save runs (``scoring.word_order.reads_as_sentence`` with the shipped
table and the default rule, which are the server's defaults) over three sets and prints the
share refused with a 95% Wilson interval:

- every real claim of the file;
- its word-shuffled twin: the claim's words (runs between spaces, punctuation attached) in a
  seeded random order other than their own;
- for information, the attack of issue 24: six words of one of the claim's gold sentences in
  a random order, then the page title ("knife stage Davy with Davy Jones David Bowie").

Then the time per check. The shipped table was built from the FM2 *test* split, whose 234
pages are none of the dev split's 209 (the table's ``source`` says so): no claim or page the
benchmark checks went into the model or into the choice of the rule's thresholds.

Pure computation: no database, no Redis (it takes neither option). With --record (or
FM2_BENCH_RECORD) the three shares and the CPU per check go to the record.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from scoring.filters import wilson  # noqa: E402
from scoring.word_order import OrderRule, order_model_load, reads_as_sentence  # noqa: E402

DEFAULT_FM2 = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "fm2" / "dev.jsonl"


def shuffled(text: str, rng: random.Random) -> str:
    """The text's words in a random order other than their own (when there is another)."""
    words = text.split()
    original = list(words)
    for _ in range(100):
        rng.shuffle(words)
        if words != original:
            break
    return " ".join(words)


def attack(row: dict, rng: random.Random) -> str:
    """Six words of a gold sentence, shuffled, then the page title (the attack of issue 24)."""
    words = rng.choice(row["gold_evidence"])["text"].split()
    return " ".join(rng.sample(words, min(6, len(words)))) + " " + row["wikipedia_page"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fm2", type=Path, default=DEFAULT_FM2)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--show", type=int, default=5, help="print this many examples of each kind of error")
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args()
    record = harness.Record("bench_word_salad", args.record)
    if not args.fm2.is_file():
        print(f"skipped: {args.fm2} not found")
        return
    rows = [json.loads(line) for line in args.fm2.read_text(encoding="utf-8").splitlines() if line.strip()]
    started = time.perf_counter()
    model = order_model_load()
    load_ms = (time.perf_counter() - started) * 1000
    rule = OrderRule()
    rng = random.Random(args.seed)
    sets: dict[str, list[str]] = {"real claims": [], "shuffled twins": [], "attack (6 gold words + title)": []}
    for row in rows:
        sets["real claims"].append(row["text"])
        sets["shuffled twins"].append(shuffled(row["text"], rng))
        sets["attack (6 gold words + title)"].append(attack(row, rng))
    timings: list[float] = []
    cpu_started = time.process_time()
    refused: dict[str, list[str]] = {}
    for name, texts in sets.items():
        refused[name] = []
        for text in texts:
            begin = time.perf_counter()
            ok = reads_as_sentence(text, model=model, rule=rule)
            timings.append((time.perf_counter() - begin) * 1000)
            if not ok:
                refused[name].append(text)
    cpu_ms = (time.process_time() - cpu_started) * 1000 / len(timings)
    pages = len({row["wikipedia_page"] for row in rows})
    print(f"{args.fm2.name}: {len(rows)} claims on {pages} pages; table: {model.source[:90]}...")
    print(f"rule: z >= min({rule.base} + {rule.per_word} x words, {rule.cap}) over {rule.shuffles} shuffles; seed {args.seed}")
    for name, texts in sets.items():
        hits = len(refused[name])
        low, high = wilson(hits, len(texts))
        print(f"  {name:32s} refused {hits:4d}/{len(texts)} = {hits / len(texts):6.1%}  (95% CI {low:.1%} to {high:.1%})")
        record.add(f"{args.fm2.name}, seed {args.seed}", f"{name} refused", round(100 * hits / len(texts), 1),
                   f"% (95% CI {100 * low:.1f}-{100 * high:.1f}, n {len(texts)})")
    record.add(f"{args.fm2.name}, seed {args.seed}", "CPU per check", round(cpu_ms, 3), "ms CPU/check")
    timings.sort()
    print(
        f"time per check: CPU {cpu_ms:.2f} ms; wall mean {statistics.fmean(timings):.2f} ms, median {timings[len(timings) // 2]:.2f} ms, "
        f"99th percentile {timings[int(0.99 * len(timings))]:.2f} ms, max {timings[-1]:.2f} ms (table load {load_ms:.0f} ms, once per process)"
    )
    if args.show:
        print("real claims refused:", *refused["real claims"][: args.show], sep="\n  ")
        passed = [text for text in sets["shuffled twins"] if text not in set(refused["shuffled twins"])]
        print("shuffled twins let through:", *passed[: args.show], sep="\n  ")


if __name__ == "__main__":
    main()
