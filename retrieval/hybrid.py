"""Hybrid retrieval: lexical and dense scores, standardised, then mixed with fixed weights.

Why z-scores and not reciprocal rank fusion: RRF throws the scores away and keeps only
ranks, so a sentence that the dense model finds far better than all others counts no
more than one that barely edges ahead. Standardising each retriever's scores over the
candidate set (subtract the mean, divide by the standard deviation) keeps those margins
and puts BM25's unbounded scores and cosine similarities on one scale, without a
per-page calibration. On the FM2 dev pools (``retrieval.evaluate``):

======================================  =========  ==========
fusion of lexical + dense ("title: ")   recall@5   recall@10
======================================  =========  ==========
lexical alone                           59.5       74.3
dense alone                             80.0       91.5
RRF (k=60)                              73.8       86.3
min-max, dense weight 0.75              81.6       92.6
z-score, dense weight 0.6               79.7       92.1
z-score, dense weight 0.7               81.6       92.6
z-score, dense weight 0.75 (default)    81.7       92.2
z-score, dense weight 0.8               82.1       92.4
z-score, dense weight 0.9               82.0       92.4
+ dense pseudo-relevance feedback       80.2-81.5  90.3-91.4
======================================  =========  ==========

(fp32 vectors; with the default int8 encoder the CLI gives dense 79.6/91.3 and hybrid
81.7/92.4.) Pseudo-relevance feedback (Rocchio: add the mean vector of the top 1-5 fused
hits to the query, weight 0.3-0.7) only lowered recall, and so did putting the page title
in front of the claim as well as the sentences (77.3 dense alone).

At corpus scope (all 8,003 sentences) the same fusion does *not* help: 71.8/84.0 against
dense 77.8/89.5, because BM25 there mostly promotes sentences of other pages that share
the claim's words. Use the dense corpus retriever alone for that subtask.

One parameter, and every weight from 0.7 to 0.9 beats both inputs on both measures, so the default is not
a knife-edge fit to the dev file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from retrieval.base import Doc, DocId, Hit, hits_from_scores
from retrieval.dense import DenseRetriever
from retrieval.encoder import TextEncoder
from retrieval.lexical import LexicalRetriever
from retrieval.store import EmbeddingStore

DEFAULT_DENSE_WEIGHT = 0.75


class ScoringRetriever(Protocol):
    """A retriever that can score every one of its documents, in a fixed order."""

    @property
    def ids(self) -> list[DocId]: ...

    def scores(self, query: str) -> np.ndarray: ...

    def search(self, query: str, k: int = 10) -> list[Hit]: ...


# Differences below this share of the largest score are rounding, not signal: float32 dot
# products of identical vectors can differ in the 7th digit depending on a row's place in
# the BLAS kernel (seen on one CPU and not another), and standardising would blow that
# noise up to a full unit of score and reorder tied documents.
_NOISE = 1e-6


def standardise(scores: np.ndarray) -> np.ndarray:
    """Zero mean, unit variance; all zeros when the scores do not discriminate at all."""
    if scores.size == 0:
        return np.zeros(0, dtype=np.float64)
    spread = float(scores.std())
    if spread <= _NOISE * max(1.0, float(np.abs(scores).max(initial=0.0))):
        return np.zeros_like(scores, dtype=np.float64)
    return (scores - scores.mean()) / spread


class HybridRetriever:
    """Weighted sum of standardised lexical and dense scores over the same documents.

    Every document is ranked (a clue list needs its ten clues even when few sentences
    share a word with the claim), except for a blank query, which returns nothing.
    """

    def __init__(
        self,
        lexical: ScoringRetriever,
        dense: ScoringRetriever,
        *,
        dense_weight: float = DEFAULT_DENSE_WEIGHT,
    ) -> None:
        if list(lexical.ids) != list(dense.ids):
            raise ValueError("lexical and dense retrievers must index the same ids, in the same order")
        if not 0.0 <= dense_weight <= 1.0:
            raise ValueError("dense_weight must be between 0 and 1")
        self.lexical = lexical
        self.dense = dense
        self.dense_weight = dense_weight

    @classmethod
    def from_docs(
        cls,
        docs: Sequence[Doc],
        encoder: TextEncoder,
        store: EmbeddingStore | None = None,
        *,
        dense_weight: float = DEFAULT_DENSE_WEIGHT,
    ) -> HybridRetriever:
        """Both retrievers over one page's sentences, reusing stored embeddings."""
        return cls(
            LexicalRetriever(docs),
            DenseRetriever.from_docs(docs, encoder, store),
            dense_weight=dense_weight,
        )

    @property
    def ids(self) -> list[DocId]:
        return list(self.lexical.ids)

    def scores(self, query: str) -> np.ndarray:
        """Fused score of every document, in document order."""
        if not query.strip() or not self.lexical.ids:
            return np.zeros(len(self.lexical.ids), dtype=np.float64)
        lexical = standardise(self.lexical.scores(query))
        dense = standardise(self.dense.scores(query))
        return self.dense_weight * dense + (1.0 - self.dense_weight) * lexical

    def search(self, query: str, k: int = 10) -> list[Hit]:
        if not query.strip() or not self.lexical.ids:
            return []
        return hits_from_scores(self.ids, self.scores(query), k)
