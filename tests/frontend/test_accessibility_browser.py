"""Every page of the site scanned by axe-core in Chromium, logged out and in each role, on a
phone (390x844) and a laptop (1366x768): no violation of impact serious or critical.

axe-core comes from the npm registry (package.json at the repository's root; `make
setup-test` runs `npm ci` when npm is on the PATH) and is loaded into each page from
node_modules, never from a CDN. Without it the tests skip and say why.

Pages in more than one state are scanned in each: the play page before a round, during it
(a clue bought, the report form open) and after the answer; the check page before and during
a check; a room as its host and as a member, during a question, after its answer and after
the end, and its projector view. The API's docs page (/api/docs/) is Swagger UI, a third
party's page served as it ships, and is not scanned; neither is Django's admin.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.conftest import REPO
from tests.factories import PASSWORD, UserFactory

# The pages' markup and styles do not depend on the database: CI scans them on the embedded
# default's pass and saves the services pass (FM2_REQUIRE_SERVICES) the two and a half minutes.
if os.environ.get("FM2_REQUIRE_SERVICES"):
    pytest.skip("the accessibility scan runs on the embedded default's pass: markup is the same on PostgreSQL", allow_module_level=True)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 768}
VIEWPORTS = [pytest.param(PHONE, id="phone"), pytest.param(LAPTOP, id="laptop")]
LEADERBOARD_KINDS = ("total", "verify", "fool", "write", "like", "check", "model", "skill")

# In the page: axe's serious and critical violations, each with its nodes' targets. Its default
# rules, and WCAG 2.2's target size (24 px, off by default in axe 4.14).
RUN_AXE = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations'], rules: {'target-size': {enabled: true}}});
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({id: v.id, impact: v.impact, help: v.help,
                  nodes: v.nodes.map((n) => ({target: n.target.join(' '), summary: n.failureSummary}))}));
}"""


@pytest.fixture
def axe_source() -> Path:
    if not AXE.is_file():
        pytest.skip("axe-core is not installed: run `npm ci` (or `make setup-test` with npm on the PATH)")
    return AXE


class Scanner:
    """Runs axe on pages and keeps every serious or critical violation, to fail once at the
    end with all of them (one failing page does not hide the others)."""

    def __init__(self, axe: Path) -> None:
        self.axe = str(axe)
        self.found: list[str] = []
        self.scanned: list[str] = []

    def scan(self, page: Page, where: str) -> None:
        page.wait_for_load_state("load")
        # A settled page: a transition under way (a clue's cost fading out) is scanned at its
        # end, not at whatever frame a busy machine reached (its colours are half blended).
        page.wait_for_function("document.getAnimations().every(a => a.playState !== 'running' || a.effect?.getTiming().iterations === Infinity)")
        if not page.evaluate("typeof window.axe === 'object'"):
            page.add_script_tag(path=self.axe)
        self.scanned.append(where)
        for violation in page.evaluate(RUN_AXE):
            lines = [f"{where}: {violation['id']} ({violation['impact']}): {violation['help']}"]
            lines += [f"    {node['target']}: {node['summary'].splitlines()[-1].strip()}" for node in violation["nodes"]]
            self.found.append("\n".join(lines))

    def visit(self, page: Page, base: str, path: str, where: str | None = None) -> None:
        response = page.goto(base + path)
        assert response is not None and response.status < 500, (path, response and response.status)
        self.scan(page, where or path)

    def assert_clean(self) -> None:
        assert not self.found, f"{len(self.found)} serious or critical axe violations:\n" + "\n".join(self.found)


def in_thread(function, *args):
    """Service calls that publish to the channel layer use async_to_sync, which cannot run in
    the thread where Playwright's event loop runs: they run in a thread of their own."""
    from django.db import connections

    def run():
        try:
            return function(*args)
        finally:
            connections.close_all()  # this thread's own connection, not left open for the teardown

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()


