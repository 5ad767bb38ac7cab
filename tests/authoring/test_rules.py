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


# --- Real words (issue 12: junk claims earned 100 points each) ---------------------------------


@pytest.mark.parametrize(
    "junk",
    [
        "- - - -",
        "-- -- -- -- -- --",
        "😀 😀 😀 😀",
        "🔥🔥🔥 💯💯💯 🚀🚀🚀 👍👍👍",
        "!!!! ???? .... ,,,,",
        "12 34 56 78",
        "1 2 3 4 5 6 7 8",
        "the the the the",
        "Tower Tower Tower Tower",
        "asdf qwer zxcv uiop",
        "asdf jkl; qwerty zxcvbnm",
        "poiu lkjh mnbv ytre",
        "aaaa bbbb cccc dddd",
        "x y z w v",
        "a b c d e f",
        "xkcd bzzt grr pfft",
        "Eiffel 1 2 3 4 5 6 7",  # one real word among numbers
        "Eiffel Tower ##### ##### ##### ##### #####",
    ],
)
def test_junk_has_no_real_words(junk: str) -> None:
    assert not rules.has_real_words(junk)


@pytest.mark.parametrize(
    "claim",
    [
        "The Eiffel Tower is in Paris.",
        "Attila conquered Constantinople.",
        "Rube Waddell loved dogs.",
        "Brad Pitt was born 12/28/63.",
        "A neutrino is a fermion.",
        "The construction took nine years from 1922 to 1931 and had a cost of US$250,000 ($3,600,000 in 2019).",
        "Émile Zola wrote Germinal in 1885.",
        "Pelé scored over 1,000 goals for Santos.",
        "Москва является столицей России.",  # other alphabets are letters too
        "東京 is the capital of Japan.",
        "The BBC and NFL signed a TV deal.",
        "Straße means street in German.",
    ],
)
def test_real_claims_have_real_words(claim: str) -> None:
    assert rules.has_real_words(claim)


@pytest.mark.parametrize(
    "word, real",
    [("tower", True), ("Éire", True), ("BBC", True), ("bbc", False), ("asdf", False), ("fdsa", False), ("zzz", False), ("x", False), ("42", False), ("Wyn", True)],
)
def test_real_word(word: str, real: bool) -> None:
    assert rules.is_real_word(word) is real


# --- Names something of its page -----------------------------------------------------------------

PAGE = rules.page_words("Eiffel Tower", ["The tower was designed by Gustave Eiffel's company.", "It opened in 1889 in Paris."])


@pytest.mark.parametrize(
    "claim, on_page",
    [
        ("The Eiffel Tower opened in 1889.", True),
        ("A famous landmark stands in PARIS.", True),  # a word of a sentence, folded
        ("Somebody designs bridges for a living.", True),  # "designs" and "designed" share a prefix
        ("Bananas are rich in potassium and grow fast.", False),
        ("The the of and a in it.", False),  # stop words name nothing
    ],
)
def test_names_page(claim: str, on_page: bool) -> None:
    assert rules.names_page(claim, PAGE) is on_page


# --- Duplicates ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "first, second, same",
    [
        ("The Eiffel Tower is in Paris.", "the eiffel tower is in paris", True),
        ("The Eiffel Tower is in Paris.", "  THE Eiffel-Tower, is in Paris!!! ", True),
        ("Pelé scored 1,000 goals.", "Pele scored 1 000 goals", True),
        ("The Eiffel Tower is in Paris.", "The Eiffel Tower is in Lyon.", False),
    ],
)
def test_duplicate_key_ignores_case_accents_punctuation_and_spacing(first: str, second: str, same: bool) -> None:
    assert (rules.duplicate_key(first) == rules.duplicate_key(second)) is same


@pytest.mark.parametrize(
    "first, second",
    [
        ("The Eiffel Tower is in Paris.", "Paris in is Tower Eiffel The"),  # reversed
        ("For four decades nothing humans built was higher than the Eiffel Tower.", "tower eiffel the than higher was built humans nothing decades four for"),
    ],
)
def test_word_order_makes_no_new_claim(first: str, second: str) -> None:
    assert rules.duplicate_key(first) == rules.duplicate_key(second)
    assert rules.similarity(first, second) == 1.0


def test_a_word_more_or_less_is_not_an_exact_duplicate() -> None:
    first = "Hamlet was written by Shakespeare in 1600"
    assert rules.duplicate_key(first) != rules.duplicate_key("Hamlet was not written by Shakespeare in 1600")
    assert rules.duplicate_key(first) != rules.duplicate_key("Hamlet was written by Shakespeare")


# --- Word salad (issue 24: shuffled page words earned 100 points each) ----------------------------


@pytest.mark.parametrize(
    "text, sentence",
    [
        ("For four decades nothing humans built was higher than the Eiffel Tower.", True),
        ("The Eiffel Tower was designed by Gustave Eiffel", True),
        ("Bowie worked with Iggy Pop, Lou Reed and Brian Eno.", True),
        ("editions of the text exist and each one is different from the others.", True),
        ("knife stage Davy with Davy Jones David Bowie", False),
        ("iron lattice Paris the tower Mars Eiffel Tower", False),
        ("stood Tower decades higher for Eiffel nothing than built humans", False),
        ("Eiffel Tower Paris France iron lattice 1889", False),
    ],
)
def test_reads_as_sentence(text: str, sentence: bool) -> None:
    assert rules.reads_as_sentence(text) is sentence


def test_the_settings_default_to_the_benchmarked_rule(settings) -> None:
    from foolgame.authoring.services import _order_rule
    from scoring.word_order import OrderRule

    assert _order_rule() == OrderRule()


@pytest.mark.parametrize(
    ("first", "second", "edits"),
    [
        ("Shaka was the king of the Zulu.", "Shaka was the king of the Zulu.", 0),
        ("Shaka was the king of the Zulu.", "shaka was the KING of the zulu", 0),
        ("Shaka was the king of the Zulu.", "Shaka is the king of the Zulu.", 1),
        ("Shaka was the king of the Zulu.", "Shaka was a king of the Zulu.", 1),
        ("Shaka was the king of the Zulu.", "Shaka was the king of the", 1),
        ("Shaka was the king of the Zulu.", "Shaka was not the king of the Zulu.", 1),
        ("Shaka wasn't the king of the Zulu.", "Shaka was the king of the Zulu.", 1),
        ("Shaka wasn't the king of the Zulu.", "Shaka was not the king of the Zulu.", 0),
        ("Shaka was the king of the Zulu.", "Shaka was the first king of the Zulu people.", 2),
        ("Shaka was the king of the Zulu.", "The Zulu king was Shaka.", 2),
    ],
)
def test_word_edits_count_words_changed_put_in_or_taken_out(first: str, second: str, edits: int) -> None:
    assert rules.word_edits(rules.edit_words(first), rules.edit_words(second)) == edits
    assert rules.one_word_edit(first, [second]) is (edits <= 1)
    assert rules.one_word_edit(second, ["Something else entirely.", first]) is (edits <= 1)
