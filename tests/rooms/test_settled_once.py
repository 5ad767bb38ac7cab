"""A room's question is settled by the round services, once, after the commit, whatever
transport carried its last vote: REST, the round socket or the room socket each make the
vote's service send ``round_settled`` exactly once, and the question ends exactly once."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from foolgame.core import hooks
from foolgame.rooms import events as room_events
from foolgame.rooms import services
from foolgame.rooms.models import RoomQuestion, RoomRound
from foolgame.routing import websocket_urlpatterns
from foolgame.voting import services as rounds
from tests.voting.test_apis import login, post

router = URLRouter(websocket_urlpatterns)


class Counted:
    """How often ``round_settled`` was sent, for which rounds, and how often a question ended."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.settled: list[int] = []
        self.ended: list[int] = []
        send, ended = hooks.round_settled.send, room_events.question_ended_on_commit

        def counting_send(**kwargs):
            self.settled.append(kwargs["round_id"])
            return send(**kwargs)

        def counting_end(room, answer, **kwargs):
            self.ended.append(answer["question_id"])
            return ended(room, answer, **kwargs)

        monkeypatch.setattr(hooks.round_settled, "send", counting_send)
        monkeypatch.setattr(room_events, "question_ended_on_commit", counting_end)

    def reset(self) -> None:
        self.settled.clear()
        self.ended.clear()


def two_votes_in(party) -> tuple[RoomQuestion, dict[str, int]]:
    """The room's first question with hana and pia voted (through the service): otto's vote is
    the last one it waits for."""
    services.room_next_question(code=party.room.code, player=party.host)
    question = RoomQuestion.objects.get(room=party.room, number=1)
    mine = dict(RoomRound.objects.filter(question=question).values_list("player__username", "round_id"))
    rounds.vote_cast(round_id=mine["hana"], player=party.host, false_claim=question.false_claim_index)
    rounds.vote_cast(round_id=mine["pia"], player=party.players[0], false_claim=question.false_claim_index)
    return question, mine


@pytest.mark.django_db
def test_the_last_vote_over_rest_settles_the_question_once(party, fake_clock, monkeypatch, django_capture_on_commit_callbacks) -> None:
    counted = Counted(monkeypatch)
    question, mine = two_votes_in(party)
    counted.reset()
    with django_capture_on_commit_callbacks(execute=True):
        voted = post(login("otto"), f"/api/rounds/{mine['otto']}/vote", {"false_claim": question.false_claim_index})
    assert voted.status_code == 200, voted.content
    question.refresh_from_db()
    assert question.state == "done"
    assert counted.settled == [mine["otto"]] and counted.ended == [question.pk]


@pytest.mark.django_db
def test_a_vote_that_is_not_the_last_sends_once_and_ends_nothing(party, fake_clock, monkeypatch, django_capture_on_commit_callbacks) -> None:
    counted = Counted(monkeypatch)
    services.room_next_question(code=party.room.code, player=party.host)
    question = RoomQuestion.objects.get(room=party.room, number=1)
    mine = dict(RoomRound.objects.filter(question=question).values_list("player__username", "round_id"))
    with django_capture_on_commit_callbacks(execute=True):
        post(login("pia"), f"/api/rounds/{mine['pia']}/vote", {"false_claim": question.false_claim_index})
    question.refresh_from_db()
    assert question.state == "playing" and counted.settled == [mine["pia"]] and counted.ended == []


@pytest.mark.django_db
def test_a_vote_refused_sends_nothing(party, fake_clock, monkeypatch, django_capture_on_commit_callbacks) -> None:
    counted = Counted(monkeypatch)
    question, mine = two_votes_in(party)
    counted.reset()
    with django_capture_on_commit_callbacks(execute=True):
        again = post(login("pia"), f"/api/rounds/{mine['pia']}/vote", {"false_claim": 0})
    assert again.status_code == 409 and counted.settled == [] and counted.ended == []


async def _socket_vote(path: str, user, frame: dict, answer_type: str) -> dict:
    ws = WebsocketCommunicator(router, path)
    ws.scope["user"] = user
    connected, _ = await ws.connect()
    assert connected
    try:
        await ws.send_json_to(frame)
        while True:
            message = json.loads(await ws.receive_from(timeout=3))
            if message["type"] == answer_type:
                return message
            assert message["type"] in ("tick", "members", "votes", "room", "state"), message
    finally:
        await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_the_last_vote_over_the_round_socket_settles_the_question_once(party, fake_clock, monkeypatch) -> None:
    counted = Counted(monkeypatch)
    question, mine = await database_sync_to_async(two_votes_in)(party)
    counted.reset()
    result = await _socket_vote(f"/ws/rounds/{mine['otto']}/", party.players[1], {"type": "vote", "false_claim": question.false_claim_index}, "result")
    assert result == {"type": "result", "remaining": result["remaining"]}  # a room's round: no answer in the ack
    await database_sync_to_async(question.refresh_from_db)()
    assert question.state == "done"
    assert counted.settled == [mine["otto"]] and counted.ended == [question.pk]


@pytest.mark.django_db(transaction=True)
async def test_the_last_vote_over_the_room_socket_settles_the_question_once(party, fake_clock, monkeypatch) -> None:
    counted = Counted(monkeypatch)
    question, mine = await database_sync_to_async(two_votes_in)(party)
    counted.reset()
    await _socket_vote(f"/ws/rooms/{party.room.code}/", party.players[1], {"type": "vote", "false_claim": question.false_claim_index}, "voted")
    await database_sync_to_async(question.refresh_from_db)()
    assert question.state == "done"
    assert counted.settled == [mine["otto"]] and counted.ended == [question.pk]
