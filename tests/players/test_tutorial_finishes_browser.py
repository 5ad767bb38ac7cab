"""The first-run tutorial finishes itself (issue 39): once a player has finished a round with a
vote and saved a claim, no page shows "New here? How the game works" and ``GET /api/me`` says
``done``, without Skip. Failed before: after 10 votes and 3 claims it still said ``new`` on
every page until Skip was pressed."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from foolgame.pages.models import Page as WikiPage
from foolgame.voting.models import Round
from tests.factories import UserFactory
from tests.voting.conftest import make_claim
from tests.voting.test_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGES = ["/", "/play/", "/accounts/me/"]


def tutorial_state(page: Page) -> str:
    return page.evaluate("async () => (await (await fetch('/api/me')).json()).tutorial")


def test_the_tutorial_goes_once_a_round_is_finished_and_a_claim_saved(asgi_live_server: str, page: Page) -> None:
    call_command("load_demo", verbosity=0)
    player = UserFactory(username="learner")
    log_in(page, asgi_live_server, "learner")
    expect(page.get_by_role("heading", name="New here? How the game works")).to_be_visible()
    page.get_by_role("button", name="Start a round").click()
    expect(page.locator(".claim-card .claim-text").first).not_to_be_empty()
    round_ = Round.objects.get(player=player)
    page.locator(".claim-card").nth(round_.false_index).get_by_role("button", name="Mark as false").click()
    expect(page.locator("#result-title")).to_be_visible()
    page.goto(asgi_live_server + "/")
    expect(page.get_by_role("heading", name="New here? How the game works")).to_be_visible()  # a round, no claim yet
    assert tutorial_state(page) == "new"

    make_claim(WikiPage.objects.exclude(pk=round_.left_claim.page_id).first(), label="SUPPORTS", author=player)  # a claim saved
    for path in PAGES + [f"/pages/{WikiPage.objects.first().pk}/"]:
        page.goto(asgi_live_server + path)
        expect(page.locator("#main")).to_be_visible()
        expect(page.get_by_role("heading", name="New here? How the game works")).to_have_count(0)
    assert tutorial_state(page) == "done"
