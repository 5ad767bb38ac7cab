"""A guest in Chromium: someone with no account opens the room's link on a phone, types a
nickname (keyboard only), plays the question, then keeps the account with a password."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from foolgame.players.models import Guest
from foolgame.rooms.models import RoomQuestion
from tests.factories import PASSWORD
from tests.rooms.conftest import claim_pool
from tests.rooms.test_classroom_browser import LAPTOP, PHONE, host_a_room, player, shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_guest_joins_with_a_nickname_plays_and_keeps_the_account(asgi_live_server: str, browser: Browser) -> None:
    claim_pool(pages=3)
    host = player(browser, asgi_live_server, "hana", LAPTOP)
    link = host_a_room(host, asgi_live_server, 1)
    kim = browser.new_context(viewport=PHONE).new_page()
    kim.goto(link)
    nickname = kim.get_by_label("Your nickname")
    expect(nickname).to_be_focused()
    kim.keyboard.type("Kim!")
    kim.keyboard.press("Enter")
    expect(kim.get_by_role("alert")).to_contain_text("letters, digits and @ . + - _ only")
    shot(kim, "phone-5-guest-refused")
    nickname.fill("")
    nickname.type("Kim_7")
    kim.keyboard.press("Enter")
    expect(kim).to_have_url(link)
    expect(kim.locator(".guest-note")).to_contain_text("Kim_7")
    expect(host.locator("#scoreboard tbody tr")).to_have_count(2)
    expect(host.locator("#scoreboard")).to_contain_text("Kim_7")
    expect(kim.locator("#scoreboard tbody tr")).to_have_count(2)
    shot(kim, "phone-6-guest-in")

    host.get_by_role("button", name="Start the first question").click()
    expect(kim.locator(".claim-card .vote").first).to_be_enabled()  # the question is dealt
    false_index = RoomQuestion.objects.get().false_claim_index
    vote = kim.locator(".claim-card").nth(false_index).get_by_role("button", name="Mark as false")
    vote.focus()
    kim.keyboard.press("Enter")
    expect(host.locator("#answers-in")).to_have_text("1/2")
    host.get_by_role("button", name="End the question now").click()
    expect(kim.locator("#winners li")).to_have_text(re.compile(r"^Question 1: Kim_7 \(\+\d+\)$"))

    kim.get_by_role("link", name="Keep this account").click()
    kim.get_by_label("Password").fill(PASSWORD)
    kim.keyboard.press("Enter")
    expect(kim.get_by_role("heading", name="Your account is yours")).to_be_visible()
    assert not Guest.objects.exists()
    shot(kim, "phone-7-guest-claimed")
