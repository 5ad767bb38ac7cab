"""A room run for a class, in Chromium: everyone sees how many have answered (never who was
right), the host ends or skips the question from the keyboard, the answer clears the player's
stale note and buttons and tells them their place, and the end shows the podium and who found
each question first, with "Play again" taking everyone to a new room. Pages on a phone
(390x844) and a laptop (1366x768); with FM2_SCREENSHOTS set, each step is saved there."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from foolgame.rooms.models import Room, RoomQuestion
from tests.factories import UserFactory
from tests.rooms.conftest import claim_pool
from tests.voting.test_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 768}


def shot(page: Page, name: str) -> None:
    """Save what the page shows now, when FM2_SCREENSHOTS names a folder (for people to look at)."""
    folder = os.environ.get("FM2_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def player(browser: Browser, base: str, username: str, viewport: dict) -> Page:
    UserFactory(username=username)
    page = browser.new_context(viewport=viewport).new_page()
    log_in(page, base, username)
    return page


def host_a_room(host: Page, base: str, questions: int, *, plays: bool = True) -> str:
    """Make a room from the lobby's form; ``plays``: the host ticks "I'll play too"."""
    host.goto(base + "/rooms/")
    host.get_by_label("Questions").fill(str(questions))
    host.get_by_label("I'll play too").set_checked(plays)
    host.get_by_role("button", name="Host a room").click()
    expect(host).to_have_url(re.compile(r"/rooms/[A-Z0-9]{6}/$"))
    return host.url


def test_answers_in_and_the_hosts_end_and_skip(asgi_live_server: str, browser: Browser) -> None:
    claim_pool(pages=3)
    host = player(browser, asgi_live_server, "hana", LAPTOP)
    pia = player(browser, asgi_live_server, "pia", PHONE)
    otto = player(browser, asgi_live_server, "otto", LAPTOP)
    link = host_a_room(host, asgi_live_server, 3)
    for page in (pia, otto):
        page.goto(link)
    for page in (host, pia, otto):
        expect(page.locator("#scoreboard tbody tr")).to_have_count(3)
    host.get_by_role("button", name="Start the first question").click()
    for page in (host, pia, otto):
        expect(page.locator("#answers-in")).to_have_text("0/3")
    for page in (pia, otto):  # the host's controls are the host's
        expect(page.get_by_role("button", name="End the question now")).to_have_count(0)
        expect(page.get_by_role("button", name="Skip this question")).to_have_count(0)
    false_index = RoomQuestion.objects.get().false_claim_index

    pia.locator(".claim-card").nth(false_index).get_by_role("button", name="Mark as false").click()
    expect(pia.locator("#question-note")).to_contain_text("Your vote is in")
    for page in (host, pia, otto):
        expect(page.locator("#answers-in")).to_have_text("1/3")  # a count: nobody learns whether pia was right
    expect(host.locator("#answer")).to_be_hidden()
    shot(pia, "phone-1-voted")
    shot(host, "laptop-1-host-question")

    end = host.get_by_role("button", name="End the question now")
    end.focus()
    host.keyboard.press("Enter")
    for page in (host, pia, otto):
        expect(page.locator("#answer-title")).to_have_text(f"The false claim was the {('left', 'right')[false_index]} one")
        expect(page.locator("#answer-note")).to_have_text("The host ended this question early.")
        expect(page.locator("#answer-first")).to_contain_text("First to find it: pia")
        expect(page.locator(".claim-card button:visible")).to_have_count(0)  # no faded buttons left behind
        expect(page.locator("#question-note")).to_have_text("")  # no stale "your vote is in"
    expect(pia.locator("#my-place")).to_have_text(re.compile(r"^You are 1st of 3, with \d+ points\.$"))
    expect(otto.locator("#my-place")).to_have_text("You are 2nd of 3, with 0 points.")
    expect(host.get_by_role("button", name="End the question now")).to_be_hidden()
    shot(pia, "phone-2-answer")
    shot(host, "laptop-2-answer")

    host.get_by_role("button", name="Next question").click()
    for page in (host, pia, otto):
        expect(page.locator("#answers-in")).to_have_text("0/3")
        expect(page.locator(".claim-card .vote").first).to_be_visible()
    skip = host.get_by_role("button", name="Skip this question")
    skip.focus()
    host.keyboard.press("Enter")
    for page in (host, pia, otto):
        expect(page.locator("#answer-note")).to_have_text("The host skipped this question: nobody scores on it.")
    assert RoomQuestion.objects.get(number=2).skipped


def test_the_end_shows_the_podium_and_each_questions_finder_and_play_again_moves_everyone(asgi_live_server: str, browser: Browser) -> None:
    claim_pool(pages=3)
    host = player(browser, asgi_live_server, "hana", LAPTOP)
    pia = player(browser, asgi_live_server, "pia", PHONE)
    otto = player(browser, asgi_live_server, "otto", PHONE)
    link = host_a_room(host, asgi_live_server, 1)
    for page in (pia, otto):
        page.goto(link)
    for page in (host, pia, otto):
        expect(page.locator("#scoreboard tbody tr")).to_have_count(3)
    host.get_by_role("button", name="Start the first question").click()
    expect(pia.locator(".claim-card .vote").first).to_be_enabled()
    false_index = RoomQuestion.objects.get().false_claim_index
    pia.locator(".claim-card").nth(false_index).get_by_role("button", name="Mark as false").click()
    expect(host.locator("#answers-in")).to_have_text("1/3")
    otto.locator(".claim-card").nth(false_index).get_by_role("button", name="Mark as false").click()
    expect(host.locator("#answers-in")).to_have_text("2/3")
    host.get_by_role("button", name="End the question now").click()

    for page in (host, pia, otto):
        expect(page.locator("#room-status")).to_contain_text("The room has ended")
        expect(page.locator("#podium li")).to_have_count(2)
        expect(page.locator("#podium")).to_contain_text("pia")  # both right: on the podium, maybe tied
        expect(page.locator("#podium")).to_contain_text("otto")
        expect(page.locator("#winners li")).to_have_text(re.compile(r"^Question 1: pia \(\+\d+\)$"))  # pia was first
        expect(page.locator(".claim-card button:visible")).to_have_count(0)
        expect(page.locator("#question-note")).to_have_text("")
    for page in (pia, otto):
        expect(page.get_by_role("button", name="Play again with everyone")).to_have_count(0)
        expect(page.locator("#again-note")).to_be_visible()
    shot(pia, "phone-3-end")
    shot(host, "laptop-3-end")

    old_code = link.rstrip("/").rsplit("/", 1)[1]
    host.get_by_role("button", name="Play again with everyone").click()
    expect(host).not_to_have_url(link)
    new_code = Room.objects.get(code=old_code).next_room.code
    expect(host).to_have_url(re.compile(f"/rooms/{new_code}/$"))
    for page in (pia, otto):  # their page finds the new room and goes there
        expect(page).to_have_url(re.compile(f"/rooms/{new_code}/$"), timeout=15_000)
        expect(page.locator("#room-status")).to_contain_text("Waiting for the host to start")
    expect(host.locator("#scoreboard tbody tr")).to_have_count(3)
    shot(host, "laptop-4-again")