def log_in(page: Page, base: str, username: str, next_path: str = "/accounts/me/") -> None:
    page.goto(f"{base}/accounts/login/?next={next_path}")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(re.escape(next_path) + "$"))


@pytest.fixture
def new_page(browser: Browser):
    """new_page(viewport): a page in a browser context of its own (one person), closed after the test."""
    contexts: list[BrowserContext] = []

    def make(viewport: dict) -> Page:
        contexts.append(browser.new_context(viewport=viewport))
        return contexts[-1].new_page()

    yield make
    for context in contexts:
        context.close()


def seed_site() -> dict:
    """The demo data, a player with rounds, points and news, a moderator with a queue, a held
    player and an audit record, and a researcher with exports in the list."""
    from foolgame.claims.models import Claim
    from foolgame.dataset.models import Export
    from foolgame.moderation.actions import claim_moderate, moderator_set
    from foolgame.moderation.models import PlayerHold
    from foolgame.moderation.quality import quality_refresh
    from foolgame.players.models import Notification
    from foolgame.voting import services
    from foolgame.voting.models import Report

    call_command("load_demo", verbosity=0)
    pat = UserFactory(username="pat")
    for _ in range(2):  # a right and a wrong answer: the profile's history, points, the leaderboards
        round_ = services.round_create(player=pat)
        services.round_start(round_id=round_.pk, player=pat)
        services.vote_cast(round_id=round_.pk, player=pat, false_claim=round_.false_index if _ == 0 else 1 - round_.false_index)
    claims = list(Claim.objects.order_by("pk")[:4])
    Claim.objects.filter(pk__in=[c.pk for c in claims[:2]]).update(author=pat)
    Notification.objects.create(player=pat, kind=Notification.Kind.FOOLED, detail=Notification.Detail.BELIEVED_FALSE, claim=claims[0])
    Notification.objects.create(player=pat, kind=Notification.Kind.LIKED, claim=claims[1], points=5, read_at=timezone.now())

    mona = UserFactory(username="mona")
    moderator_set(username="mona")
    reported = claims[2]
    for n in range(3):
        Report.objects.create(claim=reported, reporter=UserFactory(username=f"reporter{n}"), reason="spam", note=f"Buy cheap watches {n}")
    quality_refresh(claim_ids=[reported.pk])
    claim_moderate(moderator=mona, claim_id=claims[3].pk, action="keep", reason="Checked against the page.")
    speedy = UserFactory(username="speedy")
    PlayerHold.objects.create(
        player=speedy,
        reasons=["improbable_accuracy"],
        evidence={
            "alpha": 1e-4, "tested_votes": 30, "since_vote": 0, "through_vote": 30, "population_votes": 5000, "population_accuracy": 0.77,
            "improbable": {"start": 0, "end": 30, "votes": 30, "right": 30, "expected": 16.5, "run_p_value": 1e-7, "windows": 3,
                           "p_value": 3e-7, "first_vote": 1, "last_vote": 30, "median_seconds": 3.0, "clues": 0},
        },
        p_value=3e-7,
        evidence_through_vote=30,
        held_at=timezone.now() - timedelta(hours=1),
    )

    UserFactory(username="rita")
    call_command("createresearcher", "rita", stdout=None)
    Export.objects.create(options={"seed": 0, "splits": "0.8,0.1,0.1", "formats": ["jsonl", "csv"]})
    Export.objects.create(options={"seed": 1, "splits": "0.8,0.1,0.1", "formats": ["jsonl"]}, status="running", stage="claims", progress=0.3)
    Export.objects.create(options={"seed": 2, "splits": "0.8,0.1,0.1", "formats": ["jsonl"]}, status="failed", error="The disk is full.")
    Export.objects.create(options={"seed": 3, "splits": "0.8,0.1,0.1", "formats": ["jsonl"]}, status="done", progress=1.0,
                          files=[{"name": "train.jsonl", "size": 2048}, {"name": "stats.json", "size": 512}],
                          started_at=timezone.now() - timedelta(minutes=2), finished_at=timezone.now())
    return {"claim": claims[0]}


