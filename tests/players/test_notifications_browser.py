"""In a real browser: an author hears that a voter played their claim (nav badge, the
notifications page, the badge gone once seen), and the points a correct vote pays authors
read as "Hard to check" while the API keeps the kind ``fool``."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db.models import F
from playwright.sync_api import Page, expect

from foolgame.players.models import LedgerEntry
from foolgame.voting.models import Round
from tests.factories import PASSWORD, PageFactory, UserFactory
from tests.voting.conftest import make_claim

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_in(page: Page, base: str, username: str) -> None:
    page.goto(base + "/accounts/login/?next=/accounts/me/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name=username)).to_be_visible()


def two_authors_one_voter():
    saturn = PageFactory(title="Saturn")
    alice, bob, vera = UserFactory(username="alice"), UserFactory(username="bob"), UserFactory(username="vera")
    true_claim = make_claim(saturn, label="SUPPORTS", author=alice, text="Saturn is the sixth planet from the Sun.")
    false_claim = make_claim(saturn, label="REFUTES", author=bob, text="Saturn has no rings at all.")
    return alice, vera, true_claim, false_claim


class Voter:
    """Another player, in a browser context of their own, playing through the REST twins
    (the services publish to the channel layer, which the test thread's event loop forbids)."""

    def __init__(self, page: Page, base: str, username: str) -> None:
        self.base, self.context = base, page.context.browser.new_context()
        self.request = self.context.request
        self.request.get(base + "/api/auth/csrf")
        self._post("/api/auth/login", {"username": username, "password": PASSWORD})

    def _post(self, url: str, data: dict | None = None) -> dict:
        token = next(c["value"] for c in self.context.cookies() if c["name"] == "csrftoken")
        response = self.request.post(self.base + url, data=json.dumps(data or {}), headers={"Content-Type": "application/json", "X-CSRFToken": token})
        assert response.ok, response.text()
        return json.loads(response.text() or "{}")

    def vote(self, *, correct: bool, thought_for: float = 0) -> Round:
        round_id = self._post("/api/rounds")["id"]
        self._post(f"/api/rounds/{round_id}/start")
        if thought_for:  # as if the voter had started that long ago: the stored clock is the only clock
            Round.objects.filter(pk=round_id).update(
                started_at=F("started_at") - timedelta(seconds=thought_for), deadline=F("deadline") - timedelta(seconds=thought_for)
            )
        false_index = Round.objects.get(pk=round_id).false_index
        self._post(f"/api/rounds/{round_id}/vote", {"false_claim": false_index if correct else 1 - false_index})
        return Round.objects.get(pk=round_id)

    def like(self, round_: Round, claim: int) -> None:
        self._post(f"/api/rounds/{round_.pk}/like", {"claim": claim})


def test_author_sees_the_badge_reads_the_news_and_the_badge_goes(asgi_live_server: str, page: Page) -> None:
    alice, vera, true_claim, _ = two_authors_one_voter()
    log_in(page, asgi_live_server, "alice")
    expect(page.locator("a.nav-notifications")).to_have_text("Notifications")
    expect(page.locator("#unread-count")).to_have_count(0)  # no badge when nothing is unread

    voter = Voter(page, asgi_live_server, vera.username)
    round_ = voter.vote(correct=False)  # vera picks alice's true claim as the false one
    voter.like(round_, 1 - round_.false_index)  # and likes it

    page.goto(asgi_live_server + "/")
    expect(page.locator("#unread-count")).to_have_text("2 unread")
    page.locator("a.nav-notifications").click()
    expect(page).to_have_url(asgi_live_server + "/accounts/notifications/")
    items = page.locator(".notification")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("A voter liked your claim. 10 points for you.")
    expect(items.nth(1)).to_contain_text("You fooled a voter: they picked your true claim as the false one.")
    expect(items.nth(1)).to_contain_text(true_claim.text)
    expect(page.locator(".notification-new")).to_have_count(2)

    page.goto(asgi_live_server + "/leaderboard/")
    expect(page.locator("#unread-count")).to_have_count(0)
    page.goto(asgi_live_server + "/accounts/notifications/")
    expect(page.locator(".notification")).to_have_count(2)
    expect(page.locator(".notification-new")).to_have_count(0)  # seen: listed, no longer new


def test_points_from_a_correct_vote_read_hard_to_check_and_the_api_keeps_fool(asgi_live_server: str, page: Page) -> None:
    alice, vera, true_claim, _ = two_authors_one_voter()
    Voter(page, asgi_live_server, vera.username).vote(correct=True, thought_for=100)
    log_in(page, asgi_live_server, "alice")

    api = json.loads(page.request.get(asgi_live_server + "/api/me").text())
    share = api["points"]["fool"]
    assert share > 0
    assert set(LedgerEntry.objects.filter(player=alice).values_list("kind", flat=True)) == {"fool"}
    expect(page.locator(".points dt", has_text="Hard to check")).to_be_visible()
    expect(page.locator('dd[data-kind="fool"]')).to_have_text(str(share))
    expect(page.locator("table")).to_contain_text(f"Hard to check: “{true_claim.text}”")
    expect(page.get_by_text("Fooling")).to_have_count(0)

    page.goto(asgi_live_server + "/leaderboard/")
    tab = page.get_by_role("link", name="Hard to check")
    expect(tab).to_have_attribute("href", "?kind=fool")
    tab.click()
    expect(page.locator("tr.me")).to_contain_text(str(share))

    board = json.loads(page.request.get(asgi_live_server + "/api/leaderboard?kind=fool").text())
    assert {"alice": share}.items() <= {row["username"]: row["points"] for row in board}.items()
    notes = json.loads(page.request.get(asgi_live_server + "/api/me/notifications").text())
    assert notes["unread"] == 1 and notes["items"][0]["kind"] == "fool_points"
    page.goto(asgi_live_server + "/accounts/notifications/")
    expect(page.locator(".notification")).to_contain_text(f"Hard to check: a voter took their time on your claim before finding the false one. {share} points for you.")
