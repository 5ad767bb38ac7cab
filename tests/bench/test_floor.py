"""bench/floor.py, the benchmarks' floor: bare consumers that answer the game's frames at the
game's sizes. A floor that answered something else would make every ratio to it a lie."""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.testing import WebsocketCommunicator

from bench import floor

ORIGIN = [(b"origin", b"http://localhost"), (b"host", b"localhost")]


async def open_socket(path: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(floor.application, path, headers=ORIGIN)
    connected, code = await communicator.connect()
    assert connected, code
    return communicator


async def next_frame(communicator: WebsocketCommunicator, *types: str) -> tuple[dict, int]:
    """The next frame of one of ``types`` (others, e.g. ticks, are skipped, for 5 s at most),
    and its size in bytes."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + 5
    while loop.time() < give_up:
        text = await communicator.receive_from(timeout=3)
        frame = json.loads(text)
        if frame["type"] in types:
            return frame, len(text.encode())
    raise AssertionError(f"no {' or '.join(types)} frame")


@pytest.fixture
def sizes(monkeypatch):
    monkeypatch.setattr(floor, "SIZES", {"state": 700, "result": 900, "question": 600, "answer": 1400, "ended": 800})
    monkeypatch.setattr(floor, "QUESTIONS", 1)
    floor.ROOMS.clear()


@pytest.mark.parametrize("frame_type, size", [("state", 700), ("result", 900), ("tick", 0)])
def test_a_frame_is_padded_to_the_game_size_and_never_cut(sizes, frame_type, size) -> None:
    text = floor.padded(frame_type, remaining=171.5, points=95)
    assert len(text.encode()) == max(size, len(json.dumps({"type": frame_type, "remaining": 171.5, "points": 95})))


async def test_a_round_answers_start_ticks_then_answers_the_vote(sizes) -> None:
    ws = await open_socket("/ws/rounds/7/")
    try:
        await ws.send_json_to({"type": "start"})
        state, size = await next_frame(ws, "state")
        assert (state["id"], size) == (7, 700) and state["started_at"]
        tick, _ = await next_frame(ws, "tick")
        assert 0 < tick["remaining"] <= 180
        await ws.send_json_to({"type": "vote", "false_claim": 2})
        refused, _ = await next_frame(ws, "error")
        assert refused["code"] == "invalid_claim"
        await ws.send_json_to({"type": "vote", "false_claim": 1})
        _, size = await next_frame(ws, "result")
        assert size == 900
        await ws.send_json_to({"type": "nonsense"})
        assert (await next_frame(ws, "error"))[0]["code"] == "unknown_type"
    finally:
        await ws.disconnect()


async def test_a_room_broadcasts_its_question_and_after_the_last_vote_its_answer_and_end(sizes) -> None:
    host, guest = await open_socket("/ws/rooms/ABCD/"), await open_socket("/ws/rooms/ABCD/")
    try:
        for ws in (host, guest):
            await next_frame(ws, "room")
        await host.send_json_to({"type": "start"})
        for ws in (host, guest):
            question, size = await next_frame(ws, "question")
            assert (question["number"], size) == (1, 600)
        await host.send_json_to({"type": "vote", "false_claim": 0})
        await next_frame(host, "voted")
        assert (await next_frame(guest, "votes"))[0]["votes"] == 1
        assert floor.ROOMS["ABCD"].playing  # no answer before the room's last vote
        await guest.send_json_to({"type": "vote", "false_claim": 1})
        await next_frame(guest, "voted")
        for ws in (host, guest):
            answer, size = await next_frame(ws, "answer")
            assert (answer["over"], size) == (True, 1400)
            assert (await next_frame(ws, "ended"))[1] == 800
    finally:
        await host.disconnect()
        await guest.disconnect()


@pytest.fixture
def committing(sizes, monkeypatch, transactional_db):
    """The committing floor, its table made in the test database (and dropped after)."""
    from channels.db import database_sync_to_async

    from bench import floor_rows

    monkeypatch.setattr(floor, "COMMIT", True)
    floor_rows.create(floor.TABLE)
    yield database_sync_to_async(lambda: floor_rows.count(floor.TABLE))
    floor_rows.drop(floor.TABLE)


async def close_floor_connection() -> None:
    """Close the connection the floor's rows were committed on (database_sync_to_async's
    thread's), as a served floor's request end returns it: none is left open on the test database."""
    from channels.db import database_sync_to_async
    from django.db import connection

    await database_sync_to_async(lambda: connection.close())()


async def test_the_committing_floor_answers_a_vote_only_with_its_row_committed(committing) -> None:
    rows = committing
    ws = await open_socket("/ws/rounds/7/")
    try:
        await ws.send_json_to({"type": "start"})
        await next_frame(ws, "state")
        await ws.send_json_to({"type": "vote", "false_claim": 2})
        await next_frame(ws, "error")
        assert await rows() == {}  # a refused vote commits nothing
        await ws.send_json_to({"type": "vote", "false_claim": 1})
        await next_frame(ws, "result")
        assert await rows() == {"vote": 1}
    finally:
        await ws.disconnect()
        await close_floor_connection()


async def test_the_committing_floor_commits_each_room_vote_and_the_question_end_before_the_answer(committing) -> None:
    rows = committing
    host, guest = await open_socket("/ws/rooms/WXYZ/"), await open_socket("/ws/rooms/WXYZ/")
    try:
        for ws in (host, guest):
            await next_frame(ws, "room")
        await host.send_json_to({"type": "start"})
        for ws in (host, guest):
            await next_frame(ws, "question")
        await host.send_json_to({"type": "vote", "false_claim": 0})
        await next_frame(host, "voted")
        assert await rows() == {"vote": 1}
        await guest.send_json_to({"type": "vote", "false_claim": 1})
        await next_frame(guest, "answer")
        assert await rows() == {"vote": 2, "end": 1}
    finally:
        await host.disconnect()
        await guest.disconnect()
        await close_floor_connection()


def test_a_floor_whose_rows_are_not_its_answers_stops_the_bench() -> None:
    from bench import floor_rows

    line = floor_rows.check("the committing floor", {"vote": 40, "end": 3}, {"vote": 40, "end": 3})
    assert "3 end, 40 vote rows committed" in line
    with pytest.raises(SystemExit) as stopped:
        floor_rows.check("the committing floor", {"vote": 39, "end": 3}, {"vote": 40, "end": 3})
    assert "39 vote" in str(stopped.value) and "40 vote" in str(stopped.value)
