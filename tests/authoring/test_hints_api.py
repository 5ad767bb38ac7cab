"""GET /api/pages/<id>/hints over HTTP (API.md), with the error shape of the whole API: authoring's
endpoint over evidence's retriever, on the Saturn page of the evidence tests."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from foolgame.authoring.models import WriteTask
from foolgame.voting.models import Round
from foolgame.pages.models import Page
from tests.evidence.conftest import saturn, sentence  # noqa: F401 (saturn: the page fixture)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def author(client: Client, saturn: Page) -> Client:
    """A player writing about Saturn: hints are served to holders of an open write task."""
    player = UserFactory()
    write_task_on(player=player, page=saturn)
    client.force_login(player)
    return client


def write_task_on(*, player, page: Page, expires_in: timedelta = timedelta(minutes=10), used: bool = False) -> WriteTask:
    now = timezone.now()
    return WriteTask.objects.create(
        player=player,
        page=page,
        veracity=WriteTask.Veracity.TRUE,
        write_by=now + expires_in,
        expires_at=now + expires_in,
        used_at=now if used else None,
    )


def test_hints_are_the_best_sentences_with_highlights(author: Client, saturn: Page) -> None:
    response = author.get(f"/api/pages/{saturn.pk}/hints", {"q": "Galileo saw the rings in 1610"})
    assert response.status_code == 200
    hints = response.json()
    galileo = sentence(saturn, "Galileo")
    assert hints[0] == {
        "sentence_id": galileo.pk,
        "text": galileo.text,
        "section_header": "Observation",
        "highlights": [[0, 7], [35, 40], [64, 68]],
    }
    assert [galileo.text[start:end] for start, end in hints[0]["highlights"]] == ["Galileo", "rings", "1610"]
    assert len(hints) <= 10


def test_blank_draft_gives_an_empty_list(author: Client, saturn: Page) -> None:
    assert author.get(f"/api/pages/{saturn.pk}/hints").json() == []
    assert author.get(f"/api/pages/{saturn.pk}/hints", {"q": "  "}).json() == []


def test_draft_over_2000_characters_is_a_400_invalid_query(author: Client, saturn: Page) -> None:
    response = author.get(f"/api/pages/{saturn.pk}/hints", {"q": "a" * 2001})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_query"


def test_unknown_page_is_a_404(author: Client) -> None:
    response = author.get("/api/pages/999999/hints", {"q": "rings"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_hints_are_for_logged_in_players_only(client: Client, saturn: Page) -> None:
    response = client.get(f"/api/pages/{saturn.pk}/hints", {"q": "rings"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "not_authenticated"


def test_hints_are_described_in_the_openapi_schema(client: Client) -> None:
    response = client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    operation = response.json()["paths"]["/api/pages/{page_id}/hints"]["get"]
    assert {p["name"] for p in operation["parameters"]} == {"page_id", "q"}
    assert {"200", "400", "403", "404"} <= set(operation["responses"])


# --- Hints are an authoring tool, never a free answer key for a voter (issue 12) -------------


def _round_on(*, player, page: Page, gold_text: str, state: str = "playing") -> Round:
    from tests.factories import ClaimFactory

    true_claim = ClaimFactory(page=page, text="Galileo saw the rings of Saturn in 1610.", gold=[sentence(page, gold_text)])
    false_claim = ClaimFactory(page=page, text="Saturn has exactly four moons.", label="REFUTES", gold=[sentence(page, "Saturn has 146")])
    now = timezone.now()
    started = state != "ready"
    return Round.objects.create(
        player=player,
        left_claim=true_claim,
        right_claim=false_claim,
        state=state,
        started_at=now if started else None,
        deadline=now + timedelta(minutes=3) if started else None,
    )


def test_a_voter_in_the_middle_of_a_round_gets_no_hints_that_hand_over_the_gold(client: Client, saturn: Page) -> None:
    voter = UserFactory()
    round_ = _round_on(player=voter, page=saturn, gold_text="Galileo")
    client.force_login(voter)
    response = client.get(f"/api/pages/{saturn.pk}/hints", {"q": round_.left_claim.text})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "hints_during_round"
    assert "Galileo Galilei" not in response.content.decode()


@pytest.mark.parametrize("state", ["ready", "playing"])
def test_no_hints_on_the_page_of_an_open_round_even_with_a_write_task_on_it(client: Client, saturn: Page, state: str) -> None:
    voter = UserFactory()
    write_task_on(player=voter, page=saturn)
    _round_on(player=voter, page=saturn, gold_text="Galileo", state=state)
    client.force_login(voter)
    response = client.get(f"/api/pages/{saturn.pk}/hints", {"q": "Galileo rings"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "hints_during_round"


def test_a_finished_round_no_longer_blocks_hints_for_a_writer(client: Client, saturn: Page) -> None:
    player = UserFactory()
    write_task_on(player=player, page=saturn)
    _round_on(player=player, page=saturn, gold_text="Galileo", state="voted")
    client.force_login(player)
    response = client.get(f"/api/pages/{saturn.pk}/hints", {"q": "Galileo rings"})
    assert response.status_code == 200
    assert response.json()[0]["text"].startswith("Galileo Galilei")


def test_hints_need_an_open_write_task_on_that_very_page(client: Client, saturn: Page) -> None:
    from tests.factories import PageFactory

    player = UserFactory()
    write_task_on(player=player, page=PageFactory(title="Jupiter"))
    client.force_login(player)
    response = client.get(f"/api/pages/{saturn.pk}/hints", {"q": "Galileo rings"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "hints_need_task"


@pytest.mark.parametrize("kind", ["expired", "used"])
def test_an_expired_or_used_write_task_gives_no_hints(client: Client, saturn: Page, kind: str) -> None:
    player = UserFactory()
    if kind == "expired":
        write_task_on(player=player, page=saturn, expires_in=timedelta(seconds=-1))
    else:
        write_task_on(player=player, page=saturn, used=True)
    client.force_login(player)
    response = client.get(f"/api/pages/{saturn.pk}/hints", {"q": "Galileo rings"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "hints_need_task"


def test_another_players_task_gives_no_hints(client: Client, saturn: Page) -> None:
    write_task_on(player=UserFactory(), page=saturn)
    client.force_login(UserFactory())
    response = client.get(f"/api/pages/{saturn.pk}/hints", {"q": "Galileo rings"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "hints_need_task"
