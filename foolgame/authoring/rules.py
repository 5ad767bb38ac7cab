"""The wording rules of a claim, as pure functions over strings (tested with tables).

Words are compared through ``retrieval.text`` so that "a word of the gold sentence" means
what it means to the retriever the author plays against: folded case and accents, stop
words left out.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from retrieval.text import content_tokens, terms, word_tokens

# Bidirectional overrides and isolates reorder what a reader sees without changing what is
# stored: a claim could display one thing and say another.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")
PRONOUN_OPENERS = frozenset({"he", "she", "it", "they", "this", "his", "her", "its", "their", "these", "those"})
_FIRST_WORD = re.compile(r"[^\W_]+")
_PARENTHESIS = re.compile(r"\([^)]*\)")


def normalise(text: str) -> str:
    """NFC, every run of white space (tabs, newlines, no-break spaces) as one space, trimmed."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def control_characters(text: str) -> list[str]:
    """The control and bidirectional-formatting characters left in ``text``, as ``U+XXXX``."""
    found = {ch for ch in text if unicodedata.category(ch) == "Cc" or ch in _BIDI_CONTROLS}
    return sorted(f"U+{ord(ch):04X}" for ch in found)


def word_count(text: str) -> int:
    return len(text.split())


def _longest_common_subsequence(first: list[str], second: list[str]) -> int:
    previous = [0] * (len(second) + 1)
    for word in first:
        current = [0]
        for index, other in enumerate(second):
            current.append(previous[index] + 1 if word == other else max(previous[index + 1], current[index]))
        previous = current
    return previous[-1]


def copied_share(claim: str, sentence: str) -> float:
    """Share of the claim's content words that appear, in the claim's order, in ``sentence``.

    1.0 for a claim that is the sentence with only stop words changed; a claim that
    reorders or replaces its words scores lower. A claim without content words scores 0.
    """
    claim_words = [token.term for token in content_tokens(claim)]
    if not claim_words:
        return 0.0
    sentence_words = [token.term for token in content_tokens(sentence)]
    return _longest_common_subsequence(claim_words, sentence_words) / len(claim_words)


def copies(claim: str, sentence: str, *, share: float = 0.8) -> bool:
    return copied_share(claim, sentence) >= share


def opens_with_pronoun(claim: str) -> bool:
    """Does the claim start with a word that points back to something unsaid ("He was...")?"""
    first = _FIRST_WORD.search(claim)
    return bool(first) and first.group().casefold() in PRONOUN_OPENERS


def title_words(title: str) -> set[str]:
    """The content words of a page title, without its disambiguation ("Mercury (planet)")."""
    words = {token.term for token in content_tokens(_PARENTHESIS.sub(" ", title))}
    return words or {token.term for token in content_tokens(title)}


def names_title(claim: str, title: str) -> bool:
    """Does the claim name at least one word of the page title? (True for a title of stop words.)"""
    wanted = title_words(title)
    if not wanted:
        return True
    return bool(wanted & {token.term for token in word_tokens(claim)})


def similarity(first: str, second: str) -> float:
    """Jaccard similarity of the two texts' retrieval terms (content words and bigrams)."""
    a, b = set(terms(first)), set(terms(second))
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def closest(claim: str, others: Iterable[str]) -> float:
    return max((similarity(claim, other) for other in others), default=0.0)
