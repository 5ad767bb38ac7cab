"""The room socket: one pair for everyone at one instant, votes acked without the answer,
the answer and scoreboard for all once the question is over, watchers, reconnects, refusals."""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from foolgame.rooms import services
from foolgame.rooms.models import RoomQuestion
from foolgame.routing import websocket_urlpatterns
from foolgame.voting.models import Round
from foolgame.voting.services import round_points
from tests.factories import UserFactory
from tests.waiting import wait_for_async

pytestmark = [pytest.mark.django_db(transaction=True)]

router = URLRouter(websocket_urlpatterns)


async def connect(code: str, user, *, expect: int | None = None) -> WebsocketCommunicator:
    ws = WebsocketCommunicator(router, f"/ws/rooms/{code}/")
    ws.scope["user"] = user
    connected, _ = await ws.connect()
    assert connected
    if expect is None:
        assert (await frame(ws, "room"))["code"] == code
    return ws


async def frame(ws: WebsocketCommunicator, *types: str, timeout: float = 3) -> dict:
    """The next frame of one of ``types``, skipping ticks, member updates, votes counts and timeouts unless asked for."""
    while True:
        raw = await ws.receive_from(timeout=timeout)
        message = json.loads(raw)
        if message["type"] in types:
            message["_raw"] = raw
            return message
        assert message["type"] in ("tick", "members", "timeout", "votes"), message


async def everyone(party) -> dict[str, WebsocketCommunicator]:
    return {p.username: await connect(party.room.code, p) for p in party.everyone}


async def close_all(sockets) -> None:
    for ws in sockets.values():
        await ws.disconnect()


ANSWER_KEYS = {"false_claim", "labels", "label", "gold", "correct", "found", "result", "answer", "voted"}


def answer_bearing(value, path: str = "") -> list[str]:
    """Where in a frame the answer, or how someone's vote went, shows: an answer-bearing key,
    a label's name, a scoreboard row with points or a vote in (no question is over yet), or
    points that are not the clock's (those of ``remaining`` beside them; 0 once voted)."""
    found = []
    if isinstance(value, dict):
        if "points" in value:
            remaining = value.get("remaining")
            if value["points"] != (0 if remaining is None else round_points(remaining)):
                found.append(f"{path}points")
        for key, inner in value.items():
            if key == "scoreboard" and inner is not None:
                found += [f"{path}scoreboard[{row['username']}]" for row in inner if (row["points"], row["correct"], row["voted"]) != (0, 0, 0)]
            elif key in ANSWER_KEYS and inner is not None:
                found.append(f"{path}{key}")
            else:
                found += answer_bearing(inner, f"{path}{key}.")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            found += answer_bearing(inner, f"{path}{i}.")
    elif isinstance(value, str) and value in ("REFUTES", "SUPPORTS"):
        found.append(path.rstrip("."))
    return found


def no_answer_in(message: dict, who: str = "") -> None:
    assert message["type"] in ("tick", "members", "room", "voted", "votes"), (who, message)
    assert answer_bearing({k: v for k, v in message.items() if k != "_raw"}) == [], (who, message)


async def frames_within(ws: WebsocketCommunicator, seconds: float) -> list[dict]:
    """Every frame that reaches ``ws`` in the next ``seconds`` (``receive_nothing`` frame by
    frame: a ``receive_from`` that times out would cancel the consumer)."""
    frames, loop = [], asyncio.get_running_loop()
    until = loop.time() + seconds
    while (left := until - loop.time()) > 0:
        if await ws.receive_nothing(timeout=left):
            break
        raw = await ws.receive_from()
        frames.append({**json.loads(raw), "_raw": raw})
    return frames


async def nothing_of_the_answer_yet(sockets: dict[str, WebsocketCommunicator], *, asking: WebsocketCommunicator, window: float = 0.5) -> None:
    """Once the server is done with the votes sent so far (``asking`` reads the room's state,
    which its socket answers only after its vote and the finish that followed it), no
    socket gets the answer or anything of it within ``window``, and the state read shows
    none either."""
    await asking.send_json_to({"type": "state"})
    while True:
        message = json.loads(raw := await asking.receive_from(timeout=3))
        no_answer_in({**message, "_raw": raw})
        if message["type"] == "room":
            assert message["question"]["status"] == "playing", message
            break
    late = await asyncio.gather(*(frames_within(ws, window) for ws in sockets.values()))
    for name, frames in zip(sockets, late):
        for message in frames:
            no_answer_in(message, name)


