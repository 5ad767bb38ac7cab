"""The corpus pages in a real browser (Debian's Chromium through Playwright), served by a live server."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from foolgame.pages.models import Page as Article

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo(transactional_db) -> None:
    call_command("load_demo", verbosity=0)


def test_home_lists_categories_and_opens_a_page_view(live_server, page: Page, demo: None) -> None:
    page.goto(live_server.url + "/")
    expect(page.get_by_role("heading", name="Categories")).to_be_visible()
    literature = page.get_by_role("link", name="Literature")
    expect(literature).to_contain_text("3 pages")
    literature.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Literature")
    page.get_by_role("link", name="Hamlet").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Hamlet")
    hamlet = Article.objects.get(title="Hamlet")
    first = hamlet.sentences.order_by("position").first()
    expect(page.locator(f"#s{first.pk}")).to_have_text(first.text)
    # The stylesheet loaded: the header is dark, not the browser's default white.
    background = page.locator(".site-header").evaluate("e => getComputedStyle(e).backgroundColor")
    assert background == "rgb(29, 36, 51)"


def test_page_view_fits_a_phone_screen(live_server, page: Page, demo: None) -> None:
    page.set_viewport_size({"width": 375, "height": 740})
    article = Article.objects.get(title="Christ the Redeemer (statue)")
    page.goto(f"{live_server.url}/pages/{article.pk}/")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, "the page must not scroll sideways on a phone"


def test_signup_in_the_browser_lands_on_the_points_page(live_server, page: Page) -> None:
    page.goto(live_server.url + "/accounts/signup/")
    page.get_by_label("User name").fill("browser-player")
    page.get_by_label("Password").fill("a long enough passphrase")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("browser-player")
    expect(page.locator('dd[data-kind="total"]')).to_have_text("0")
