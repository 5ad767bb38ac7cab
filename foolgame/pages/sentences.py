"""Splitting article text into sentences, for the KILT and plain-text imports.

A regular-expression splitter with an abbreviation list: good enough for encyclopaedic
prose, dependency-free, and deterministic (a re-import splits the same way).
"""

from __future__ import annotations

import re

_ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "gen", "col", "lt", "sgt",
    "capt", "cmdr", "adm", "gov", "sen", "rep", "rev", "hon", "pres", "vs", "etc", "no", "nos",
    "vol", "vols", "pp", "ed", "eds", "inc", "ltd", "co", "corp", "bros", "dept", "univ", "est",
    "approx", "fig", "ca", "cf", "al", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec", "e.g", "i.e", "u.s", "u.k", "a.d", "b.c", "a.m", "p.m",
}

# A candidate boundary: sentence-final punctuation, optional closing quotes or brackets,
# white space, then something that can open a sentence.
_BOUNDARY = re.compile(r"([.!?])([\"'”’)\]]*)\s+(?=[\"'“‘(\[]?[A-Z0-9À-ÖØ-Þ])")
_WORD_BEFORE = re.compile(r"([\w.]+)$")


def split_sentences(paragraph: str) -> list[str]:
    """Split one paragraph into sentences, keeping abbreviations and initials intact."""
    text = " ".join(paragraph.split())
    if not text:
        return []
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if match.group(1) == ".":
            before = _WORD_BEFORE.search(text, 0, match.start(1))
            word = before.group(1).lower() if before else ""
            # "J. K. Rowling", "U.S. Army", "Dr. Who": a single letter or a known
            # abbreviation before the full stop does not end a sentence.
            if len(word.replace(".", "")) == 1 or word.rstrip(".") in _ABBREVIATIONS:
                continue
        end = match.end(2)
        sentence = text[start:end].strip()
        if sentence:
            sentences.append(sentence)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences
