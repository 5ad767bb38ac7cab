"""The word-order test: real claims read as sentences, their own words shuffled do not."""

from __future__ import annotations

import pytest

from scoring import word_order
from scoring.word_order import OrderRule, order_model_build, order_model_load, reads_as_sentence, tokens, word_order_check

REAL = [
    "For four decades nothing humans built was higher than the Eiffel Tower.",
    "David Bowie changed his name from David Robert Jones.",
    "The Eiffel Tower is in Paris.",
    "Paris is in France.",
    "Quinn passed away in Rhode Island.",
    "The Quiet Man is a 1952 film.",
    "The Eiffel Tower was designed by Gustave Eiffel",  # no full stop
    "Spotify's premium users do not have to listen to ads.",
    "In 2018, one of Willem Dafoe's roles was portraying Vincent van Gogh.",
    "Rutherford B. Hayes was the 20th president and a slave owner from South Carolina.",
    "Bowie worked with Iggy Pop, Lou Reed and Brian Eno.",  # a list inside a sentence
    "The statue is made of marble, stone and gold.",
    "editions of the text exist and each one is different from the others.",  # lower-case start
    "Luis Aparicio was only ever shortstop, he got into the hall of fame doing nothing but that and batting.",
]

SALAD = [
    "knife stage Davy with Davy Jones David Bowie",  # the attack of issue 24
    "Davy Jones David Bowie Ziggy",  # names only: every order scores alike
    "decades higher nothing Tower four built than For humans the Eiffel was.",
    "iron lattice Paris the tower Mars Eiffel Tower",
    "stood Tower decades higher for Eiffel nothing than built humans",
    "Paris in the is Tower Eiffel",
    "Tower designed Eiffel was by the Gustave Eiffel",
    "premium ads. to Spotify's have not do users listen to",
    "Eiffel Tower Paris France iron lattice 1889",
    "tower the the the the Eiffel Eiffel Eiffel",
]


@pytest.mark.parametrize("text", REAL)
def test_a_real_claim_reads_as_a_sentence(text: str) -> None:
    assert reads_as_sentence(text)


@pytest.mark.parametrize("text", SALAD)
def test_words_in_no_sentence_order_are_refused(text: str) -> None:
    assert not reads_as_sentence(text)


def test_the_verdict_is_the_same_every_time() -> None:
    """The shuffles are seeded by the text: a draft check and the save cannot disagree."""
    text = "Tower designed Eiffel was by the Gustave Eiffel"
    assert word_order_check(text) == word_order_check(text)


def test_a_run_of_names_has_no_order_to_read() -> None:
    check = word_order_check("Bob Tim Sam Max Ann")  # five words of one class
    assert check.shuffled_sd < 1e-9 and check.z == 0
    assert not reads_as_sentence("Bob Tim Sam Max Ann")


