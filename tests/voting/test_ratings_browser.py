"""Ratings people read (issue 39), in Chromium: one number everywhere (the rating, ± its
deviation, a ? while provisional; the skill board no longer shows the conservative order's
number beside it), a first vote that moves a newcomer at most 50 (it moved them +146), the
profile's rating with a small chart of its history, and a give-up that says, when given, what
it costs and when the answer will show. Each part failed on the pages before."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import Page, expect

from foolgame.players.models import PlayerRating
from foolgame.voting import services
from foolgame.voting.models import Round
from tests.factories import UserFactory
from tests.voting.test_browser import log_in
from tests.voting.test_play_browser import make_pairs
from tests.rooms.test_classroom_browser import LAPTOP, PHONE, shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_skill_board_shows_one_number_marked_while_provisional(asgi_live_server: str, page: Page) -> None:
    UserFactory(username="viewer")
    for name, rating, deviation in (("steady", 1750.0, 50.0), ("lucky", 1900.0, 200.0)):
        PlayerRating.objects.create(player=UserFactory(username=name), rating=rating, deviation=deviation, votes=40)
    log_in(page, asgi_live_server, "viewer")
    page.goto(asgi_live_server + "/leaderboard/?kind=skill")
    rows = page.locator("table tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("steady")
    expect(rows.nth(0).locator(".rating")).to_have_text("1750 ± 50")
    expect(rows.nth(1).locator(".rating")).to_have_text("1900? ± 200")
    expect(rows.nth(1).get_by_title("provisional: the rating is still uncertain")).to_be_visible()
    expect(page.locator("table")).not_to_contain_text("1650")  # the order's floor is not a second number
    expect(page.locator("table thead")).not_to_contain_text("Skill")
    shot(page, "laptop-skill-board")


def test_a_first_vote_moves_a_newcomer_little_and_the_profile_charts_the_rating(asgi_live_server: str, page: Page) -> None:
    make_pairs(4)
    voter = UserFactory(username="newcomer")
    first = services.round_create(player=voter)  # a newcomer's first vote, right: Glicko-2 alone moved it +146

    def vote() -> None:  # off the browser's thread: the vote's commit sends to the channel layer
        services.round_start(round_id=first.pk, player=voter)
        services.vote_cast(round_id=first.pk, player=voter, false_claim=first.false_index)

    with ThreadPoolExecutor(1) as pool:
        pool.submit(vote).result()
    first.refresh_from_db()
    assert (first.rating_before, first.rating_after) == (1500.0, 1550.0)
    log_in(page, asgi_live_server, "newcomer")
    page.get_by_role("button", name="Start a round").click()
    expect(page.locator(".claim-card .vote").first).to_be_enabled()
    round_ = Round.objects.get(player=voter, state=Round.State.PLAYING)
    page.locator(".claim-card").nth(1 - round_.false_index).get_by_role("button", name="Mark as false").click()  # fooled
    expect(page.locator("[data-stat=rating]")).to_have_text("1550 → 1500 (−50)")  # the second: -147 before
    voter_round = Round.objects.get(pk=round_.pk)
    assert voter_round.rating_after == 1500.0
    page.goto(asgi_live_server + "/play/")
    page.get_by_role("button", name="Start a round").click()
    expect(page.locator(".claim-card .vote").first).to_be_enabled()
    third = Round.objects.get(player=voter, state=Round.State.PLAYING)
    page.locator(".claim-card").nth(third.false_index).get_by_role("button", name="Mark as false").click()
    expect(page.locator("[data-stat=rating]")).to_have_text(re.compile(r"^1500 → 15\d\d \(\+\d\d?\)$"))
    page.goto(asgi_live_server + "/accounts/me/")
    rating = PlayerRating.objects.get(player=voter)
    section = page.locator(".my-rating")
    expect(section.get_by_role("heading", name="Your rating")).to_be_visible()
    expect(section.locator(".rating-now .rating")).to_have_text(f"{round(rating.rating)}? ± {round(rating.deviation)}")
    expect(section.get_by_role("img", name=re.compile(r"Your rating over your last 3 rated votes"))).to_be_visible()
    assert len(section.locator("polyline").get_attribute("points").split()) == 4  # the start and three votes
    shot(page, "laptop-profile-rating")
    page.set_viewport_size(PHONE)
    shot(page, "phone-profile-rating")
    page.set_viewport_size(LAPTOP)


def test_a_give_up_says_what_it_costs_and_when_the_answer_shows(asgi_live_server: str, page: Page) -> None:
    make_pairs(2)
    UserFactory(username="quitter")
    log_in(page, asgi_live_server, "quitter")
    page.get_by_role("button", name="Start a round").click()
    expect(page.locator(".claim-card .vote").first).to_be_enabled()
    page.get_by_role("button", name="Give up this round").click()
    detail = page.locator("#result-detail")
    expect(detail).to_contain_text("It counts as a wrong answer for your rating (at most −50)")
    expect(detail).to_contain_text(re.compile(r"The answer shows at \d\d?:\d\d( [AP]M)?, when the round's clock would have run out"))
    shot(page, "laptop-give-up")
