"""A study's arm changes a player's rounds on the server (``hooks.player_settings``): the
clock and the clue cost, clues offered or not, points shown or not. What the player notices,
on the server's clock (the test clock: nothing sleeps)."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.db.models import Sum
from django.test import Client

from foolgame.routing import websocket_urlpatterns
from foolgame.core.errors import ServiceError
from foolgame.players.models import LedgerEntry
from foolgame.voting import services
from foolgame.voting.models import ClueReveal, Round, Vote
from tests.arm_settings import ArmProvider, arm  # noqa: F401  (fixture)
from tests.factories import PASSWORD
from tests.voting.conftest import FakeClock
from tests.voting.test_consumers import frame

router = URLRouter(websocket_urlpatterns)

pytestmark = pytest.mark.django_db


def deadline_of(state: dict) -> datetime:
    return datetime.fromisoformat(state["deadline"])


def test_a_player_without_overrides_plays_exactly_todays_round(game, fake_clock: FakeClock, arm: ArmProvider, settings) -> None:
    arm.give(game.true_author, round_seconds=60, clue_seconds=20, hints=False, points_shown=False)  # someone else's arm
    round_ = services.round_create(player=game.voter)
    state = services.round_start(round_id=round_.pk, player=game.voter)
    assert (state["remaining"], state["points"], state["clue_cost"]) == (180.0, 120, 10)
    assert (deadline_of(state) - fake_clock()).total_seconds() == 180
    fake_clock.advance(5)
    clue = services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=0)
    assert (clue["remaining"], clue["points"]) == (165.0, 120)
    fake_clock.advance(100)
    result = services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    assert (result["correct"], result["points"]) == (True, 65)


def test_a_20_second_clue_moves_the_deadline_by_20_and_the_points_by_20(game, fake_clock: FakeClock, arm: ArmProvider) -> None:
    arm.give(game.voter, clue_seconds=20)
    round_ = services.round_create(player=game.voter)
    state = services.round_start(round_id=round_.pk, player=game.voter)
    fake_clock.advance(80)  # 100 s left: 100 points
    before = services.round_read(round_id=round_.pk, player=game.voter)
    assert (before["remaining"], before["points"], before["clue_cost"]) == (100.0, 100, 20)
    clue = services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=1)
    assert (clue["remaining"], clue["points"]) == (80.0, 80)
    assert (deadline_of(state) - deadline_of(clue)).total_seconds() == 20
    result = services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    assert result["points"] == 80
    assert LedgerEntry.objects.filter(player=game.voter, kind="verify").aggregate(t=Sum("amount"))["t"] == 80


def test_a_60_second_round_times_out_at_60_seconds_on_the_server_clock(game, fake_clock: FakeClock, arm: ArmProvider) -> None:
    arm.give(game.voter, round_seconds=60)
    round_ = services.round_create(player=game.voter)
    state = services.round_start(round_id=round_.pk, player=game.voter)
    assert (state["remaining"], state["points"]) == (60.0, 60)
    fake_clock.advance(59.5)
    assert services.round_read(round_id=round_.pk, player=game.voter)["status"] == "playing"
    fake_clock.advance(0.5)
    assert services.round_read(round_id=round_.pk, player=game.voter)["status"] == "timeout"
    with pytest.raises(ServiceError) as error:
        services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    assert error.value.code == "round_over"
    assert not Vote.objects.exists()


def test_an_open_rounds_clock_is_the_one_it_was_dealt_under(game, fake_clock: FakeClock, arm: ArmProvider, settings) -> None:
    """A change of the defaults (or of an arm) after the deal never moves the round's clock."""
    arm.give(game.voter, round_seconds=60)
    round_ = services.round_create(player=game.voter)
    arm.give(game.voter, round_seconds=300, clue_seconds=50)
    settings.FM2 = {**settings.FM2, "ROUND_SECONDS": 240, "CLUE_COST_SECONDS": 30}
    state = services.round_start(round_id=round_.pk, player=game.voter)
    assert (state["remaining"], state["clue_cost"]) == (60.0, 10)
    clue = services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=0)
    assert clue["remaining"] == 50.0


