"""Players for the cluster's tests: solo rounds and live rooms played over sockets through the
balancer, each player reconnecting as docs/websocket.md ("Reconnecting") tells a client to,
and recording what a player would notice: how long they were away, whether their clock moved,
every error frame and close, and whether their vote counted."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from tests.cluster.conftest import BALANCER

WS = BALANCER.replace("http://", "ws://")

# Made on the worker host (an operator's shell): players with a session each, solo rounds dealt
# to them, and rooms with their members joined; printed as JSON. TAG, SOLO, ROOMS and MEMBERS
# are set before it runs.
SETUP = r"""
import json
from importlib import import_module
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from foolgame.rooms.services import room_create, room_join
from foolgame.voting.services import round_create

SessionStore = import_module(settings.SESSION_ENGINE).SessionStore
User = get_user_model()

def player(name):
    user = User.objects.create_user(name)
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return user, session.session_key

solo = []
for i in range(SOLO):
    user, key = player(f"{TAG}s{i}")
    round_ = round_create(player=user)
    solo.append({"round": round_.pk, "session": key, "false": round_.false_index})
rooms = []
for r in range(ROOMS):
    host, host_key = player(f"{TAG}r{r}h")
    room = room_create(host=host, questions=1, host_plays=True)
    members = [{"session": host_key, "host": True}]
    for m in range(MEMBERS - 1):
        user, key = player(f"{TAG}r{r}m{m}")
        room_join(code=room.code, player=user)
        members.append({"session": key, "host": False})
    rooms.append({"code": room.code, "members": members})
print(json.dumps({"solo": solo, "rooms": rooms}))
"""

# The rounds' votes and ledger as the database has them (the same shell), for ROUND_IDS.
LEDGER = r"""
import json
from django.db.models import Count, Sum
from foolgame.players.models import LedgerEntry
from foolgame.voting.models import Vote
votes = dict(Vote.objects.filter(round_id__in=ROUND_IDS).values("round_id").annotate(n=Count("pk")).values_list("round_id", "n"))
sums = dict(LedgerEntry.objects.filter(cause__in=[f"round:{i}" for i in ROUND_IDS]).values("cause").annotate(s=Sum("amount")).values_list("cause", "s"))
print(json.dumps({"votes": {str(k): v for k, v in votes.items()}, "sums": sums}))
"""


def setup_code(tag: str, solo: int, rooms: int, members: int) -> str:
    return f"TAG = {tag!r}; SOLO = {solo}; ROOMS = {rooms}; MEMBERS = {members}\n" + SETUP


def ledger_code(round_ids: list[int]) -> str:
    return f"ROUND_IDS = {sorted(round_ids)!r}\n" + LEDGER


def _deadline(value: str | None) -> float | None:
    return datetime.fromisoformat(value).timestamp() if value else None


@dataclass
class Player:
    """One socket's player. ``kind`` is ``round`` (a solo round) or ``room`` (a room member)."""

    kind: str
    path: str
    session: str
    false: int | None = None  # the solo round's false claim (its player votes right)
    host: bool = False
    connected: bool = False
    opened: bool = False  # saw its round's state, or its room question
    deadline: float | None = None  # the clock as first seen (epoch seconds)
    drift: list[float] = field(default_factory=list)  # |deadline after a reconnect - first deadline|
    away: list[float] = field(default_factory=list)  # seconds from a drop to the first frame after it
    drops: int = 0
    closes: Counter = field(default_factory=Counter)  # close codes of dropped sockets
    refused: Counter = field(default_factory=Counter)  # handshakes refused, by HTTP status
    errors: Counter = field(default_factory=Counter)  # error frames by code
    bad_frames: list[str] = field(default_factory=list)  # frames that are not JSON objects with a type
    round_id: int | None = None
    vote_sent: int = 0
    asked_state: bool = False
    started_room: bool = False  # the host sent the room's first question
    voted: bool = False  # the server said the vote is in (result, voted, or a state showing it)
    done: bool = False

    @property
    def url(self) -> str:
        return WS + self.path


