"""Scans of free text for personal data and offensive words, for a release's quality gates.

Plain Python: the dataset app reads the exported files and passes their texts here.

Personal data is looked for with three regular expressions (:data:`PERSONAL_DATA`), each
written to catch the common written forms and to leave alone what Wikipedia sentences are
full of (years, year ranges, populations, ISBNs):

- ``email``: ``local@domain.tld``, a dot-separated domain ending in two or more letters.
- ``phone``: a North American number, ``(555) 123-4567``, ``555-123-4567``, ``555.123.4567``
  or ``555 123 4567``, optionally after ``+1``; or an international one, ``+`` and a
  country code then groups of up to 8 digits (``+44 20 7946 0958``, ``+49 30 1824455``), 8 digits
  or more in all.
- ``street_address``: a house number (1 to 5 digits, an optional letter) and one to three
  capitalised words ending in a street word (Street, St., Avenue, Road, Lane, Drive...).
  A famous address quoted from Wikipedia ("10 Downing Street") counts too: the gate's
  examples point the maintainer at the records to read.

Offensive words are whole words of the text, lowercased, found in a word list
(:func:`load_word_list`, ``scoring/data/offensive_words.txt``, which names its source and
licence).

A claim record is scanned in two parts (:func:`record_findings`): what people wrote in the
game (:data:`WRITTEN_FIELDS`, the claim), which a release's gates count, and what is quoted
from Wikipedia or the game's page lists (:data:`QUOTED_FIELDS`: evidence sentences, page
titles, categories), which nobody playing can change and which is reported, not counted.
Wikipedia quotes institutions' addresses ("The address of Petco Park is 19 Tony Gwynn
Drive") and song titles: on the FM2 dev split every match (6 addresses, 8 listed words) is
in such a quote and none in its 1,169 claims (``bench/bench_gates.py``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = [
    "OFFENSIVE", "PERSONAL_DATA", "QUOTED_FIELDS", "WORD_LIST", "WRITTEN_FIELDS", "load_word_list", "offensive_words",
    "personal_data", "record_findings",
]

WRITTEN_FIELDS = ("text",)
"""A claim record's fields written by people in the game: what the gates count."""
QUOTED_FIELDS = ("gold_evidence", "retrieved_evidence", "wikipedia_page", "category")
"""A claim record's fields quoted from Wikipedia (sentences, titles) or the page lists: reported only."""
OFFENSIVE = "offensive"
"""The key of the word list's matches in :func:`record_findings`' counters."""

_STREET_WORDS = (
    r"Street|St\.|Avenue|Ave\.|Road|Rd\.|Boulevard|Blvd\.|Lane|Ln\.|Drive|Dr\.|Court|Ct\.|"
    r"Place|Pl\.|Terrace|Square|Sq\.|Crescent|Highway|Parkway"
)
PERSONAL_DATA: dict[str, re.Pattern[str]] = {
    "email": re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
    "phone": re.compile(
        r"(?<![\w+])(?:(?:\+1[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}"
        r"|\+\d{1,3}(?:[\s.-]\d{1,8}){1,5})(?!\w)"
    ),
    "street_address": re.compile(rf"\b\d{{1,5}}[A-Za-z]?\s+(?:[A-Z][a-z]+\s+){{1,3}}(?:{_STREET_WORDS})(?!\w)"),
}
"""Each kind of personal data and the expression that finds it (see the module's docstring)."""

_MIN_DIGITS = {"phone": 8}
"""A phone number has at least this many digits (``+33 1 23`` is not one)."""

WORD_LIST = Path(__file__).with_name("data") / "offensive_words.txt"
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def personal_data(text: str) -> Counter[str]:
    """How many matches of each kind of :data:`PERSONAL_DATA` are in ``text``."""
    found: Counter[str] = Counter()
    for kind, pattern in PERSONAL_DATA.items():
        matches = sum(1 for match in pattern.finditer(text) if sum(c.isdigit() for c in match.group()) >= _MIN_DIGITS.get(kind, 0))
        if matches:
            found[kind] = matches
    return found


def load_word_list(path: Path = WORD_LIST) -> frozenset[str]:
    """The words of a list file: one a line, lowercased; blank lines and ``#`` comments skipped."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip().lower() for line in lines if line.strip() and not line.lstrip().startswith("#"))


def offensive_words(text: str, words: Iterable[str] | frozenset[str]) -> int:
    """How many words of ``text`` (whole words, lowercased) are in ``words``."""
    listed = words if isinstance(words, frozenset) else frozenset(words)
    return sum(1 for word in _WORD.findall(text.lower()) if word in listed)


def _texts(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)


def record_findings(record: Mapping[str, object], words: frozenset[str]) -> dict[str, Counter[str]]:
    """``{"written": ..., "quoted": ...}``: per part of a claim record, the matches of each kind
    of :data:`PERSONAL_DATA` and of the word list (under :data:`OFFENSIVE`)."""
    found: dict[str, Counter[str]] = {}
    for part, fields in (("written", WRITTEN_FIELDS), ("quoted", QUOTED_FIELDS)):
        text = "\n".join(t for name in fields for t in _texts(record.get(name)))
        counts = personal_data(text)
        matches = offensive_words(text, words)
        if matches:
            counts[OFFENSIVE] = matches
        found[part] = counts
    return found