def test_hints_off_refuses_a_reveal_and_changes_nothing(game, fake_clock: FakeClock, arm: ArmProvider) -> None:
    arm.give(game.voter, hints=False)
    client = Client(enforce_csrf_checks=True)
    client.get("/api/auth/csrf")
    assert client.post("/api/auth/login", {"username": "vera", "password": PASSWORD}, content_type="application/json",
                       headers={"X-CSRFToken": client.cookies["csrftoken"].value}).status_code == 200
    client.defaults["HTTP_X_CSRFTOKEN"] = client.cookies["csrftoken"].value
    round_id = client.post("/api/rounds", "{}", content_type="application/json").json()["id"]
    state = client.post(f"/api/rounds/{round_id}/start", "{}", content_type="application/json").json()
    assert state["clues_left"] == [0, 0], "no clue is offered"
    deadline = Round.objects.get(pk=round_id).deadline
    response = client.post(f"/api/rounds/{round_id}/reveal", json.dumps({"claim": 0}), content_type="application/json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "clues_off"
    assert not ClueReveal.objects.exists() and Round.objects.get(pk=round_id).deadline == deadline
    assert client.get(f"/api/rounds/{round_id}").json()["remaining"] == state["remaining"]


def test_points_hidden_from_the_player_are_still_paid(game, fake_clock: FakeClock, arm: ArmProvider) -> None:
    arm.give(game.voter, points_shown=False)
    round_ = services.round_create(player=game.voter)
    state = services.round_start(round_id=round_.pk, player=game.voter)
    assert "points" not in state and state["remaining"] == 180.0
    fake_clock.advance(30)
    clue = services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=0)
    assert "points" not in clue and clue["remaining"] == 140.0
    result = services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    assert result["correct"] is True and "points" not in result
    assert "points" not in services.round_read(round_id=round_.pk, player=game.voter)["result"]
    history, _ = services.rounds_history(player=game.voter)
    assert "points" not in history[0]
    assert Vote.objects.get().points == 120
    assert LedgerEntry.objects.filter(player=game.voter, kind="verify").aggregate(t=Sum("amount"))["t"] == 120


@pytest.mark.django_db(transaction=True)
async def test_the_round_socket_hides_points_and_refuses_a_clue_when_the_arm_says_so(game, fake_clock: FakeClock, arm: ArmProvider) -> None:
    arm.give(game.voter, hints=False, points_shown=False, round_seconds=60)
    dealt = await database_sync_to_async(services.round_create)(player=game.voter)
    ws = WebsocketCommunicator(router, f"/ws/rounds/{dealt.pk}/")
    ws.scope["user"] = game.voter
    connected, code = await ws.connect()
    assert connected, code
    try:
        await ws.send_json_to({"type": "start"})
        state = await frame(ws, "state")
        assert state["remaining"] == 60 and "points" not in state and state["clues_left"] == [0, 0]
        await ws.send_json_to({"type": "reveal", "claim": 0})
        error = await frame(ws, "error")
        assert error["code"] == "clues_off"
        fake_clock.advance(20)
        tick = await frame(ws, "tick", timeout=3)
        assert tick == {"type": "tick", "remaining": 40.0}
        assert not await database_sync_to_async(ClueReveal.objects.exists)()
        fake_clock.advance(40)
        assert (await frame(ws, "timeout", timeout=3))["remaining"] == 0
    finally:
        await ws.disconnect()


def test_rounds_are_dealt_only_from_the_players_pages(game, fake_clock: FakeClock, arm: ArmProvider) -> None:
    from tests.factories import PageFactory
    from tests.voting.conftest import make_claim

    study_page = PageFactory(title="Jupiter")
    make_claim(study_page, label="SUPPORTS", author=game.true_author, text="Jupiter is the largest planet.")
    make_claim(study_page, label="REFUTES", author=game.false_author, text="Jupiter is smaller than Mercury.")
    arm.pages[game.voter.pk] = [study_page.pk]
    round_ = services.round_create(player=game.voter)
    assert {round_.left_claim.page_id, round_.right_claim.page_id} == {study_page.pk}
    with pytest.raises(ServiceError) as error:
        services.round_create(player=game.voter)
    assert error.value.code == "no_pair_available", "the other page's pair is never dealt to this player"
    other = services.round_create(player=game.true_author.__class__.objects.create(username="olga"))
    assert other.left_claim.page_id in (study_page.pk, game.true_claim.page_id)
