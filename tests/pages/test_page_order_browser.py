"""A page in the page's order (issue 39), in Chromium: a page of the FM2 release, whose
sentences are stored in the order the dataset listed them, reads lead first with each section
together under its parent, on the page's view (where a round's "Read the evidence" leads) and
on the writing view. Failed before: the page opened with "Scholarship studies | The Mfecane"."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from foolgame.authoring.services import write_task_create
from foolgame.pages.models import Sentence
from tests.factories import PageFactory, UserFactory
from tests.voting.test_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STORED = [  # as the FM2 release lists Shaka's evidence
    ("Scholarship studies | The Mfecane", "Historians debate the Mfecane."),
    ("Reign", "Shaka built a standing army."),
    ("Summary", "Shaka was a Zulu king."),
    ("Scholarship studies", "Scholars have studied his rule."),
    ("Reign", "He reorganised the regiments."),
]
READ = ["Summary", "Scholarship studies", "Scholarship studies | The Mfecane", "Reign"]


def test_the_page_and_the_writing_view_read_in_the_pages_order(asgi_live_server: str, page: Page) -> None:
    shaka = PageFactory(title="Shaka")
    Sentence.objects.bulk_create(Sentence(page=shaka, position=n, section_header=h, text=t) for n, (h, t) in enumerate(STORED))
    writer = UserFactory(username="writer")
    task = write_task_create(player=writer, page_id=shaka.pk)
    log_in(page, asgi_live_server, "writer")
    page.goto(asgi_live_server + f"/pages/{shaka.pk}/")
    expect(page.locator(".article-section h2")).to_have_text(READ)
    expect(page.locator("main").get_by_text("Shaka was a Zulu king.")).to_be_visible()
    page.goto(asgi_live_server + f"/write/{task.pk}/")
    expect(page.locator(".write-article .article-section h3")).to_have_text(READ)
    reign = page.locator(".article-section").filter(has=page.get_by_role("heading", name="Reign", exact=True))
    expect(reign.locator("li")).to_have_text(["Shaka built a standing army.", "He reorganised the regiments."])
