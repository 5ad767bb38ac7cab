"""The solo round page and the room page in Chromium share one client: the same reconnect
policy for their sockets (fm2.socket, docs/websocket.md "Reconnecting") and the same claim
cards. The socket reports each retry, refusal and stop as a "fm2:socket" event, which these
tests collect instead of timing the page. Each test failed on the pages as they were before
(the room doubled its wait after a 1013 and had no jitter; the play page stopped on any 4xxx)."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from foolgame.rooms.services import room_create
from tests.factories import UserFactory
from tests.voting.test_browser import log_in
from tests.voting.test_play_browser import make_pairs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Every fm2:socket event of the page, in order, from before its scripts run.
COLLECT_EVENTS = "window.fm2SocketEvents = []; window.addEventListener('fm2:socket', (event) => window.fm2SocketEvents.push(event.detail));"

SOCKETS = {"play": re.compile(r"/ws/rounds/\d+/$"), "room": re.compile(r"/ws/rooms/[A-Z0-9]+/$")}


def open_page(page: Page, base: str, which: str) -> None:
    """Log in and open the page, whose socket then opens: a solo round, or a room the player hosts."""
    UserFactory(username="client-player")
    log_in(page, base, "client-player")
    page.wait_for_url(re.compile(r".*/play/$"))
    if which == "play":
        make_pairs(1)
        page.get_by_role("button", name="Start a round").click()
    else:
        room = room_create(host=get_user_model().objects.get(username="client-player"))
        page.goto(f"{base}/rooms/{room.code}/")


def events(page: Page, kind: str) -> list[dict]:
    return page.evaluate("(kind) => window.fm2SocketEvents.filter((event) => event.type === kind)", kind)


def page_is_back(page: Page, which: str) -> None:
    expect(page.locator("#reconnecting")).to_be_hidden()
    if which == "play":
        expect(page.locator(".claim-card .vote").first).to_be_enabled()
    else:
        expect(page.locator("#room-status")).to_contain_text("Start when everyone is here")


@pytest.mark.parametrize("which", ["play", "room"])
def test_a_server_busy_close_is_retried_with_the_same_backoff_on_both_pages(asgi_live_server: str, page: Page, which: str) -> None:
    """1013 (Redis or the database down): at least 2 s before each retry, lengthened by up to a
    quarter at random, the count going on while no retry brings the service back."""
    page.add_init_script(COLLECT_EVENTS)
    routes = []

    def route(ws) -> None:
        routes.append(ws)
        if len(routes) <= 3:
            ws.close(code=1013, reason="try again later")
        else:
            ws.connect_to_server()

    page.route_web_socket(SOCKETS[which], route)
    open_page(page, asgi_live_server, which)
    page.wait_for_function("() => window.fm2SocketEvents.some((event) => event.type === 'open' && event.attempt === 3)", timeout=20_000)
    page_is_back(page, which)
    retries = events(page, "retry")
    assert [(r["code"], r["attempt"]) for r in retries] == [(1013, 1), (1013, 2), (1013, 3)]
    for retry in retries:
        assert 2000 <= retry["delay"] <= 2500, retries
    assert len({r["delay"] for r in retries}) > 1, "no jitter: a room's players would all come back in the same instant"


@pytest.mark.parametrize("which", ["play", "room"])
def test_only_the_documented_refusals_stop_the_socket_on_both_pages(asgi_live_server: str, page: Page, which: str) -> None:
    """4400-4499 is a refusal (asking again gets the same answer): no retry, and the page says
    so. Any other close, 4000 included, is worth a reconnect."""
    page.add_init_script(COLLECT_EVENTS)
    routes = []

    def route(ws) -> None:
        routes.append(ws)
        ws.close(code=4000 if len(routes) == 1 else 4403, reason="test")

    page.route_web_socket(SOCKETS[which], route)
    open_page(page, asgi_live_server, which)
    page.wait_for_function("() => window.fm2SocketEvents.some((event) => event.type === 'refused')", timeout=10_000)
    shown = page.evaluate("() => window.fm2SocketEvents.map((event) => [event.type, event.code])")
    assert shown == [["retry", 4000], ["refused", 4403]]
    expect(page.locator("#reconnecting")).to_be_hidden()
    error = page.locator("#round-error" if which == "play" else "#room-error")
    expect(error).to_contain_text("The server closed this")


def test_the_retry_waits_double_up_to_the_cap(asgi_live_server: str, page: Page) -> None:
    """The policy as a table: 0.5 s doubling to 15 s; at least 2 s after a 1013; the jitter
    adds at most a quarter."""
    open_page(page, asgi_live_server, "room")
    table = page.evaluate(
        """() => [0, 1, 2, 3, 4, 5, 6, 9].map((attempt) => [
            fm2.socket.retryDelay(attempt, 1006, 0),
            fm2.socket.retryDelay(attempt, 1013, 0),
            fm2.socket.retryDelay(attempt, 1012, 0.999999),
        ])"""
    )
    assert [row[0] for row in table] == [500, 1000, 2000, 4000, 8000, 15000, 15000, 15000]
    assert [row[1] for row in table] == [2000, 2000, 2000, 4000, 8000, 15000, 15000, 15000]
    assert [row[2] for row in table] == [625, 1250, 2500, 5000, 10000, 18750, 18750, 18750]


def test_a_room_join_answered_503_is_asked_again(asgi_live_server: str, page: Page) -> None:
    """A join answered 503 (the database or Redis down or busy for a moment: on SQLite, two
    members' joins at once) is asked again with the socket's waits after a 1013, instead of
    leaving the player out of the room with "A service the server needs is down"."""
    joins = []

    def busy_once(route) -> None:
        joins.append(route.request.url)
        if len(joins) == 1:
            body = {"error": {"code": "service_unavailable", "message": "A service the server needs is down; try again shortly."}}
            route.fulfill(status=503, content_type="application/json", headers={"Retry-After": "1"}, body=json.dumps(body))
        else:
            route.continue_()

    page.route(re.compile(r"/api/rooms/[A-Z0-9]+/join$"), busy_once)
    open_page(page, asgi_live_server, "room")
    expect(page.locator("#room-status")).to_contain_text("Start when everyone is here")
    assert len(joins) == 2


CARD_STRUCTURE = """() => {
  const shape = (node) => [node.tagName.toLowerCase(), node.className, node.getAttribute('role'),
    node.getAttribute('aria-label'), node.getAttribute('type'), Array.from(node.children).map(shape)];
  return Array.from(document.querySelectorAll('.claim-card')).map(shape);
}"""


def test_the_claim_cards_are_the_same_markup_on_both_pages(asgi_live_server: str, page: Page) -> None:
    open_page(page, asgi_live_server, "room")
    expect(page.locator("#room-status")).to_contain_text("Start when everyone is here")
    room_cards = page.evaluate(CARD_STRUCTURE)
    page.goto(asgi_live_server + "/play/")
    play_cards = page.evaluate(CARD_STRUCTURE)
    assert len(play_cards) == 2
    assert room_cards == play_cards
    assert page.locator(".claim-card .report").count() == 2  # reports are the play page's; the room's stay hidden
