"""Evaluate a retriever on an FM2 JSON Lines file, with no Django and no database.

    python -m retrieval.evaluate --fm2 ../shared/data/fm2/dev.jsonl \\
        --retriever hybrid --scope page --k 1,5,10

Scope ``page``: each claim searches its own page's pool (the union of the gold and
retrieved evidence of the page's claims), as the game does. Scope ``corpus``: every claim
searches all sentences of all pages, like the paper's retrieval subtask (Table 5).

Output: a readable table, then, as the last line, one JSON object with ``retriever,
scope, queries, recall@K..., r_precision, mrr, latency_ms_p50, latency_ms_p95,
encode_sentences_per_s`` (recall and r_precision in percent). Latency is per query: the
query's encoding and the search, not the index build. Progress goes to stderr.

Figures on the dev file (1,169 claims, 209 pages), page scope, recall@5 / recall@10:

================================================  =========  ==========
retriever                                         recall@5   recall@10
================================================  =========  ==========
stored ``retrieved_evidence`` order               53.1       69.5
BM25 uni+bigram, content-word bigrams, title      57.2       72.5
BM25 uni+bigram (not stop+stop), title            58.7       73.6
... + section header                              59.7       74.4
... with Lucene idf (lexical default)             59.5       74.3
MiniLM, sentence alone                            66.8       80.6
MiniLM, "header: sentence"                        67.8       79.9
MiniLM, "title | header: sentence"                76.1       88.3
MiniLM, "title: sentence" (dense default)         80.0       91.5
RRF(lexical, dense default)                       73.8       86.3
z-score fusion, dense weight 0.75 (hybrid)        81.7       92.2
same, int8 ONNX encoder (CLI default)             81.7       92.4
================================================  =========  ==========
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from retrieval.base import Doc, DocId, Retriever
from retrieval.corpus import CorpusDenseRetriever, CorpusLexicalRetriever
from retrieval.dense import DenseRetriever, passage_text
from retrieval.encoder import Backend, Encoder
from retrieval.fm2 import Fm2Dataset, load_fm2
from retrieval.hybrid import DEFAULT_DENSE_WEIGHT, HybridRetriever
from retrieval.lexical import LexicalRetriever
from retrieval.metrics import percentile_ms, r_precision, reciprocal_rank, recall_at_k
from retrieval.store import FileEmbeddingStore, encode_with_store

RETRIEVERS = ("lexical", "dense", "hybrid")
SCOPES = ("page", "corpus")
MRR_DEPTH = 100


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_ks(text: str) -> list[int]:
    ks = sorted({int(part) for part in text.split(",") if part.strip()})
    if not ks or ks[0] <= 0:
        raise argparse.ArgumentTypeError("--k takes positive integers, e.g. 1,5,10")
    return ks


def build_arg_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m retrieval.evaluate",
        description="Recall@k, R-precision, MRR and latency of a retriever on FM2.",
    )
    parser.add_argument("--fm2", required=True, type=Path, help="FM2 JSON Lines file")
    parser.add_argument("--retriever", choices=RETRIEVERS, default="hybrid")
    parser.add_argument("--scope", choices=SCOPES, default="page")
    parser.add_argument("--k", type=parse_ks, default=[1, 5, 10], help="e.g. 1,5,10")
    parser.add_argument("--model-path", type=Path, default=None, help="sentence-transformers dir")
    parser.add_argument(
        "--backend",
        choices=("onnx", "onnx-fp32", "torch"),
        default="onnx",
        help="encoder backend: int8 ONNX (default), fp32 ONNX, or sentence-transformers' torch",
    )
    parser.add_argument("--onnx-cache-dir", type=Path, default=None)
    parser.add_argument(
        "--store", type=Path, default=None, help="SQLite embedding store to reuse vectors"
    )
    parser.add_argument("--dense-weight", type=float, default=DEFAULT_DENSE_WEIGHT)
    parser.add_argument("--limit", type=int, default=None, help="evaluate the first N claims")
    return parser


def gold_ids_by_claim(dataset: Fm2Dataset) -> list[set[DocId]]:
    """Ids of each claim's gold sentences in its page's pool."""
    result: list[set[DocId]] = []
    for claim in dataset.claims:
        pool = dataset.pools[claim.page_title]
        result.append({doc.id for doc in pool if doc.text in claim.gold_texts})
    return result


def encode_docs(
    docs: Sequence[Doc], encoder: Encoder, store_path: Path | None
) -> tuple[np.ndarray, float | None]:
    """All sentence embeddings at once, and the encoding rate in sentences per second."""
    store = FileEmbeddingStore(store_path) if store_path else None
    progress(f"encoding {len(docs)} sentences with {encoder.model_name} ({encoder.backend})")
    encoder.encode(["warm-up"])  # model loading and any ONNX export are not encoding
    started = time.perf_counter()
    matrix = encode_with_store(encoder, [passage_text(doc) for doc in docs], store, show_progress=True)
    elapsed = time.perf_counter() - started
    rate = len(docs) / elapsed if elapsed > 0 and store is None else None
    return matrix, rate


def make_searchers(
    dataset: Fm2Dataset,
    retriever_kind: str,
    scope: str,
    encoder: Encoder | None,
    embeddings: np.ndarray | None,
    dense_weight: float,
) -> Callable[[str], Retriever]:
    """A function from page title to the retriever that serves that page's claims."""
    corpus = dataset.corpus()
    row_of = {doc.id: row for row, doc in enumerate(corpus)}

    def dense_for(docs: Sequence[Doc]) -> DenseRetriever:
        assert encoder is not None and embeddings is not None
        rows = [row_of[doc.id] for doc in docs]
        return DenseRetriever([doc.id for doc in docs], embeddings[rows], encoder)

    if scope == "corpus":
        corpus_retriever: Retriever
        if retriever_kind == "lexical":
            corpus_retriever = CorpusLexicalRetriever(corpus)
        else:
            assert encoder is not None and embeddings is not None
            dense = CorpusDenseRetriever([doc.id for doc in corpus], embeddings, encoder)
            corpus_retriever = (
                dense
                if retriever_kind == "dense"
                else HybridRetriever(CorpusLexicalRetriever(corpus), dense, dense_weight=dense_weight)
            )
        return lambda page: corpus_retriever

    per_page: dict[str, Retriever] = {}
    for page, docs in dataset.pools.items():
        if retriever_kind == "lexical":
            per_page[page] = LexicalRetriever(docs)
        elif retriever_kind == "dense":
            per_page[page] = dense_for(docs)
        else:
            per_page[page] = HybridRetriever(LexicalRetriever(docs), dense_for(docs), dense_weight=dense_weight)
    return per_page.__getitem__


