"""A room's rounds played with the solo round's REST twins: a REST vote or give-up that was
the last one the question waited for ends it at once."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from foolgame.rooms import services
from foolgame.rooms.events import room_group
from foolgame.rooms.models import RoomQuestion, RoomRound
from foolgame.voting import services as rounds
from foolgame.voting.models import Round
from tests.voting.test_apis import login, post

pytestmark = pytest.mark.django_db


def start_question(party) -> tuple[RoomQuestion, dict[str, Round]]:
    services.room_next_question(code=party.room.code, player=party.host)
    party.room.refresh_from_db()
    question = RoomQuestion.objects.get(room=party.room, number=party.room.current)
    plays = RoomRound.objects.filter(question=question).select_related("round", "player")
    return question, {play.player.username: play.round for play in plays}


def test_the_last_rest_vote_ends_the_question_and_tells_the_room(party, fake_clock, settings, django_capture_on_commit_callbacks) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    question, mine = start_question(party)
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(room_group(party.room.code), channel)
    rounds.vote_cast(round_id=mine["hana"].pk, player=party.host, false_claim=question.false_claim_index)
    rounds.vote_cast(round_id=mine["pia"].pk, player=party.players[0], false_claim=question.false_claim_index)
    with django_capture_on_commit_callbacks(execute=True):
        voted = post(login("otto"), f"/api/rounds/{mine['otto'].pk}/vote", {"false_claim": question.false_claim_index})
    assert voted.status_code == 200
    question.refresh_from_db()
    assert question.state == "done"
    answer = async_to_sync(layer.receive)(channel)
    assert answer["type"] == "room.answer" and answer["question_id"] == question.pk
    assert answer["false_claim"] == question.false_claim_index
    assert [f["username"] for f in answer["found"]] == ["hana", "otto", "pia"]


def test_the_last_rest_forfeit_ends_the_question(party, fake_clock) -> None:
    question, mine = start_question(party)
    rounds.vote_cast(round_id=mine["hana"].pk, player=party.host, false_claim=0)
    rounds.vote_cast(round_id=mine["otto"].pk, player=party.players[1], false_claim=1)
    forfeited = post(login("pia"), f"/api/rounds/{mine['pia'].pk}/forfeit")
    assert forfeited.status_code == 200
    question.refresh_from_db()
    assert question.state == "done"
    assert forfeited.json()["status"] == "timeout"
