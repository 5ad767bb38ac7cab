"""Fixtures for the evidence app: a page about Saturn, and a fresh hint cache per test.

Tests that encode sentences load the real packaged MiniLM (int8 ONNX) once per process,
through the same cached encoder the server uses; they are marked ``slow``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from foolgame.evidence.services import lexical_cache_clear
from foolgame.pages.models import Page, Sentence
from tests.factories import PageFactory, SentenceFactory

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SATURN = [
    ("", "Saturn is the sixth planet from the Sun and the second largest in the Solar System."),
    ("", "It is a gas giant with an average radius about nine times that of Earth."),
    ("Rings", "The planet's most famous feature is its prominent ring system."),
    ("Rings", "The rings are made mostly of ice particles with a smaller amount of rocky debris."),
    ("Moons", "Saturn has 146 moons with confirmed orbits."),
    ("Moons", "Titan, Saturn's largest moon, is larger than the planet Mercury."),
    ("Moons", "Enceladus shows signs of a liquid water ocean beneath its icy crust."),
    ("Exploration", "The Cassini spacecraft orbited the planet from 2004 to 2017."),
    ("Exploration", "Pioneer 11 made the first flyby in 1979."),
    ("Observation", "It is the most distant planet easily visible to the naked eye."),
    ("Observation", "Galileo Galilei first observed the rings through a telescope in 1610."),
    ("Name", "The planet is named after the Roman god of wealth and agriculture."),
    ("Name", "Its astronomical symbol represents the god's sickle."),
    ("Atmosphere", "Wind speeds on the planet can reach 1,800 kilometres per hour."),
]


@pytest.fixture(autouse=True)
def fresh_hint_cache() -> Iterator[None]:
    lexical_cache_clear()
    yield
    lexical_cache_clear()


@pytest.fixture
def saturn(db: None) -> Page:
    page = PageFactory(title="Saturn")
    for position, (header, text) in enumerate(SATURN):
        SentenceFactory(page=page, position=position, section_header=header, text=text)
    return page


def sentence(page: Page, start: str) -> Sentence:
    return page.sentences.get(text__startswith=start)
