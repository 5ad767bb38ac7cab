"""The writer sees the model's verdict while drafting and after saving (Chromium, keyboard)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from foolgame.authoring.models import WriteTask
from foolgame.pages.models import Page as Article
from foolgame.pages.models import Sentence
from foolgame.verifier import services
from foolgame.verifier.models import WrittenAgainst
from tests.authoring.conftest import GOOD_CLAIM, eiffel_live  # noqa: F401 (a fixture)
from tests.authoring.test_browser_loop import log_in, sign_up_and_take_a_task, start_task
from tests.verifier.conftest import learnable_claims

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_writer_sees_the_verdict_while_drafting_and_after_the_save(live_server, page: Page, eiffel_live: Article) -> None:
    learnable_claims(pages=8)
    version = services.verifier_train_now()
    sign_up_and_take_a_task(page, live_server.url)
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


PHONE = {"width": 390, "height": 844}

READABLE = """node => {
  const box = node.getBoundingClientRect();
  const hit = document.elementFromPoint(box.left + box.width / 2, box.top + Math.min(box.height / 2, 12));
  return {
    left: box.left, right: box.right, font: parseFloat(getComputedStyle(node).fontSize),
    covered: !(hit === node || node.contains(hit)),
    sideways: document.documentElement.scrollWidth > window.innerWidth,
  };
}"""


def assert_readable_on_a_phone(verdict) -> None:
    expect(verdict).to_be_in_viewport()
    seen = verdict.evaluate(READABLE)
    assert 0 <= seen["left"] and seen["right"] <= PHONE["width"] and seen["font"] >= 14, seen
    assert not seen["covered"] and not seen["sideways"], seen  # nothing drawn over it, no sideways scrolling


def test_on_a_phone_the_verdicts_are_readable_and_a_saved_claims_asks_for_no_rewording(live_server, page: Page, eiffel_live: Article) -> None:
    learnable_claims(pages=8)
    services.verifier_train_now()
    page.set_viewport_size(PHONE)
    log_in(page, live_server.url)
    start_task(page, live_server.url, eiffel_live)
    # A FALSE task: the model reads this claim with its gold sentence as false, and sees through it.
    WriteTask.objects.update(veracity=WriteTask.Veracity.FALSE)
    page.reload()
    expect(page.locator("#write")).to_have_attribute("data-ready", "1")

    box = page.get_by_label("Your claim")
    box.focus()
    page.keyboard.type(GOOD_CLAIM)
    checkbox = page.locator(f'input[name="gold"][value="{Sentence.objects.get(page=eiffel_live, position=3).pk}"]')
    checkbox.focus()
    page.keyboard.press("Space")
    box.focus()
    page.keyboard.type(" ")
    verdict = page.locator("#draft-verdict")
    expect(verdict).to_contain_text("sees through it")
    expect(verdict).to_contain_text("Reword it to fool the model.")  # a draft can still be reworded
    assert_readable_on_a_phone(verdict)

    submit = page.get_by_role("button", name="Save the claim")
    submit.focus()
    page.keyboard.press("Enter")
    saved = page.locator("#saved-verdict")
    expect(saved).to_be_visible()
    written = WrittenAgainst.objects.get()
    assert written.label == written.claim.label  # seen through at the save too
    expect(saved).to_contain_text("sees through it")
    expect(saved).not_to_contain_text("Reword")  # a saved claim cannot be: the next one can try
    expect(saved).to_contain_text("next claim")
    assert_readable_on_a_phone(saved)
