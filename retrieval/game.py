"""The two places the game calls retrieval, as plain functions Django can wrap.

- *Hints* while an author drafts a claim: what the lexical retriever finds for the draft,
  with the matching words highlighted (paper, section 3.1; API ``/hints``).
- *Clues* for a saved claim: the hybrid retriever's top sentences of the claim's page,
  gold left out, then the gold sentences last (docs/rules.md), so a voter who buys every clue
  always ends on the evidence.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from retrieval.base import Doc, DocId, Retriever
from retrieval.text import highlight

HINT_COUNT = 10
CLUE_COUNT = 10


@dataclass(frozen=True, slots=True)
class Hint:
    """A sentence the lexical retriever found for a draft, and where the draft's words are."""

    doc: Doc
    score: float
    highlights: list[tuple[int, int]]


def hints_for_draft(
    draft: str,
    retriever: Retriever,
    docs_by_id: Mapping[DocId, Doc],
    *,
    k: int = HINT_COUNT,
) -> list[Hint]:
    """The ``k`` best sentences for ``draft``, best first, with highlight spans."""
    hints: list[Hint] = []
    for hit in retriever.search(draft, k):
        doc = docs_by_id[hit.doc_id]
        hints.append(Hint(doc=doc, score=hit.score, highlights=highlight(draft, doc.text)))
    return hints


def clue_ids_for_claim(
    claim_text: str,
    retriever: Retriever,
    gold_ids: Sequence[DocId],
    *,
    k: int = CLUE_COUNT,
) -> list[DocId]:
    """Ordered clue list: up to ``k`` retrieved non-gold sentences, then the gold ones.

    ``retriever`` should be built over the whole page (gold included): leaving gold out
    here, rather than from the index, keeps the page's index shared by all its claims.
    """
    gold: Collection[DocId] = set(gold_ids)
    retrieved: list[DocId] = []
    # Ask for enough hits that k non-gold sentences remain after dropping the gold.
    for hit in retriever.search(claim_text, k + len(gold)):
        if hit.doc_id not in gold:
            retrieved.append(hit.doc_id)
        if len(retrieved) == k:
            break
    return retrieved + list(dict.fromkeys(gold_ids))
