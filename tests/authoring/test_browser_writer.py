"""The writing page never stalls or misleads the writer (Chromium, keyboard first): a refused
save's errors go once the draft changes."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from foolgame.claims.models import Claim
from foolgame.pages.models import Page as Article
from foolgame.pages.models import Sentence
from tests.authoring.conftest import GOOD_CLAIM, TOO_EASY_CLAIM
from tests.authoring.test_browser_loop import log_in, start_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def gold_box(page: Page, sentence: Sentence):
    return page.locator(f'input[name="gold"][value="{sentence.pk}"]')


# --- a refused save's errors ---------------------------------------------------------------


def test_a_refused_saves_errors_go_once_the_draft_changes(live_server, page: Page, eiffel_live: Article) -> None:
    log_in(page, live_server.url)
    start_task(page, live_server.url, eiffel_live)
    box = page.get_by_label("Your claim")
    submit = page.get_by_role("button", name="Save the claim")
    box.fill(TOO_EASY_CLAIM)
    gold_box(page, Sentence.objects.get(page=eiffel_live, position=3)).check()
    submit.click()
    too_easy = page.locator('#gold-errors [data-code="gold_too_easy"]')
    expect(too_easy).to_be_visible(timeout=30_000)  # the first save in a process loads the encoder
    expect(too_easy).to_be_in_viewport()  # beside the ticked sentence's summary, not scrolled away

    # Reworded: the live check is clean, and the refusal about the old wording is gone.
    box.fill(GOOD_CLAIM)
    expect(too_easy).to_have_count(0)
    expect(page.locator("#draft-problems li")).to_have_count(0)

    # A text the save refuses, then only the gold changes: the save's message about the text
    # goes too, and the live check says what is still wrong.
    box.fill("asdf qwer zxcv uiop hjkl")
    submit.click()
    expect(page.locator('#text-errors [data-code="text_no_words"]')).to_be_visible()
    gold_box(page, Sentence.objects.get(page=eiffel_live, position=2)).check()
    expect(page.locator("#text-errors .field-error, #gold-errors .field-error, #form-errors .field-error")).to_have_count(0)
    expect(page.locator('#draft-problems [data-code="text_no_words"]')).to_be_visible()
    assert Claim.objects.count() == 0