async def false_index() -> int:
    return await database_sync_to_async(lambda: RoomQuestion.objects.latest("id").false_claim_index)()


async def test_a_question_reaches_everyone_and_the_answer_waits_for_the_last_vote(party, fake_clock) -> None:
    sockets = await everyone(party)
    await sockets["hana"].send_json_to({"type": "start"})
    questions = {name: await frame(ws, "question") for name, ws in sockets.items()}
    assert len({(q["deadline"], json.dumps(q["claims"])) for q in questions.values()}) == 1
    assert all(q["remaining"] == 180 and q["points"] == 120 and not q["watching"] for q in questions.values())
    assert not any("REFUTES" in q["_raw"] or "SUPPORTS" in q["_raw"] or "Decisive" in q["_raw"] for q in questions.values())
    answer = await false_index()
    fake_clock.advance(20)
    await sockets["pia"].send_json_to({"type": "reveal", "claim": 0})
    clue = await frame(sockets["pia"], "clue")
    assert clue["remaining"] == 150
    for name, choice in (("hana", answer), ("pia", answer)):
        await sockets[name].send_json_to({"type": "vote", "false_claim": choice})
        ack = await frame(sockets[name], "voted")
        assert set(ack) - {"_raw"} == {"type", "remaining"}, "the ack does not tell whether the vote was right"
    await nothing_of_the_answer_yet(sockets, asking=sockets["pia"])
    await sockets["otto"].send_json_to({"type": "vote", "false_claim": 1 - answer})
    await frame(sockets["otto"], "voted")
    results = {name: await frame(ws, "answer") for name, ws in sockets.items()}
    result = results["otto"]
    assert result["false_claim"] == answer and result["gold"][answer] and not result["over"]
    assert result["found"] == [{"username": "hana", "points": 120}, {"username": "pia", "points": 120}]
    assert [(r["username"], r["points"]) for r in result["scoreboard"]] == [("hana", 120), ("pia", 120), ("otto", 0)]
    assert all(r["scoreboard"] == result["scoreboard"] for r in results.values())
    await close_all(sockets)


async def test_a_late_joiner_watches_without_the_claims_or_the_answer(party, fake_clock) -> None:
    sockets = await everyone(party)
    await sockets["hana"].send_json_to({"type": "start"})
    for ws in sockets.values():
        await frame(ws, "question")
    late = await database_sync_to_async(UserFactory)(username="lou")
    await database_sync_to_async(services.room_join)(code=party.room.code, player=late)
    sockets["lou"] = await connect(party.room.code, late)
    await sockets["lou"].send_json_to({"type": "vote", "false_claim": 0})
    assert (await frame(sockets["lou"], "error"))["code"] == "not_playing"
    fake_clock.advance(181)
    watched = await frame(sockets["lou"], "answer", timeout=4)
    assert "false_claim" not in watched and "gold" not in watched and watched["found"] == []
    assert "false_claim" in await frame(sockets["pia"], "answer")
    for player in (late, *party.players):  # their sockets renew this every 10 s of real time
        await database_sync_to_async(services.room_member_seen)(room_id=party.room.pk, player_id=player.pk)
    await sockets["hana"].send_json_to({"type": "start"})
    assert (await frame(sockets["lou"], "question"))["watching"] is False
    await close_all(sockets)


async def test_time_up_sends_timeout_then_the_answer(party, fake_clock) -> None:
    sockets = await everyone(party)
    await sockets["hana"].send_json_to({"type": "start"})
    await frame(sockets["pia"], "question")
    fake_clock.advance(181)
    assert (await frame(sockets["pia"], "timeout", timeout=3))["remaining"] == 0
    assert (await frame(sockets["pia"], "answer", timeout=3))["found"] == []
    assert await database_sync_to_async(lambda: set(Round.objects.values_list("state", flat=True)))() == {"timeout"}
    await close_all(sockets)


