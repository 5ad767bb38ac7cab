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
