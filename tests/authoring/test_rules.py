"""The wording rules of a claim, as tables of input and expected output."""

from __future__ import annotations

import pytest

from foolgame.authoring import rules


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("  The   tower\tis\ntall. ", "The tower is tall."),
        ("Pel\u0065\u0301 scored", "Pel\u00e9 scored"),  # NFC
        ("no\u00a0break space", "no break space"),
        ("", ""),
    ],
)
def test_normalise_collapses_white_space_and_composes(raw: str, expected: str) -> None:
    assert rules.normalise(raw) == expected


@pytest.mark.parametrize(
    "text, found",
    [
        ("An ordinary claim.", []),
        ("bell\x07 rings", ["U+0007"]),
        ("nul\x00", ["U+0000"]),
        ("looks \u202eesrever", ["U+202E"]),
        ("Émile Zola wrote «Germinal» — 1885", []),
    ],
)
def test_control_characters_are_found(text: str, found: list[str]) -> None:
    assert rules.control_characters(text) == found


@pytest.mark.parametrize(
    "claim, sentence, copies",
    [
        # one word moved, one dropped: 4 of 5 content words still in order, a copy
        ("Gustave Eiffel's company designed and built it", "The company of the engineer Gustave Eiffel designed and built it.", True),
        ("The company of engineer Gustave Eiffel designed and built it", "The company of the engineer Gustave Eiffel designed and built it from 1887 to 1889.", True),
        ("the tower is 330 metres tall", "The tower is 330 metres tall, about the same height as an 81-storey building.", True),
        # same words, different order: not a copy
        ("Tall metres 330: the tower", "The tower is 330 metres tall.", False),
        # 3 of 4 content words in order (75%): not a copy; 4 of 5 (80%): a copy
        ("The tower is 330 metres wide", "The tower is 330 metres tall.", False),
        ("The big tower is 330 metres tall", "The tower is 330 metres tall.", True),
        ("Nothing at all like it", "The tower is 330 metres tall.", False),
    ],
)
def test_copies_means_most_content_words_in_order(claim: str, sentence: str, copies: bool) -> None:
    assert rules.copies(claim, sentence) is copies


@pytest.mark.parametrize(
    "claim, opens",
    [("He built it.", True), ("  \"They said so", True), ("This tower is tall", True), ("Its height is 330 m", True),
     ("Hector built it", False), ("Thistle grows here", False), ("The tower", False)],
)
def test_opens_with_pronoun(claim: str, opens: bool) -> None:
    assert rules.opens_with_pronoun(claim) is opens


@pytest.mark.parametrize(
    "claim, title, names",
    [
        ("The Eiffel tower is in Rome", "Eiffel Tower", True),
        ("The statue is 30 m tall", "Christ the Redeemer (statue)", False),
        ("Christ the Redeemer is 30 m tall", "Christ the Redeemer (statue)", True),
        ("A claim about pele", "Pelé", True),
        ("Anything", "The The", True),  # a title of stop words asks for nothing
    ],
)
def test_names_title(claim: str, title: str, names: bool) -> None:
    assert rules.names_title(claim, title) is names


def test_similarity_is_high_for_a_one_word_change_and_low_for_another_claim() -> None:
    one_word = rules.similarity("Hamlet was written by Shakespeare in 1600", "Hamlet was written by Shakespeare in 1601")
    other = rules.similarity("Hamlet was written by Shakespeare in 1600", "The play is set in Denmark")
    assert one_word >= 0.6 > other