async def test_time_up_sends_timeout_first_even_when_another_socket_ended_the_question(party, fake_clock) -> None:
    """Each socket beats in its own hundredth of a second: at the deadline another member's
    socket (here: the finish, as the task or another beat runs it) may end the question before
    this one's beat saw its clock run out. Its member still gets ``timeout``, then the answer."""
    sockets = await everyone(party)
    await sockets["hana"].send_json_to({"type": "start"})
    await frame(sockets["pia"], "question")
    question_id = await database_sync_to_async(lambda: RoomQuestion.objects.latest("id").pk)()
    fake_clock.advance(181)
    assert await database_sync_to_async(services.room_question_finish)(question_id=question_id)
    assert (await frame(sockets["pia"], "timeout", "answer", timeout=3))["type"] == "timeout"
    assert (await frame(sockets["pia"], "answer", timeout=3))["found"] == []
    await close_all(sockets)


async def test_a_reconnect_gets_its_round_as_the_server_holds_it(party, fake_clock) -> None:
    sockets = await everyone(party)
    await sockets["hana"].send_json_to({"type": "start"})
    await frame(sockets["pia"], "question")
    await sockets["pia"].send_json_to({"type": "reveal", "claim": 1})
    await frame(sockets["pia"], "clue")
    await sockets["pia"].disconnect()
    fake_clock.advance(30)
    again = WebsocketCommunicator(router, f"/ws/rooms/{party.room.code.lower()}/")
    again.scope["user"] = party.players[0]
    assert (await again.connect())[0]
    state = await frame(again, "room")
    own = state["question"]["round"]
    assert own["remaining"] == 140 and len(own["clues"][1]) == 1 and own["status"] == "playing"
    await again.send_json_to({"type": "vote", "false_claim": 0})
    await frame(again, "voted")
    sockets["pia"] = again
    await close_all(sockets)


async def test_the_host_leaving_ends_the_room_for_everyone(party, fake_clock) -> None:
    sockets = await everyone(party)
    await sockets["hana"].send_json_to({"type": "leave"})
    for name in ("pia", "otto"):
        ended = await frame(sockets[name], "ended")
        assert ended["reason"] == "host_left"
        assert (await sockets[name].receive_output(timeout=1))["type"] == "websocket.close"
    await close_all(sockets)


async def test_only_the_host_starts(party) -> None:
    ws = await connect(party.room.code, party.players[0])
    await ws.send_json_to({"type": "start"})
    assert (await frame(ws, "error"))["code"] == "not_host"
    await ws.disconnect()


@pytest.mark.parametrize(("who", "code", "error"), [("stranger", 4403, "not_a_member"), ("nobody", 4401, "not_authenticated"), ("wrong_code", 4404, "not_found")])
async def test_refusals_close_with_their_code(party, who, code, error) -> None:
    from django.contrib.auth.models import AnonymousUser

    user = {"stranger": await database_sync_to_async(UserFactory)(), "nobody": AnonymousUser(), "wrong_code": party.host}[who]
    ws = WebsocketCommunicator(router, f"/ws/rooms/{'ZZZZZZ' if who == 'wrong_code' else party.room.code}/")
    ws.scope["user"] = user
    assert (await ws.connect())[0]
    assert json.loads(await ws.receive_from())["code"] == error
    assert (await ws.receive_output())["code"] == code


async def test_the_round_sockets_frame_rules_hold(party) -> None:
    ws = await connect(party.room.code, party.players[0])
    await ws.send_to(text_data="x" * 5000)
    assert (await frame(ws, "error"))["code"] == "frame_too_large"
    await ws.send_to(text_data='{"type": "vote", "false_claim": NaN}')
    assert (await frame(ws, "error"))["code"] == "bad_number"
    for _ in range(12):
        await ws.send_json_to({"type": "nope"})
    codes = [(await frame(ws, "error"))["code"] for _ in range(12)]
    assert codes.count("unknown_type") == 8 and codes.count("rate_limited") == 4  # 10 a second, the two above included
    await ws.disconnect()


async def test_origin_is_checked_at_the_handshake(party) -> None:
    from foolgame.asgi import application

    ws = WebsocketCommunicator(application, f"/ws/rooms/{party.room.code}/", headers=[(b"origin", b"https://evil.example"), (b"host", b"localhost")])
    assert not (await ws.connect())[0]


async def test_closing_the_socket_makes_the_member_absent(party) -> None:
    ws = await connect(party.room.code, party.players[1])
    await ws.disconnect()  # returns once the consumer has finished, its disconnect() included
    await database_sync_to_async(services.room_next_question)(code=party.room.code, player=party.host)
    dealt = await database_sync_to_async(lambda: set(Round.objects.values_list("player__username", flat=True)))()
    assert dealt == {"hana", "pia"}


