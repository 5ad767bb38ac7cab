"""scoring.textscan: what the personal-data expressions find and leave alone, and the word list."""

from __future__ import annotations

import pytest

from scoring.textscan import WORD_LIST, load_word_list, offensive_words, personal_data


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("write to jo.doe+fm2@mail.example.org today", {"email": 1}),
        ("call (555) 123-4567 or 555.123.4567", {"phone": 2}),
        ("555 123 4567", {"phone": 1}),
        ("+1 555-123-4567", {"phone": 1}),
        ("+44 20 7946 0958", {"phone": 1}),
        ("+33 1 23", {}),  # too few digits for a phone number
        ("She lived at 221B Baker Street.", {"street_address": 1}),
        ("1600 Pennsylvania Avenue", {"street_address": 1}),
        ("The war lasted 1939–1945 and 1,234,567 people died.", {}),
        ("ISBN 978-0-19-852663-6", {}),
        ("born 2024-01-05 in Paris", {}),
        ("the 1990 World Cup", {}),
        ("user@localhost has no domain", {}),
    ],
)
def test_personal_data_kinds(text: str, found: dict[str, int]) -> None:
    assert dict(personal_data(text)) == found


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("What a load of bullshit, and more Bullshit!", 2),
        ("Scunthorpe is a town in Lincolnshire.", 0),  # whole words only
        ("The ass is a domestic animal.", 0),  # left off the list
    ],
)
def test_offensive_words_are_whole_listed_words(text: str, matches: int) -> None:
    assert offensive_words(text, load_word_list()) == matches


def test_the_word_list_names_its_source_and_licence() -> None:
    header = WORD_LIST.read_text(encoding="utf-8")
    assert "LDNOOBW" in header and "CC BY 4.0" in header
    assert all(word == word.lower() and " " not in word for word in load_word_list())
