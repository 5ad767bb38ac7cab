"""The room pages in Chromium with three players: the host hosts from the lobby, two players
join by the link, everyone sees the same pair at once, votes, and sees the answer and the
scoreboard; a reload mid-question keeps the player's round; the host ends the room."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Browser, Page, expect

from foolgame.rooms.models import RoomQuestion
from foolgame.rooms.services import room_create
from tests.factories import UserFactory
from tests.rooms.conftest import claim_pool
from tests.voting.test_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def player(browser: Browser, base: str, username: str) -> Page:
    UserFactory(username=username)
    page = browser.new_context().new_page()
    log_in(page, base, username)
    return page


def test_three_players_play_a_room(asgi_live_server: str, browser: Browser) -> None:
    claim_pool(pages=3)
    host, pia, otto = (player(browser, asgi_live_server, name) for name in ("hana", "pia", "otto"))
    host.goto(asgi_live_server + "/rooms/")
    host.get_by_label("Questions").fill("2")
    host.get_by_label("I'll play too").check()
    host.get_by_role("button", name="Host a room").click()
    expect(host).to_have_url(re.compile(r"/rooms/[A-Z0-9]{6}/$"))
    link = host.url
    expect(host.locator("#room-status")).to_contain_text("Start when everyone is here")
    pia.goto(link)
    otto.goto(asgi_live_server + "/rooms/")
    otto.get_by_label("Room code").fill(link.rstrip("/").rsplit("/", 1)[1].lower())
    otto.get_by_role("button", name="Join").click()
    for page in (host, pia, otto):
        expect(page.locator("#scoreboard tbody tr")).to_have_count(3)
    expect(pia.locator("#start-button")).to_be_hidden()

    host.get_by_role("button", name="Start the first question").click()
    texts = []
    for page in (host, pia, otto):
        expect(page.locator(".claim-card .claim-text").first).not_to_be_empty()
        texts.append(page.locator(".claim-card .claim-text").all_text_contents())
        expect(page.locator("#question-number")).to_have_text("1/2")
    assert texts[0] == texts[1] == texts[2]
    false_index = RoomQuestion.objects.get().false_claim_index

    pia.locator(".claim-card").nth(0).get_by_role("button", name=re.compile("Get a clue")).click()
    expect(pia.locator(".claim-card").nth(0).locator(".clues li")).to_have_count(1)
    pia.reload()  # the round survives a reload: its clue is still there, its clock still runs
    expect(pia.locator(".claim-card").nth(0).locator(".clues li")).to_have_count(1)
    for page, choice in ((host, false_index), (pia, false_index)):
        page.locator(".claim-card").nth(choice).get_by_role("button", name="Mark as false").click()
        expect(page.locator("#question-note")).to_contain_text("Your vote is in")
    expect(host.locator("#answer")).to_be_hidden()
    otto.locator(".claim-card").nth(1 - false_index).get_by_role("button", name="Mark as false").click()

    for page in (host, pia, otto):
        expect(page.locator("#answer-title")).to_have_text(f"The false claim was the {('left', 'right')[false_index]} one")
        expect(page.locator("#answer-found")).to_contain_text("hana")
        expect(page.locator("#scoreboard tbody tr").first).to_contain_text("hana")
        expect(page.locator("#scoreboard tbody tr").last).to_contain_text("otto")
    expect(host.get_by_role("button", name="Next question")).to_be_visible()
    expect(pia.locator("#room-status")).to_contain_text("Waiting for the host")

    host.get_by_role("button", name="End the room").click()
    host.get_by_role("dialog").get_by_role("button", name="End the room").click()  # it asks first
    for page in (pia, otto):
        expect(page.locator("#room-status")).to_contain_text("The host ended the room")


def test_room_buttons_wait_for_the_page_script(asgi_live_server: str, browser: Browser) -> None:
    """Host a room and Leave the room act through room.js: clicked before it has put its
    handlers on, the first would only reload the lobby and the second do nothing, so both
    are disabled in the HTML until the script enables them."""
    page = player(browser, asgi_live_server, "hana")
    room = room_create(host=get_user_model().objects.get(username="hana"))
    script = re.compile(r".*/fm2/room\.js.*")
    page.route(script, lambda route: route.abort())
    page.goto(asgi_live_server + "/rooms/")
    expect(page.get_by_role("button", name="Host a room")).to_be_disabled()
    page.goto(asgi_live_server + f"/rooms/{room.code}/")
    expect(page.locator("#leave-button")).to_be_disabled()
    page.unroute(script)
    page.reload()
    expect(page.locator("#leave-button")).to_be_enabled()  # the host's reads "End the room" once the room's state is in
    page.goto(asgi_live_server + "/rooms/")
    expect(page.get_by_role("button", name="Host a room")).to_be_enabled()
