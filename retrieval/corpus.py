"""Corpus-wide retrieval over every sentence of every page (paper Table 5, retrieval subtask).

A page's few hundred sentences fit the simple page retrievers; a whole Wikipedia dump
does not. Here the lexical side is a sparse document-term matrix of precomputed BM25
weights (bm25s), so a query costs a handful of sparse column sums instead of a Python
loop over documents; the dense side is a faiss index that is exact (flat) by default and
approximate (IVF or HNSW) when the corpus is too large for a linear scan.

Both take the same ``Doc`` values and terms as the page retrievers, so the evaluation CLI
can compare the two scopes on equal footing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Literal

import bm25s
import faiss
import numpy as np

from retrieval.base import Doc, DocId, Hit, check_unique_ids, hits_from_scores
from retrieval.dense import UnitVectors
from retrieval.encoder import Matrix, TextEncoder
from retrieval.lexical import doc_terms
from retrieval.text import terms

IndexKind = Literal["flat", "ivf", "hnsw"]


class CorpusLexicalRetriever:
    """BM25 (bm25s, Lucene variant) over unigrams and bigrams of a whole corpus."""

    def __init__(self, docs: Sequence[Doc], *, with_context: bool = True) -> None:
        check_unique_ids(docs)
        self.ids: list[DocId] = [doc.id for doc in docs]
        corpus_terms = [doc_terms(doc, with_context=with_context) for doc in docs]
        self._index: bm25s.BM25 | None = None
        self._vocabulary: dict[str, int] = {}
        if any(corpus_terms):
            # bm25s logs and shows progress bars by default; an index build inside a
            # management command or a test should stay quiet.
            logging.getLogger("bm25s").setLevel(logging.WARNING)
            self._index = bm25s.BM25()
            self._index.index(corpus_terms, show_progress=False)
            self._vocabulary = dict(self._index.vocab_dict)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document, in document order."""
        known = [term for term in dict.fromkeys(terms(query)) if term in self._vocabulary]
        if self._index is None or not known:
            return np.zeros(len(self.ids), dtype=np.float64)
        term_ids = [self._vocabulary[term] for term in known]
        return np.asarray(self._index.get_scores_from_ids(term_ids), dtype=np.float64)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        scores = self.scores(query)
        if k <= 0 or not np.any(scores > 0):
            return []
        matched = int(np.count_nonzero(scores > 0))
        return hits_from_scores(self.ids, scores, min(k, matched))


class CorpusDenseRetriever(UnitVectors):
    """Inner product over unit vectors in a faiss index, flat or approximate.

    ``index_kind="flat"`` is exact and fine up to a few hundred thousand sentences on a
    CPU; ``"ivf"`` (inverted lists over k-means cells, ``nprobe`` cells searched) and
    ``"hnsw"`` (graph search) trade a little recall for sub-linear search on larger
    corpora. ``scores`` is always exact, because fusion needs comparable scores.
    """

    def __init__(
        self,
        ids: Sequence[DocId],
        embeddings: np.ndarray,
        encoder: TextEncoder,
        *,
        index_kind: IndexKind = "flat",
        nlist: int | None = None,
        nprobe: int = 16,
        hnsw_neighbours: int = 32,
    ) -> None:
        super().__init__(ids, embeddings, encoder)
        self.index = build_faiss_index(
            self.embeddings,
            index_kind=index_kind,
            nlist=nlist,
            nprobe=nprobe,
            hnsw_neighbours=hnsw_neighbours,
        )

    def search(self, query: str, k: int = 10) -> list[Hit]:
        query_vector = self.embed_query(query)
        if query_vector is None or not self.ids or k <= 0:
            return []
        return self.search_vector(query_vector, k)

    def search_vector(self, query_vector: Matrix, k: int) -> list[Hit]:
        """Search with an already encoded query (benchmarks time the two steps apart)."""
        depth = min(k, len(self.ids))
        scores, rows = self.index.search(query_vector, depth)
        found = [(float(s), int(r)) for s, r in zip(scores[0], rows[0]) if r >= 0]
        found.sort(key=lambda pair: (-pair[0], pair[1]))
        return [Hit(self.ids[row], score) for score, row in found]


def build_faiss_index(
    embeddings: Matrix,
    *,
    index_kind: IndexKind = "flat",
    nlist: int | None = None,
    nprobe: int = 16,
    hnsw_neighbours: int = 32,
) -> faiss.Index:
    """A filled inner-product index over unit vectors.

    IVF needs enough vectors to train its cells (about 39 per cell); with fewer, a flat
    index is returned instead, which is exact and just as fast at that size.
    """
    dimension = embeddings.shape[1]
    count = embeddings.shape[0]
    index: faiss.Index
    if index_kind == "hnsw":
        graph = faiss.IndexHNSWFlat(dimension, hnsw_neighbours, faiss.METRIC_INNER_PRODUCT)
        graph.hnsw.efSearch = max(64, 2 * hnsw_neighbours)
        index = graph
    elif index_kind == "ivf" and count >= 39 * (nlist or _default_cells(count)):
        cells = nlist or _default_cells(count)
        quantizer = faiss.IndexFlatIP(dimension)
        inverted = faiss.IndexIVFFlat(quantizer, dimension, cells, faiss.METRIC_INNER_PRODUCT)
        inverted.train(embeddings)
        inverted.nprobe = min(nprobe, cells)
        index = inverted
    else:
        index = faiss.IndexFlatIP(dimension)
    if count:
        index.add(embeddings)
    return index




def _default_cells(count: int) -> int:
    """The usual IVF rule of thumb: about 4 * sqrt(n) cells."""
    return max(1, int(4 * np.sqrt(max(count, 1))))
