"""A room's rounds played with the solo round's REST twins: the answer waits for the question
as it does on the room socket, the solo play page never picks a room round up, and a REST
vote or give-up that was the last one the question waited for ends it at once."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from foolgame.rooms import services
from foolgame.rooms.events import room_group
from foolgame.rooms.models import RoomQuestion, RoomRound
from foolgame.voting import services as rounds
from foolgame.voting.models import Round
from tests.factories import UserFactory
from tests.rooms.conftest import claim_pool
from tests.voting.test_apis import login, post

pytestmark = pytest.mark.django_db


def start_question(party) -> tuple[RoomQuestion, dict[str, Round]]:
    services.room_next_question(code=party.room.code, player=party.host)
    party.room.refresh_from_db()
    question = RoomQuestion.objects.get(room=party.room, number=party.room.current)
    plays = RoomRound.objects.filter(question=question).select_related("round", "player")
    return question, {play.player.username: play.round for play in plays}


def shows_no_answer(response, question: RoomQuestion) -> None:
    """Nothing in the JSON tells which claim is false: no result, label, gold or verdict."""
    body, raw = response.json(), response.content.decode()
    assert "result" not in body and "false_claim" not in body and "correct" not in body, body
    for secret in ("SUPPORTS", "REFUTES", "gold", "Decisive", '"labels"', '"correct"', '"false_claim"'):
        assert secret not in raw, (secret, raw)
    if "clues_left" in body:  # the true lengths would tell the false claim: padded as in play
        assert len(set(body["clues_left"])) == 1


def test_rest_forfeit_and_read_of_a_room_round_keep_the_answer_until_the_question_is_over(party, fake_clock, django_capture_on_commit_callbacks) -> None:
    question, mine = start_question(party)
    pia = login("pia")
    with django_capture_on_commit_callbacks(execute=True):  # the round services settle the question after their commit
        forfeited = post(pia, f"/api/rounds/{mine['pia'].pk}/forfeit")
    assert forfeited.status_code == 200 and forfeited.json()["status"] == "forfeited"
    shows_no_answer(forfeited, question)
    shows_no_answer(pia.get(f"/api/rounds/{mine['pia'].pk}"), question)
    with django_capture_on_commit_callbacks(execute=True):
        voted = post(login("hana"), f"/api/rounds/{mine['hana'].pk}/vote", {"false_claim": question.false_claim_index})
    shows_no_answer(voted, question)
    with django_capture_on_commit_callbacks(execute=True):
        post(login("otto"), f"/api/rounds/{mine['otto'].pk}/vote", {"false_claim": 1 - question.false_claim_index})
    question.refresh_from_db()
    assert question.state == "done"
    # Over for the room, but pia gave up: her answer waits for the question's deadline.
    shows_no_answer(pia.get(f"/api/rounds/{mine['pia'].pk}"), question)
    fake_clock.current = question.deadline
    after = pia.get(f"/api/rounds/{mine['pia'].pk}").json()
    assert after["result"]["false_claim"] == question.false_claim_index and after["result"]["gold"][question.false_claim_index]


def test_rest_vote_on_a_room_round_is_acknowledged_with_the_remaining_time_only(party, fake_clock) -> None:
    question, mine = start_question(party)
    fake_clock.advance(30)
    hana = login("hana")
    voted = post(hana, f"/api/rounds/{mine['hana'].pk}/vote", {"false_claim": question.false_claim_index})
    assert voted.status_code == 200 and voted.json() == {"remaining": 150.0}
    read = hana.get(f"/api/rounds/{mine['hana'].pk}")
    assert read.json()["status"] == "voted"
    shows_no_answer(read, question)
    # Once the question is over, the round shows its result as a solo round does.
    for name in ("pia", "otto"):
        post(login(name), f"/api/rounds/{mine[name].pk}/forfeit")
    result = hana.get(f"/api/rounds/{mine['hana'].pk}").json()["result"]
    assert result["correct"] is True and result["points"] == 120 and result["false_claim"] == question.false_claim_index


def test_the_round_services_hold_back_a_room_rounds_answer_for_every_transport(party, fake_clock) -> None:
    """The round socket /ws/rounds/<id>/ sends what these services return."""
    question, mine = start_question(party)
    assert rounds.vote_cast(round_id=mine["hana"].pk, player=party.host, false_claim=0).keys() == {"remaining"}
    assert "result" not in rounds.round_forfeit(round_id=mine["pia"].pk, player=party.players[0])
    assert "result" not in rounds.round_start(round_id=mine["hana"].pk, player=party.host)


def test_the_solo_resume_list_and_deal_never_see_a_room_round(party, fake_clock) -> None:
    question, mine = start_question(party)
    pia = login("pia")
    assert pia.get("/api/rounds?open=1").json() == []
    page = pia.get("/play/")
    assert page.status_code == 200 and question.left_claim.text not in page.content.decode()
    # The open room round does not count against the solo limit of 3 open rounds.
    dealt = [post(pia, "/api/rounds", {}) for _ in range(3)]
    assert [d.status_code for d in dealt] == [201, 201, 201], dealt[-1].content
    listed = [r["id"] for r in pia.get("/api/rounds?open=1").json()]
    assert sorted(listed) == sorted(d.json()["id"] for d in dealt) and mine["pia"].pk not in listed
    assert Round.objects.get(pk=mine["pia"].pk).state == "playing"  # still hers to play in the room


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


def test_the_last_rest_forfeit_ends_the_question(party, fake_clock, django_capture_on_commit_callbacks) -> None:
    question, mine = start_question(party)
    rounds.vote_cast(round_id=mine["hana"].pk, player=party.host, false_claim=0)
    rounds.vote_cast(round_id=mine["otto"].pk, player=party.players[1], false_claim=1)
    with django_capture_on_commit_callbacks(execute=True):  # the forfeit settles the question after its commit
        forfeited = post(login("pia"), f"/api/rounds/{mine['pia'].pk}/forfeit")
    assert forfeited.status_code == 200
    question.refresh_from_db()
    assert question.state == "done"
    assert forfeited.json()["status"] == "forfeited"


def test_a_solo_round_still_shows_its_answer_at_once(db, fake_clock) -> None:
    claim_pool(pages=2)
    UserFactory(username="vera")
    vera = login("vera")
    dealt = post(vera, "/api/rounds", {}).json()
    post(vera, f"/api/rounds/{dealt['id']}/start")
    voted = post(vera, f"/api/rounds/{dealt['id']}/vote", {"false_claim": 0}).json()
    assert {"correct", "points", "false_claim", "labels", "gold"} <= voted.keys()
    given_up = post(vera, f"/api/rounds/{post(vera, '/api/rounds', {}).json()['id']}/forfeit").json()
    assert given_up["status"] == "forfeited" and "result" not in given_up and given_up["answer_at"]  # not before its time


# --- issue 24: forfeits in the ratings, a moderator's unpaid vote on the scoreboard -----------


def test_a_member_who_leaves_mid_question_is_rated_wrong_but_not_when_the_host_ends_it(party, fake_clock, django_capture_on_commit_callbacks) -> None:
    from foolgame.players.models import PlayerRating

    question, mine = start_question(party)
    pia, otto = party.players
    with django_capture_on_commit_callbacks(execute=True):
        services.room_leave(code=party.room.code, player=pia)  # gives up a round she saw
    assert Round.objects.get(pk=mine["pia"].pk).state == Round.State.FORFEITED
    assert PlayerRating.objects.get(player=pia).rating < 1500 and PlayerRating.objects.get(player=pia).votes == 1
    with django_capture_on_commit_callbacks(execute=True):
        services.room_leave(code=party.room.code, player=party.host)  # the host ends the room: the others' rounds end
    assert Round.objects.get(pk=mine["otto"].pk).state == Round.State.FORFEITED
    assert not PlayerRating.objects.filter(player__in=[otto, party.host]).exists()


def test_a_room_vote_after_a_moderator_sighting_counts_0_on_the_scoreboard(party, fake_clock) -> None:
    from foolgame.moderation.models import Sighting
    from foolgame.players.models import LedgerEntry
    from foolgame.rooms.rounds import room_round_settled
    from foolgame.rooms.selectors import room_results

    question, mine = start_question(party)
    Sighting.objects.create(moderator=party.host, claim=question.left_claim, first_seen=fake_clock.current)
    fake_clock.advance(10)
    for player, name in ((party.host, "hana"), *zip(party.players, ("pia", "otto"))):
        rounds.vote_cast(round_id=mine[name].pk, player=player, false_claim=question.false_claim_index)
    room_round_settled(round_id=mine["otto"].pk)  # the last vote ends the question
    scoreboard, _ = room_results(room=party.room, question=question)
    points = {row["username"]: row["points"] for row in scoreboard}
    assert points == {"hana": 0, "pia": 120, "otto": 120}
    assert not LedgerEntry.objects.filter(cause=f"round:{mine['hana'].pk}").exists()
    result = rounds.round_get_state(round_id=mine["hana"].pk, player=party.host)["result"]
    assert result["unpaid"] == "moderator_saw_claim" and result["points"] == 0
