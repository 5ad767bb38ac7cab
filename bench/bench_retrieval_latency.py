"""Query latency of the retrievers, in process: page hints, dense queries, corpus search.

    python bench/bench_retrieval_latency.py [--corpus-size 100000] [--queries 300]

Prints one line per figure and, last, a JSON object with all of them. Targets:

- hints (lexical search + highlight of the 10 hits) on a 300-sentence page: p95 <= 5 ms;
- dense query (encode the draft + search a page's faiss index): p95 <= 30 ms;
- corpus-wide lexical search at 100k sentences (bm25s): p95 <= 10 ms; dense flat and
  IVF at the same size are printed beside it.

Synthetic text stands in for Wikipedia: sentences drawn from a Zipf-distributed
vocabulary, so term statistics look like prose; no data file is needed. The timing is
wall clock per query after a warm-up, on whatever the machine is doing at the time; the
process's CPU time per query is printed beside it (it moves less with the machine's load).

Pure computation: no database, no Redis (it takes neither option). With --record (or
FM2_BENCH_RECORD) each p50/p95 and its CPU per query go to the record, with the targets.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

from retrieval.base import Doc  # noqa: E402
from retrieval.corpus import CorpusDenseRetriever, CorpusLexicalRetriever  # noqa: E402
from retrieval.dense import DenseRetriever, passage_text  # noqa: E402
from retrieval.encoder import Encoder  # noqa: E402
from retrieval.game import hints_for_draft  # noqa: E402
from retrieval.lexical import LexicalRetriever  # noqa: E402
from retrieval.metrics import percentile_ms  # noqa: E402


def synthetic_sentences(count: int, seed: int) -> list[str]:
    """Prose-like sentences: Zipfian words, 8 to 30 per sentence, a few stop words."""
    rng = np.random.default_rng(seed)
    syllables = ["ka", "lo", "ri", "ven", "tas", "mor", "el", "qui", "dan", "sor", "bel", "um"]
    vocabulary = [
        "".join(rng.choice(syllables, size=int(rng.integers(2, 5)))) for _ in range(30000)
    ]
    stop = ["the", "of", "and", "in", "was", "a", "to", "by", "his", "with"]
    ranks = rng.zipf(1.2, size=count * 30)
    sentences = []
    position = 0
    for _ in range(count):
        length = int(rng.integers(8, 31))
        words = []
        for _ in range(length):
            if rng.random() < 0.3:
                words.append(stop[int(rng.integers(len(stop)))])
            else:
                words.append(vocabulary[int(ranks[position] - 1) % len(vocabulary)])
                position += 1
        sentences.append(" ".join(words).capitalize() + ".")
    return sentences


CPU_MS: dict[int, float] = {}  # id of a time_calls result: the process's CPU ms per call over it
TARGETS_MS = {"hints_300": 5.0, "dense_query_300": 30.0, "corpus_lexical": 10.0}  # p95


def time_calls(call: Callable[[str], object], queries: list[str]) -> list[float]:
    for query in queries[:10]:
        call(query)
    seconds = []
    cpu = time.process_time()
    for query in queries:
        started = time.perf_counter()
        call(query)
        seconds.append(time.perf_counter() - started)
    CPU_MS[id(seconds)] = (time.process_time() - cpu) * 1000 / max(len(queries), 1)
    return seconds


def queries_from(sentences: list[str], count: int, seed: int) -> list[str]:
    """Drafts that overlap their source sentence partly, like an author's claim."""
    rng = random.Random(seed)
    picked = rng.sample(sentences, min(count, len(sentences)))
    drafts = []
    for sentence in picked:
        words = sentence.rstrip(".").split()
        keep = [w for w in words if rng.random() < 0.6] or words[:3]
        drafts.append(" ".join(keep))
    return drafts