@pytest.fixture
def site(axe_source: Path, transactional_db, settings, tmp_path) -> dict:
    from foolgame.evidence.services import lexical_cache_clear

    settings.EXPORTS_DIR = tmp_path / "exports"
    lexical_cache_clear()  # keyed by page id, which repeats across test databases
    return in_thread(seed_site)


def corpus_paths(claim) -> list[str]:
    return ["/", f"/categories/{claim.page.category.slug}/", "/uncategorised/", f"/pages/{claim.page_id}/"]


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_pages_logged_out_have_no_serious_violation(asgi_live_server: str, new_page, site: dict, viewport: dict, axe_source: Path) -> None:
    scanner = Scanner(axe_source)
    page = new_page(viewport)
    for path in corpus_paths(site["claim"]):
        scanner.visit(page, asgi_live_server, path)
    for kind in LEADERBOARD_KINDS:
        scanner.visit(page, asgi_live_server, f"/leaderboard/?kind={kind}")
    for path in ("/accounts/login/", "/accounts/signup/", "/rooms/ABCDEF/", "/moderation/", "/research/", "/no-such-page/"):
        scanner.visit(page, asgi_live_server, path)
    # Forms with their errors shown.
    page.goto(asgi_live_server + "/accounts/login/")
    page.get_by_label("User name").fill("nobody")
    page.get_by_label("Password").fill("wrong password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_be_visible()
    scanner.scan(page, "/accounts/login/ (refused)")
    page.goto(asgi_live_server + "/rooms/ABCDEF/")
    page.get_by_label("Your nickname").fill("two words")
    page.get_by_role("button", name="Join as a guest").click()
    expect(page.get_by_role("alert")).to_be_visible()
    scanner.scan(page, "/rooms/ABCDEF/ (guest join refused)")
    scanner.assert_clean()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_players_pages_have_no_serious_violation(asgi_live_server: str, new_page, site: dict, viewport: dict, axe_source: Path, settings) -> None:
    scanner = Scanner(axe_source)
    page = new_page(viewport)
    log_in(page, asgi_live_server, "pat")
    for path in [*corpus_paths(site["claim"]), "/accounts/me/", "/accounts/notifications/", "/accounts/claim/", "/rooms/", "/moderation/"]:
        scanner.visit(page, asgi_live_server, path)
    for kind in LEADERBOARD_KINDS:
        scanner.visit(page, asgi_live_server, f"/leaderboard/?kind={kind}")

    # The solo round: before, during (a clue bought, the report form open), after the answer.
    scanner.visit(page, asgi_live_server, "/play/", "/play/ (before a round)")
    page.get_by_role("button", name="Start a round").click()
    left = page.locator(".claim-card").nth(0)
    expect(left.locator(".vote")).to_be_enabled()
    left.get_by_role("button", name=re.compile("Get a clue")).click()
    expect(left.locator(".clues li")).to_have_count(1)
    left.locator(".report summary").click()
    scanner.scan(page, "/play/ (during a round)")
    left.get_by_role("button", name="Mark as false").click()
    expect(page.locator("#result")).to_be_visible()
    scanner.scan(page, "/play/ (after the answer)")
    page.get_by_role("button", name="Left", exact=True).click()
    expect(page.locator("#like-done")).to_be_visible()
    scanner.scan(page, "/play/ (liked)")
    # The clock's last 30 seconds (a red status bar): a round of 28 s is in them from the start.
    settings.FM2 = {**settings.FM2, "ROUND_SECONDS": 28}
    page.get_by_role("button", name="Next round").click()
    expect(page.locator("#play")).to_have_class(re.compile(r"\bhurry\b"))
    scanner.scan(page, "/play/ (the last 30 seconds)")
    page.locator(".claim-card").nth(1).get_by_role("button", name="Mark as false").click()
    expect(page.locator("#result")).to_be_visible()

    # Writing: the start page, a chosen page, a task.
    scanner.visit(page, asgi_live_server, "/write/")
    scanner.visit(page, asgi_live_server, f"/write/?page={site['claim'].page_id}")
    page.goto(asgi_live_server + "/write/")
    page.get_by_role("button", name="Take the next task").click()
    page.wait_for_url(re.compile(r"/write/\d+/$"))
    expect(page.locator("#claim-submit")).to_be_enabled()
    scanner.scan(page, "/write/<task>/")
    page.get_by_label("Your claim").fill("The subject of this page changed its name twice before the year 1900.")
    expect(page.locator("#hints li").first).to_be_attached()
    if not page.locator("#hints-box").evaluate("box => box.open"):  # folded on a phone: scan them open
        page.locator("#hints-title").click()
    expect(page.locator("#hints li").first).to_be_visible()
    page.get_by_role("button", name="Save the claim").click()  # no gold sentence: refused, with the reason
    expect(page.locator("#gold-errors .field-error")).to_be_visible()
    scanner.scan(page, "/write/<task>/ (a draft, hints, an error)")
    page.locator('input[name="gold"]').first.check()
    page.get_by_role("button", name="Save the claim").click()
    expect(page.locator("#write-done")).to_be_visible(timeout=20_000)
    scanner.scan(page, "/write/<task>/ (saved)")

    # Fact check: before and during a check.
    scanner.visit(page, asgi_live_server, "/checks/", "/checks/ (before)")
    page.get_by_role("button", name="Start checking").click()
    expect(page.locator("#check-card")).to_be_visible()
    scanner.scan(page, "/checks/ (a check)")
    # The next check is dealt with 12 s: the clock's last 10 s (red), then the time-up box.
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "SECONDS": 12}
    claim_text = page.locator("#check-claim").inner_text()
    page.get_by_role("button", name="Not enough info", exact=True).click()
    expect(page.locator("#check-claim")).not_to_have_text(claim_text, timeout=15_000)
    expect(page.locator("#checks")).to_have_class(re.compile(r"\bhurry\b"), timeout=10_000)
    scanner.scan(page, "/checks/ (the last seconds)")
    expect(page.get_by_role("button", name="Next claim")).to_be_visible(timeout=20_000)
    scanner.scan(page, "/checks/ (time is up)")
    scanner.assert_clean()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_moderators_and_a_researchers_pages_have_no_serious_violation(asgi_live_server: str, new_page, site: dict, viewport: dict, axe_source: Path) -> None:
    scanner = Scanner(axe_source)
    mona = new_page(viewport)
    log_in(mona, asgi_live_server, "mona", "/moderation/")
    for path in ("/moderation/", "/moderation/audit/", "/moderation/players/"):
        scanner.visit(mona, asgi_live_server, path)
    mona.goto(asgi_live_server + "/moderation/")
    card = mona.locator(".mod-card").first
    card.locator(".mod-clues summary").click()
    card.locator(".mod-edit-evidence summary").click()
    expect(card.locator(".mod-sentences li").first).to_be_visible()
    card.get_by_role("button", name="Remove").click()  # no reason: the card says why
    expect(card.locator(".mod-status")).to_contain_text("reason")
    scanner.scan(mona, "/moderation/ (a card open, an action refused)")
    card.get_by_label("Why (recorded in the audit log)").fill("Advertising.")
    card.get_by_role("button", name="Remove").click()
    expect(mona.get_by_role("dialog")).to_be_visible()
    scanner.scan(mona, "/moderation/ (the confirmation)")

    rita = new_page(viewport)
    log_in(rita, asgi_live_server, "rita", "/research/")
    expect(rita.locator(".export-card")).to_have_count(4)
    scanner.scan(rita, "/research/")
    scanner.assert_clean()


