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
from retrieval.encoder import TextEncoder
from retrieval.store import EmbeddingStore
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


def retrieved_evidence(
    claims: Sequence[str],
    pool: Sequence[str],
    encoder: TextEncoder,
    *,
    k: int = 2,
    store: EmbeddingStore | None = None,
) -> list[list[str]]:
    """For claims about one page, the ``k`` sentences of the page's ``pool`` the project's
    hybrid retriever ranks first for each: the end-to-end evidence of FM2's Table 7 (the
    verifier reads what retrieval found, gold or not). One index for all the page's claims."""
    from retrieval.hybrid import HybridRetriever
    from retrieval.store import MemoryEmbeddingStore

    sentences = list(dict.fromkeys(text for text in pool if text.strip()))
    if not sentences:
        return [[] for _ in claims]
    docs = [Doc(id=i, text=text) for i, text in enumerate(sentences)]
    retriever = HybridRetriever.from_docs(docs, encoder, store if store is not None else MemoryEmbeddingStore())
    return [[sentences[int(hit.doc_id)] for hit in retriever.search(claim, k)] for claim in claims]


def retrieved_evidence_by_page(
    records: Sequence[Mapping[str, object]],
    encoder: TextEncoder,
    *,
    k: int = 2,
) -> list[list[str]]:
    """:func:`retrieved_evidence` for claims in the FM2 release's format (``text``,
    ``wikipedia_page``, ``gold_evidence``, ``retrieved_evidence``): each record's ``k`` best
    sentences of its page's pool, every evidence sentence any record of the page names, gold
    or retrieved. (A release's ``retrieved_evidence`` is unranked and holds every gold
    sentence, and a game claim's clues put the gold last, so neither list's first sentences
    are a retrieval.) An evidence entry without a text is left out."""
    pools: dict[object, list[str]] = {}
    by_page: dict[object, list[int]] = {}
    for index, record in enumerate(records):
        page = record.get("wikipedia_page")
        pool = pools.setdefault(page, [])
        for key in ("gold_evidence", "retrieved_evidence"):
            entries = record.get(key)
            for entry in entries if isinstance(entries, list) else []:
                if isinstance(entry, Mapping) and isinstance(entry.get("text"), str):
                    pool.append(entry["text"])
        by_page.setdefault(page, []).append(index)
    found: list[list[str]] = [[] for _ in records]
    for page, indexes in by_page.items():
        claims = [str(records[i]["text"]) for i in indexes]
        for index, texts in zip(indexes, retrieved_evidence(claims, pools[page], encoder, k=k)):
            found[index] = texts
    return found
