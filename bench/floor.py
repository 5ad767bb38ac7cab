"""The floor of the socket benchmarks: bare Channels consumers that answer the game's frames
with frames of the game's sizes, through the same channel layer, and do nothing else.

Served as the game is (``uvicorn bench.floor:application`` with ``foolgame.serving``'s flags,
one process, ``foolgame.settings``, so the same Redis channel layer and its configuration, the
same origin check and garbage-collector settings), but with no session and no lease. Two
floors, by ``FM2_FLOOR``'s ``"commit"``:

- the committing floor (``"commit": true``, the benches' default): a vote is answered only
  after one row for it is committed (``bench_floor_vote``, bench/floor_rows.py) in the same
  database, through the same ``DATABASES`` settings and pool and ``database_sync_to_async``,
  as the game answers a vote only after its transaction commits; a room's last vote commits
  one more row, for the question's end, before the answer is broadcast. On SQLite it commits
  in SQLite. What is left of a figure measured on it is the cost of uvicorn, Channels and
  Redis moving frames of that size at that rate plus one commit per vote: the honest floor.
- the no-database floor (``"commit": false``): the same without the rows, the cost of the
  frames alone.

A benchmark prints the game's figure beside both, with its ratio to each.

- ``/ws/rounds/<id>/``: ``start`` answers a ``state`` frame; then a ``tick`` once a second,
  sent by the socket's own timer as the game's round socket sends it (FM2_FLOOR_TICKS=local,
  the default), or through the round's group (``group``: a ``group_send``, one more trip
  through Redis per tick, which the game does not make); ``vote`` stops the ticks, commits its
  row (committing floor) and answers a ``result`` frame.
- ``/ws/rooms/<code>/``: a ``room`` frame on connect; ``start`` broadcasts a ``question``
  frame to the room's group; each ``vote`` commits its row (committing floor), answers
  ``voted`` and broadcasts the count (sent on at most once a second per socket, as the game's
  ``votes`` frame); the room's last vote commits the question's end and broadcasts its
  ``answer`` (``over`` on the last question) and then ``ended``. A member ticks
  once a second by its own timer from its question until its vote, as the game's room socket.

``FM2_FLOOR`` (JSON) gives the frames' sizes in bytes (``{"sizes": {"state": 1234, ...}}``,
measured on the game by the bench) and the room's questions (``"questions"``); a frame is
padded to its size with a ``pad`` field. A ``vote`` on a claim other than 0 or 1 answers
``error`` ``invalid_claim``, as the game does; an unknown frame ``error`` ``unknown_type``.
A room's state (its members, question, votes) lives in this process: one process, as the
benchmarks run it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
from datetime import datetime, timedelta, timezone
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foolgame.settings")
import django  # noqa: E402

django.setup()

from channels.consumer import get_handler_name  # noqa: E402
from channels.db import database_sync_to_async  # noqa: E402
from channels.exceptions import StopConsumer  # noqa: E402
from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.urls import path, re_path  # noqa: E402

from bench import floor_rows  # noqa: E402
from foolgame.security import OriginValidator  # noqa: E402

CONFIG: dict[str, Any] = json.loads(os.environ.get("FM2_FLOOR") or "{}")
SIZES: dict[str, int] = CONFIG.get("sizes", {})
QUESTIONS = int(CONFIG.get("questions", 3))
TICKS = os.environ.get("FM2_FLOOR_TICKS", "local")
COMMIT = bool(CONFIG.get("commit", False))
TABLE = "bench_floor_vote"
ROUND_SECONDS = 180


def padded(frame_type: str, **fields: Any) -> str:
    """The frame as text, padded to the game's size of that frame (never cut)."""
    frame = {"type": frame_type, **fields}
    text = json.dumps(frame)
    missing = SIZES.get(frame_type, 0) - len(text.encode()) - len(', "pad": ""')
    if missing >= 0:
        text = json.dumps({**frame, "pad": "x" * missing})
    return text


@database_sync_to_async
def commit_row(kind: str, target: str, number: int = 0) -> None:
    """One row committed, on the thread and pooled connection a game's consumer writes on."""
    floor_rows.commit(TABLE, kind, target, number)


