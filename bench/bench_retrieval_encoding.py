"""Page-encoding throughput: our int8 ONNX path against sentence-transformers' default path.

    python bench/bench_retrieval_encoding.py [--fm2 ../shared/data/fm2/dev.jsonl] [--limit N]

Both paths encode the same sentences (every pool sentence of the FM2 file, as
"title: sentence") in the same process, one after the other, after a warm-up each; then
dense retrieval is scored with each path's vectors (page scope), so the speed-up is shown
next to what it costs in recall@5. The default path is ``SentenceTransformer.encode`` with
its default batch size on the torch CPU backend, which is what a plain
``SentenceTransformer(model).encode(...)`` call does.

Prints one line per path and, last, a JSON object with both rates, the ratio, and both
recall@5 figures. The process's CPU time per sentence is printed beside each rate (the
encoders use every core: the rate moves with the machine's load, the CPU much less).

Pure computation: no database, no Redis (it takes neither option). With --record (or
FM2_BENCH_RECORD) each path's rate, CPU per sentence and recall@5 go to the record.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

from retrieval.dense import passage_text  # noqa: E402
from retrieval.encoder import Encoder, Matrix, default_model_path, normalise_rows  # noqa: E402
from retrieval.fm2 import Fm2Dataset, load_fm2  # noqa: E402

DEFAULT_FM2 = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "fm2" / "dev.jsonl"


def recall_at_5(dataset: Fm2Dataset, sentence_vectors: Matrix, claim_vectors: Matrix) -> float:
    corpus = dataset.corpus()
    row_of = {doc.id: row for row, doc in enumerate(corpus)}
    found = 0
    for claim, claim_vector in zip(dataset.claims, claim_vectors):
        pool = dataset.pools[claim.page_title]
        rows = [row_of[doc.id] for doc in pool]
        scores = sentence_vectors[rows] @ claim_vector
        top = np.argsort(-scores, kind="stable")[:5]
        found += any(pool[i].text in claim.gold_texts for i in top)
    return 100.0 * found / len(dataset.claims)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fm2", type=Path, default=DEFAULT_FM2)
    parser.add_argument("--limit", type=int, default=None, help="time only the first N sentences")
    parser.add_argument("--onnx-cache-dir", type=Path, default=None)
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args()
    record = harness.Record("bench_retrieval_encoding", args.record)
    if not args.fm2.exists():
        print(f"no FM2 file at {args.fm2}", file=sys.stderr)
        return 2
    dataset = load_fm2(args.fm2)
    texts = [passage_text(doc) for doc in dataset.corpus()][: args.limit]
    claims = [claim.text for claim in dataset.claims]

    from sentence_transformers import SentenceTransformer

    default_model = SentenceTransformer(str(default_model_path()), device="cpu")
    fast = Encoder(backend="onnx", onnx_cache_dir=args.onnx_cache_dir)

    def default_encode(batch: list[str]) -> Matrix:
        return normalise_rows(default_model.encode(batch))

    def fast_encode(batch: list[str]) -> Matrix:
        return fast.encode(batch)

    results: dict[str, object] = {"sentences": len(texts)}
    vectors: dict[str, tuple[Matrix, Matrix]] = {}
    for name, encode in (("default_torch", default_encode), ("onnx_int8", fast_encode)):
        encode(texts[:64])  # warm-up: model load, ONNX export/session, first-call costs
        print(f"encoding {len(texts)} sentences with {name} ...", file=sys.stderr, flush=True)
        started, cpu = time.perf_counter(), time.process_time()
        sentence_vectors = encode(texts)
        elapsed, cpu_ms = time.perf_counter() - started, (time.process_time() - cpu) * 1000 / len(texts)
        rate = len(texts) / elapsed
        case = f"{name}, {len(texts)} sentences of {args.fm2.name}"
        record.add(case, "rate", round(rate, 1), "sentences/s")
        record.add(case, "CPU per sentence", round(cpu_ms, 2), "ms CPU/sentence")
        claim_vectors = encode(claims)
        vectors[name] = (sentence_vectors, claim_vectors)
        results[f"{name}_sentences_per_s"] = round(rate, 1)
        if args.limit is None:
            results[f"{name}_recall@5"] = round(recall_at_5(dataset, sentence_vectors, claim_vectors), 1)
            record.add(case, "recall@5 (page scope)", results[f"{name}_recall@5"], "%")
        print(f"{name:14s} {rate:8.1f} sentences/s, {cpu_ms:.2f} ms CPU a sentence", flush=True)

    results["speedup"] = round(
        float(results["onnx_int8_sentences_per_s"]) / float(results["default_torch_sentences_per_s"]),  # type: ignore[arg-type]
        2,
    )
    same = vectors["default_torch"][0] * vectors["onnx_int8"][0]
    results["mean_cosine_default_vs_fast"] = round(float(same.sum(axis=1).mean()), 4)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