def evaluate(args: argparse.Namespace) -> dict[str, object]:
    dataset = load_fm2(args.fm2)
    if args.limit is not None:
        dataset = Fm2Dataset(claims=dataset.claims[: args.limit], pools=dataset.pools)
    progress(f"{len(dataset.claims)} claims, {len(dataset.pools)} pages, {len(dataset.corpus())} sentences")

    encoder: Encoder | None = None
    embeddings: np.ndarray | None = None
    encode_rate: float | None = None
    if args.retriever in ("dense", "hybrid"):
        encoder = Encoder(args.model_path, backend=args.backend, onnx_cache_dir=args.onnx_cache_dir)
        embeddings, encode_rate = encode_docs(dataset.corpus(), encoder, args.store)

    progress(f"building {args.retriever} retrievers ({args.scope} scope)")
    retriever_for = make_searchers(dataset, args.retriever, args.scope, encoder, embeddings, args.dense_weight)

    ks: list[int] = args.k
    depth = max(max(ks), MRR_DEPTH)
    gold_sets = gold_ids_by_claim(dataset)
    recalls = {k: 0.0 for k in ks}
    precision_total = 0.0
    rr_total = 0.0
    latencies: list[float] = []
    for number, (claim, gold) in enumerate(zip(dataset.claims, gold_sets), start=1):
        retriever = retriever_for(claim.page_title)
        started = time.perf_counter()
        hits = retriever.search(claim.text, depth)
        latencies.append(time.perf_counter() - started)
        ranked = [hit.doc_id for hit in hits]
        for k in ks:
            recalls[k] += recall_at_k(ranked, gold, k)
        precision_total += r_precision(ranked, gold)
        rr_total += reciprocal_rank(ranked, gold)
        if number % 200 == 0:
            progress(f"searched {number}/{len(dataset.claims)} claims")

    queries = len(dataset.claims)
    share = 100.0 / queries if queries else 0.0
    result: dict[str, object] = {"retriever": args.retriever, "scope": args.scope, "queries": queries}
    for k in ks:
        result[f"recall@{k}"] = round(recalls[k] * share, 1)
    result["r_precision"] = round(precision_total * share, 1)
    result["mrr"] = round(rr_total / queries, 4) if queries else 0.0
    result["latency_ms_p50"] = round(percentile_ms(latencies, 50), 2)
    result["latency_ms_p95"] = round(percentile_ms(latencies, 95), 2)
    result["encode_sentences_per_s"] = round(encode_rate, 1) if encode_rate else None
    return result


def format_table(result: dict[str, object]) -> str:
    width = max(len(key) for key in result)
    lines = [f"{'metric'.ljust(width)}  value", f"{'-' * width}  -----"]
    lines += [f"{key.ljust(width)}  {value}" for key, value in result.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    if not args.fm2.exists():
        print(f"no such file: {args.fm2}", file=sys.stderr)
        return 2
    result = evaluate(args)
    print(format_table(result))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
