"""The HTML site's own 404 and 500 pages; errors under /api/ stay JSON."""

from __future__ import annotations

import pytest
from django.template import loader

@pytest.mark.django_db
def test_a_missing_page_gets_the_styled_404(client) -> None:
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "<h1>Page not found</h1>" in html
    assert "/no/such/page/" in html
    assert 'class="site-header"' in html and "fm2/site.css" in html  # the site's own look
    assert 'href="/play/"' in html and 'href="/"' in html


@pytest.mark.django_db
def test_a_missing_page_of_a_logged_in_player_keeps_their_menu(client, django_user_model) -> None:
    client.force_login(django_user_model.objects.create_user("wanderer", password="x-Secret-123"))
    html = client.get("/pages/999999/").content.decode()
    assert "Page not found" in html and "wanderer" in html


@pytest.mark.django_db
def test_a_missing_api_url_stays_json(client) -> None:
    response = client.get("/api/no-such-endpoint")
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "Not found."}}


@pytest.mark.django_db
@pytest.mark.urls("tests.frontend.error_urls")
def test_a_view_that_raises_gets_the_styled_500(client, settings) -> None:
    settings.DEBUG = False
    client.raise_request_exception = False
    response = client.get("/broken/")
    assert response.status_code == 500
    html = response.content.decode()
    assert "<h1>Something went wrong</h1>" in html
    assert 'class="site-header"' in html and 'href="/play/"' in html and 'href="/"' in html
    assert "RuntimeError" not in html and "a bug in a view" not in html


@pytest.mark.django_db
@pytest.mark.urls("tests.frontend.error_urls")
def test_a_view_that_raises_under_api_answers_json(client, settings) -> None:
    settings.DEBUG = False
    client.raise_request_exception = False
    response = client.get("/api/broken")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "server_error"


def test_the_500_page_renders_without_a_request_or_the_database() -> None:
    """Django renders 500.html with an empty context; pytest-django refuses any query here."""
    html = loader.get_template("500.html").render()
    assert "Something went wrong" in html and "/static/fm2/site.css" in html
