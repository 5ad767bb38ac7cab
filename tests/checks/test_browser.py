"""The fact-check page in a real browser: checks in a row on a phone and a laptop, a reload,
the clock running out, nothing left, and never a claim's label before the answer."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from foolgame.checks.models import Check
from foolgame.pages.models import Sentence
from tests.checks.conftest import open_claim, settled_claim
from tests.factories import UserFactory
from tests.voting.test_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 800}
BUTTONS = {"SUPPORTS": "Supported", "REFUTES": "Refuted", "NOT ENOUGH INFO": "Not enough info"}
KEYS = {"SUPPORTS": "1", "REFUTES": "2", "NOT ENOUGH INFO": "3"}
# What would give a claim's label away, in the words of its values and of the buttons.
LABEL_WORDS = re.compile(r"support|refut|not enough|enough info|flawed|true|false", re.IGNORECASE)
# What would say an answer was right or wrong.
VERDICT_WORDS = re.compile(r"right|wrong|correct|incorrect|mistake|true|false|well done|oops", re.IGNORECASE)


def open_checks(page: Page, base: str, username: str, viewport: dict | None = None) -> None:
    if viewport:
        page.set_viewport_size(viewport)
    log_in(page, base, username)
    expect(page.get_by_role("link", name="Fact check")).to_be_visible()
    page.goto(base + "/checks/")
    expect(page.get_by_role("heading", name="Fact check", level=1)).to_be_visible()


def open_check_of(player) -> Check:
    return Check.objects.select_related("claim").get(player=player, answered_at__isnull=True)


def assert_in_reach(page: Page, viewport: dict) -> None:
    """The claim and the four answers on screen at once, the claim not under the answer bar."""
    for name in BUTTONS.values():
        expect(page.get_by_role("button", name=name, exact=True)).to_be_in_viewport()
    expect(page.get_by_role("button", name="This claim is flawed")).to_be_in_viewport()
    claim = page.locator("#check-claim").bounding_box()
    answers = page.locator("#check-answers").bounding_box()
    status = page.locator("#checks-status").bounding_box()
    assert claim and answers and status
    assert 0 <= claim["y"] and claim["y"] + claim["height"] <= answers["y"] <= viewport["height"], (claim, answers)
    assert answers["y"] + answers["height"] <= viewport["height"] + 1, answers
    assert status["y"] + status["height"] <= claim["y"], (status, claim)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, "the page must not scroll sideways"


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_a_player_checks_three_claims_in_a_row(asgi_live_server: str, page: Page, viewport: dict, settings) -> None:
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "TALLY_SIZE": 3}
    settled = settled_claim("Rigel", label="REFUTES")
    open_claim("Vega", label="SUPPORTS")
    open_claim("Deneb", label="REFUTES")
    player = UserFactory(username="checker")
    open_checks(page, asgi_live_server, "checker", viewport)
    page.get_by_role("button", name="Start checking").click()
    seen: list[int] = []
    expect(page.locator("#check-tally")).to_have_text("0/3")
    for turn in range(3):
        expect(page.locator("#check-claim")).not_to_have_text(re.compile(r"^$"))
        check = open_check_of(player)
        assert check.claim_id not in seen, "the next claim did not replace the last"
        seen.append(check.claim_id)
        expect(page.locator("#check-claim")).to_have_text(check.claim.text)
        expect(page.locator("#check-claim")).to_be_focused()
        expect(page.get_by_role("link", name=check.claim.page.title)).to_have_attribute("href", f"/pages/{check.claim.page_id}/")
        expect(page.locator("#check-evidence li")).to_have_count(1)
        assert not LABEL_WORDS.search(page.locator("#check-card").inner_text()), "the card shows a label"
        assert not LABEL_WORDS.search(page.locator("#check-card").inner_html()), "the card's markup holds a label"
        assert not [value for value in BUTTONS if value in page.content()], "the page holds a label's value"
        assert_in_reach(page, viewport)
        # A settled claim answered with its label earns points; an open claim gets an answer
        # its author did not give (the page must not say it is wrong).
        answer = check.settled_label or ("REFUTES" if check.claim.label != "REFUTES" else "SUPPORTS")
        if viewport is LAPTOP:
            page.keyboard.press(KEYS[answer])
        else:
            page.get_by_role("button", name=BUTTONS[answer], exact=True).click()
        if turn < 2:  # the answer's response brings the next check, already dealt
            expect(page.locator("#check-claim")).not_to_have_text(check.claim.text)
        else:
            expect(page.get_by_role("heading", name="Nothing left to check")).to_be_visible()
        # Each answer reads the same whether its claim was settled or not: the streak counts
        # answers in time; the tally of the three says how many matched, never which.
        feedback = page.locator("#check-feedback")
        if turn < 2:
            expect(feedback).to_have_text("Answer recorded. " + ("2 answers" if turn == 0 else "1 answer") + " to your next tally.")
            expect(page.locator("#check-tally")).to_have_text(f"{turn + 1}/3")
        else:
            expect(feedback).to_have_text(
                "Tally 1 of your last 3 answers: 1 of the 1 on claims with a settled label matched it. "
                "No points yet: a tally pays once your record on settled claims is clearly better than guessing."
            )
            expect(page.locator("#check-tally")).to_have_text("0/3")
        assert not VERDICT_WORDS.search(feedback.inner_text())
        expect(page.locator("#check-streak")).to_have_text(str(turn + 1))
        expect(page.locator("#check-points")).to_have_text("0")
        check.refresh_from_db()
        assert check.label == answer
    assert settled.pk in seen
    assert Check.objects.filter(player=player, answered_at__isnull=False).count() == 3


def test_a_reload_mid_check_resumes_the_same_claim(asgi_live_server: str, page: Page) -> None:
    open_claim("Vega")
    open_claim("Deneb")
    Sentence.objects.update(section_header="Observation")
    player = UserFactory(username="reloader")
    open_checks(page, asgi_live_server, "reloader", PHONE)
    page.get_by_role("button", name="Start checking").click()
    expect(page.locator("#check-claim")).not_to_have_text(re.compile(r"^$"))
    check = open_check_of(player)
    page.reload()
    # No Start to press: the open check comes back with the server's time left.
    expect(page.locator("#check-claim")).to_have_text(check.claim.text)
    expect(page.locator("#check-start")).to_be_hidden()
    expect(page.locator("#check-evidence li")).to_have_text(re.compile(r"^Observation Decisive evidence for "))
    assert Check.objects.filter(player=player).count() == 1
    minutes, seconds = page.locator("#check-remaining").inner_text().split(":")
    assert 30 <= int(minutes) * 60 + int(seconds) <= 45
    page.get_by_role("button", name="Not enough info", exact=True).click()
    expect(page.locator("#check-feedback")).to_have_text("Answer recorded. 19 answers to your next tally.")
    expect(page.locator("#check-claim")).not_to_have_text(check.claim.text)


def test_when_the_clock_runs_out_the_page_offers_the_next_claim(asgi_live_server: str, page: Page, settings) -> None:
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "SECONDS": 3}
    open_claim("Vega")
    open_claim("Deneb")
    player = UserFactory(username="slowpoke")
    open_checks(page, asgi_live_server, "slowpoke", PHONE)
    page.get_by_role("button", name="Start checking").click()
    expect(page.locator("#check-claim")).not_to_have_text(re.compile(r"^$"))
    first = open_check_of(player)
    expect(page.get_by_text("Time is up.", exact=True)).to_be_visible(timeout=8000)
    expect(page.locator("#check-remaining")).to_have_text("0:00")
    expect(page.get_by_role("button", name="Supported", exact=True)).to_be_hidden()
    next_button = page.get_by_role("button", name="Next claim")
    expect(next_button).to_be_focused()
    expect(next_button).to_be_in_viewport()
    next_button.click()
    expect(page.locator("#check-claim")).not_to_have_text(first.claim.text)
    expect(page.get_by_role("button", name="Supported", exact=True)).to_be_enabled()
    first.refresh_from_db()
    assert first.answered_at is None
    assert Check.objects.filter(player=player).count() == 2


def test_nothing_left_to_check(asgi_live_server: str, page: Page) -> None:
    UserFactory(username="early")
    page.goto(asgi_live_server + "/checks/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/checks/$"))  # like /play/: log in first
    open_checks(page, asgi_live_server, "early")
    page.get_by_role("button", name="Start checking").click()
    expect(page.get_by_role("heading", name="Nothing left to check")).to_be_focused()
    expect(page.locator("#check")).to_be_hidden()


def test_a_refused_deal_reads_clearly_and_can_be_tried_again(asgi_live_server: str, page: Page, settings) -> None:
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "PER_HOUR": 0}
    open_claim("Vega")
    UserFactory(username="eager")
    open_checks(page, asgi_live_server, "eager")
    page.get_by_role("button", name="Start checking").click()
    expect(page.locator("#check-error")).to_have_text(re.compile(r"^At most 0 checks an hour"))
    settings.FM2_CHECKS = {**settings.FM2_CHECKS, "PER_HOUR": 600}
    page.get_by_role("button", name="Next claim").click()
    expect(page.locator("#check-claim")).to_have_text("Vega has a claim to check.")
    expect(page.locator("#check-error")).to_be_hidden()


def test_a_checker_whose_labels_stopped_counting_is_told_why(asgi_live_server: str, page: Page) -> None:
    from django.utils import timezone

    from foolgame.checks.models import CheckTally

    player = UserFactory(username="sloppy")
    now = timezone.now()
    tally = CheckTally.objects.create(
        player=player, number=1, closed_at=now, answered=5, gold=5, right=0, record_right=0, record_seen=5, paid=False, counting=False
    )
    for i in range(5):  # five settled claims, all answered wrong and tallied: under the accuracy bar
        claim = settled_claim(f"Star {i}", label="REFUTES")
        Check.objects.create(
            player=player, claim=claim, dealt_at=now, expires_at=now, answered_at=now, label="SUPPORTS", settled_label="REFUTES", correct=False, tally=tally
        )
    open_claim("Vega")
    open_claim("Deneb")
    open_checks(page, asgi_live_server, "sloppy", PHONE)
    page.get_by_role("button", name="Start checking").click()
    page.get_by_role("button", name="Refuted", exact=True).click()
    warning = page.locator("#check-not-counting")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text("no longer count")
    expect(warning).to_be_in_viewport()


def test_a_checks_evidence_reads_in_the_pages_order(asgi_live_server: str, page: Page) -> None:
    """Issue 39, item 6: the gold sentences as the page reads (its lead first, a section before
    its subsections), not in the order the author marked them."""
    from foolgame.claims.models import Claim, ClaimGold
    from tests.factories import PageFactory

    shaka = PageFactory(title="Shaka")
    sub = Sentence.objects.create(page=shaka, position=0, section_header="Scholarship studies | The Mfecane", text="Shaka's wars set off the Mfecane.")
    lead = Sentence.objects.create(page=shaka, position=1, section_header="", text="Shaka was a Zulu king.")
    claim = Claim.objects.create(page=shaka, label="SUPPORTS", author=UserFactory(), text="Shaka ruled the Zulu.", clues=[])
    ClaimGold.objects.create(claim=claim, sentence=sub, position=0)
    ClaimGold.objects.create(claim=claim, sentence=lead, position=1)
    UserFactory(username="reader")
    open_checks(page, asgi_live_server, "reader", LAPTOP)
    page.get_by_role("button", name="Start checking").click()
    expect(page.locator("#check-claim")).to_have_text("Shaka ruled the Zulu.")
    expect(page.locator("#check-evidence li")).to_have_text(["Shaka was a Zulu king.", "Scholarship studies | The Mfecane Shaka's wars set off the Mfecane."])
