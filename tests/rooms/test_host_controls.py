"""What a classroom host needs from a room: the answers-in count for everyone, ending or
skipping the question playing (host only), who found each question first, and playing again
with the same members. Services, REST and the room socket."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.db.models import Sum

from foolgame.core.errors import ServiceError
from foolgame.players.models import LedgerEntry
from foolgame.rooms import services
from foolgame.rooms.models import Room, RoomMember, RoomQuestion
from foolgame.voting import services as rounds
from foolgame.voting.models import Round, Vote
from tests.factories import UserFactory
from tests.rooms.conftest import claim_pool, current, here
from tests.rooms.test_consumers import close_all, everyone, frame, frames_within
from tests.rooms.test_round_rest import start_question
from tests.voting.test_apis import login, post

pytestmark = pytest.mark.django_db


def vote(rounds_by_name: dict[str, Round], name: str, party, choice: int) -> None:
    player = next(p for p in party.everyone if p.username == name)
    rounds.vote_cast(round_id=rounds_by_name[name].pk, player=player, false_claim=choice)


# --- ending and skipping a question --------------------------------------------------------


def test_only_the_host_ends_or_skips_a_question(party, fake_clock) -> None:
    start_question(party)
    for skip in (False, True):
        with pytest.raises(ServiceError) as error:
            services.room_question_end(code=party.room.code, player=party.players[0], skip=skip)
        assert (error.value.code, error.value.status_code) == ("not_host", 403)
    assert current(party.room).state == "playing" and not Round.objects.exclude(state="playing").exists()


def test_ending_with_no_question_playing_is_refused(party, fake_clock) -> None:
    with pytest.raises(ServiceError) as error:
        services.room_question_end(code=party.room.code, player=party.host)
    assert (error.value.code, error.value.status_code) == ("no_question_playing", 409)


def test_the_host_ends_a_question_as_if_its_clock_ran_out_now(party, fake_clock) -> None:
    question, mine = start_question(party)
    fake_clock.advance(30)
    vote(mine, "pia", party, question.false_claim_index)
    fake_clock.advance(10)
    assert services.room_question_end(code=party.room.code, player=party.host) == {"number": 1, "skipped": False}
    question.refresh_from_db()
    assert question.state == "done" and question.ended_early and not question.skipped
    assert question.deadline == fake_clock.current and question.ended_at == fake_clock.current
    states = dict(Round.objects.values_list("player__username", "state"))
    assert states == {"hana": "timeout", "otto": "timeout", "pia": "voted"}
    # The vote cast counts and is paid now; the rounds timed out pay nobody.
    pia = party.players[0]
    assert LedgerEntry.objects.filter(player=pia, kind="verify").aggregate(s=Sum("amount"))["s"] == 120
    answer = services.room_state(code=party.room.code, player=party.players[1])["question"]["answer"]
    assert answer["false_claim"] == question.false_claim_index and answer["ended_early"] is True
    assert answer["first"] == {"username": "pia", "points": 120} and answer["found"] == [{"username": "pia", "points": 120}]
    state = rounds.round_get_state(round_id=mine["otto"].pk, player=party.players[1])
    assert state["status"] == "timeout" and state["result"]["false_claim"] == question.false_claim_index


def test_ending_early_brings_the_answer_to_a_member_who_gave_up_at_once_with_everyone(party, fake_clock) -> None:
    """Giving up is never faster than waiting; when the host ends the question, waiting ends
    now for everyone, the one who gave up included."""
    question, mine = start_question(party)
    rounds.round_forfeit(round_id=mine["otto"].pk, player=party.players[1])
    assert "answer" not in (services.room_state(code=party.room.code, player=party.players[1])["question"] or {})
    services.room_question_end(code=party.room.code, player=party.host)
    view = services.room_state(code=party.room.code, player=party.players[1])["question"]
    assert view["answer"]["false_claim"] == question.false_claim_index
    assert rounds.round_get_state(round_id=mine["otto"].pk, player=party.players[1])["result"]["false_claim"] == question.false_claim_index


def test_a_skipped_question_pays_nothing_and_counts_on_no_scoreboard(party, fake_clock) -> None:
    question, mine = start_question(party)
    vote(mine, "pia", party, question.false_claim_index)
    vote(mine, "otto", party, 1 - question.false_claim_index)
    assert services.room_question_end(code=party.room.code, player=party.host, skip=True) == {"number": 1, "skipped": True}
    question.refresh_from_db()
    assert question.skipped and question.state == "done"
    assert not LedgerEntry.objects.exists(), "no voter nor author is paid for a skipped question"
    assert set(Vote.objects.values_list("unpaid", "points", "settled", "rated")) == {("question_skipped", 0, True, True)}
    state = services.room_state(code=party.room.code, player=party.players[0])
    assert {row["username"]: (row["points"], row["voted"]) for row in state["scoreboard"]} == {"hana": (0, 0), "pia": (0, 0), "otto": (0, 0)}
    answer = state["question"]["answer"]
    assert answer["skipped"] is True and answer["false_claim"] == question.false_claim_index
    result = rounds.round_get_state(round_id=mine["pia"].pk, player=party.players[0])["result"]
    assert result["unpaid"] == "question_skipped" and result["points"] == 0
    # It is one of the room's three questions: two more play.
    here(party.room, *party.everyone)
    services.room_next_question(code=party.room.code, player=party.host)
    assert current(party.room).number == 2


def test_ending_the_last_question_ends_the_room_with_its_winners(party, fake_clock) -> None:
    for number in (1, 2, 3):
        here(party.room, *party.everyone)
        question, mine = start_question(party)
        if number == 1:  # otto votes first, then pia: otto found it first
            vote(mine, "otto", party, question.false_claim_index)
            fake_clock.advance(5)
            vote(mine, "pia", party, question.false_claim_index)
        elif number == 2:
            vote(mine, "pia", party, 1 - question.false_claim_index)
        services.room_question_end(code=party.room.code, player=party.host, skip=number == 3)
    party.room.refresh_from_db()
    assert party.room.state == "ended" and party.room.end_reason == "done"
    winners = services.room_state(code=party.room.code, player=party.players[0])["winners"]
    assert winners == [
        {"number": 1, "username": "otto", "points": 120, "skipped": False},
        {"number": 2, "username": None, "points": None, "skipped": False},
        {"number": 3, "username": None, "points": None, "skipped": True},
    ]
    assert services.room_state(code=party.room.code, player=UserFactory())["winners"] is None  # outsiders: nothing


def test_the_first_finder_is_the_earliest_right_vote_not_the_most_points(party, fake_clock) -> None:
    question, mine = start_question(party)
    rounds.round_reveal_clue(round_id=mine["pia"].pk, player=party.players[0], claim_index=0)  # pia: 10 s less
    fake_clock.advance(2)
    vote(mine, "pia", party, question.false_claim_index)
    fake_clock.advance(2)
    vote(mine, "otto", party, question.false_claim_index)
    vote(mine, "hana", party, 1 - question.false_claim_index)
    answer = services.room_state(code=party.room.code, player=party.host)["question"]["answer"]
    assert answer["found"][0]["username"] == "otto" and answer["first"]["username"] == "pia"


# --- the answers-in count -------------------------------------------------------------------


def test_the_votes_count_is_sent_when_it_moves_and_never_says_who(party, fake_clock, monkeypatch) -> None:
    sent: list[dict] = []
    monkeypatch.setattr("foolgame.rooms.events.group_send_on_commit", lambda group, message: sent.append(message))
    question, mine = start_question(party)
    sent.clear()
    vote(mine, "pia", party, question.false_claim_index)
    assert services.room_votes_counted(question_id=question.pk) is True
    assert services.room_votes_counted(question_id=question.pk) is False, "a read that asks again sends nothing new"
    assert sent == [{"type": "room.votes", "question_id": question.pk, "votes": 1, "players": 3}]
    view = services.room_state(code=party.room.code, player=party.players[1])["question"]
    assert (view["votes"], view["players"]) == (1, 3)


def test_a_rest_vote_on_a_room_round_tells_the_room_the_count(party, fake_clock, monkeypatch) -> None:
    from foolgame.rooms.rounds import room_round_settled

    sent: list[dict] = []
    monkeypatch.setattr("foolgame.rooms.events.group_send_on_commit", lambda group, message: sent.append(message))
    _, mine = start_question(party)
    vote(mine, "otto", party, 0)
    assert room_round_settled(round_id=mine["otto"].pk) is False
    assert [m["votes"] for m in sent if m["type"] == "room.votes"] == [1]


# --- play again -----------------------------------------------------------------------------


def test_play_again_moves_the_members_into_a_new_room_once(party, fake_clock) -> None:
    leaver = UserFactory(username="lea")
    services.room_join(code=party.room.code, player=leaver)
    services.room_leave(code=party.room.code, player=leaver)
    with pytest.raises(ServiceError) as error:
        services.room_play_again(code=party.room.code, player=party.host)
    assert error.value.code == "room_not_over"
    services.room_leave(code=party.room.code, player=party.host)  # the host ends it
    with pytest.raises(ServiceError) as error:
        services.room_play_again(code=party.room.code, player=party.players[0])
    assert (error.value.code, error.value.status_code) == ("not_host", 403)
    new = services.room_play_again(code=party.room.code, player=party.host)
    assert (new.host_id, new.questions, new.seconds, new.state) == (party.host.pk, 3, 180, "lobby")
    assert set(RoomMember.objects.filter(room=new).values_list("player__username", flat=True)) == {"hana", "pia", "otto"}
    assert services.room_play_again(code=party.room.code, player=party.host) == new, "asked again: the same room"
    assert Room.objects.count() == 2
    assert services.room_state(code=party.room.code, player=party.players[0])["next"] == new.code
    assert services.room_state(code=party.room.code, player=leaver)["next"] is None, "who left is not moved"
    assert services.room_state(code=new.code, player=party.players[0])["member"] is True


def test_play_again_keeps_the_hosts_caps(party, fake_clock, settings) -> None:
    settings.FM2_ROOMS = {**settings.FM2_ROOMS, "MAX_OPEN_ROOMS_PER_HOST": 1}
    services.room_leave(code=party.room.code, player=party.host)
    services.room_create(host=party.host)
    with pytest.raises(ServiceError) as error:
        services.room_play_again(code=party.room.code, player=party.host)
    assert error.value.code == "too_many_open_rooms" and Room.objects.filter(host=party.host).count() == 2


# --- REST ------------------------------------------------------------------------------------


def test_rest_end_skip_and_again_are_the_hosts_alone(db, fake_clock) -> None:
    claim_pool()
    UserFactory(username="hana"), UserFactory(username="pia")
    host, pia = login("hana"), login("pia")
    code = post(host, "/api/rooms", {"questions": 2, "seconds": 60}).json()["code"]
    post(pia, f"/api/rooms/{code}/join")
    assert post(host, f"/api/rooms/{code}/end-question").json()["error"]["code"] == "no_question_playing"
    post(host, f"/api/rooms/{code}/start")
    for path in ("end-question", "skip-question", "again"):
        refused = post(pia, f"/api/rooms/{code}/{path}")
        assert (refused.status_code, refused.json()["error"]["code"]) == (403, "not_host"), path
    assert RoomQuestion.objects.get().state == "playing"
    skipped = post(host, f"/api/rooms/{code}/skip-question")
    assert skipped.status_code == 200 and skipped.json() == {"number": 1, "skipped": True}
    post(host, f"/api/rooms/{code}/start")
    assert post(host, f"/api/rooms/{code}/again").json()["error"]["code"] == "room_not_over"
    ended = post(host, f"/api/rooms/{code}/end-question")
    assert ended.json() == {"number": 2, "skipped": False}
    again = post(host, f"/api/rooms/{code}/again")
    assert again.status_code == 201 and again.json()["code"] != code and again.json()["url"] == f"/rooms/{again.json()['code']}/"
    old = pia.get(f"/api/rooms/{code}").json()
    assert old["state"] == "ended" and old["next"] == again.json()["code"] and [w["number"] for w in old["winners"]] == [1, 2]
    assert post(host, "/api/rooms/NOPE99/end-question").status_code == 404


# --- the room socket ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_socket_votes_count_and_the_hosts_end_reach_everyone(party, fake_clock) -> None:
    sockets = await everyone(party)
    await sockets["hana"].send_json_to({"type": "start"})
    questions = {name: await frame(ws, "question") for name, ws in sockets.items()}
    assert {q["players"] for q in questions.values()} == {3}
    await sockets["pia"].send_json_to({"type": "end_question"})
    assert (await frame(sockets["pia"], "error"))["code"] == "not_host"
    await sockets["pia"].send_json_to({"type": "skip_question"})
    assert (await frame(sockets["pia"], "error"))["code"] == "not_host"
    answer = await database_sync_to_async(lambda: RoomQuestion.objects.get().false_claim_index)()
    await sockets["pia"].send_json_to({"type": "vote", "false_claim": answer})
    await frame(sockets["pia"], "voted")
    for name, ws in sockets.items():
        counted = await frame(ws, "votes")
        assert {k: v for k, v in counted.items() if k != "_raw"} == {"type": "votes", "question_id": questions[name]["id"], "votes": 1, "players": 3}
    await sockets["hana"].send_json_to({"type": "end_question"})
    answers = {name: await frame(ws, "answer") for name, ws in sockets.items()}
    assert all(a["false_claim"] == answer and a["ended_early"] and a["first"]["username"] == "pia" for a in answers.values())
    await sockets["hana"].send_json_to({"type": "skip_question"})
    assert (await frame(sockets["hana"], "error"))["code"] == "no_question_playing"
    await close_all(sockets)


@pytest.mark.django_db(transaction=True)
async def test_a_burst_of_votes_comes_as_few_counts(party, fake_clock, settings) -> None:
    """Each socket gets at most one votes frame a MEMBERS_FRAME_SECONDS: 20 members voting at
    once do not send each socket 20 frames."""
    settings.FM2_ROOMS = {**settings.FM2_ROOMS, "MEMBERS_FRAME_SECONDS": 0.5}
    sockets = await everyone(party)
    await sockets["hana"].send_json_to({"type": "start"})
    for ws in sockets.values():
        await frame(ws, "question")
    for name in ("hana", "pia", "otto"):
        await sockets[name].send_json_to({"type": "vote", "false_claim": 0})
        await frame(sockets[name], "voted")
    # The last vote ends the question: at most the first count and the answer arrive.
    got = [f["type"] for f in await frames_within(sockets["otto"], 1.0)]
    assert got.count("votes") <= 2 and "answer" in got
    await close_all(sockets)



def test_a_guests_vote_counts_in_the_room_but_pays_nobody_and_is_not_rated(party, fake_clock) -> None:
    """Guests are made with a nickname alone, 60 an hour from one address: a room full of them
    voting late must not pump the claims' authors' points (nor move the claims' difficulty)."""
    from django.utils import timezone

    from foolgame.players.models import Guest

    pia = next(p for p in party.players if p.username == "pia")
    Guest.objects.create(user=pia, created=timezone.now())
    question, mine = start_question(party)
    vote(mine, "pia", party, question.false_claim_index)
    vote(mine, "otto", party, question.false_claim_index)
    services.room_question_end(code=party.room.code, player=party.host)
    guest_vote = Vote.objects.get(round=mine["pia"])
    assert guest_vote.unpaid == "guest" and guest_vote.points > 0 and guest_vote.rated
    paid = LedgerEntry.objects.filter(cause=f"round:{mine['pia'].pk}")
    assert not paid.exists(), "neither the guest nor the authors are paid for a guest's vote"
    assert LedgerEntry.objects.filter(cause=f"round:{mine['otto'].pk}").aggregate(total=Sum("amount"))["total"] == 120
    board = {row["username"]: row["points"] for row in services.room_state(code=party.room.code, player=party.host)["scoreboard"]}
    assert board["pia"] == guest_vote.points > 0, "the room's own board counts the guest"