def claim_ok(frame: dict[str, Any]) -> bool:
    value = frame.get("false_claim")
    return not isinstance(value, bool) and value in (0, 1)


class FloorSocket(AsyncWebsocketConsumer):
    group: str
    handlers: dict[str, str] = {}

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch without its ``close_old_connections`` hop to a thread before
        every message, as the game's sockets (``GameSocketConsumer``): a hop per message
        would be a cost the game does not pay (the committing floor's rows go through
        ``database_sync_to_async``, which closes old connections around each, as the game's)."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        """Channels' without its ``close_old_connections`` (see ``dispatch``)."""
        for group in self.groups:
            await self.channel_layer.group_discard(group, self.channel_name)
        await self.disconnect(message["code"])
        raise StopConsumer()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            frame = json.loads(text_data or "")
        except ValueError:
            frame = None
        name = self.handlers.get(frame.get("type")) if isinstance(frame, dict) else None
        if name is None:
            await self.error("unknown_type", "type must be one of: " + ", ".join(self.handlers) + ".")
            return
        await getattr(self, name)(frame)

    async def error(self, code: str, message: str) -> None:
        await self.send(text_data=json.dumps({"type": "error", "code": code, "message": message}))

    async def floor_frame(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["text"])

    async def disconnect(self, code: int) -> None:
        ticker = getattr(self, "ticker", None)
        if ticker is not None:
            ticker.cancel()
        await self.channel_layer.group_discard(self.group, self.channel_name)

    async def beats(self, send: Any) -> None:
        """``send`` once a second on the loop's clock, without drift, as the game's sockets do."""
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        try:
            while True:
                next_at += 1.0
                await asyncio.sleep(max(0.0, next_at - loop.time()))
                await send()
        except asyncio.CancelledError:
            pass


class RoundFloor(FloorSocket):
    handlers = {"start": "on_start", "vote": "on_vote"}
    ticker: asyncio.Task | None = None

    async def connect(self) -> None:
        self.round_id = int(self.scope["url_route"]["kwargs"]["round_id"])
        self.group = f"floor.round.{self.round_id}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def on_start(self, frame: dict[str, Any]) -> None:
        started = datetime.now(timezone.utc)
        self.deadline = started + timedelta(seconds=ROUND_SECONDS)
        await self.send(text_data=padded("state", id=self.round_id, status="playing", started_at=started.isoformat(),
                                         deadline=self.deadline.isoformat(), remaining=float(ROUND_SECONDS), points=100))
        if self.ticker is None:
            self.ticker = asyncio.create_task(self.beats(self.tick))

    def tick_text(self) -> str:
        remaining = round((self.deadline - datetime.now(timezone.utc)).total_seconds(), 2)
        return padded("tick", remaining=remaining, points=int(remaining / 1.8))

    async def tick(self) -> None:
        if TICKS == "local":
            await self.send(text_data=self.tick_text())
        else:
            await self.channel_layer.group_send(self.group, {"type": "floor.frame", "text": self.tick_text()})

    async def on_vote(self, frame: dict[str, Any]) -> None:
        if not claim_ok(frame):
            await self.error("invalid_claim", "'false_claim' must be 0 (left) or 1 (right).")
            return
        if self.ticker is not None:
            self.ticker.cancel()
            self.ticker = None
        if COMMIT:
            await commit_row("vote", f"round {self.round_id}", int(frame["false_claim"]))
        await self.send(text_data=padded("result", correct=True, points=50, remaining=100.0, false_claim=frame["false_claim"]))


class Room:
    def __init__(self) -> None:
        self.members = 0
        self.number = 0
        self.votes = 0
        self.playing = False


ROOMS: dict[str, Room] = {}


class RoomFloor(FloorSocket):
    handlers = {"start": "on_start", "vote": "on_vote"}
    ticker: asyncio.Task | None = None
    votes_pending: str | None = None
    votes_task: asyncio.Task | None = None
    votes_sent_at = float("-inf")

    async def connect(self) -> None:
        self.code = str(self.scope["url_route"]["kwargs"]["code"]).upper()
        self.group = f"floor.room.{self.code}"
        self.room = ROOMS.setdefault(self.code, Room())
        self.room.members += 1
        self.voted = True
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send(text_data=padded("room", code=self.code, state="lobby", questions=QUESTIONS, number=self.room.number))
        self.ticker = asyncio.create_task(self.beats(self.tick))

    async def disconnect(self, code: int) -> None:
        self.room.members -= 1
        if self.room.members <= 0:
            ROOMS.pop(self.code, None)
        if self.votes_task is not None:
            self.votes_task.cancel()
        await super().disconnect(code)

    async def tick(self) -> None:
        if not self.voted:
            remaining = round(max(0.0, self.deadline - time.time()), 2)
            await self.send(text_data=padded("tick", remaining=remaining, points=int(remaining / 1.8)))

    async def on_start(self, frame: dict[str, Any]) -> None:
        room = self.room
        if room.playing or room.number >= QUESTIONS:
            await self.error("question_playing", "A question is playing.")
            return
        room.number, room.votes, room.playing = room.number + 1, 0, True
        started = time.time()
        text = padded("question", id=room.number, number=room.number, questions=QUESTIONS,
                      started_at=datetime.fromtimestamp(started, timezone.utc).isoformat(), deadline=started + ROUND_SECONDS,
                      remaining=float(ROUND_SECONDS), points=100, watching=False, players=room.members)
        await self.channel_layer.group_send(self.group, {"type": "floor.question", "text": text, "deadline": started + ROUND_SECONDS})

    async def floor_question(self, event: dict[str, Any]) -> None:
        self.voted, self.deadline = False, event["deadline"]
        await self.send(text_data=event["text"])

    async def on_vote(self, frame: dict[str, Any]) -> None:
        room = self.room
        if not claim_ok(frame):
            await self.error("invalid_claim", "'false_claim' must be 0 (left) or 1 (right).")
            return
        if self.voted or not room.playing:
            await self.error("not_playing", "You have no round in this question.")
            return
        self.voted = True
        if COMMIT:
            await commit_row("vote", f"room {self.code}", room.number)
        room.votes += 1  # counted once committed: the room's last vote is the last to commit
        await self.send(text_data=padded("voted", remaining=round(max(0.0, self.deadline - time.time()), 2)))
        if room.votes < room.members:
            await self.channel_layer.group_send(self.group, {"type": "floor.votes", "number": room.number, "votes": room.votes,
                                                             "players": room.members})
            return
        room.playing = False
        over = room.number >= QUESTIONS
        if COMMIT:
            await commit_row("end", f"room {self.code}", room.number)
        await self.channel_layer.group_send(self.group, {"type": "floor.frame", "text": padded("answer", number=room.number,
                                                                                             questions=QUESTIONS, over=over)})
        if over:
            await self.channel_layer.group_send(self.group, {"type": "floor.frame", "text": padded("ended", reason="done")})

    async def floor_votes(self, event: dict[str, Any]) -> None:
        """At most one ``votes`` frame a second with the latest count, as the game's socket."""
        self.votes_pending = padded("votes", question_id=event["number"], votes=event["votes"], players=event["players"])
        if self.votes_task is None:
            self.votes_task = asyncio.create_task(self.send_votes())

    async def send_votes(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.votes_pending is not None:
                wait = self.votes_sent_at + 1.0 - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                    continue
                text, self.votes_pending = self.votes_pending, None
                if self.room.playing:
                    self.votes_sent_at = loop.time()
                    await self.send(text_data=text)
        finally:
            self.votes_task = None


application = ProtocolTypeRouter(
    {
        "websocket": OriginValidator(
            URLRouter(
                [
                    path("ws/rounds/<int:round_id>/", RoundFloor.as_asgi()),
                    re_path(r"^ws/rooms/(?P<code>[A-Za-z0-9]{4,12})/$", RoomFloor.as_asgi()),
                ]
            )
        ),
    }
)

# As foolgame.asgi: what is loaded lives as long as the process, out of the collector's sight.
gc.collect()
gc.freeze()
gc.set_threshold(*settings.FM2_GC_THRESHOLDS)
