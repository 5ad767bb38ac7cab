"""Hints and clue lists, the two ways the game uses retrieval."""

from __future__ import annotations

from retrieval.base import Doc, Hit
from retrieval.game import clue_ids_for_claim, hints_for_draft
from retrieval.lexical import LexicalRetriever


class FixedRetriever:
    def __init__(self, ranked: list[int]) -> None:
        self.ranked = ranked

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return [Hit(doc_id, 1.0 / (rank + 1)) for rank, doc_id in enumerate(self.ranked[:k])]


def test_clue_list_is_retrieved_without_gold_then_gold_last() -> None:
    retriever = FixedRetriever([5, 1, 7, 2, 9, 3])
    assert clue_ids_for_claim("claim", retriever, gold_ids=[7, 3], k=3) == [5, 1, 2, 7, 3]


def test_clue_list_keeps_k_non_gold_clues_even_when_gold_ranks_first() -> None:
    retriever = FixedRetriever(list(range(20)))
    clues = clue_ids_for_claim("claim", retriever, gold_ids=[0, 1], k=10)
    assert clues == [*range(2, 12), 0, 1]


def test_clue_list_of_a_small_page_holds_what_there_is() -> None:
    assert clue_ids_for_claim("claim", FixedRetriever([4, 8]), gold_ids=[8], k=10) == [4, 8]


def test_hints_carry_the_sentence_and_its_highlights() -> None:
    docs = [
        Doc(1, "The Statue of Liberty was a gift from France.", "History", "Statue of Liberty"),
        Doc(2, "It stands on Liberty Island in New York Harbor.", "Location", "Statue of Liberty"),
    ]
    hints = hints_for_draft("a gift from France", LexicalRetriever(docs), {d.id: d for d in docs})
    assert hints[0].doc.id == 1
    text = hints[0].doc.text
    assert [text[s:e] for s, e in hints[0].highlights] == ["gift from France"]


class _WordEncoder:
    """A word-count encoder over a tiny vocabulary: enough for the dense half to agree with BM25."""

    model_name = "words"
    dimension = 8
    vocabulary = ("tower", "iron", "paris", "river", "bridge", "london", "opera", "vienna")

    def encode(self, texts, *, show_progress=False):
        import numpy as np

        out = np.array([[text.lower().count(word) for word in self.vocabulary] for text in texts], dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


def test_retrieved_evidence_reads_the_pages_best_sentences_gold_or_not() -> None:
    from retrieval.game import retrieved_evidence

    pool = ["The iron tower stands in Paris.", "A stone bridge crosses the river in London.", "The opera house is in Vienna.", "The iron tower stands in Paris."]
    found = retrieved_evidence(["Which bridge crosses the London river?", "The Vienna opera"], pool, _WordEncoder(), k=2)
    assert found[0][0] == pool[1] and found[1][0] == pool[2]
    assert all(len(texts) == 2 and len(set(texts)) == 2 for texts in found)  # a repeated sentence counts once
    assert retrieved_evidence(["anything"], [], _WordEncoder()) == [[]]
