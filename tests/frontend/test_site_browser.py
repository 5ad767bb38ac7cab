"""Small things of the whole site in a real browser: every page names the site's icon and no
request of any page fails (a missing icon was a 404 in the console on every page), and the
research page's number fields are styled like its other fields. Each test failed before."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from foolgame.pages.models import Page as Article
from tests.factories import PASSWORD, UserFactory
from tests.voting.test_browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def watch(page: Page) -> list[str]:
    """Every failed request and console error of the page, as lines."""
    problems: list[str] = []
    page.on("response", lambda response: problems.append(f"{response.status} {response.url}") if response.status >= 400 else None)
    # A request the next navigation cancels (Chromium fetches the icon lazily, and a loaded
    # machine may still be at it when the test moves on) is no failure of the page: a missing
    # icon shows as a 404 response and a console error above.
    page.on("requestfailed", lambda request: None if request.failure == "net::ERR_ABORTED" else problems.append(f"failed {request.url}: {request.failure}"))
    page.on("console", lambda message: problems.append(f"console {message.text}") if message.type == "error" else None)
    return problems


def test_no_page_has_a_request_that_fails_and_each_names_the_icon(asgi_live_server: str, page: Page, settings, tmp_path) -> None:
    settings.EXPORTS_DIR = tmp_path / "exports"
    call_command("load_demo", verbosity=0)
    UserFactory(username="admin-ada", is_staff=True, is_superuser=True)
    article = Article.objects.filter(category__isnull=False).select_related("category").first()
    problems = watch(page)
    page.goto(asgi_live_server + "/")  # anonymous first
    for path in ("/", f"/categories/{article.category.slug}/", f"/pages/{article.pk}/", "/leaderboard/", "/accounts/login/", "/accounts/signup/"):
        page.goto(asgi_live_server + path)
        page.wait_for_load_state("networkidle")
        expect(page.locator("link[rel=icon]")).to_have_attribute("href", "/static/fm2/favicon.svg")
    log_in(page, asgi_live_server, "admin-ada")
    page.wait_for_url("**/play/")
    for path in ("/", "/play/", "/accounts/me/", "/accounts/notifications/", "/rooms/", "/checks/", "/write/", "/moderation/", "/research/", "/api/docs/"):
        page.goto(asgi_live_server + path)
        page.wait_for_load_state("networkidle")
    assert problems == []
    icon = page.request.get(asgi_live_server + "/static/fm2/favicon.svg")
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    # Pages that name no icon of their own (the API's docs, the admin) get it at /favicon.ico.
    assert page.request.get(asgi_live_server + "/favicon.ico").url.endswith("/static/fm2/favicon.svg")


def test_the_research_pages_number_fields_look_like_its_text_fields(live_server, page: Page) -> None:
    UserFactory(username="rita")
    call_command("createresearcher", "rita", stdout=None)
    page.goto(live_server.url + "/accounts/login/?next=/research/")
    page.get_by_label("User name").fill("rita")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Dataset exports")).to_be_visible()
    page.wait_for_load_state("load")  # every stylesheet applied: on a busy machine exports.css came after the first field was measured
    style = "e => { const s = getComputedStyle(e); return [s.borderTopWidth, s.borderTopColor, s.borderRadius, s.paddingLeft, s.minHeight, s.width, s.fontSize, s.backgroundColor]; }"
    text = page.locator("#export-splits").evaluate(style)
    for field in ("#export-seed", "#export-baseline"):
        assert page.locator(field).evaluate(style) == text, field