class Game:
    """Every player's socket, and the moments the controller decides: when rooms start, when
    players vote."""

    def __init__(self, players: list[Player], vote_window: float) -> None:
        self.players = players
        self.start_rooms = asyncio.Event()
        self.vote = asyncio.Event()
        self.ask_state = asyncio.Event()  # every player sends one ``state`` frame (what a tab waking up does)
        self.vote_window = vote_window
        self.stopping = False

    def count(self, what: str) -> int:
        return sum(1 for p in self.players if getattr(p, what))

    def summary(self) -> dict[str, object]:
        """How many players are where, and what went wrong, for a failure's message."""
        return {
            "by state": Counter(f"{p.kind} connected={p.connected} opened={p.opened} voted={p.voted} done={p.done}" for p in self.players),
            "closes": sum((p.closes for p in self.players), Counter()),
            "refused": sum((p.refused for p in self.players), Counter()),
            "errors": sum((p.errors for p in self.players), Counter()),
        }

    async def play(self, player: Player) -> None:
        attempt = 0
        dropped_at: float | None = None
        last_close: int | None = None
        vote_at: float | None = None
        while not player.done and not self.stopping:
            if dropped_at is not None:
                wait = min(15.0, 0.5 * 2 ** attempt) * (1 + random.random() / 4)
                if last_close == 1013:
                    wait = max(wait, 2.0)
                attempt += 1
                await asyncio.sleep(wait)
            try:
                async with connect(player.url, additional_headers={"Cookie": f"sessionid={player.session}", "Origin": BALANCER},
                                   open_timeout=30, close_timeout=5, max_queue=None, ping_interval=None) as ws:
                    player.connected = True
                    vote_sent_here = False  # one vote a socket: after a drop, the state says whether it counted
                    if player.kind == "round":
                        await ws.send(json.dumps({"type": "start"}))  # always safe; answers the state
                    while not player.done and not self.stopping:
                        if vote_at is None and self.vote.is_set():
                            vote_at = time.monotonic() + random.random() * self.vote_window
                        if player.kind == "room" and player.host and self.start_rooms.is_set() and not player.started_room:
                            player.started_room = True
                            await ws.send(json.dumps({"type": "start"}))
                        if self.ask_state.is_set() and not player.asked_state:
                            player.asked_state = True
                            await ws.send(json.dumps({"type": "state"}))
                        if vote_at is not None and time.monotonic() >= vote_at and player.opened and not player.voted and not vote_sent_here:
                            vote_sent_here = True
                            player.vote_sent += 1
                            choice = player.false if player.false is not None else random.randint(0, 1)
                            await ws.send(json.dumps({"type": "vote", "false_claim": choice}))
                        try:
                            text = await asyncio.wait_for(ws.recv(), 0.25)
                        except TimeoutError:
                            continue
                        if dropped_at is not None:
                            player.away.append(time.monotonic() - dropped_at)
                            dropped_at, attempt = None, 0
                        self._frame(player, text)
            except ConnectionClosed as closed:
                last_close = closed.rcvd.code if closed.rcvd is not None else 1006
                player.closes[last_close] += 1
            except InvalidStatus as refused:
                player.refused[refused.response.status_code] += 1
                last_close = None
            except (OSError, InvalidHandshake, TimeoutError) as failed:
                player.refused[type(failed).__name__] += 1
                last_close = None
            player.connected = False
            if not player.done and dropped_at is None:
                dropped_at = time.monotonic()
                player.drops += 1

    def _frame(self, player: Player, text: str) -> None:
        try:
            frame = json.loads(text)
            kind = frame["type"]
        except (ValueError, KeyError, TypeError):
            player.bad_frames.append(text[:200])
            return
        if kind == "error":
            player.errors[frame.get("code", "?")] += 1
        elif player.kind == "round":
            self._round_frame(player, kind, frame)
        else:
            self._room_frame(player, kind, frame)

    def _clock(self, player: Player, deadline: float | None) -> None:
        if deadline is None:
            return
        if player.deadline is None:
            player.deadline = deadline
        else:
            player.drift.append(abs(deadline - player.deadline))

    def _round_frame(self, player: Player, kind: str, frame: dict) -> None:
        if kind == "state":
            player.opened = True
            if frame["status"] == "playing":
                self._clock(player, _deadline(frame.get("deadline")))
            elif frame["status"] == "voted":
                player.voted = player.done = True
            else:  # timed out, voided...: the round ended without this player's vote
                player.done = True
        elif kind == "result":
            player.voted = player.done = True

    def _room_frame(self, player: Player, kind: str, frame: dict) -> None:
        if kind == "room":
            player.connected = True
            question = frame.get("question")
            if frame["state"] == "ended":
                player.done = True
            if question and question.get("status") == "playing" and question.get("round"):
                player.opened = True
                player.round_id = question["round"]["id"]
                self._clock(player, _deadline(question.get("deadline")))
                if question["round"].get("status") == "voted":
                    player.voted = True
        elif kind == "question":
            player.opened = True
            player.round_id = frame.get("round")
            self._clock(player, _deadline(frame.get("deadline")))
        elif kind == "voted":
            player.voted = True
        elif kind == "ended":
            player.done = True


def players_of(setup: dict) -> list[Player]:
    players = [Player("round", f"/ws/rounds/{s['round']}/", s["session"], false=s["false"], round_id=s["round"]) for s in setup["solo"]]
    for room in setup["rooms"]:
        players += [Player("room", f"/ws/rooms/{room['code']}/", m["session"], host=m["host"]) for m in room["members"]]
    return players


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
