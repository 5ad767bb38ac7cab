"""Getting started in a real browser: after signing up, a next step and a short tutorial of
both tasks, skippable and worked with the keyboard alone; finishing or skipping it is kept on
the server for a player and in the browser for an anonymous visitor. Each test failed on the
pages as they were before."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from foolgame.players.models import TutorialProgress
from tests.factories import UserFactory
from tests.voting.test_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def press_until_focused(page: Page, name: str, *, limit: int = 60) -> None:
    """Tab through the page until the control called ``name`` has the focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate("() => document.activeElement && (document.activeElement.innerText || document.activeElement.value || '').trim()")
        if focused == name:
            return
    raise AssertionError(f"Tab never reached {name!r}")


def test_signup_lands_on_a_next_step_and_a_tutorial_worked_by_keyboard(live_server, page: Page) -> None:
    page.goto(live_server.url + "/accounts/signup/")
    page.get_by_label("User name").fill("first-timer")
    page.get_by_label("Password").fill("a long enough passphrase")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("first-timer")
    expect(page.get_by_role("heading", name="Your next step")).to_be_visible()
    expect(page.locator(".next-step").get_by_role("link", name="Play your first round")).to_have_attribute("href", "/play/")
    tutorial = page.locator("#tutorial")
    expect(tutorial).to_be_visible()
    expect(tutorial.get_by_role("heading", name="Spot the false claim")).to_be_visible()
    expect(tutorial.get_by_role("heading", name="Write a claim that fools the others")).to_be_hidden()
    press_until_focused(page, "Next")
    page.keyboard.press("Enter")
    expect(tutorial.get_by_role("heading", name="Race the clock, buy clues")).to_be_visible()
    expect(page.locator("#tutorial-count")).to_have_text("Step 2 of 3")
    press_until_focused(page, "Next")
    page.keyboard.press("Enter")
    expect(tutorial.get_by_role("heading", name="Write a claim that fools the others")).to_be_visible()
    # The last step's first action has the focus: Enter takes it, and the tutorial is done.
    expect(tutorial.get_by_role("link", name="Play your first round")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/play/$"))
    expect(page.get_by_role("heading", name="Find the fib")).to_be_visible()
    expect(page.locator("#tutorial")).to_have_count(0)
    assert TutorialProgress.objects.get(player__username="first-timer").state == "done"


def test_a_player_skips_it_once_for_every_device(asgi_live_server: str, browser, page: Page) -> None:
    UserFactory(username="skipper")
    log_in(page, asgi_live_server, "skipper")
    page.goto(asgi_live_server + "/")
    expect(page.locator("#tutorial")).to_be_visible()
    press_until_focused(page, "Skip the tutorial")
    page.keyboard.press("Enter")
    expect(page.locator("#tutorial")).to_be_hidden()
    expect(page.locator("#main")).to_be_focused()
    page.reload()
    expect(page.locator("#tutorial")).to_have_count(0)
    assert TutorialProgress.objects.get(player__username="skipper").state == "skipped"
    # Another browser (nothing in its storage) logged in as the same player: not shown either.
    other = browser.new_context().new_page()
    log_in(other, asgi_live_server, "skipper")
    other.goto(asgi_live_server + "/")
    expect(other.get_by_role("heading", name="Categories")).to_be_visible()
    expect(other.locator("#tutorial")).to_have_count(0)
    # The profile offers it again.
    other.goto(asgi_live_server + "/accounts/me/")
    other.get_by_role("button", name="Show the how-to-play tutorial again").click()
    expect(other.locator("#tutorial")).to_be_visible()
    assert TutorialProgress.objects.get(player__username="skipper").state == "new"  # asked for again: kept until finished or skipped
    other.context.close()


def test_an_anonymous_visitor_sees_it_until_they_skip_it_in_this_browser(live_server, browser, page: Page) -> None:
    page.goto(live_server.url + "/")
    tutorial = page.locator("#tutorial")
    expect(tutorial).to_be_visible()
    expect(tutorial.get_by_role("heading", name="Spot the false claim")).to_be_visible()
    tutorial.get_by_role("button", name="Next").click()
    tutorial.get_by_role("button", name="Next").click()
    expect(tutorial.get_by_role("link", name="Sign up and play a round")).to_have_attribute("href", "/accounts/signup/?next=/play/")
    tutorial.get_by_role("button", name="Skip the tutorial").click()
    expect(tutorial).to_be_hidden()
    page.goto(live_server.url + "/")
    expect(page.get_by_role("heading", name="Categories")).to_be_visible()
    expect(page.locator("#tutorial")).to_have_count(0)
    fresh = browser.new_context().new_page()
    fresh.goto(live_server.url + "/")
    expect(fresh.locator("#tutorial")).to_be_visible()
    fresh.context.close()