def host_a_room(page: Page, base: str, questions: int) -> str:
    page.goto(base + "/rooms/")
    page.get_by_label("Questions").fill(str(questions))
    page.get_by_label("I'll play too").check()  # the host plays: a room of members, the host ranked too
    page.get_by_role("button", name="Host a room").click()
    expect(page).to_have_url(re.compile(r"/rooms/[A-Z0-9]{6}/$"))
    return page.url


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_room_and_its_projector_have_no_serious_violation(asgi_live_server: str, new_page, site: dict, viewport: dict, axe_source: Path) -> None:
    """A host, a member and a guest in a 2-question room: waiting, a question, its answer, the end."""
    scanner = Scanner(axe_source)
    UserFactory(username="hana")
    host = new_page(viewport)
    log_in(host, asgi_live_server, "hana", "/rooms/")
    scanner.scan(host, "/rooms/ (lobby)")
    link = host_a_room(host, asgi_live_server, 2)
    code = link.rstrip("/").rsplit("/", 1)[1]
    projector = host.context.new_page()
    projector.goto(f"{link}projector/")
    member = new_page(viewport)
    log_in(member, asgi_live_server, "pat", "/accounts/me/")
    member.goto(link)
    guest = new_page(viewport)
    guest.goto(link)
    guest.get_by_label("Your nickname").fill("Kim_7")
    guest.get_by_role("button", name="Join as a guest").click()
    for page in (host, member, guest):
        expect(page.locator("#scoreboard tbody tr")).to_have_count(3)
    expect(projector.locator("#members li")).to_have_count(3)
    scanner.scan(host, "room (host, waiting)")
    scanner.scan(member, "room (member, waiting)")
    scanner.scan(guest, "room (guest, waiting)")
    scanner.scan(projector, "projector (waiting)")
    scanner.visit(guest, asgi_live_server, "/accounts/claim/", "/accounts/claim/ (guest)")
    scanner.visit(guest, asgi_live_server, "/play/", "/play/ (guest: rooms only)")
    scanner.visit(member, asgi_live_server, f"/rooms/{code}/projector/", "projector (not the host: 403)")
    member.goto(link)
    guest.goto(link)

    host.get_by_role("button", name="Start the first question").click()
    for page in (host, member, guest):
        expect(page.locator(".claim-card .vote").first).to_be_enabled()
    member.locator(".claim-card").nth(0).get_by_role("button", name=re.compile("Get a clue")).click()
    expect(member.locator(".claim-card").nth(0).locator(".clues li")).to_have_count(1)
    member.locator(".claim-card").nth(0).get_by_role("button", name="Mark as false").click()
    expect(host.locator("#answers-in")).to_have_text("1/3")
    expect(projector.locator("#stage-question")).to_be_visible()
    scanner.scan(host, "room (host, a question)")
    scanner.scan(member, "room (member, voted)")
    scanner.scan(guest, "room (guest, a question)")
    scanner.scan(projector, "projector (a question)")

    host.get_by_role("button", name="End the question now").click()
    for page in (host, member, guest):
        expect(page.locator("#answer-title")).not_to_be_empty()
    expect(projector.locator("#stage-answer")).to_be_visible()
    scanner.scan(host, "room (host, the answer)")
    scanner.scan(member, "room (member, the answer)")
    scanner.scan(projector, "projector (the answer)")

    host.get_by_role("button", name="Next question").click()
    expect(host.get_by_role("button", name="End the question now")).to_be_visible()
    host.get_by_role("button", name="End the question now").click()
    for page in (host, member, guest):
        expect(page.locator("#room-status")).to_contain_text("The room has ended")
    expect(projector.locator("#stage-end")).to_be_visible()
    scanner.scan(host, "room (host, the end)")
    scanner.scan(member, "room (member, the end)")
    scanner.scan(guest, "room (guest, the end)")
    scanner.scan(projector, "projector (the end)")
    scanner.assert_clean()
