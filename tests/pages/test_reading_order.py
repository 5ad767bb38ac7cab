"""A page's sentences as an article reads (``pages.selectors.reading_order``): the lead first,
then each section with its own sentences before its subsections', sections where the page
first has them, sentences by position. A page of the FM2 release stores them in the order the
dataset listed them, which read as a shuffle (Shaka opened with "Scholarship studies | The
Mfecane")."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from foolgame.pages.selectors import reading_order, sections


@dataclass
class S:
    section_header: str
    position: int


@pytest.mark.parametrize(
    ("stored", "read"),
    [
        ([], []),
        # An article imported whole is already in reading order: unchanged.
        ([("", 0), ("Early life", 1), ("Early life", 2), ("Reign", 3), ("Reign | Wars", 4)], [0, 1, 2, 3, 4]),
        # The lead ("Summary" in the FM2 release) first; a subsection seen before its parent's
        # own sentences goes under it.
        ([("Scholarship studies | The Mfecane", 0), ("Reign", 1), ("Summary", 2), ("Scholarship studies", 3)], [2, 3, 0, 1]),
        # Twitter: 2007-2010, 2015-2016, Mobile, then Creation, each History subsection kept together.
        (
            [("History | 2007-2010", 0), ("History | 2015-2016", 1), ("Mobile", 2), ("History | 2007-2010", 3), ("History | Creation", 4), ("Summary", 5)],
            [5, 0, 3, 1, 4, 2],
        ),
    ],
)
def test_reading_order(stored: list[tuple[str, int]], read: list[int]) -> None:
    sentences = [S(header, position) for header, position in stored]
    assert [s.position for s in reading_order(sentences)] == read


def test_sections_group_a_section_once_in_reading_order() -> None:
    stored = [S("History | 2007-2010", 0), S("Mobile", 1), S("History | 2007-2010", 2), S("Summary", 3)]
    assert [(header, [s.position for s in group]) for header, group in sections(stored)] == [
        ("Summary", [3]), ("History | 2007-2010", [0, 2]), ("Mobile", [1])
    ]
