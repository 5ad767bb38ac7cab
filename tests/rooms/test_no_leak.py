"""Issue 24, item 3: while a question plays, nobody learns how another member did on it (a
canary's vote must not give the others the answer); strangers get no scoreboard."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async

from foolgame.rooms import services
from foolgame.voting import services as rounds
from tests.factories import UserFactory
from tests.rooms.conftest import current, here
from tests.rooms.test_consumers import connect, frame
from tests.rooms.test_services import rounds_of
from tests.voting.test_apis import login, post

RESULTS = ("points", "correct", "voted", "rank")


def board(state: dict) -> list[tuple]:
    return [(r["username"], *(r[k] for k in RESULTS)) for r in state["scoreboard"]]


@pytest.mark.django_db
def test_a_canary_vote_shows_nowhere_until_the_answer_is_out(party, fake_clock) -> None:
    code = party.room.code
    services.room_next_question(code=code, player=party.host)
    first = current(party.room)
    fake_clock.advance(30)
    for name, player in (("hana", party.host), ("pia", party.players[0]), ("otto", party.players[1])):
        rounds.vote_cast(round_id=rounds_of(first)[name].pk, player=player, false_claim=first.false_claim_index)
    assert services.room_question_finish(question_id=first.pk)
    here(party.room, *party.players)
    services.room_next_question(code=code, player=party.host)
    second = current(party.room)
    assert set(rounds_of(second)) == {"hana", "pia", "otto"}
    pia = login("pia")
    before = pia.get(f"/api/rooms/{code}").json()
    # hana votes right as a canary: pia reads the room over REST.
    rounds.vote_cast(round_id=rounds_of(second)["hana"].pk, player=party.host, false_claim=second.false_claim_index)
    after = pia.get(f"/api/rooms/{code}").json()
    assert board(after) == board(before) == [("hana", 120, 1, 1, 1), ("otto", 120, 1, 1, 1), ("pia", 120, 1, 1, 1)], "the first question's totals only"
    assert (before["question"]["votes"], after["question"]["votes"]) == (0, 1), "how many voted, not who"
    assert "answer" not in after["question"] and "found" not in json.dumps(after)
    # A join during the question reads the same board (the members message).
    joined = services.room_join(code=code, player=UserFactory(username="zoe"))
    assert board(joined)[:3] == board(before) and joined["question"]["round"] is None
    # Once the answer is out, the board counts the question.
    rounds.vote_cast(round_id=rounds_of(second)["pia"].pk, player=party.players[0], false_claim=1 - second.false_claim_index)
    rounds.vote_cast(round_id=rounds_of(second)["otto"].pk, player=party.players[1], false_claim=1 - second.false_claim_index)
    assert services.room_question_finish(question_id=second.pk)
    done = pia.get(f"/api/rooms/{code}").json()
    assert board(done)[0] == ("hana", 240, 2, 2, 1)
    assert done["question"]["answer"]["found"] == [{"username": "hana", "points": 120}]


@pytest.mark.django_db
def test_strangers_get_no_scoreboard_and_no_results(party, fake_clock) -> None:
    code = party.room.code
    services.room_next_question(code=code, player=party.host)
    question = current(party.room)
    for name, player in (("hana", party.host), ("pia", party.players[0]), ("otto", party.players[1])):
        rounds.vote_cast(round_id=rounds_of(question)[name].pk, player=player, false_claim=question.false_claim_index)
    assert services.room_question_finish(question_id=question.pk)
    UserFactory(username="sam")
    seen = login("sam").get(f"/api/rooms/{code}")
    assert seen.status_code == 200
    body = seen.json()
    assert body["member"] is False and body["scoreboard"] is None and body["question"] is None
    assert (body["code"], body["host"], body["state"], body["members"]) == (code, "hana", "playing", 3)
    assert "pia" not in seen.content.decode() and "found" not in seen.content.decode()
    from django.test import Client

    assert Client().get(f"/api/rooms/{code}").status_code == 403


@pytest.mark.django_db(transaction=True)
async def test_room_frames_show_no_result_of_the_question_playing(party, fake_clock) -> None:
    sockets = {p.username: await connect(party.room.code, p) for p in party.everyone}
    await sockets["hana"].send_json_to({"type": "start"})
    for ws in sockets.values():
        await frame(ws, "question")
    question = await database_sync_to_async(current)(party.room)
    await sockets["hana"].send_json_to({"type": "vote", "false_claim": question.false_claim_index})
    await frame(sockets["hana"], "voted")
    # A join (members frame) and a fresh state (room frame) while otto and pia think.
    await database_sync_to_async(services.room_join)(code=party.room.code, player=await database_sync_to_async(UserFactory)(username="zoe"))
    members = await frame(sockets["pia"], "members")
    await sockets["pia"].send_json_to({"type": "state"})
    state = await frame(sockets["pia"], "room")
    for shown in (members["scoreboard"], state["scoreboard"]):
        assert {(r["username"], r["points"], r["correct"], r["voted"]) for r in shown} == {(n, 0, 0, 0) for n in ("hana", "pia", "otto", "zoe")}
    assert state["question"]["votes"] == 1 and "answer" not in state["question"]
    for name in ("pia", "otto"):
        await sockets[name].send_json_to({"type": "vote", "false_claim": 1 - question.false_claim_index})
    await frame(sockets["otto"], "voted")
    await frame(sockets["pia"], "voted")
    answer = await frame(sockets["pia"], "answer")
    assert [(r["username"], r["points"]) for r in answer["scoreboard"]][0] == ("hana", 120)
    for ws in sockets.values():
        await ws.disconnect()


# --- item 8: caps on hosting, joining and leaving ------------------------------------------------


@pytest.mark.django_db
def test_a_host_keeps_few_rooms_open_and_makes_few_an_hour(db, fake_clock, settings) -> None:
    from foolgame.rooms.models import Room

    settings.FM2_ROOMS = {**settings.FM2_ROOMS, "MAX_OPEN_ROOMS_PER_HOST": 2, "ROOMS_PER_HOUR": 4, "JOIN_LEAVES_PER_WINDOW": 100}
    UserFactory(username="hana")
    host = login("hana")
    codes = [post(host, "/api/rooms").json()["code"] for _ in range(2)]
    refused = post(host, "/api/rooms")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "too_many_open_rooms"
    assert sorted(refused.json()["error"]["details"]["rooms"]) == sorted(codes) and Room.objects.count() == 2
    for code in codes:
        assert post(host, f"/api/rooms/{code}/leave").status_code == 200  # the host leaving ends it
    fake_clock.advance(600)
    codes = [post(host, "/api/rooms").json()["code"] for _ in range(2)]
    for code in codes:
        post(host, f"/api/rooms/{code}/leave")
    limited = post(host, "/api/rooms")
    assert limited.status_code == 429 and limited.json()["error"]["code"] == "room_rate_limited"
    assert limited.json()["error"]["details"]["retry_after"] == 3600 - 600 and limited["Retry-After"] == "3000"
    assert Room.objects.count() == 4
    fake_clock.advance(3000)  # the first two are an hour old
    assert post(host, "/api/rooms").status_code == 201


@pytest.mark.django_db
def test_joins_and_leaves_are_throttled_per_player_and_a_refusal_changes_nothing(party, settings) -> None:
    from foolgame.rooms.models import RoomMember

    settings.FM2_ROOMS = {**settings.FM2_ROOMS, "JOIN_LEAVES_PER_WINDOW": 4, "JOIN_LEAVE_WINDOW_SECONDS": 3600}
    UserFactory(username="sam")
    sam = login("sam")
    code = party.room.code
    for action in ("join", "leave", "join", "leave"):
        assert post(sam, f"/api/rooms/{code}/{action}").status_code == 200
    refused = post(sam, f"/api/rooms/{code}/join")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "join_leave_rate_limited"
    assert 1 <= refused.json()["error"]["details"]["retry_after"] <= 3600 and refused["Retry-After"]
    assert RoomMember.objects.get(room=party.room, player__username="sam").left_at is not None, "still out"
    assert post(login("pia"), f"/api/rooms/{code}/leave").status_code == 200, "per player"


@pytest.mark.django_db(transaction=True)
async def test_a_burst_of_joins_reaches_each_socket_as_two_members_frames(party, settings) -> None:
    from django.db import transaction

    settings.FM2_ROOMS = {**settings.FM2_ROOMS, "MEMBERS_FRAME_SECONDS": 1.0}
    ws = await connect(party.room.code, party.players[0])
    names = [f"guest{n}" for n in range(6)]

    def burst() -> None:  # one commit: the six members messages leave together, however slow the joins
        with transaction.atomic():
            for name in names:
                services.room_join(code=party.room.code, player=UserFactory(username=name))

    await database_sync_to_async(burst)()
    frames = []
    while len(frames) < 10:
        frames.append((await frame(ws, "members"))["scoreboard"])
        if len(frames[-1]) == 3 + len(names):
            break
    assert len(frames) == 2, [len(f) for f in frames]  # the first at once, the rest as one
    assert await ws.receive_nothing(timeout=1.2)
    await ws.disconnect()


# --- item 1: giving up is never a faster way to the answer than waiting ---------------------

ANSWER_FIELDS = ("false_claim", "labels", "gold", "found")


def no_answer_in(body: dict, question) -> None:
    """Nothing of the question's answer: no answer, no result in the member's round, no label."""
    raw = json.dumps(body)
    for secret in ('"false_claim"', '"labels"', '"gold"', '"found"', '"result"', "SUPPORTS", "REFUTES"):
        assert secret not in raw, (secret, raw)


@pytest.mark.django_db
def test_a_host_alone_who_leaves_reads_no_answer_before_the_deadline(db, fake_clock) -> None:
    """The worst case: one account makes a room, starts a question and leaves at once."""
    from tests.rooms.conftest import claim_pool

    claim_pool()
    UserFactory(username="hana")
    hana = login("hana")
    code = post(hana, "/api/rooms", {"questions": 1, "host_plays": True}).json()["code"]
    assert post(hana, f"/api/rooms/{code}/start").status_code == 200
    question = current(services._get_room(code))
    round_id = rounds_of(question)["hana"].pk
    assert post(hana, f"/api/rooms/{code}/leave").status_code == 200
    question.refresh_from_db()
    assert question.state == "done"
    room = hana.get(f"/api/rooms/{code}").json()
    assert room["state"] == "ended" and room["question"]["status"] == "done" and "answer" not in room["question"]
    no_answer_in(room, question)
    no_answer_in(hana.get(f"/api/rounds/{round_id}").json(), question)
    fake_clock.current = question.deadline  # as if she had waited
    room = hana.get(f"/api/rooms/{code}").json()
    assert room["question"]["answer"]["false_claim"] == question.false_claim_index
    assert hana.get(f"/api/rounds/{round_id}").json()["result"]["false_claim"] == question.false_claim_index


@pytest.mark.django_db
@pytest.mark.parametrize("give_up", ["forfeit", "leave"])
def test_the_last_member_who_gives_up_reads_no_answer_before_the_deadline_and_the_voters_do(party, fake_clock, give_up, django_capture_on_commit_callbacks) -> None:
    code = party.room.code
    services.room_next_question(code=code, player=party.host)
    question = current(party.room)
    mine = rounds_of(question)
    fake_clock.advance(20)
    hana, otto, pia = login("hana"), login("otto"), login("pia")
    with django_capture_on_commit_callbacks(execute=True):  # the round services settle the question after their commit
        post(hana, f"/api/rounds/{mine['hana'].pk}/vote", {"false_claim": question.false_claim_index})  # a canary, right
        post(otto, f"/api/rounds/{mine['otto'].pk}/vote", {"false_claim": 1 - question.false_claim_index})
        url = f"/api/rounds/{mine['pia'].pk}/forfeit" if give_up == "forfeit" else f"/api/rooms/{code}/leave"
        assert post(pia, url).status_code == 200
    question.refresh_from_db()
    assert question.state == "done", "pia was the last one the question waited for"
    # The voters get the answer now, as before.
    seen = hana.get(f"/api/rooms/{code}").json()
    assert seen["question"]["answer"]["found"] == [{"username": "hana", "points": 120}]
    assert board(seen)[0] == ("hana", 120, 1, 1, 1)
    # pia does not: no answer, no result, and a board that does not tell the canary's vote.
    room = pia.get(f"/api/rooms/{code}").json()
    assert "answer" not in room["question"] and room["question"]["round"]["status"] == "forfeited"
    assert room["question"]["round"]["answer_at"] == question.deadline.isoformat(), "the question's clock, as for those who waited"
    no_answer_in(room, question)
    assert {row[1:] for row in board(room)} == {(0, 0, 0, 1)}, board(room)
    no_answer_in(pia.get(f"/api/rounds/{mine['pia'].pk}").json(), question)
    fake_clock.current = question.deadline - timedelta(seconds=1)
    assert "answer" not in pia.get(f"/api/rooms/{code}").json()["question"]
    fake_clock.current = question.deadline  # what waiting would have shown her
    room = pia.get(f"/api/rooms/{code}").json()
    assert room["question"]["answer"]["false_claim"] == question.false_claim_index and board(room)[0] == ("hana", 120, 1, 1, 1)
    assert pia.get(f"/api/rounds/{mine['pia'].pk}").json()["result"]["false_claim"] == question.false_claim_index


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("then", ["deadline", "host_leaves"])
async def test_room_frames_show_a_member_who_gave_up_no_answer_and_the_voters_all(party, fake_clock, then) -> None:
    from foolgame.rooms.rounds import room_round_settled

    sockets = {p.username: await connect(party.room.code, p) for p in party.everyone}
    await sockets["hana"].send_json_to({"type": "start"})
    for ws in sockets.values():
        await frame(ws, "question")
    question = await database_sync_to_async(current)(party.room)
    mine = await database_sync_to_async(rounds_of)(question)
    await sockets["hana"].send_json_to({"type": "vote", "false_claim": question.false_claim_index})
    await frame(sockets["hana"], "voted")
    await sockets["otto"].send_json_to({"type": "vote", "false_claim": 1 - question.false_claim_index})
    await frame(sockets["otto"], "voted")

    def forfeit() -> None:  # over REST, its socket still open
        rounds.round_forfeit(round_id=mine["pia"].pk, player=party.players[0])
        room_round_settled(round_id=mine["pia"].pk)

    await database_sync_to_async(forfeit)()
    full = await frame(sockets["hana"], "answer")
    assert full["false_claim"] == question.false_claim_index and full["found"] == [{"username": "hana", "points": 120}]
    assert (await frame(sockets["otto"], "answer"))["false_claim"] == question.false_claim_index
    withheld = await frame(sockets["pia"], "answer")
    assert withheld["question_id"] == question.pk and "withheld" not in withheld
    no_answer_in({k: v for k, v in withheld.items() if k != "_raw"}, question)
    assert {(r["points"], r["correct"]) for r in withheld["scoreboard"]} == {(0, 0)}
    # A join: pia's members frame does not tell the canary's vote either; hana's does.
    await database_sync_to_async(services.room_join)(code=party.room.code, player=await database_sync_to_async(UserFactory)(username="zoe"))
    members = await frame(sockets["pia"], "members")
    assert {(r["points"], r["correct"]) for r in members["scoreboard"]} == {(0, 0)}
    assert (await frame(sockets["hana"], "members"))["scoreboard"][0]["points"] == 120
    if then == "deadline":
        # At the question's deadline, pia's socket gets the answer, as waiting would have shown it.
        fake_clock.current = question.deadline
        due = await frame(sockets["pia"], "answer")
        assert due["false_claim"] == question.false_claim_index and due["scoreboard"][0]["points"] == 120
    else:
        # The host leaves: the room ends; pia's board still waits for the deadline.
        await database_sync_to_async(services.room_leave)(code=party.room.code, player=party.host)
        ended = await frame(sockets["pia"], "ended")
        assert {(r["points"], r["correct"]) for r in ended["scoreboard"]} == {(0, 0)}
        assert (await frame(sockets["otto"], "ended"))["scoreboard"][0]["points"] == 120
    for ws in sockets.values():
        await ws.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_host_alone_who_leaves_gets_no_answer_frame(db, fake_clock) -> None:
    from tests.rooms.conftest import claim_pool

    host = await database_sync_to_async(lambda: (claim_pool(), UserFactory(username="hana"))[1])()
    room = await database_sync_to_async(services.room_create)(host=host, questions=2, host_plays=True)
    ws = await connect(room.code, host)
    await ws.send_json_to({"type": "start"})
    await frame(ws, "question")
    question = await database_sync_to_async(current)(room)
    await database_sync_to_async(services.room_leave)(code=room.code, player=host)  # over REST, the socket open
    answer = await frame(ws, "answer")
    assert answer["question_id"] == question.pk and answer["over"] is True
    no_answer_in({k: v for k, v in answer.items() if k != "_raw"}, question)
    ended = await frame(ws, "ended")
    assert ended["reason"] == "host_left"
    await ws.disconnect()
