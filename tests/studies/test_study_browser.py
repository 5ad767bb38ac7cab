"""A study's pages in a real browser: a Prolific participant arrives by the study's link,
consents, lands on the progress page, and a reload on another visit resumes it."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from foolgame.studies import services
from foolgame.studies.models import Participant
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _study() -> str:
    owner = UserFactory(username="rita", is_staff=True)
    spec = {
        "name": "Clue cost",
        "consent": "You will spot false claims for ten minutes.",
        "tasks": {"vote": 2, "check": 1},
        "arms": [{"name": "ten", "settings": {"clue_seconds": 10}}],
        "participants": 2,
        "completion_code": "C0MPLETE",
    }
    return services.study_create(owner=owner, spec=spec).slug


def test_a_participant_consents_and_reaches_the_progress_page(asgi_live_server: str, page: Page) -> None:
    slug = _study()
    link = f"{asgi_live_server}/s/{slug}/?PROLIFIC_PID=pp-123&STUDY_ID=st-1&SESSION_ID=se-1"
    page.goto(link)
    expect(page.get_by_role("heading", name="Clue cost", level=1)).to_be_visible()
    expect(page.get_by_text("You will spot false claims for ten minutes.")).to_be_visible()
    button = page.get_by_role("button", name="I consent: start")
    expect(button).to_be_enabled()
    page.get_by_label("I have read the above and agree to take part.").check()
    button.click()
    expect(page.locator("#study-step")).to_have_text("1 of 3: spot the false claim")
    expect(page.get_by_role("link", name="Go on: spot the false claim")).to_have_attribute("href", "/play/")
    participant = Participant.objects.get()
    assert participant.platform_id == "pp-123" and participant.platform_extra == {"STUDY_ID": "st-1", "SESSION_ID": "se-1"}
    # Back to the same link later: the same participant, straight to their progress.
    page.goto(link)
    expect(page.locator("#study-step")).to_be_visible()
    assert Participant.objects.count() == 1


def test_without_ticking_consent_nothing_happens(asgi_live_server: str, page: Page) -> None:
    slug = _study()
    page.goto(f"{asgi_live_server}/s/{slug}/?pid=student-7")
    page.get_by_role("button", name="I consent: start").click()
    expect(page.locator("#study-step")).to_have_count(0)
    assert not Participant.objects.exists()
