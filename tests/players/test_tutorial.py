"""The first-run tutorial: shown on the game's pages until the player finishes or skips it,
which is stored on the server for the account (``POST /api/me/tutorial``, ``GET /api/me``)."""

from __future__ import annotations

import pytest
from django.test import Client

from foolgame.players.models import TutorialProgress
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def logged_in(player) -> Client:
    client = Client()
    client.force_login(player)
    return client


def test_a_new_player_has_the_tutorial_to_do(client) -> None:
    client.get("/api/auth/csrf")
    token = client.cookies["csrftoken"].value
    response = client.post("/api/auth/signup", {"username": "ada", "password": PASSWORD}, content_type="application/json", headers={"X-CSRFToken": token})
    assert response.status_code == 201 and response.json()["tutorial"] == "new"
    assert client.get("/api/me").json()["tutorial"] == "new"


@pytest.mark.parametrize("state", ["done", "skipped"])
def test_finishing_or_skipping_it_is_kept_for_the_account(state: str) -> None:
    ada = UserFactory(username="ada")
    response = logged_in(ada).post("/api/me/tutorial", {"tutorial": state}, content_type="application/json")
    assert response.status_code == 200 and response.json() == {"tutorial": state}
    # Another session (another device) of the same account sees it.
    assert logged_in(ada).get("/api/me").json()["tutorial"] == state
    assert TutorialProgress.objects.get(player=ada).state == state
    assert logged_in(UserFactory(username="bob")).get("/api/me").json()["tutorial"] == "new"


def test_new_shows_it_again() -> None:
    ada = UserFactory(username="ada")
    client = logged_in(ada)
    client.post("/api/me/tutorial", {"tutorial": "skipped"}, content_type="application/json")
    assert client.post("/api/me/tutorial", {"tutorial": "new"}, content_type="application/json").json() == {"tutorial": "new"}
    assert TutorialProgress.objects.get(player=ada).state == "new"
    assert client.get("/api/me").json()["tutorial"] == "new"


def voted_a_round(player) -> None:
    from foolgame.voting import services as rounds
    from tests.voting.conftest import make_claim
    from tests.factories import PageFactory

    page = PageFactory(title="Moon")
    author = UserFactory(username="writer")
    make_claim(page, label="SUPPORTS", author=author)
    make_claim(page, label="REFUTES", author=author)
    round_ = rounds.round_create(player=player)
    rounds.round_start(round_id=round_.pk, player=player)
    rounds.vote_cast(round_id=round_.pk, player=player, false_claim=0)


def test_it_finishes_itself_once_a_round_is_voted_and_a_claim_saved() -> None:
    from tests.factories import PageFactory
    from tests.voting.conftest import make_claim

    ada = UserFactory(username="ada")
    client = logged_in(ada)
    voted_a_round(ada)
    assert client.get("/api/me").json()["tutorial"] == "new"  # played, not written yet
    assert 'id="tutorial"' in client.get("/").content.decode()
    make_claim(PageFactory(title="Sun"), label="SUPPORTS", author=ada)
    assert client.get("/api/me").json()["tutorial"] == "done"
    assert TutorialProgress.objects.get(player=ada).state == "done"  # stored: one row read from now on
    for path in ("/", "/play/", "/accounts/me/"):
        assert 'id="tutorial"' not in client.get(path).content.decode()


def test_asked_for_again_it_stays_though_they_have_played_and_written() -> None:
    from tests.factories import PageFactory
    from tests.voting.conftest import make_claim

    ada = UserFactory(username="ada")
    client = logged_in(ada)
    voted_a_round(ada)
    make_claim(PageFactory(title="Sun"), label="SUPPORTS", author=ada)
    assert client.get("/api/me").json()["tutorial"] == "done"
    client.post("/api/me/tutorial", {"tutorial": "new"}, content_type="application/json")
    assert client.get("/api/me").json()["tutorial"] == "new"
    assert 'id="tutorial"' in client.get("/").content.decode()


@pytest.mark.parametrize("body", [{}, {"tutorial": "finished"}, {"tutorial": None}, []])
def test_a_bad_state_is_a_400_and_changes_nothing(body) -> None:
    response = logged_in(UserFactory()).post("/api/me/tutorial", body, content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]["code"]
    assert not TutorialProgress.objects.exists()


def test_it_needs_a_login(client) -> None:
    assert client.post("/api/me/tutorial", {"tutorial": "done"}, content_type="application/json").status_code == 403


@pytest.mark.parametrize("path", ["/", "/accounts/me/", "/play/"])
def test_the_pages_show_it_until_it_is_done(path: str) -> None:
    ada = UserFactory(username="ada")
    client = logged_in(ada)
    assert 'id="tutorial"' in client.get(path).content.decode()
    client.post("/api/me/tutorial", {"tutorial": "done"}, content_type="application/json")
    assert 'id="tutorial"' not in client.get(path).content.decode()


def test_an_anonymous_visitor_gets_it_hidden_for_the_script_to_decide(client) -> None:
    html = client.get("/").content.decode()
    assert 'id="tutorial"' in html and 'data-state="anonymous" hidden' in html