async def test_open_sockets_keep_their_members_present_in_one_write(party, settings) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from foolgame.rooms.models import RoomMember

    settings.FM2_ROOMS = {**settings.FM2_ROOMS, "SEEN_EVERY_SECONDS": 0.2}
    sockets = await everyone(party)
    long_ago = timezone.now() - timedelta(hours=1)
    await database_sync_to_async(RoomMember.objects.update)(seen_at=long_ago)
    seen = database_sync_to_async(lambda: list(RoomMember.objects.values_list("seen_at", flat=True)))

    async def all_seen_again() -> bool:
        rows = await seen()
        return len(rows) == 3 and all(s > long_ago for s in rows)

    await wait_for_async(all_seen_again, what="every open socket's member seen again", every=0.02)
    await close_all(sockets)


async def test_a_last_vote_through_the_round_socket_ends_the_question_for_the_room(party, fake_clock) -> None:
    # A member may play their round of the question over the solo round socket: the vote is
    # acknowledged without the answer and, as the last one the question waited for, sends
    # the room its answer at once rather than at the deadline.
    sockets = await everyone(party)
    await sockets["hana"].send_to(text_data=json.dumps({"type": "start"}))
    question = {name: await frame(ws, "question") for name, ws in sockets.items()}
    answer = await false_index()
    for name in ("hana", "pia"):
        await sockets[name].send_to(text_data=json.dumps({"type": "vote", "false_claim": answer}))
        await frame(sockets[name], "voted")
    otto = next(p for p in party.players if p.username == "otto")
    round_socket = WebsocketCommunicator(router, f"/ws/rounds/{question['otto']['round']}/")
    round_socket.scope["user"] = otto
    assert (await round_socket.connect())[0]
    await round_socket.send_to(text_data=json.dumps({"type": "vote", "false_claim": answer}))
    while (result := json.loads(await round_socket.receive_from(timeout=3)))["type"] != "result":
        pass
    assert result == {"type": "result", "remaining": result["remaining"]}  # no verdict, no answer
    shown = await frame(sockets["pia"], "answer")
    assert shown["false_claim"] == answer and {f["username"] for f in shown["found"]} == {"hana", "pia", "otto"}
    await round_socket.disconnect()
    await close_all(sockets)


async def test_a_process_sends_a_questions_votes_count_at_most_once_an_interval(settings) -> None:
    """The socket votes of one process: the first count at once, the latest one of the burst
    at the end of the interval, and nothing more once the counts stop (every socket sends its
    frame at most that often anyway)."""
    from foolgame.rooms.consumers import _VotesCounts

    settings.FM2_ROOMS = {**settings.FM2_ROOMS, "MEMBERS_FRAME_SECONDS": 0.2}
    sent: list[tuple[str, dict]] = []
    sent_at: list[float] = []

    class Layer:
        async def group_send(self, group: str, message: dict) -> None:
            sent.append((group, message))
            sent_at.append(asyncio.get_running_loop().time())

    counts, layer = _VotesCounts(), Layer()
    for votes in (1, 3, 2):  # counts read by votes may arrive out of order: the largest stands
        counts.offer(layer, {"code": "ABCDEF", "question_id": 7, "votes": votes, "players": 5})
    counts.offer(layer, {"code": "ABCDEF", "question_id": 8, "votes": 1, "players": 5})
    await asyncio.sleep(0)
    assert [m["votes"] for _, m in sent] == [1, 1] and {g for g, _ in sent} == {"room-ABCDEF"}
    loop = asyncio.get_running_loop()
    # A busy machine may wake the loop late: wait for the burst's last count, not a time.
    await wait_for_async(lambda: len(sent) >= 3 and not counts.loops[loop], what="the burst's latest count", seconds=10)
    assert sent[2] == ("room-ABCDEF", {"type": "room.votes", "question_id": 7, "votes": 3, "players": 5})
    assert sent_at[2] - sent_at[0] >= 0.19, "the burst's latest count waits for the end of the interval"
    # Nothing left waiting means no timer left to send: a count sent again would be here already.
    assert len(sent) == 3, "no count sent again once they stopped"
