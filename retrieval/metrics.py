"""Retrieval metrics as the paper reports them (Table 5), plus MRR and latency percentiles.

Recall@k is the share of claims with at least one gold sentence in the top k: one gold
sentence is enough for a voter to decide, so that is what a clue list must achieve.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from retrieval.base import DocId


def recall_at_k(ranked: Sequence[DocId], gold: Collection[DocId], k: int) -> float:
    """1.0 if any gold id is among the first ``k`` ranked ids, else 0.0."""
    return 1.0 if any(doc_id in gold for doc_id in ranked[:k]) else 0.0


def r_precision(ranked: Sequence[DocId], gold: Collection[DocId]) -> float:
    """Precision in the top R, where R is the number of gold sentences."""
    if not gold:
        return 0.0
    top = ranked[: len(gold)]
    return sum(1 for doc_id in top if doc_id in gold) / len(gold)


def reciprocal_rank(ranked: Sequence[DocId], gold: Collection[DocId]) -> float:
    """1 / rank of the first gold sentence, 0.0 when none was retrieved."""
    for rank, doc_id in enumerate(ranked, start=1):
        if doc_id in gold:
            return 1.0 / rank
    return 0.0


def percentile_ms(seconds: Sequence[float], percentile: float) -> float:
    """A latency percentile in milliseconds (0.0 for no samples)."""
    if not seconds:
        return 0.0
    return float(np.percentile(np.asarray(seconds) * 1000.0, percentile))