def report(name: str, seconds: list[float], results: dict[str, float], record: harness.Record | None = None, case: str = "") -> None:
    p50, p95 = percentile_ms(seconds, 50), percentile_ms(seconds, 95)
    cpu_ms = CPU_MS.get(id(seconds))
    results[f"{name}_p50_ms"] = round(p50, 3)
    results[f"{name}_p95_ms"] = round(p95, 3)
    if cpu_ms is not None:
        results[f"{name}_cpu_ms"] = round(cpu_ms, 3)
    print(f"{name:28s} p50 {p50:8.3f} ms   p95 {p95:8.3f} ms   CPU {cpu_ms or 0:8.3f} ms a query", flush=True)
    if record is not None:
        target = next((ms for prefix, ms in TARGETS_MS.items() if name.startswith(prefix)), None)
        record.add(case, "p50", round(p50, 3), "ms")
        record.add(case, "p95", round(p95, 3), "ms", target=f"p95 <= {target:g} ms" if target else None,
                   ok=p95 <= target if target else None)
        if cpu_ms is not None:
            record.add(case, "CPU per query", round(cpu_ms, 3), "ms CPU/query")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus-size", type=int, default=100_000)
    parser.add_argument("--page-size", type=int, default=300)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--onnx-cache-dir", type=Path, default=None)
    harness.add_service_args(parser, database=False, redis=False)
    args = parser.parse_args()
    record = harness.Record("bench_retrieval_latency", args.record)
    results: dict[str, float] = {}
    page_case, corpus_case = f"{args.page_size}-sentence page", f"{args.corpus_size:,} sentences"

    # 1. Hints on a 300-sentence page: lexical search + highlights, as the API serves them.
    page_text = synthetic_sentences(args.page_size, seed=1)
    page = [Doc(i, text, "Section", "Synthetic page") for i, text in enumerate(page_text)]
    docs_by_id = {doc.id: doc for doc in page}
    drafts = queries_from(page_text, args.queries, seed=2)
    started = time.perf_counter()
    lexical = LexicalRetriever(page)
    results["page_lexical_build_ms"] = round((time.perf_counter() - started) * 1000, 2)
    print(f"{'page lexical index build':28s} {results['page_lexical_build_ms']:8.2f} ms")
    report("hints_300", time_calls(lambda q: hints_for_draft(q, lexical, docs_by_id), drafts), results,
           record, f"hints (lexical + highlights), {page_case}")

    # 2. Dense query on the same page: encode the draft, search the page's index.
    encoder = Encoder(onnx_cache_dir=args.onnx_cache_dir)
    dense = DenseRetriever([d.id for d in page], encoder.encode([passage_text(d) for d in page]), encoder)
    report("dense_query_300", time_calls(lambda q: dense.search(q, 10), drafts), results,
           record, f"dense query (encode + search), {page_case}")

    # 3. Corpus-wide, 100k sentences.
    print(f"building {args.corpus_size} synthetic sentences ...", file=sys.stderr, flush=True)
    corpus_text = synthetic_sentences(args.corpus_size, seed=3)
    corpus = [Doc(i, text, "", f"Page {i // 40}") for i, text in enumerate(corpus_text)]
    corpus_drafts = queries_from(corpus_text, args.queries, seed=4)
    started = time.perf_counter()
    corpus_lexical = CorpusLexicalRetriever(corpus)
    results["corpus_lexical_build_s"] = round(time.perf_counter() - started, 1)
    print(f"{'corpus lexical index build':28s} {results['corpus_lexical_build_s']:8.1f} s")
    report(f"corpus_lexical_{args.corpus_size}", time_calls(lambda q: corpus_lexical.search(q, 10), corpus_drafts), results,
           record, f"corpus lexical search (bm25s), {corpus_case}")

    # Random unit vectors stand in for 100k encoded sentences: search cost does not depend
    # on what the vectors mean, and encoding 100k sentences would take minutes.
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((args.corpus_size, encoder.dimension)).astype(np.float32)
    query_vectors = {q: encoder.encode([q]) for q in corpus_drafts}
    for kind in ("flat", "ivf", "hnsw"):
        started = time.perf_counter()
        index = CorpusDenseRetriever(list(range(args.corpus_size)), vectors, encoder, index_kind=kind)  # type: ignore[arg-type]
        build = time.perf_counter() - started
        results[f"corpus_dense_{kind}_build_s"] = round(build, 1)
        report(
            f"corpus_dense_{kind}_search_{args.corpus_size}",
            time_calls(lambda q: index.search_vector(query_vectors[q], 10), corpus_drafts),
            results, record, f"corpus dense search ({kind}), {corpus_case}",
        )
    report("query_encode", time_calls(lambda q: encoder.encode([q]), corpus_drafts), results)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
