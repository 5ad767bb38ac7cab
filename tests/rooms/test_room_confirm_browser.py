"""Ending a room ends it for everyone: the host's End the room asks first, in a modal dialog
worked by the keyboard (Escape or Cancel keeps the room; the focus goes back to the button).
The test failed on the page as it was before: the room ended on the first press."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from foolgame.rooms.models import Room
from tests.rooms.conftest import claim_pool
from tests.rooms.test_room_browser import player

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_ending_the_room_asks_first(asgi_live_server: str, browser: Browser) -> None:
    claim_pool(pages=2)
    host = player(browser, asgi_live_server, "hana")
    host.goto(asgi_live_server + "/rooms/")
    host.get_by_role("button", name="Host a room").click()
    expect(host).to_have_url(re.compile(r"/rooms/[A-Z0-9]{6}/$"))
    end = host.get_by_role("button", name="End the room")
    expect(end).to_be_enabled()
    end.click()
    dialog = host.get_by_role("dialog", name="End the room?")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Keep playing")).to_be_focused()
    host.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(end).to_be_focused()
    assert Room.objects.get().state != Room.State.ENDED
    # Cancel by its button, then confirm with the keyboard alone.
    end.click()
    host.get_by_role("dialog").get_by_role("button", name="Keep playing").click()
    expect(host.get_by_role("dialog")).to_have_count(0)
    assert Room.objects.get().state != Room.State.ENDED
    end.focus()
    host.keyboard.press("Enter")
    expect(host.get_by_role("dialog")).to_be_visible()
    host.keyboard.press("Tab")
    expect(host.get_by_role("dialog").get_by_role("button", name="End the room")).to_be_focused()
    host.keyboard.press("Enter")
    expect(host).to_have_url(re.compile(r"/rooms/$"))
    assert Room.objects.get().state == Room.State.ENDED
