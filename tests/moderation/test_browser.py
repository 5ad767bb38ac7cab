"""A moderator works the queue in a real browser: removes a reported claim and finds it in the audit log."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from foolgame.claims.models import Claim
from foolgame.moderation.actions import moderator_set
from foolgame.moderation.models import AuditRecord
from foolgame.moderation.quality import quality_refresh
from foolgame.voting.models import Report
from tests.factories import PASSWORD, UserFactory
from tests.moderation.conftest import claim_pair

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_moderator_removes_a_reported_claim_from_the_queue(live_server, page: Page) -> None:
    moderator_set(username=UserFactory(username="mona").username)
    spam, _ = claim_pair(title="Saturn")
    hard, _ = claim_pair(title="Iceland", true_counts=(1, 8))
    for n in range(3):
        Report.objects.create(claim=spam, reporter=UserFactory(username=f"reporter{n}"), reason="spam", note=f"Buy cheap watches {n}")
    quality_refresh(claim_ids=[spam.pk, hard.pk])

    page.goto(live_server.url + "/accounts/login/?next=/moderation/")
    page.get_by_label("User name").fill("mona")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Moderation queue")).to_be_visible()

    cards = page.locator(".mod-card")
    expect(cards).to_have_count(2)
    card = cards.nth(0)  # reported claims come first
    expect(card.locator(".mod-claim-text")).to_have_text(spam.text)
    expect(card.locator(".mod-why")).to_contain_text("Reported")
    expect(card.locator(".mod-reports")).to_contain_text("Buy cheap watches 2")
    expect(cards.nth(1).locator(".mod-why")).to_contain_text("Too hard")

    card.get_by_role("button", name="Remove").click()  # no reason yet: refused, nothing changes
    expect(card.locator(".mod-status")).to_contain_text("reason")
    assert Claim.objects.get(pk=spam.pk).status == "active"

    card.get_by_label("Why (recorded in the audit log)").fill("Advertising, not a claim.")
    card.get_by_role("button", name="Remove").click()
    dialog = page.get_by_role("dialog", name="Remove this claim?")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Keep it for now").click()  # cancelled: nothing happens
    expect(dialog).to_have_count(0)
    assert Claim.objects.get(pk=spam.pk).status == "active"
    card.get_by_role("button", name="Remove").click()
    page.get_by_role("dialog", name="Remove this claim?").get_by_role("button", name="Remove the claim").click()
    expect(card.locator(".mod-status")).to_have_text("Removed: Advertising, not a claim. (recorded in the audit log).")
    spam.refresh_from_db()
    assert (spam.status, spam.removed_reason) == ("removed", "Advertising, not a claim.")
    record = AuditRecord.objects.get()
    assert (record.moderator.username, record.action, record.claim_id) == ("mona", "remove", spam.pk)

    page.reload()
    expect(page.locator(".mod-card")).to_have_count(1)
    page.get_by_role("link", name="Audit log").click()
    row = page.locator(f"#audit-{record.pk}")
    expect(row).to_contain_text("Remove")
    expect(row).to_contain_text("Advertising, not a claim.")
    expect(row).to_contain_text("status: active → removed")


def test_players_get_403_from_the_queue_page(live_server, page: Page) -> None:
    response = page.goto(live_server.url + "/moderation/")
    assert response is not None and response.status == 403
    expect(page.get_by_role("heading", name="Moderators only")).to_be_visible()


def test_the_action_buttons_wait_for_the_page_script(live_server, page: Page) -> None:
    """Keep, Remove, Relabel and Save act through moderation.js: clicked before it has put its
    handler on they would do nothing, so they are disabled in the HTML until it enables them."""
    moderator_set(username=UserFactory(username="mona").username)
    spam, _ = claim_pair(title="Saturn")
    for n in range(3):
        Report.objects.create(claim=spam, reporter=UserFactory(username=f"reporter{n}"), reason="spam", note=f"spam {n}")
    quality_refresh(claim_ids=[spam.pk])
    script = re.compile(r".*/fm2/moderation\.js.*")
    page.route(script, lambda route: route.abort())
    page.goto(live_server.url + "/accounts/login/?next=/moderation/")
    page.get_by_label("User name").fill("mona")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    card = page.locator(".mod-card").nth(0)
    for name in ("Keep", "Remove", re.compile("Relabel")):
        expect(card.get_by_role("button", name=name)).to_be_disabled()
    page.unroute(script)
    page.reload()
    for name in ("Keep", "Remove", re.compile("Relabel")):
        expect(page.locator(".mod-card").nth(0).get_by_role("button", name=name)).to_be_enabled()


def test_moderator_clears_a_held_player_from_the_players_queue(live_server, page: Page) -> None:
    from django.utils import timezone

    from foolgame.moderation.models import PlayerAuditRecord, PlayerHold

    moderator_set(username=UserFactory(username="mona").username)
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
        held_at=timezone.now(),
    )

    page.goto(live_server.url + "/accounts/login/?next=/moderation/")
    page.get_by_label("User name").fill("mona")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="Held players").click()
    card = page.locator("#player-%d" % speedy.pk)
    expect(card).to_contain_text("30 right of 30")
    expect(card).to_contain_text("Improbable accuracy")

    card.get_by_role("button", name="Clear").click()  # no reason yet: refused, nothing changes
    expect(card.locator(".mod-status")).to_contain_text("reason")
    assert PlayerHold.objects.get(player=speedy).held

    card.get_by_label("Why (recorded in the audit log)").fill("Quiz champion, checked by mail.")
    card.get_by_role("button", name="Clear").click()
    expect(card.locator(".mod-status")).to_have_text("Cleared: Quiz champion, checked by mail. (recorded in the audit log).")
    hold = PlayerHold.objects.get(player=speedy)
    assert (hold.status, hold.held, hold.acted_by.username) == ("cleared", False, "mona")
    assert PlayerAuditRecord.objects.get().reason == "Quiz champion, checked by mail."
    page.reload()
    expect(page.locator(".mod-card")).to_have_count(0)
    expect(page.locator("#player-audit")).to_contain_text("Quiz champion, checked by mail.")
