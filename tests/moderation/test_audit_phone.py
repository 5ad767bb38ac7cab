"""The audit log on a phone (390x844): no sideways scrolling, gold changes as sentence texts,
report reasons as words; the queue shows report reasons as words too."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from foolgame.moderation.actions import claim_moderate, moderator_set
from foolgame.moderation.models import AuditRecord
from foolgame.moderation.quality import quality_refresh
from foolgame.voting.models import Report
from tests.factories import PASSWORD, SentenceFactory, UserFactory
from tests.moderation.conftest import claim_pair

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NEW_GOLD = (
    "Saturn's rings are made mostly of water ice, with a smaller amount of rocky debris and dust, "
    "and extend from 7,000 to 80,000 kilometres above the planet's equator."
)


def _log_in(page: Page, base: str, next_url: str) -> None:
    page.goto(f"{base}/accounts/login/?next={next_url}")
    page.get_by_label("User name").fill("mona")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def _fits_the_screen(page: Page) -> bool:
    # After the login form's redirect the DOM can be there before its stylesheet (a loaded
    # machine): measure once the page has loaded, CSS included.
    page.wait_for_load_state("load")
    return page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")


def test_audit_log_on_a_phone_shows_gold_texts_and_report_reasons_without_sideways_scroll(live_server, page: Page) -> None:
    mona = UserFactory(username="mona")
    moderator_set(username=mona.username)
    claim, _ = claim_pair(title="Saturn")
    old_gold = claim.gold_links.get().sentence.text
    new_gold = SentenceFactory(page=claim.page, text=NEW_GOLD)
    Report.objects.create(claim=claim, reporter=UserFactory(username="rhea"), reason="wrong_label", note="The page says otherwise.")
    Report.objects.create(claim=claim, reporter=UserFactory(username="titan"), reason="inappropriate")
    quality_refresh(claim_ids=[claim.pk])
    claim_moderate(
        moderator=mona, claim_id=claim.pk, action="edit_evidence", reason="The rings sentence is the real evidence.", gold_sentence_ids=[new_gold.pk]
    )
    record = AuditRecord.objects.get()

    page.set_viewport_size({"width": 390, "height": 844})
    _log_in(page, live_server.url, "/moderation/audit/")
    expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    row = page.locator(f"#audit-{record.pk}")
    expect(row).to_contain_text("Edit evidence")
    expect(row.locator(".mod-gold-change")).to_contain_text(old_gold)
    expect(row.locator(".mod-gold-change")).to_contain_text(NEW_GOLD)
    expect(row.locator(".mod-audit-reports")).to_contain_text("Wrong label")
    expect(row.locator(".mod-audit-reports")).to_contain_text("Inappropriate")
    assert "wrong_label" not in row.inner_text()
    assert f"{new_gold.pk} " not in row.locator(".mod-change").inner_text()  # texts, not ids
    assert _fits_the_screen(page)
    # Stacked: the record's cells sit one under another, each with its column's name.
    assert row.locator("td").nth(0).bounding_box()["y"] < row.locator("td").nth(1).bounding_box()["y"]
    expect(row.locator("td[data-label='Before → after']")).to_be_visible()


def test_queue_on_a_phone_names_report_reasons_in_words(live_server, page: Page) -> None:
    moderator_set(username=UserFactory(username="mona").username)
    claim, _ = claim_pair(title="Saturn")
    Report.objects.create(claim=claim, reporter=UserFactory(username="rhea"), reason="wrong_label", note="The page says otherwise.")
    quality_refresh(claim_ids=[claim.pk])

    page.set_viewport_size({"width": 390, "height": 844})
    _log_in(page, live_server.url, "/moderation/")
    reports = page.locator(f"#claim-{claim.pk} .mod-reports")
    expect(reports).to_contain_text("Wrong label by rhea")
    assert "wrong_label" not in reports.inner_text()
    assert _fits_the_screen(page)
