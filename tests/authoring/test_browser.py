"""Writing a claim in a real browser (Debian's Chromium through Playwright), keyboard first."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from foolgame.authoring.models import WriteTask
from foolgame.claims.models import Claim
from foolgame.pages.models import Page as Article
from foolgame.pages.models import Sentence
from tests.authoring.conftest import GOOD_CLAIM, TOO_EASY_CLAIM
from tests.authoring.test_browser_loop import sign_up_and_take_a_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_new_player_writes_a_claim_is_refused_as_too_easy_rewrites_and_earns_100(live_server, page: Page, eiffel_live: Article) -> None:
    page.goto(live_server.url + "/accounts/signup/")
    page.get_by_label("User name").fill("writer")
    page.get_by_label("Password").fill("a long enough passphrase")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("writer")

    page.get_by_role("link", name="Write", exact=True).click()
    page.get_by_label("Category").select_option(label="Geography (1 page)")
    page.get_by_role("button", name="Take the next task").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Eiffel Tower")
    task = WriteTask.objects.get()
    expect(page.locator("#timer")).to_have_text(re.compile(r"^[78]:[0-5][0-9]$"))  # eight minutes, counting down

    # Keyboard only: type the draft, tab to the gold sentence, tick it with the space bar.
    box = page.get_by_label("Your claim")
    box.focus()
    page.keyboard.type(TOO_EASY_CLAIM)
    expect(page.locator("#word-count")).to_have_text("14")
    first_hint = page.locator("#hints li").first
    expect(first_hint).to_contain_text("tallest man-made structure")
    expect(first_hint.locator("mark").first).to_be_visible()
    gold = Sentence.objects.get(page=eiffel_live, position=3)
    checkbox = page.locator(f'input[name="gold"][value="{gold.pk}"]')
    checkbox.focus()
    page.keyboard.press("Space")
    expect(checkbox).to_be_checked()
    expect(page.locator("#gold-count")).to_have_text("1")
    expect(first_hint.locator(".hint-flag")).to_contain_text("too easy")

    submit = page.get_by_role("button", name="Save the claim")
    submit.focus()
    page.keyboard.press("Enter")
    error = page.locator('#gold-errors [data-code="gold_too_easy"]')
    expect(error).to_contain_text("too easy to find")
    assert Claim.objects.count() == 0

    # Rewrite: the gold sentence is no longer the top hint, and the claim saves.
    box.fill("")
    box.focus()
    page.keyboard.type(GOOD_CLAIM)
    expect(page.locator("#hints li").first).not_to_contain_text("tallest man-made structure")
    submit.focus()
    page.keyboard.press("Enter")
    done = page.locator("#write-done")
    expect(done).to_be_visible()
    expect(done).to_be_focused()
    expect(page.locator("#earned-points")).to_have_text("100")
    expect(page.locator("#write-total")).to_have_text("100")
    expect(page.locator("#saved-text")).to_have_text(GOOD_CLAIM)

    claim = Claim.objects.get()
    assert claim.text == GOOD_CLAIM and claim.write_task.pk == task.pk
    page.get_by_role("link", name="See your points").click()
    expect(page.locator('dd[data-kind="write"]')).to_have_text("100")


def test_claim_text_with_markup_is_shown_as_text(live_server, page: Page, eiffel_live: Article) -> None:
    page.goto(live_server.url + "/accounts/signup/")
    page.get_by_label("User name").fill("marker")
    page.get_by_label("Password").fill("a long enough passphrase")
    page.get_by_role("button", name="Sign up").click()
    page.goto(live_server.url + "/write/")
    page.get_by_role("button", name="Take the next task").click()
    text = "The Eiffel Tower <img src=x onerror=alert(1)> was higher than anything humans built for decades"
    page.get_by_label("Your claim").fill(text)
    page.locator('input[name="gold"]').nth(3).check()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.get_by_role("button", name="Save the claim").click()
    expect(page.locator("#saved-text")).to_have_text(text)
    assert page.locator("#saved-text img").count() == 0 and dialogs == []
    page.goto(live_server.url + "/accounts/me/")
    expect(page.get_by_text("<img src=x", exact=False)).to_be_visible()
    assert dialogs == []


def test_save_waits_for_the_page_script(live_server, page: Page, eiffel_live: Article) -> None:
    """Submitted before write.js has put its handler on, the claim form would reload the page
    and lose the draft: Save the claim is disabled in the HTML until the script enables it."""
    page.goto(live_server.url + "/accounts/signup/")
    page.get_by_label("User name").fill("early-writer")
    page.get_by_label("Password").fill("a long enough passphrase")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("early-writer")
    script = re.compile(r".*/fm2/write\.js.*")
    page.route(script, lambda route: route.abort())
    page.get_by_role("link", name="Write", exact=True).click()
    page.get_by_role("button", name="Take the next task").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Eiffel Tower")
    expect(page.get_by_role("button", name="Save the claim")).to_be_disabled()
    page.unroute(script)
    page.reload()
    expect(page.get_by_role("button", name="Save the claim")).to_be_enabled()


def test_the_first_save_does_not_wait_for_the_giveaway_detector_to_train(live_server, page: Page, eiffel_live: Article, settings, monkeypatch) -> None:
    """The first claim saved after an import makes the detector's training due: the page shows
    the claim saved while the training (held here until the test lets it go) still runs on the
    background thread. Before, "Saving..." stayed until the training ended (13-19 s)."""
    import threading

    from foolgame.core import events
    from tests.factories import ClaimFactory, PageFactory

    settings.FM2_JOBS = {**settings.FM2_JOBS, "BACKGROUND_THREAD": True}
    settings.FM2 = {**settings.FM2, "GIVEAWAY_MIN_CLAIMS": 4}
    other = PageFactory(title="Some town")
    for label in ("SUPPORTS", "REFUTES", "SUPPORTS", "REFUTES"):
        ClaimFactory(page=other, label=label)
    release, finished = threading.Event(), threading.Event()

    def held_training(*, force: bool = False) -> None:
        release.wait(60)
        finished.set()

    monkeypatch.setattr("foolgame.authoring.tasks.giveaway_train_now", held_training)
    try:
        sign_up_and_take_a_task(page, live_server.url)
        page.get_by_label("Your claim").fill(GOOD_CLAIM)
        gold = Sentence.objects.get(page=eiffel_live, position=3)
        page.locator(f'input[name="gold"][value="{gold.pk}"]').check()
        page.get_by_role("button", name="Save the claim").click()
        expect(page.locator("#write-done")).to_be_visible(timeout=15_000)
        assert not finished.is_set(), "the save came back while the detector was still training"
    finally:
        release.set()
        events.background_idle(timeout=60)
    assert finished.is_set()
