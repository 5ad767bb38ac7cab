"""The gold editor takes what the server takes: 1 or 2 gold sentences. A third tick is refused
on the page (the boxes left are disabled while two are ticked, and a line says why), and the
two saved are the claim's gold. The test failed on the page as it was before: a third box
could be ticked and the save only failed on the server."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from foolgame.claims.models import ClaimGold
from foolgame.moderation.actions import moderator_set
from foolgame.moderation.quality import quality_refresh
from foolgame.voting.models import Report
from tests.factories import PASSWORD, UserFactory
from tests.moderation.conftest import claim_pair

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_gold_editor_refuses_a_third_sentence(live_server, page: Page) -> None:
    moderator_set(username=UserFactory(username="mona").username)
    claim, _ = claim_pair(title="Saturn")
    for n in range(3):
        Report.objects.create(claim=claim, reporter=UserFactory(username=f"reporter{n}"), reason="wrong_label", note=f"n{n}")
    quality_refresh(claim_ids=[claim.pk])
    page.goto(live_server.url + "/accounts/login/?next=/moderation/")
    page.get_by_label("User name").fill("mona")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    card = page.locator(f"#claim-{claim.pk}")
    card.get_by_text("Edit gold evidence").click()
    boxes = card.locator("input[name=gold]")
    expect(boxes.first).to_be_visible()
    assert boxes.count() >= 4
    expect(card.locator("input[name=gold]:checked")).to_have_count(1)  # the claim's own gold
    own = card.locator("input[name=gold]:checked").get_attribute("value")
    unticked = card.locator("input[name=gold]:not(:checked)")
    second = unticked.nth(0).get_attribute("value")
    unticked.nth(0).check()
    expect(card.locator("input[name=gold]:checked")).to_have_count(2)
    expect(card.locator(".mod-gold-limit")).to_contain_text("the most a claim takes")
    third = card.locator("input[name=gold]:not(:checked)").first
    expect(third).to_be_disabled()
    third.click(force=True)  # a click on a disabled box does nothing
    expect(card.locator("input[name=gold]:checked")).to_have_count(2)
    # A tick that reaches the box anyway (a script) is undone, with a reason.
    third.evaluate("box => { box.disabled = false; box.click(); }")
    expect(card.locator("input[name=gold]:checked")).to_have_count(2)
    expect(card.locator(".mod-gold-limit")).to_contain_text("at most 2 gold sentences")
    # Untick the old gold: the others can be ticked again; the one left is saved.
    card.locator(f"input[name=gold][value='{own}']").uncheck()
    expect(card.locator("input[name=gold]:disabled")).to_have_count(0)
    expect(card.locator(".mod-gold-limit")).to_be_hidden()
    card.get_by_label("Why (recorded in the audit log)").fill("The evidence is elsewhere.")
    card.get_by_role("button", name="Save gold evidence").click()
    expect(card.locator(".mod-status")).to_contain_text("Gold evidence replaced")
    assert list(ClaimGold.objects.filter(claim=claim).values_list("sentence_id", flat=True)) == [int(second)]
