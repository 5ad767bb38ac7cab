"""Host mode: a room's host runs it without playing unless they chose "I'll play too" when
making it. A host who does not play is dealt nothing and is in no answers-in count, finish,
scoreboard or podium; the question ends when every player has voted, and its answer carries
the final count (the last vote's "3/3"), so no screen stays on "2/3"."""

from __future__ import annotations

import pytest
from django.test import Client

from foolgame.rooms import services
from foolgame.rooms.models import RoomRound
from foolgame.voting import services as rounds
from foolgame.voting.selectors import claims_for_players
from tests.factories import UserFactory
from tests.rooms.conftest import claim_pool, current

pytestmark = pytest.mark.django_db


def teacher_room(questions: int = 2, *, host_plays: bool = False):
    claim_pool()
    host = UserFactory(username="teach")
    players = [UserFactory(username=name) for name in ("pia", "otto", "dave")]
    room = services.room_create(host=host, questions=questions, host_plays=host_plays)
    for player in players:
        services.room_join(code=room.code, player=player)
    return host, players, room


def vote_all(question, players) -> None:
    for player in players:
        play = RoomRound.objects.get(question=question, player=player)
        rounds.vote_cast(round_id=play.round_id, player=player, false_claim=question.false_claim_index)
        services.room_question_voted(question_id=question.pk)


def test_a_host_who_does_not_play_is_dealt_nothing_and_on_no_board(fake_clock) -> None:
    host, players, room = teacher_room()
    state = services.room_state(code=room.code, player=host)
    assert state["is_host"] and state["member"] and not state["host_plays"]
    assert [row["username"] for row in state["scoreboard"]] == ["dave", "otto", "pia"] and state["members"] == 3
    services.room_next_question(code=room.code, player=host)
    question = current(room)
    assert set(RoomRound.objects.filter(question=question).values_list("player__username", flat=True)) == {"pia", "otto", "dave"}
    view = services.room_state(code=room.code, player=host)["question"]
    assert view["round"] is None and view["players"] == 3 and view["votes"] == 0
    assert [c["text"] for c in view["claims"]] == [question.left_claim.text, question.right_claim.text]  # the projector shows them


def test_the_question_ends_when_every_player_voted_and_its_answer_says_3_of_3(fake_clock) -> None:
    host, players, room = teacher_room()
    services.room_next_question(code=room.code, player=host)
    question = current(room)
    vote_all(question, players[:2])
    question.refresh_from_db()
    assert question.state == "playing"
    vote_all(question, players[2:])
    question.refresh_from_db()
    assert question.state == "done" and not question.ended_early  # no End, no clock: the last vote ended it
    view = services.room_state(code=room.code, player=host)["question"]
    assert view["answer"]["false_claim"] == question.false_claim_index  # the host sees the answer they put on the projector
    assert (view["answer"]["votes"], view["answer"]["players"]) == (3, 3)
    pia_view = services.room_state(code=room.code, player=players[0])["question"]
    assert (pia_view["answer"]["votes"], pia_view["answer"]["players"]) == (3, 3)
    board = services.room_state(code=room.code, player=host)["scoreboard"]
    assert "teach" not in [row["username"] for row in board] and all(row["points"] > 0 for row in board)


def test_a_host_who_plays_too_is_dealt_and_ranked(fake_clock) -> None:
    host, players, room = teacher_room(host_plays=True)
    services.room_next_question(code=room.code, player=host)
    question = current(room)
    assert RoomRound.objects.filter(question=question).count() == 4
    vote_all(question, players)
    question.refresh_from_db()
    assert question.state == "playing"  # waits for the host's vote
    vote_all(question, [host])
    question.refresh_from_db()
    assert question.state == "done"
    assert "teach" in [row["username"] for row in services.room_state(code=room.code, player=host)["scoreboard"]]


def test_the_claims_a_host_saw_answered_are_never_dealt_to_them(fake_clock) -> None:
    host, players, room = teacher_room()
    services.room_next_question(code=room.code, player=host)
    question = current(room)
    pool = set(claims_for_players(players=[host]).values_list("pk", flat=True))
    assert not {question.left_claim_id, question.right_claim_id} & pool
    assert pool  # the other pairs are still theirs to play


@pytest.mark.parametrize("host_plays", [False, True])
def test_play_again_keeps_whether_the_host_plays(fake_clock, host_plays: bool) -> None:
    host, players, room = teacher_room(questions=1, host_plays=host_plays)
    services.room_next_question(code=room.code, player=host)
    services.room_question_end(code=room.code, player=host)
    again = services.room_play_again(code=room.code, player=host)
    assert again.host_plays is host_plays
    board = [row["username"] for row in services.room_state(code=again.code, player=host)["scoreboard"]]
    assert ("teach" in board) is host_plays


def test_the_api_takes_host_plays(fake_clock) -> None:
    claim_pool()
    host = Client()
    host.force_login(UserFactory(username="lea"))
    made = host.post("/api/rooms", {"questions": 2}, content_type="application/json")
    assert made.status_code == 201 and made.json()["host_plays"] is False and made.json()["scoreboard"] == [] and made.json()["members"] == 0
    again = host.post("/api/rooms", {"questions": 2, "host_plays": True}, content_type="application/json")
    assert again.json()["host_plays"] is True and [r["username"] for r in again.json()["scoreboard"]] == ["lea"]
    bad = host.post("/api/rooms", {"host_plays": "perhaps"}, content_type="application/json")
    assert bad.status_code == 400
