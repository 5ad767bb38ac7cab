"""A teacher runs a room from the projector and does not play (issue 39), in Chromium: the
host is dealt nothing and is on no board or podium; the answers-in count reaches "3/3" on
every screen and the answer comes at the last vote, with no End pressed and no clock run out;
and the projector runs the room by mouse and by keys (Space or a clicker's PageDown for the
next question, E to end it, S to skip it, B for the board, End the room after a
confirmation), so the teacher never leaves it. Phones and laptops as in the classroom test,
the projector at 1920x1080; with FM2_SCREENSHOTS set, each step is saved there.

Both tests failed on the page before: the lobby had no "I'll play too", the host was one of
the "0/4" and on the podium, the last vote's count never reached the screens, and the
projector had no controls."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from foolgame.rooms.models import Room, RoomQuestion
from tests.rooms.conftest import claim_pool
from tests.rooms.test_classroom_browser import LAPTOP, PHONE, player, shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PROJECTOR = {"width": 1920, "height": 1080}


def teacher_hosts(host: Page, base: str, questions: int) -> tuple[str, Page]:
    """The teacher makes a room without ticking "I'll play too" and opens its projector."""
    host.goto(base + "/rooms/")
    host.get_by_label("Questions").fill(str(questions))
    expect(host.get_by_label("I'll play too")).not_to_be_checked()
    host.get_by_role("button", name="Host a room").click()
    expect(host).to_have_url(re.compile(r"/rooms/[A-Z0-9]{6}/$"))
    link = host.url
    screen = host.context.new_page()
    screen.set_viewport_size(PROJECTOR)
    screen.goto(link + "projector/")
    return link, screen


def vote(page: Page, index: int) -> None:
    page.locator(".claim-card").nth(index).get_by_role("button", name="Mark as false").click()


def test_a_host_who_does_not_play_and_the_count_reaches_everyone(asgi_live_server: str, browser: Browser) -> None:
    claim_pool(pages=3)
    host = player(browser, asgi_live_server, "teach", LAPTOP)
    link, screen = teacher_hosts(host, asgi_live_server, 2)
    players = [player(browser, asgi_live_server, name, viewport) for name, viewport in (("pia", PHONE), ("otto", LAPTOP), ("dave", PHONE))]
    for page in players:
        page.goto(link)
    expect(screen.locator("#members li")).to_have_count(3)
    expect(screen.locator("#members")).not_to_contain_text("teach")
    expect(host.locator("#scoreboard tbody tr")).to_have_count(3)
    shot(screen, "projector-1-lobby")

    screen.get_by_role("button", name="Start the first question").click()
    for page in (host, *players):
        expect(page.locator("#answers-in")).to_have_text("0/3")
    expect(screen.locator("#stage-answers")).to_have_text("0/3")
    # The host sees the claims (to read them out), not a vote or a clue of their own.
    expect(host.locator(".claim-card").first).to_be_visible()
    expect(host.get_by_role("button", name="Mark as false")).to_have_count(0)
    expect(host.locator("#question-note")).to_contain_text("You run this room")
    shot(host, "laptop-host-question")
    false_index = RoomQuestion.objects.get().false_claim_index
    vote(players[0], false_index)
    vote(players[1], 1 - false_index)
    for page in (host, *players):
        expect(page.locator("#answers-in")).to_have_text("2/3", timeout=15_000)  # six sockets of one process on a loaded machine
    vote(players[2], false_index)  # the last vote: the answer now, with its count
    title = f"The false claim was the {('left', 'right')[false_index]} one"
    for page in (host, *players):
        expect(page.locator("#answer-title")).to_have_text(title)
        expect(page.locator("#answers-in")).to_have_text("3/3")
    expect(screen.locator("#stage-answers")).to_have_text("3/3")
    expect(screen.locator(".stage-claim.is-false")).to_have_attribute("data-index", str(false_index))
    question = RoomQuestion.objects.get()
    assert not question.ended_early and question.ended_at < question.deadline
    shot(players[0], "phone-answer-3-of-3")
    shot(screen, "projector-2-answer")

    screen.keyboard.press("Space")  # a clicker's "next"
    for page in players:
        expect(page.locator("#question-number")).to_have_text("2/2")
    for page in players:
        vote(page, RoomQuestion.objects.get(number=2).false_claim_index)
    expect(screen.locator("#stage-podium li")).to_have_count(3)
    expect(screen.locator("#stage-podium")).not_to_contain_text("teach")
    expect(host.locator("#podium")).not_to_contain_text("teach")
    expect(host.locator("#scoreboard")).not_to_contain_text("teach")
    shot(screen, "projector-3-end")


def test_the_projector_runs_the_room(asgi_live_server: str, browser: Browser) -> None:
    claim_pool(pages=4)
    host = player(browser, asgi_live_server, "teach", LAPTOP)
    link, screen = teacher_hosts(host, asgi_live_server, 3)
    pia = player(browser, asgi_live_server, "pia", PHONE)
    pia.goto(link)
    expect(screen.locator("#members li")).to_have_count(1)
    expect(screen.get_by_role("button", name="End the question now")).to_be_hidden()

    screen.keyboard.press("Space")
    expect(pia.locator("#question-number")).to_have_text("1/3")
    expect(screen.get_by_role("button", name="Next question")).to_be_hidden()
    screen.keyboard.press("Space")  # a second press while it plays deals nothing
    screen.keyboard.press("e")
    expect(pia.locator("#answer-note")).to_have_text("The host ended this question early.")
    expect(screen.locator("#stage-answer")).to_be_visible()
    assert RoomQuestion.objects.count() == 1

    screen.get_by_role("button", name="Next question").click()
    expect(pia.locator("#question-number")).to_have_text("2/3")
    screen.get_by_role("button", name="Skip this question").click()
    expect(pia.locator("#answer-note")).to_have_text("The host skipped this question: nobody scores on it.")
    assert RoomQuestion.objects.get(number=2).skipped

    screen.keyboard.press("b")
    expect(screen.get_by_role("heading", name="Scoreboard")).to_be_visible()
    expect(screen.locator("#stage-board-rows li")).to_have_count(1)
    expect(screen.locator("#stage-board-rows")).to_contain_text("pia")
    expect(screen.get_by_role("button", name="Hide the board")).to_have_attribute("aria-pressed", "true")
    shot(screen, "projector-4-board")
    screen.keyboard.press("b")
    expect(screen.locator("#stage-board")).to_be_hidden()

    end = screen.get_by_role("button", name="End the room")
    end.click()
    dialog = screen.get_by_role("dialog", name="End the room?")
    expect(dialog).to_be_visible()
    shot(screen, "projector-5-confirm")
    screen.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    assert Room.objects.get().state != Room.State.ENDED
    end.click()
    screen.get_by_role("dialog").get_by_role("button", name="End the room").click()
    expect(screen.locator("#stage-status")).to_have_text("The room has ended.")
    expect(pia.locator("#room-status")).to_contain_text("The host ended the room.")
    expect(pia.locator("#again-note")).to_be_hidden()  # no "If the host plays again": they ended it
    assert Room.objects.get().state == Room.State.ENDED
    screen.set_viewport_size(PHONE)
    shot(screen, "phone-projector-end")
