"""The wording rules of a claim, as pure functions over strings (tested with tables).

Words are compared through ``retrieval.text`` so that "a word of the gold sentence" means
what it means to the retriever the author plays against: folded case and accents, stop
words left out.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from retrieval.text import BIGRAM_JOINER, content_tokens, fold as fold_word, terms, word_tokens
from scoring import word_order
from scoring.word_order import OrderRule

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


def _unordered_terms(text: str) -> set[str]:
    """The retrieval terms with each bigram's two words in sorted order: the same set for a text
    and for its words reversed, while "not born" still differs from "born" (negation counts)."""
    found = set()
    for term in terms(text):
        words = term.split(BIGRAM_JOINER)
        found.add(BIGRAM_JOINER.join(sorted(words)) if len(words) == 2 else term)
    return found


def similarity(first: str, second: str) -> float:
    """Jaccard similarity of the two texts' retrieval terms (content words and the pairs of
    neighbouring words, each pair taken in either order): word order does not make two texts
    different (an active claim with its words reversed passed as new)."""
    a, b = _unordered_terms(first), _unordered_terms(second)
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def closest(claim: str, others: Iterable[str]) -> float:
    return max((similarity(claim, other) for other in others), default=0.0)


# --- Real words and the page (blocking rules) -------------------------------------------------

_VOWELS = frozenset("aeiouy")
# Runs of three or more neighbouring keys on a QWERTY row ("asdf", "qwer", "zxcv", "uiop"),
# either way: no English word is one, every lazy keyboard mash is made of them.
_KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _keyboard_run(word: str) -> bool:
    return len(word) >= 3 and any(word in row or word in row[::-1] for row in _KEY_ROWS)


def is_real_word(word: str) -> bool:
    """A word a reader could read: 2+ letters (any alphabet, accents folded), a vowel unless
    it is an acronym ("BBC"), not one letter repeated ("zzz") and not a run of keyboard keys."""
    term = fold_word(word)
    if len(term) < 2 or not term.isalpha():
        return False
    if len(set(term)) == 1 and len(term) > 2:
        return False
    if _keyboard_run(term):
        return False
    latin = all("a" <= ch <= "z" for ch in term)
    return not latin or bool(_VOWELS & set(term)) or (word.isupper() and len(word) <= 6)


@dataclass(frozen=True, slots=True)
class WordsCheck:
    distinct_real: int  # distinct real words (folded)
    real_share: float  # real words among all words (digits and mash count as words)
    letter_share: float  # letters among the non-space characters


def real_words(text: str) -> WordsCheck:
    """The figures the real-words rule looks at (see :func:`has_real_words`)."""
    words = [match.group() for match in _FIRST_WORD.finditer(text)]
    real = [fold_word(word) for word in words if is_real_word(word)]
    visible = [ch for ch in text if not ch.isspace()]
    letters = sum(ch.isalpha() for ch in visible)
    return WordsCheck(
        distinct_real=len(set(real)),
        real_share=len(real) / len(words) if words else 0.0,
        letter_share=letters / len(visible) if visible else 0.0,
    )


def has_real_words(text: str, *, min_words: int = 3, min_real_share: float = 0.5, min_letter_share: float = 0.5) -> bool:
    """Is ``text`` made of words? At least ``min_words`` distinct real words, real words making
    at least ``min_real_share`` of its words and letters at least ``min_letter_share`` of its
    non-space characters. Emoji, punctuation runs, numbers, ``the the the`` and keyboard mash
    fail."""
    found = real_words(text)
    return found.distinct_real >= min_words and found.real_share >= min_real_share and found.letter_share >= min_letter_share


def _stem(term: str, prefix: int) -> str:
    return term[:prefix] if prefix > 0 else term


def page_words(title: str, sentences: Iterable[str], *, prefix: int = 5) -> set[str]:
    """The content words (folded, stop words out) of a page's title and sentences, cut to
    their first ``prefix`` letters so that "formulas" on the page counts for "formula" and
    "described" for "describe" (0 keeps whole words)."""
    found = {_stem(token.term, prefix) for token in content_tokens(title)}
    for sentence in sentences:
        found.update(_stem(token.term, prefix) for token in content_tokens(sentence))
    return found


def names_page(claim: str, words_of_page: set[str], *, prefix: int = 5) -> bool:
    """Does the claim share at least one content word with its page (title or sentences)?

    ``words_of_page`` comes from :func:`page_words` with the same ``prefix``.
    """
    return any(_stem(token.term, prefix) in words_of_page for token in content_tokens(claim))


def duplicate_key(text: str) -> str:
    """The text's folded words, sorted: equal for two texts that differ in case, accents,
    punctuation, spacing or the order of their words alone."""
    return " ".join(sorted(token.term for token in word_tokens(text)))


def edit_words(text: str) -> list[str]:
    """The text's folded words as a reader counts them for an edit: every word, stop words
    included, punctuation out, and a contraction as its two words ("wasn't" is "was not"), so
    that putting "not" in and writing "n't" are the same one-word edit."""
    words: list[str] = []
    for token in word_tokens(text):
        if token.term == "t" and words and words[-1].endswith("n") and len(words[-1]) > 2:
            words[-1] = words[-1][:-1]
            words.append("not")
        else:
            words.append(token.term)
    return words


def word_edits(first: Sequence[str], second: Sequence[str], *, limit: int = 2) -> int:
    """The fewest words put in, taken out or replaced to turn ``first`` into ``second``
    (Levenshtein over words), counted up to ``limit``: any larger distance returns ``limit``."""
    if abs(len(first) - len(second)) >= limit:
        return limit
    previous = list(range(len(second) + 1))
    for i, word in enumerate(first, start=1):
        current = [i]
        for j, other in enumerate(second, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (word != other)))
        if min(current) >= limit:
            return limit
        previous = current
    return min(previous[-1], limit)


def one_word_edit(text: str, others: Iterable[str]) -> bool:
    """Is ``text`` one of ``others`` with at most one word changed, put in or taken out
    ("was" for "is", "the" for "a", "not" added, the last word dropped)? Such an edit can flip
    a claim's meaning ("was" to "is") while its words stay nearly all the same: it is a copy."""
    words = edit_words(text)
    return any(word_edits(words, edit_words(other)) <= 1 for other in others)


# --- Word order (word salad from a page earned 100 points a claim) --------------------


def reads_as_sentence(text: str, *, rule: OrderRule | None = None) -> bool:
    """Does the claim read as a sentence rather than as its own words in any order?

    The test is :func:`scoring.word_order.reads_as_sentence`: the claim against shuffles of
    its own words under a small English word-order model shipped with the package.
    """
    return word_order.reads_as_sentence(text, rule=rule)


def fluency_problem(text: str) -> str | None:
    """Why the claim does not read as a claim (a template of page words with grammar), or None.

    The test is :func:`scoring.word_order.fluency_problem`: no ending on "the" or "of", and no
    phrase that a determiner or a preposition opens and the next word breaks off ("of between in").
    """
    return word_order.fluency_problem(text)
