"""The writing page never stalls or misleads the writer (Chromium, keyboard first): a refused
save's errors go once the draft changes, a phone reaches the sentences to tick without
scrolling past the hints, the clock covers no text, and a used or expired task shows no clock."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from foolgame.authoring.models import WriteTask
from foolgame.claims.models import Claim
from foolgame.pages.models import Page as Article
from foolgame.pages.models import Sentence
from tests.authoring.conftest import GOOD_CLAIM, TOO_EASY_CLAIM
from tests.authoring.test_browser_loop import log_in, start_task
from tests.factories import CategoryFactory, PageFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 768}
VIEWPORTS = pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])

# Every sentence of the harbour page shares words with the draft: ten long hints come back.
HARBOUR_DRAFT = "The old harbour welcomed ships carrying grain and timber from the northern sea."


def harbour_page(sentences: int = 40) -> Article:
    article = PageFactory(title="Old Harbour", category=CategoryFactory(name="History", slug="history"))
    for position in range(sentences):
        Sentence.objects.create(
            page=article,
            position=position,
            section_header=f"Part {position // 8}",
            text=(
                f"In {1800 + position} the old harbour of the town welcomed {position + 3} ships with grain, timber, "
                "wine and salt from ports across the northern sea, and the harbour master wrote each one down."
            ),
        )
    return article


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


# --- a phone's layout ---------------------------------------------------------------------


def first_gold_top(page: Page) -> float:
    """How far down the document the first sentence to tick starts, in CSS pixels."""
    return page.evaluate("document.querySelector('input[name=gold]').getBoundingClientRect().top + window.scrollY")


def test_on_a_phone_the_sentences_to_tick_come_before_the_hints(live_server, page: Page) -> None:
    article = harbour_page()
    page.set_viewport_size(PHONE)
    log_in(page, live_server.url)
    start_task(page, live_server.url, article)
    before = first_gold_top(page)
    box = page.get_by_label("Your claim")
    box.fill(HARBOUR_DRAFT)
    expect(page.locator("#hints li")).to_have_count(10)
    after = first_gold_top(page)
    # Ten hints do not push the page's sentences down: they start about a screen down.
    assert after - before < 60 and after < 1.5 * PHONE["height"], (before, after)
    expect(page.locator("#hints-count")).to_have_text("(10)")  # folded, the hints say how many

    # By keyboard: a few Tabs from the claim box to the first sentence, not past ten hint links.
    box.focus()
    for _ in range(5):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.name === 'gold'"):
            break
    else:
        pytest.fail("five Tabs from the claim box reach no sentence to tick: " + page.evaluate("document.activeElement.outerHTML"))

    # The hints are one key away, and their summary says when the gold is the top hit.
    summary = page.locator("#hints-title")
    summary.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#hints li").first).to_be_visible()
    page.keyboard.press("Enter")
    expect(page.locator("#hints li").first).to_be_hidden()
    top_hit = int(page.locator("#hints li").first.get_attribute("data-sentence"))
    page.locator(f'input[name="gold"][value="{top_hit}"]').check()
    expect(page.locator("#hints-alert")).to_have_text("your gold sentence is the top hit")


NOTHING_HALF_UNDER_THE_TIMER = """() => {
  const clock = document.getElementById('timer').getBoundingClientRect();
  const y = clock.top + clock.height / 2;
  const beside = [];
  for (let x = 1; x < window.innerWidth - 1; x += 8) {
    const hit = document.elementFromPoint(x, y);
    const text = hit && hit.closest('.write-grid, .write-header, .write-done, .task-closed');
    // Text, a field or a button: not the bare background of the grid or the form around them.
    if (text && !hit.matches('.write-grid, .write-form, .write-article, .article-section')) beside.push(x + ': ' + hit.tagName + '.' + hit.className);
  }
  return beside;
}"""


@VIEWPORTS
def test_the_timer_covers_no_text_being_read_or_typed(live_server, page: Page, viewport: dict) -> None:
    article = harbour_page()
    page.set_viewport_size(viewport)
    log_in(page, live_server.url)
    start_task(page, live_server.url, article)
    box = page.get_by_label("Your claim")
    box.fill(HARBOUR_DRAFT)
    expect(page.locator("#hints li")).to_have_count(10)
    timer = page.locator("#timer")

    # Scrolled to the claim box, the middle and the end of the page: no line of text is drawn
    # beside the clock, half covered by it (it sits on an opaque bar as wide as the page).
    for target in (
        "document.getElementById('claim-text').getBoundingClientRect().top + window.scrollY - 12",
        "document.documentElement.scrollHeight / 2",
        "document.documentElement.scrollHeight",
    ):
        page.evaluate(f"window.scrollTo(0, {target})")
        page.wait_for_function("window.scrollY > 100", timeout=5_000)
        expect(timer).to_be_in_viewport()
        assert page.evaluate(NOTHING_HALF_UNDER_THE_TIMER) == [], target

    # A sentence followed from the hints, by keyboard, lands below the clock, not under it.
    page.evaluate("window.scrollTo(0, 0)")
    summary = page.locator("#hints-title")
    if page.evaluate("!document.getElementById('hints-box').open"):
        summary.focus()
        page.keyboard.press("Enter")
    last = page.locator("#hints a").last
    target = last.get_attribute("href")
    last.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"location.hash === '{target}'")
    sentence = page.locator(target).bounding_box()
    clock = timer.bounding_box()
    assert sentence is not None and clock is not None
    assert clock["y"] + clock["height"] <= sentence["y"] < viewport["height"], (clock, sentence)


# --- a used or expired task ---------------------------------------------------------------


@pytest.mark.parametrize("state", ["used", "expired"])
def test_a_used_or_expired_task_opens_with_no_clock(live_server, page: Page, eiffel_live: Article, state: str) -> None:
    log_in(page, live_server.url)
    start_task(page, live_server.url, eiffel_live)
    now = timezone.now()
    if state == "used":
        WriteTask.objects.update(used_at=now)
    else:
        WriteTask.objects.update(write_by=now - timedelta(minutes=3), expires_at=now - timedelta(minutes=1))
    page.reload()
    expect(page.locator("#write")).to_have_attribute("data-ready", "1")
    notice = "This task is done" if state == "used" else "This task has expired"
    expect(page.get_by_text(notice)).to_be_visible()
    expect(page.locator("#timer")).to_be_hidden()
    expect(page.get_by_role("button", name="Save the claim")).to_be_disabled()
    expect(page.get_by_label("Your claim")).not_to_be_editable()


@pytest.mark.parametrize("state", ["used", "expired"])
def test_a_save_the_server_refuses_as_used_or_expired_stops_the_clock(live_server, page: Page, eiffel_live: Article, state: str) -> None:
    log_in(page, live_server.url)
    start_task(page, live_server.url, eiffel_live)
    # Only the save tells this page: the draft checks never reach the server.
    page.route("**/api/claims/check", lambda route: route.abort())
    page.get_by_label("Your claim").fill(GOOD_CLAIM)
    gold_box(page, Sentence.objects.get(page=eiffel_live, position=3)).check()
    now = timezone.now()
    if state == "used":  # e.g. saved from another tab
        WriteTask.objects.update(used_at=now)
    else:
        WriteTask.objects.update(write_by=now - timedelta(minutes=3), expires_at=now - timedelta(seconds=1))
    expect(page.locator("#timer")).to_be_visible()
    page.get_by_role("button", name="Save the claim").click()
    expect(page.locator("#timer")).to_be_hidden()
    notice = "This task is done" if state == "used" else "This task has expired"
    expect(page.get_by_text(notice)).to_be_visible()
    expect(page.get_by_role("button", name="Save the claim")).to_be_disabled()
    expect(page.get_by_label("Your claim")).to_have_value(GOOD_CLAIM)  # still there to copy, not to edit
    expect(page.get_by_label("Your claim")).not_to_be_editable()
    expect(page.locator("#form-errors .field-error")).to_have_count(0)  # said once, in the notice
    assert Claim.objects.count() == 0


@pytest.mark.parametrize("off_by", [timedelta(minutes=20), timedelta(minutes=-20)], ids=["ahead", "behind"])
def test_the_clock_counts_the_servers_time_not_the_browsers(live_server, page: Page, eiffel_live: Article, off_by: timedelta) -> None:
    page.clock.set_system_time(datetime.now() + off_by)
    log_in(page, live_server.url)
    start_task(page, live_server.url, eiffel_live)
    expect(page.locator("#timer")).to_have_text(re.compile(r"^[78]:[0-5][0-9]$"))
    submit = page.get_by_role("button", name="Save the claim")
    expect(submit).to_be_enabled()
    page.get_by_label("Your claim").fill(GOOD_CLAIM)
    gold_box(page, Sentence.objects.get(page=eiffel_live, position=3)).check()
    submit.click()
    expect(page.locator("#write-done")).to_be_visible(timeout=30_000)
    assert Claim.objects.count() == 1


def test_time_up_on_the_page_is_the_servers_to_confirm(live_server, page: Page, eiffel_live: Article) -> None:
    """The page's clock runs out, but the server still takes saves: the page keeps taking the
    claim; once the server says the task expired, the page says so and the clock goes."""
    page.clock.install()
    log_in(page, live_server.url)
    start_task(page, live_server.url, eiffel_live)
    page.get_by_label("Your claim").fill(GOOD_CLAIM)
    gold_box(page, Sentence.objects.get(page=eiffel_live, position=3)).check()
    page.clock.run_for(11 * 60 * 1000)  # the page's clock only: the server's says a minute or less
    timer = page.locator("#timer")
    expect(timer).to_have_text("time is up")
    submit = page.get_by_role("button", name="Save the claim")
    expect(submit).to_be_enabled()
    expect(page.get_by_text("This task has expired")).to_be_hidden()

    # Now the server's clock passes the deadline too: the page learns it from the server.
    now = timezone.now()
    WriteTask.objects.update(write_by=now - timedelta(minutes=3), expires_at=now - timedelta(seconds=1))
    page.clock.run_for(10_000)  # the page asks again every 5 s while its clock says time is up
    expect(page.get_by_text("This task has expired")).to_be_visible(timeout=15_000)
    expect(timer).to_be_hidden()
    expect(submit).to_be_disabled()
    assert Claim.objects.count() == 0
