"""The profile's history of rounds in a real browser, on a phone: the latest rounds first, each
with both claims, which was false, the player's pick, the outcome and the points; a round whose
answer is not out is not there. The test failed on the profile as it was before (points only)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import Page, expect

from foolgame.voting import services
from tests.factories import UserFactory
from tests.voting.test_browser import log_in
from tests.voting.test_play_browser import make_pairs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_profile_lists_past_rounds_newest_first(asgi_live_server: str, page: Page) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    make_pairs(3)
    voter = UserFactory(username="historian")

    def play() -> tuple:
        right = services.round_create(player=voter)
        services.round_start(round_id=right.pk, player=voter)
        services.vote_cast(round_id=right.pk, player=voter, false_claim=right.false_index)
        wrong = services.round_create(player=voter)
        services.round_start(round_id=wrong.pk, player=voter)
        services.vote_cast(round_id=wrong.pk, player=voter, false_claim=1 - wrong.false_index)
        open_round = services.round_create(player=voter)
        services.round_start(round_id=open_round.pk, player=voter)
        right.refresh_from_db()
        return right, wrong, open_round

    # The rounds' socket events are sent with async_to_sync, which cannot run in the thread of
    # Playwright's event loop: the rounds are played in a thread of their own.
    with ThreadPoolExecutor(1) as pool:
        right, wrong, open_round = pool.submit(play).result()

    log_in(page, asgi_live_server, "historian")
    page.goto(asgi_live_server + "/accounts/me/")
    rows = page.locator(".history-round")
    expect(rows).to_have_count(2)
    newest, oldest = rows.nth(0), rows.nth(1)
    expect(newest.locator(".history-outcome")).to_have_text("Fooled")
    expect(newest.locator(".history-points")).to_have_text("no points")
    expect(newest.locator(".history-claim").nth(1 - wrong.false_index)).to_contain_text("Your pick")
    expect(newest.locator(".history-claim").nth(1 - wrong.false_index).locator(".tag-true")).to_have_text("True")
    expect(oldest.locator(".history-outcome")).to_have_text("Right")
    expect(oldest.locator(".history-points")).to_have_text(f"+{right.vote.points} points")
    false_row = oldest.locator(".history-claim").nth(right.false_index)
    expect(false_row.locator(".tag-false")).to_have_text("False")
    expect(false_row).to_contain_text("Your pick")
    expect(false_row).to_contain_text(right.claims[right.false_index].text)
    expect(oldest.get_by_role("link").first).to_have_attribute("href", f"/pages/{right.left_claim.page_id}/")
    # The round still playing is not listed, and the page never scrolls sideways on a phone.
    expect(page.get_by_text(open_round.left_claim.text)).to_have_count(0)
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
