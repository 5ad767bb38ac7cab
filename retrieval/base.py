"""The vocabulary every retriever shares: a sentence, a scored hit, and the search protocol.

Django stores sentences as rows; this package only sees ``Doc`` values built from them,
so it never needs the ORM. Every retriever answers ``search(query, k)`` with hits sorted
best first, ties broken by the order in which the documents were given, so that the same
page and the same draft always show the same hints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

DocId = int | str


@dataclass(frozen=True, slots=True)
class Doc:
    """One evidence sentence of a Wikipedia page."""

    id: DocId
    text: str
    section_header: str = ""
    page_title: str = ""


@dataclass(frozen=True, slots=True)
class Hit:
    """A retrieved sentence and how well it matched; higher scores are better."""

    doc_id: DocId
    score: float


@runtime_checkable
class Retriever(Protocol):
    """Ranks a fixed set of sentences for a query."""

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The ``k`` best sentences for ``query``, best first.

        An empty query, or one with no usable words, returns ``[]``; so does a retriever
        built over no documents.
        """
        ...


def check_unique_ids(docs: Sequence[Doc]) -> None:
    """Refuse duplicate ids early: a hit must name exactly one sentence."""
    seen: set[DocId] = set()
    for doc in docs:
        if doc.id in seen:
            raise ValueError(f"duplicate document id {doc.id!r}")
        seen.add(doc.id)


def top_k_indices(scores: npt.NDArray[np.floating], k: int) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` highest scores, best first; equal scores keep input order.

    Sorting by (-score, index) is what makes ties deterministic: the document given first
    wins. On a large corpus only the candidates at or above the k-th best score are
    sorted (``argpartition`` first), so a 100k-sentence search does not pay a full sort.
    """
    if k <= 0 or scores.size == 0:
        return np.empty(0, dtype=np.intp)
    if k < scores.size // 4:
        kth_best = np.partition(scores, scores.size - k)[scores.size - k]
        candidates = np.flatnonzero(scores >= kth_best)
        order = candidates[np.argsort(-scores[candidates], kind="stable")]
    else:
        order = np.argsort(-scores, kind="stable")
    return order[:k]


def hits_from_scores(
    ids: Sequence[DocId], scores: npt.NDArray[np.floating], k: int
) -> list[Hit]:
    """The top ``k`` of ``scores`` as hits naming ``ids``."""
    return [Hit(ids[i], float(scores[i])) for i in top_k_indices(scores, k)]
