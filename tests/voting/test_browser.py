"""A whole round in a real browser: start, buy a clue, vote, see the points."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from foolgame.voting.models import Round
from tests.factories import PASSWORD, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_in(page: Page, base: str, username: str) -> None:
    page.goto(base + "/accounts/login/?next=/play/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def test_play_a_round_in_the_browser(asgi_live_server: str, page: Page) -> None:
    call_command("load_demo", verbosity=0)
    UserFactory(username="browser-voter")
    log_in(page, asgi_live_server, "browser-voter")
    expect(page.get_by_role("heading", name="Find the fib")).to_be_visible()
    page.get_by_role("button", name="Start a round").click()
    left = page.locator(".claim-card").nth(0)
    expect(left.locator(".claim-text")).not_to_be_empty()
    round_ = Round.objects.select_related("left_claim", "right_claim").get(player__username="browser-voter")
    expect(left.locator(".claim-text")).to_have_text(round_.left_claim.text)
    # The countdown shows the server's ticks.
    expect(page.locator("#remaining")).to_have_text(re.compile(r"^2:5\d$"), timeout=5000)
    left.get_by_role("button", name=re.compile("Get a clue")).click()
    expect(left.locator(".clues li")).to_have_count(1)
    expect(left.locator(".clues li")).to_contain_text(round_.left_claim.clues[0]["text"])
    expect(page.locator("#remaining")).to_have_text(re.compile(r"^2:[34]\d$"), timeout=5000)
    false_card = page.locator(".claim-card").nth(round_.false_index)
    false_card.get_by_role("button", name="Mark as false").click()
    expect(page.locator("#result-title")).to_have_text("You found the fib!")
    round_.refresh_from_db()
    points = round_.vote.points
    assert 100 <= points <= 120
    expect(page.locator("#result-detail")).to_have_text(f"You earned {points} points.")
    expect(page.locator("#my-total")).to_have_text(str(points))
    expect(false_card.locator(".label-false")).to_have_text("False")
    page.get_by_role("button", name="Left").click()
    expect(page.locator("#like-done")).to_be_visible()
    page.goto(asgi_live_server + "/leaderboard/")
    expect(page.locator("tr.me")).to_contain_text(str(points))
