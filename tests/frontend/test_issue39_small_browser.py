"""The smaller items of issue 39, in Chromium, each failed on the pages before: a room's answer
marks "Your pick"; the writer's breadcrumb names the page's way back, not "Task 1"; a
moderator-researcher's menu stays on one line at 1366 px; a relabel asks first; a guest
nickname with a space joins ("Dave K" as Dave_K). (The host's history calling a round of a
room they ended "Room ended": tests/voting/test_history.py.)"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from foolgame.authoring.services import write_task_create
from foolgame.claims.models import Claim
from foolgame.moderation.actions import moderator_set
from foolgame.moderation.quality import quality_refresh
from foolgame.rooms.models import RoomQuestion
from foolgame.voting.models import Report
from tests.factories import PageFactory, UserFactory
from tests.moderation.conftest import claim_pair
from tests.rooms.conftest import claim_pool
from tests.rooms.test_classroom_browser import LAPTOP, PHONE, host_a_room, player, shot
from tests.voting.test_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_rooms_answer_marks_your_pick_and_a_guest_may_have_a_space(asgi_live_server: str, browser: Browser) -> None:
    claim_pool(pages=3)
    host = player(browser, asgi_live_server, "hana", LAPTOP)
    link = host_a_room(host, asgi_live_server, 2)
    dave = browser.new_context(viewport=PHONE).new_page()
    dave.goto(link)
    dave.get_by_label("Your nickname").fill("Dave K")
    dave.keyboard.press("Enter")
    expect(dave.locator(".guest-note")).to_contain_text("Dave_K")
    host.get_by_role("button", name="Start the first question").click()
    expect(dave.locator(".claim-card .vote").first).to_be_enabled()
    pick = 1 - RoomQuestion.objects.get().false_claim_index
    dave.locator(".claim-card").nth(pick).get_by_role("button", name="Mark as false").click()
    host.get_by_role("button", name="End the question now").click()
    expect(dave.locator(".claim-card").nth(pick).locator(".pick-tag")).to_have_text("Your pick")
    expect(dave.locator(".pick-tag")).to_have_count(1)
    shot(dave, "phone-room-your-pick")
    dave.reload()  # from the room's state too
    expect(dave.locator(".claim-card").nth(pick).locator(".pick-tag")).to_have_text("Your pick")


def test_the_writer_breadcrumb_the_menu_and_the_relabel(live_server, page: Page) -> None:
    mona = UserFactory(username="mona")
    moderator_set(username=mona.username)
    mona.is_staff = True  # staff see Research
    mona.save(update_fields=["is_staff"])
    claim, _ = claim_pair(title="Saturn")
    Report.objects.create(claim=claim, reporter=UserFactory(username="rita"), reason="wrong_label", note="The label is backwards")
    quality_refresh(claim_ids=[claim.pk])
    shaka = PageFactory(title="Shaka")
    from foolgame.pages.models import Sentence

    Sentence.objects.bulk_create(Sentence(page=shaka, position=n, section_header="", text=f"Shaka fact {n}.") for n in range(3))
    task = write_task_create(player=mona, page_id=shaka.pk)
    page.set_viewport_size(LAPTOP)
    log_in(page, live_server.url, "mona")
    page.goto(live_server.url + f"/write/{task.pk}/")
    header = page.locator(".write-header")
    expect(header.get_by_role("link", name="Write")).to_be_visible()
    expect(header).not_to_contain_text(re.compile(r"Task \d"))
    tops = page.locator(".nav-links > li").evaluate_all("(items) => items.map((item) => Math.round(item.getBoundingClientRect().top))")
    assert len(tops) >= 10 and len(set(tops)) == 1, tops  # Moderation and Research in, on one line
    shot(page, "laptop-menu-1366")

    page.goto(live_server.url + "/moderation/")
    card = page.locator(".mod-card").first
    card.get_by_label("Why (recorded in the audit log)").fill("The reporter is right.")
    relabel = card.get_by_role("button", name=re.compile("^Relabel as"))
    relabel.click()
    dialog = page.get_by_role("dialog", name=re.compile(r"^Relabel as (TRUE|FALSE)\?$"))
    expect(dialog).to_be_visible()
    shot(page, "laptop-relabel-confirm")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    label = Claim.objects.get(pk=claim.pk).label
    relabel.click()
    page.get_by_role("dialog").get_by_role("button", name=re.compile("^Relabel as")).click()
    expect(card.locator(".mod-status")).to_contain_text("Relabel")
    assert Claim.objects.get(pk=claim.pk).label != label