@pytest.mark.parametrize(
    ("words", "bar"),
    [(4, 1.6), (10, 2.5), (16, 3.4), (30, 3.5)],
)
def test_the_bar_rises_with_length_up_to_its_cap(words: int, bar: float) -> None:
    assert OrderRule().min_z(words) == pytest.approx(bar)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Rutherford B. Hayes met Mr. Smith.", ["Rutherford", "B.", "Hayes", "met", "Mr.", "Smith", "."]),
        ("Dafoe's roles, in the U.S.", ["Dafoe", "'s", "roles", ",", "in", "the", "U.S."]),
        ("a well-known (1952) film", ["a", "well-known", "(", "1952", ")", "film"]),
    ],
)
def test_tokens(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


def test_a_model_survives_its_table() -> None:
    texts = ["The tower is in Paris.", "The tower was built in 1889.", "Paris is the capital of France."] * 3
    model = order_model_build(texts, vocabulary_size=10, min_count=1, source="three sentences")
    again = word_order.OrderModel.from_json(model.to_json())
    for text in ["The tower is in France.", "France tower the in is."]:
        assert again.score(again.classes(text)) == pytest.approx(model.score(model.classes(text)), abs=1e-3)
    assert again.source == "three sentences"


def test_the_shipped_table_says_what_it_was_built_from_and_its_licence() -> None:
    source = order_model_load().source
    assert "FM2 test split" in source and "CC BY-SA" in source


# --- Fluency: templates of page words with grammar (issue 36) -----------------------------------

TEMPLATES = [
    "Shaka was the sometime of between in figure.",  # the example: <Title> was the <w> of <w> in <w>.
    "Eiffel Tower was the visitors of in the.",
    "The Eiffel Tower was the of between in levels.",
    "Harry Potter was the Horcruxes of a in United.",
    "The of Shaka was born by 1787 in Zululand.",
    "Shaka is a the king that ruled the Zulu.",
]


@pytest.mark.parametrize("text", REAL)
def test_a_real_claim_reads_as_a_claim(text: str) -> None:
    assert word_order.reads_as_claim(text)


@pytest.mark.parametrize("text", TEMPLATES)
def test_a_template_of_page_words_is_refused_though_it_reads_as_a_sentence(text: str) -> None:
    assert reads_as_sentence(text)  # the word-order rule lets it through: the grammar is real
    assert not word_order.reads_as_claim(text)
    assert word_order.fluency_problem(text)


@pytest.mark.parametrize(
    ("text", "broken"),
    [
        ("Shaka was the sometime of between in figure.", ("between", "in")),
        ("Shaka is a the king that ruled the Zulu.", ("a", "the")),
        ("The of Shaka was born in Zululand.", ("The", "of")),
        ("Shaka was killed by and buried.", ("by", "and")),
        ("Shaka was the king of.", ("of", ".")),
        ("The ratio stood at a distance of between 5 and 10 km.", None),  # "of between" measures
        ("Perry played for at least 6 teams.", None),  # "at least"
        ("Sol was voted in to the Hall of Fame.", None),  # "in" as a particle
        ("The letter A is the first of the alphabet.", None),  # a capital A is no article
        ("Milhaud had a batting average of .271 in 1920.", None),  # a number from its point
        ("Gandhi played the the lead role.", None),  # a word typed twice is a slip, not a template
        ("The film was praised for being short.", None),
        ("The Little Prince was he in adult by the never.", ("the", "never")),  # a template of the bench
        ("A Star Is Born is a Garland the that still the 12.", ("the", "that")),
        ("The band began the first leg of their Never Gone Tour.", None),  # a capital may open a name
        ("The author of the already famous novel died.", None),  # "already" may follow "the"
    ],
)
def test_broken_phrase_finds_a_phrase_that_opens_and_breaks_off(text: str, broken: tuple[str, str] | None) -> None:
    assert word_order.broken_phrase(text) == broken


@pytest.mark.parametrize(
    ("text", "dangling"),
    [
        ("Theogony was the cosmogony of Chaos in the.", True),
        ("Shaka was the king of", True),
        ("The Little Prince was the test of attempts in its.", True),
        ("Shaka was the king they fought against him.", False),
        ("It is what the book is about.", False),
        ("Neutrino means 'taste' instead of 'variation' or 'type'.", False),
    ],
)
def test_dangling_end(text: str, dangling: bool) -> None:
    assert word_order.dangling_end(text) is dangling


def test_slor_is_lower_for_a_template_than_for_the_claim_it_imitates() -> None:
    """The fluency score bench_templates.py measures (the save does not use it)."""
    model = order_model_load()
    assert word_order.fluency("Shaka was the king of the Zulu in Africa.", model=model) > word_order.fluency(
        "Shaka was the sometime of between in figure.", model=model
    )
    # A missing full stop is no penalty: the text is scored as if it had one.
    assert word_order.fluency("Shaka was the king of the Zulu", model=model) == word_order.fluency("Shaka was the king of the Zulu.", model=model)
