"""Reads of the corpus."""

from __future__ import annotations

from typing import Any, NamedTuple, TypeVar

from django.db.models import QuerySet

from foolgame.core.queries import prepared_rows
from foolgame.pages.importing import SECTION_SEPARATOR
from foolgame.pages.models import Page, Sentence


# A page needs at least this many live sentences to be written about (a gold sentence and
# something else for the retriever to find).
WRITABLE_MIN_SENTENCES = 2


def page_sentences(*, page: Page) -> QuerySet[Sentence]:
    """A page's sentences in article order, without the ones a re-import retired."""
    return page.sentences.filter(retired=False).order_by("position", "id")


class SentenceRow(NamedTuple):
    """What a reader of a page is shown of a sentence."""

    id: int
    text: str
    section_header: str
    position: int


def page_sentence_rows(*, page_id: int) -> list[SentenceRow]:
    """``page_sentences`` as rows, with SQL built once (``prepared_rows``): the page detail
    (``/api/pages/<id>``) reads hundreds of them, and building a model instance each was most
    of its CPU."""
    rows = prepared_rows(
        "page_sentence_rows",
        lambda page_id: Sentence.objects.filter(page_id=page_id, retired=False).order_by("position", "id").values_list(*SentenceRow._fields),
        page_id=page_id,
    )
    return [SentenceRow(*row) for row in rows]


LEAD_HEADERS = ("", "Summary", "Introduction")
"""Section headers that stand for an article's lead, read first (the FM2 release calls it
"Summary")."""


Placed = TypeVar("Placed", Sentence, SentenceRow)


def reading_order(sentences: list[Placed]) -> list[Placed]:
    """A page's sentences grouped by section as an article reads: the lead first, then each
    top-level section (``Plot``) with its own sentences before its subsections' (``Plot |
    Early life``), sections in the order the page first has them, sentences by position.

    A page imported whole (KILT, a text file) is already in this order: its sections are
    contiguous. A page of the FM2 release holds only the evidence seen so far, stored in the
    order the dataset listed it (a subsection, then another section, then the lead): grouped
    so, it opens with its lead and keeps each section together under its parent."""
    first: dict[tuple[str, ...], int] = {}
    for index, sentence in enumerate(sentences):
        path = tuple(part.strip() for part in sentence.section_header.split(SECTION_SEPARATOR)) if sentence.section_header else ()
        for depth in range(len(path) + 1):
            first.setdefault(path[:depth], index)  # a parent section stands where its first sentence, or a child's, stands

    def key(item: tuple[int, Placed]) -> tuple[Any, ...]:
        index, sentence = item
        path = tuple(part.strip() for part in sentence.section_header.split(SECTION_SEPARATOR)) if sentence.section_header else ()
        lead = 0 if not path or (len(path) == 1 and path[0] in LEAD_HEADERS) else 1
        # Each level: the section's first place among its siblings; a section's own sentences
        # (-1) come before its subsections'.
        levels = tuple(first[path[: depth + 1]] for depth in range(len(path))) if lead else ()
        return (lead, *[x for level in levels for x in (0, level)], -1, sentence.position, index)

    return [sentence for _, sentence in sorted(enumerate(sentences), key=key)]


def sections(sentences: list[Sentence]) -> list[tuple[str, list[Sentence]]]:
    """Group the sentences by section header, in reading order (``reading_order``)."""
    order: list[str] = []
    grouped: dict[str, list[Sentence]] = {}
    for sentence in reading_order(sentences):
        if sentence.section_header not in grouped:
            order.append(sentence.section_header)
            grouped[sentence.section_header] = []
        grouped[sentence.section_header].append(sentence)
    return [(header, grouped[header]) for header in order]
