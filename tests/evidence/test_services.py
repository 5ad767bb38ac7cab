"""Hints, the top lexical hit and clue lists, over real pages (foolgame/evidence/services.py)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command

from foolgame.core.errors import ServiceError
from foolgame.evidence import services
from foolgame.evidence.services import claim_clue_list, page_hints, page_top_lexical_hit
from foolgame.pages.models import Page
from tests.evidence.conftest import SATURN, sentence
from tests.factories import PageFactory, SentenceFactory

pytestmark = pytest.mark.django_db


def test_hint_for_a_draft_ranks_the_sentence_with_its_words_first_and_highlights_them(saturn: Page) -> None:
    hints = page_hints(page=saturn, query="Cassini orbited Saturn until 2017")
    top = hints[0]
    assert top["sentence_id"] == sentence(saturn, "The Cassini").pk
    assert top["section_header"] == "Exploration"
    marked = [top["text"][start:end] for start, end in top["highlights"]]
    assert marked == ["Cassini", "orbited", "2017"]


def test_hints_have_the_api_shape_and_at_most_k_entries(saturn: Page) -> None:
    hints = page_hints(page=saturn, query="the planet Saturn", k=3)
    assert len(hints) == 3
    for hint in hints:
        assert set(hint) == {"sentence_id", "text", "section_header", "highlights"}
        assert all(isinstance(span, list) and len(span) == 2 for span in hint["highlights"])
    assert any(hint["highlights"] for hint in hints), "the shape of a highlight was never seen"


def test_hints_only_show_sentences_sharing_a_word_with_the_draft(saturn: Page) -> None:
    ids = {hint["sentence_id"] for hint in page_hints(page=saturn, query="ocean")}
    assert ids == {sentence(saturn, "Enceladus").pk}


def test_section_header_counts_as_context_but_is_not_highlighted(saturn: Page) -> None:
    hints = page_hints(page=saturn, query="moons")
    assert {hint["section_header"] for hint in hints} == {"Moons"}
    assert len(hints) == 3
    assert hints[0]["sentence_id"] == sentence(saturn, "Saturn has 146").pk
    assert [hint["highlights"] for hint in hints[1:]] == [[], []]


@pytest.mark.parametrize("draft", ["", "   ", "the of and", "!!!"])
def test_blank_or_stop_word_draft_has_no_hints(saturn: Page, draft: str) -> None:
    assert page_hints(page=saturn, query=draft) == []
    assert page_top_lexical_hit(page=saturn, query=draft) is None


def test_draft_over_2000_characters_is_refused(saturn: Page) -> None:
    with pytest.raises(ServiceError) as refused:
        page_hints(page=saturn, query="ring " * 401)
    assert refused.value.code == "invalid_query"
    assert page_hints(page=saturn, query="x" * 2000) == []


def test_retired_sentences_are_never_hints(saturn: Page) -> None:
    SentenceFactory(page=saturn, position=99, text="Saturn's hexagon is a cloud pattern.", retired=True)
    assert page_hints(page=saturn, query="hexagon cloud pattern") == []


def test_page_with_no_sentences_has_no_hints(db: None) -> None:
    page = PageFactory(title="Empty page")
    assert page_hints(page=page, query="anything at all") == []


def test_top_lexical_hit_is_the_first_hint(saturn: Page) -> None:
    draft = "Titan is bigger than Mercury"
    assert page_top_lexical_hit(page=saturn, query=draft) == sentence(saturn, "Titan").pk
    assert page_top_lexical_hit(page=saturn, query=draft) == page_hints(page=saturn, query=draft)[0]["sentence_id"]
    assert page_top_lexical_hit(page=saturn, query="zeppelin") is None


def test_hints_reuse_the_page_index_until_the_page_changes(saturn: Page, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    real = services.LexicalRetriever

    def counting(docs, **kwargs):
        built.append(len(docs))
        return real(docs, **kwargs)

    monkeypatch.setattr(services, "LexicalRetriever", counting)
    for draft in ["rings of ice", "Titan moon", "Cassini"]:
        page_hints(page=saturn, query=draft)
    assert built == [len(SATURN)]

    added = SentenceFactory(page=saturn, position=50, text="A hexagonal jet stream circles the north pole.")
    assert page_hints(page=saturn, query="hexagonal jet stream")[0]["sentence_id"] == added.pk
    added.retired = True
    added.save()
    assert page_hints(page=saturn, query="hexagonal jet stream") == []
    assert built == [len(SATURN), len(SATURN) + 1, len(SATURN)]


def test_hints_over_a_demo_page_find_each_sentence_by_its_own_words(db: None) -> None:
    call_command("import_fm2", str(settings.FM2_DEMO_FIXTURE), split="dev", no_progress=True, stdout=StringIO(), stderr=StringIO())
    page = max(Page.objects.all(), key=lambda p: p.sentences.count())
    sentences = list(page.sentences.filter(retired=False).order_by("position"))
    assert len(sentences) > 30
    found_first = 0
    for target in sentences:
        hints = page_hints(page=page, query=target.text)
        found_first += hints[0]["sentence_id"] == target.pk
        assert target.pk in [hint["sentence_id"] for hint in hints]
    # A sentence is its own best match, except where a near-duplicate sentence ties it.
    assert found_first >= 0.95 * len(sentences)


# --- Clue lists: the hybrid retriever loads the real model --------------------------------------


@pytest.mark.slow
def test_clue_list_keeps_gold_out_of_the_top_and_puts_it_last_in_the_given_order(saturn: Page) -> None:
    gold = [sentence(saturn, "Titan").pk, sentence(saturn, "Saturn has 146").pk]
    clues = claim_clue_list(page=saturn, claim_text="Saturn's biggest moon is smaller than Mercury.", gold_ids=gold, k=10)
    assert len(clues) == 12
    assert [clue["sentence_id"] for clue in clues[-2:]] == gold
    assert not {clue["sentence_id"] for clue in clues[:10]} & set(gold)
    assert len({clue["sentence_id"] for clue in clues}) == 12
    for clue in clues:
        assert set(clue) == {"sentence_id", "text", "section_header"}
        assert clue["text"] == saturn.sentences.get(pk=clue["sentence_id"]).text


@pytest.mark.slow
def test_clue_list_ranks_a_sentence_about_the_claim_first_even_without_shared_words(saturn: Page) -> None:
    gold = [sentence(saturn, "Saturn is the sixth").pk]
    clues = claim_clue_list(
        page=saturn, claim_text="Storms on this world blow faster than a jet airliner.", gold_ids=gold, k=3
    )
    assert clues[0]["sentence_id"] == sentence(saturn, "Wind speeds").pk
    assert [clue["sentence_id"] for clue in clues][-1] == gold[0]
    assert len(clues) == 4


@pytest.mark.slow
def test_clue_list_of_a_small_page_is_every_other_sentence_then_gold(db: None) -> None:
    page = PageFactory(title="Tiny")
    first = SentenceFactory(page=page, position=0, text="Tiny is a small village.")
    second = SentenceFactory(page=page, position=1, text="It has a church.")
    clues = claim_clue_list(page=page, claim_text="Tiny has a church.", gold_ids=[second.pk])
    assert [clue["sentence_id"] for clue in clues] == [first.pk, second.pk]


@pytest.mark.slow
def test_clue_list_may_cite_a_retired_gold_sentence(saturn: Page) -> None:
    retired = SentenceFactory(page=saturn, position=99, text="Saturn once had 82 known moons.", retired=True)
    clues = claim_clue_list(page=saturn, claim_text="Saturn has over 80 moons.", gold_ids=[retired.pk], k=5)
    assert clues[-1]["sentence_id"] == retired.pk
    assert len(clues) == 6


def test_clue_list_refuses_gold_from_another_page(saturn: Page) -> None:
    elsewhere = SentenceFactory(text="Jupiter is the largest planet.")
    with pytest.raises(ServiceError) as refused:
        claim_clue_list(page=saturn, claim_text="Saturn is the largest planet.", gold_ids=[elsewhere.pk])
    assert refused.value.code == "invalid_gold"
