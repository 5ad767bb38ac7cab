"""The writer sees the model's verdict while drafting and after saving (Chromium, keyboard)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from foolgame.pages.models import Page as Article
from foolgame.pages.models import Sentence
from foolgame.verifier import services
from foolgame.verifier.models import WrittenAgainst
from tests.authoring.conftest import GOOD_CLAIM, eiffel_live  # noqa: F401 (a fixture)
from tests.verifier.conftest import learnable_claims

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_writer_sees_the_verdict_while_drafting_and_after_the_save(live_server, page: Page, eiffel_live: Article) -> None:
    learnable_claims(pages=8)
    version = services.verifier_train_now()
    page.goto(live_server.url + "/accounts/signup/")
    page.get_by_label("User name").fill("writer")
    page.get_by_label("Password").fill("a long enough passphrase")
    page.get_by_role("button", name="Sign up").click()
    page.goto(live_server.url + "/write/")
    page.get_by_label("Category").select_option(label="Geography (1 page)")
    page.get_by_role("button", name="Take the next task").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Eiffel Tower")

    box = page.get_by_label("Your claim")
    box.focus()
    page.keyboard.type(GOOD_CLAIM)
    verdict = page.locator("#draft-verdict")
    expect(verdict).to_be_hidden()  # no gold sentence ticked: nothing for the model to read yet
    gold = Sentence.objects.get(page=eiffel_live, position=3)
    checkbox = page.locator(f'input[name="gold"][value="{gold.pk}"]')
    checkbox.focus()
    page.keyboard.press("Space")
    box.focus()
    page.keyboard.type(" ")  # a pause in typing asks for the check
    expect(verdict).to_be_visible()
    expect(verdict).to_contain_text(f"version {version.number}")

    submit = page.get_by_role("button", name="Save the claim")
    submit.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#write-done")).to_be_visible()
    saved = page.locator("#saved-verdict")
    expect(saved).to_be_visible()
    written = WrittenAgainst.objects.get()
    expect(saved).to_contain_text("fool the model" if written.label != written.claim.label else "sees through it")
