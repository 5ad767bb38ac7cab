"""The terms BM25 sees and the spans an author sees must agree; tables of cases."""

from __future__ import annotations

import pytest

from retrieval.text import fold, highlight, merge_spans, terms


def spans_text(text: str, spans: list[tuple[int, int]]) -> list[str]:
    return [text[start:end] for start, end in spans]


@pytest.mark.parametrize(
    ("query", "text", "expected"),
    [
        # Case-insensitive word match, stop words ignored.
        ("the GANDHI film", "Gandhi premiered in New Delhi.", ["Gandhi"]),
        # A query bigram lights up as one span, stop word included.
        ("the statue of liberty", "The Statue of Liberty stands in New York.", ["Statue of Liberty"]),
        # Words merely next to each other, without the query bigram, stay separate.
        ("statue liberty", "The Statue of Liberty.", ["Statue", "Liberty"]),
        # Every occurrence is highlighted, in text order.
        ("india", "India and india and INDIA.", ["India", "india", "INDIA"]),
        # Accents and case folded on both sides, offsets stay in the original text.
        ("pele", "Pelé scored for Santos.", ["Pelé"]),
        ("Björk", "BJÖRK released Homogenic.", ["BJÖRK"]),
        # Possessives: "Gandhi's" matches "gandhi".
        ("gandhi", "Gandhi's salt march.", ["Gandhi"]),
        # Only stop words in the query: nothing to show.
        ("the of and", "The best of the rest and more.", []),
        ("", "Anything.", []),
        ("anything", "", []),
        # Words inside other words do not match.
        ("art", "Mozart started early.", []),
    ],
)
def test_highlight_marks_the_query_words(query: str, text: str, expected: list[str]) -> None:
    assert spans_text(text, highlight(query, text)) == expected


def test_highlight_spans_are_sorted_and_disjoint() -> None:
    text = "New York City is in New York State, not New Jersey."
    spans = highlight("new york city new york state", text)
    assert spans == sorted(spans)
    assert all(end <= next_start for (_, end), (next_start, _) in zip(spans, spans[1:]))
    assert spans_text(text, spans) == ["New York City", "New York State", "New"]


@pytest.mark.parametrize(
    ("spans", "merged"),
    [
        ([], []),
        ([(5, 8), (0, 3)], [(0, 3), (5, 8)]),
        ([(0, 5), (3, 9)], [(0, 9)]),
        ([(0, 5), (5, 9)], [(0, 9)]),
        ([(0, 10), (2, 4)], [(0, 10)]),
    ],
)
def test_merge_spans(spans: list[tuple[int, int]], merged: list[tuple[int, int]]) -> None:
    assert merge_spans(spans) == merged


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Statue of Liberty", ["statue", "liberty", "the statue", "statue of", "of liberty"]),
        ("of the", []),
        ("Éire", ["eire"]),
        ("", []),
    ],
)
def test_terms_are_unigrams_then_bigrams(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


@pytest.mark.parametrize(("word", "folded"), [("Straße", "strasse"), ("Éire", "eire"), ("ABC", "abc")])
def test_fold(word: str, folded: str) -> None:
    assert fold(word) == folded
