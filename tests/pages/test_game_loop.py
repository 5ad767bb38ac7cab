"""The game loop on the corpus pages: Play and Write from home and from a page, and a page
chosen for writing (``/write/?page=<id>``), the link the play page's result view uses."""

from __future__ import annotations

import pytest
from django.test import Client

from foolgame.authoring.models import WriteTask
from tests.factories import PageFactory, SentenceFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def writer(client: Client) -> Client:
    client.force_login(UserFactory(username="writer"))
    return client


def writable_page(title: str = "Saturn", **kwargs):
    page = PageFactory(title=title, **kwargs)
    SentenceFactory.create_batch(3, page=page)
    return page


def test_home_offers_play_and_write(client: Client) -> None:
    html = client.get("/").content.decode()
    assert 'href="/play/"' in html and ">Play a round</a>" in html
    assert 'href="/write/"' in html and ">Write a claim</a>" in html


def test_a_page_offers_writing_about_it_and_playing(client: Client) -> None:
    page = writable_page()
    html = client.get(f"/pages/{page.pk}/").content.decode()
    assert f'href="/write/?page={page.pk}"' in html
    assert 'href="/play/"' in html


def test_a_page_too_short_to_write_about_offers_only_play(client: Client) -> None:
    stub = PageFactory(title="Stub")
    SentenceFactory(page=stub)
    html = client.get(f"/pages/{stub.pk}/").content.decode()
    assert "/write/?page=" not in html and 'href="/play/"' in html


def test_writing_about_a_page_needs_a_login_and_comes_back_to_it(client: Client) -> None:
    page = writable_page()
    response = client.get(f"/write/?page={page.pk}")
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next=/write/%3Fpage%3D{page.pk}"


def test_the_write_page_with_a_page_offers_that_page_and_creates_nothing(writer: Client) -> None:
    page = writable_page("Saturn")
    html = writer.get(f"/write/?page={page.pk}").content.decode()
    assert "Start writing about Saturn" in html and f'name="page" value="{page.pk}"' in html
    assert WriteTask.objects.count() == 0  # a GET hands out nothing


@pytest.mark.parametrize("raw", ["999999", "saturn", "-1", "", "²", "1" * 40])
def test_the_write_page_with_an_unknown_page_is_not_found(writer: Client, raw: str) -> None:
    writable_page()
    assert writer.get(f"/write/?page={raw}").status_code == 404


def test_the_write_page_says_when_a_page_cannot_be_written_about(writer: Client) -> None:
    stub = PageFactory(title="Stub")
    SentenceFactory(page=stub)
    html = writer.get(f"/write/?page={stub.pk}").content.decode()
    assert "Stub has too few sentences" in html and "Start writing about" not in html
    response = writer.post("/write/", {"page": stub.pk}, follow=True)
    assert "too few sentences" in response.content.decode() and WriteTask.objects.count() == 0


def test_posting_a_page_gives_a_task_on_it_and_again_the_same_task(writer: Client) -> None:
    writable_page("Jupiter", priority=True)  # what the server would pick
    saturn = writable_page("Saturn")
    response = writer.post("/write/", {"page": saturn.pk})
    task = WriteTask.objects.get()
    assert task.page_id == saturn.pk and response["Location"] == f"/write/{task.pk}/"
    again = writer.post("/write/", {"page": saturn.pk})
    assert again["Location"] == f"/write/{task.pk}/" and WriteTask.objects.count() == 1
    # The link of the page view or of a round's result, followed again, goes to the same task.
    assert writer.get(f"/write/?page={saturn.pk}")["Location"] == f"/write/{task.pk}/"


def test_the_page_menu_lists_writable_pages_by_category(writer: Client) -> None:
    saturn = writable_page("Saturn")
    stub = PageFactory(title="Stub")
    SentenceFactory(page=stub)
    html = writer.get("/write/").content.decode()
    assert f'<option value="{saturn.pk}">Saturn</option>' in html
    assert f'<optgroup label="{saturn.category.name}">' in html
    assert ">Stub</option>" not in html


def test_posting_an_unknown_page_goes_back_to_the_menu_with_the_reason(writer: Client) -> None:
    writable_page()
    response = writer.post("/write/", {"page": 999999}, follow=True)
    assert response.redirect_chain[-1][0] == "/write/"
    assert "There is no page 999999." in response.content.decode() and WriteTask.objects.count() == 0
