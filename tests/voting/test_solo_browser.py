"""The solo game in a real browser: the result says which claim was picked and which was false,
the points, the rating change the server computes after the vote, the streak and where the
evidence is; the clock panel shows what each clue cost; a round can be dealt from a page or a
category. Each test failed on the page as it was before."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from foolgame.players.models import PlayerRating
from foolgame.voting.models import Round
from tests.factories import CategoryFactory, PageFactory, UserFactory
from tests.voting.conftest import make_claim
from tests.voting.test_browser import log_in
from tests.voting.test_play_browser import make_pairs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def start_round(page: Page, player) -> Round:
    page.get_by_role("button", name="Start a round").click()
    expect(page.locator(".claim-card").nth(0).locator(".vote")).to_be_enabled()
    return Round.objects.select_related("left_claim", "right_claim").filter(player=player).latest("created")


def test_the_result_marks_the_pick_and_the_false_claim_and_shows_points_rating_streak_and_evidence(asgi_live_server: str, page: Page) -> None:
    make_pairs(2)
    voter = UserFactory(username="result-reader")
    log_in(page, asgi_live_server, "result-reader")
    round_ = start_round(page, voter)
    false_card = page.locator(".claim-card").nth(round_.false_index)
    true_card = page.locator(".claim-card").nth(1 - round_.false_index)
    false_card.get_by_role("button", name="Mark as false").click()
    expect(page.locator("#result-title")).to_have_text("You found the fib!")
    expect(false_card.locator(".verdict")).to_contain_text("False")
    expect(false_card.locator(".verdict")).to_contain_text("Your pick")
    expect(true_card.locator(".verdict")).to_contain_text("True")
    expect(true_card.locator(".verdict")).not_to_contain_text("Your pick")
    round_.refresh_from_db()
    stats = page.locator("#result-stats")
    expect(stats.locator("[data-stat=points]")).to_have_text(f"+{round_.vote.points}")
    expect(stats.locator("[data-stat=streak]")).to_have_text("1 right in a row")
    # The rating is computed after the vote's commit: the page shows it once the server has it.
    skill = PlayerRating.objects.get(player=voter)
    change = round(skill.rating) - 1500
    expect(stats.locator("[data-stat=rating]")).to_have_text(f"1500 → {round(skill.rating)} (+{change})", timeout=10_000)
    evidence = page.get_by_role("link", name=re.compile("Read the evidence"))
    expect(evidence).to_have_attribute("href", f"/pages/{round_.left_claim.page_id}/")

    # A wrong vote next: the pick is on the true claim, the streak is over, the rating falls.
    page.get_by_role("button", name="Next round").click()
    expect(page.locator("#result")).to_be_hidden()
    expect(page.locator(".claim-card").nth(0).locator(".vote")).to_be_enabled()
    second = Round.objects.filter(player=voter).latest("created")
    assert second.pk != round_.pk
    true_card = page.locator(".claim-card").nth(1 - second.false_index)
    true_card.get_by_role("button", name="Mark as false").click()
    expect(page.locator("#result-title")).to_have_text("Fooled!")
    expect(true_card.locator(".verdict")).to_contain_text("Your pick")
    expect(page.locator(".claim-card").nth(second.false_index).locator(".verdict")).not_to_contain_text("Your pick")
    expect(stats.locator("[data-stat=points]")).to_have_text("0")
    expect(stats.locator("[data-stat=streak]")).to_have_text("0 right in a row")
    expect(stats.locator("[data-stat=rating]")).to_have_text(re.compile(r"^\d+ → \d+ \(−\d+\)$"), timeout=10_000)


def test_a_timeout_shows_the_false_claim_the_streak_and_the_evidence(asgi_live_server: str, page: Page, settings) -> None:
    settings.FM2 = {**settings.FM2, "ROUND_SECONDS": 12}
    make_pairs(1)
    voter = UserFactory(username="slow-reader")
    log_in(page, asgi_live_server, "slow-reader")
    round_ = start_round(page, voter)
    expect(page.locator("#result-title")).to_have_text("Time is up.", timeout=20_000)
    expect(page.locator(".claim-card").nth(round_.false_index).locator(".verdict")).to_contain_text("False")
    expect(page.locator(".verdict", has_text="Your pick")).to_have_count(0)
    stats = page.locator("#result-stats")
    expect(stats.locator("[data-stat=points]")).to_have_text("0")
    expect(stats.locator("[data-stat=streak]")).to_have_text("0 right in a row")
    expect(stats.locator("[data-stat=rating]")).to_have_text("unchanged (a timeout is not rated)")
    expect(page.get_by_role("link", name=re.compile("Read the evidence"))).to_have_attribute("href", f"/pages/{round_.left_claim.page_id}/")


def test_the_clock_panel_shows_what_each_clue_cost(asgi_live_server: str, page: Page) -> None:
    """A clue costs 10 s of the server's clock. With more than 120 s left a right answer still
    pays the full 120 (the server's rule: min(120, seconds left)), so the panel shows how long
    the full points last, and that falls by the clue's 10 s at each clue bought."""
    make_pairs(1)
    voter = UserFactory(username="clue-counter")
    log_in(page, asgi_live_server, "clue-counter")
    start_round(page, voter)
    panel = page.locator("#round-status")
    expect(panel.locator("#clue-cost")).to_have_text("none")
    left = page.locator(".claim-card").nth(0)
    before = full_points_seconds(page)
    for bought in (1, 2):
        left.get_by_role("button", name=re.compile("Get a clue")).click()
        expect(left.locator(".clues li")).to_have_count(bought)
        expect(panel.locator("#clue-cost")).to_have_text(f"{bought} · −{10 * bought} s")
        expect(panel.locator(".clue-flash")).to_have_text("−10 s")
    after = full_points_seconds(page)
    assert before - after >= 20, (before, after)
    expect(panel.locator("#points")).to_have_text("120")


def full_points_seconds(page: Page) -> int:
    text = page.locator("#points-note").inner_text()
    match = re.search(r"full points for (\d+):(\d\d) more", text)
    assert match, text
    return int(match.group(1)) * 60 + int(match.group(2))


def test_points_if_right_fall_by_each_clues_cost_under_two_minutes(asgi_live_server: str, page: Page, settings) -> None:
    """With under 120 s left (a 100 s round here), each clue takes its 10 s off the points."""
    settings.FM2 = {**settings.FM2, "ROUND_SECONDS": 100}
    make_pairs(1)
    voter = UserFactory(username="clue-payer")
    log_in(page, asgi_live_server, "clue-payer")
    start_round(page, voter)
    expect(page.locator("#points-note")).to_have_text("−1 a second, −10 a clue")
    left = page.locator(".claim-card").nth(0)
    before = int(page.locator("#points").inner_text())
    left.get_by_role("button", name=re.compile("Get a clue")).click()
    expect(left.locator(".clues li")).to_have_count(1)
    after = int(page.locator("#points").inner_text())
    assert before - after >= 10, (before, after)


def test_play_a_round_from_a_page_and_from_a_category(asgi_live_server: str, page: Page) -> None:
    author_t, author_f = UserFactory(username="author-t"), UserFactory(username="author-f")
    space, sport = CategoryFactory(name="Space"), CategoryFactory(name="Sport")
    pages = {}
    for category, titles in ((space, ("Mars", "Venus")), (sport, ("Cricket", "Rowing"))):
        for title in titles:
            pages[title] = PageFactory(title=title, category=category)
            make_claim(pages[title], label="SUPPORTS", author=author_t, text=f"{title} true claim.")
            make_claim(pages[title], label="REFUTES", author=author_f, text=f"{title} false claim.")
    voter = UserFactory(username="page-player")
    log_in(page, asgi_live_server, "page-player")
    page.goto(f"{asgi_live_server}/pages/{pages['Venus'].pk}/")
    page.get_by_role("link", name="Play a round from this page").click()
    expect(page.locator("#deal-from")).to_contain_text("Venus")
    round_ = start_round(page, voter)
    assert {round_.left_claim.page_id, round_.right_claim.page_id} == {pages["Venus"].pk}
    expect(page.locator(".claim-card .claim-page").first).to_have_text("Venus")
    page.locator(".claim-card").nth(0).get_by_role("button", name="Mark as false").click()
    expect(page.locator("#result")).to_be_visible()

    page.goto(f"{asgi_live_server}/categories/{sport.slug}/")
    page.get_by_role("link", name="Play a round from Sport").click()
    expect(page.locator("#category")).to_have_value(sport.slug)
    round_ = start_round(page, voter)
    assert round_.left_claim.page.category_id == sport.pk and round_.right_claim.page.category_id == sport.pk
