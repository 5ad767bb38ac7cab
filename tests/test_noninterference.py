"""Noninterference (GAME.md, "Nothing of the answer before a vote that counts"; issue 36, item 1):
what a player sees cannot depend on an answer they have not earned.

A field-by-field scan (tests/test_answer_leak.py) finds an answer that is *sent*; it cannot see
one that is *implied* by a point, a streak, a count, an order or a status code. So here two
worlds are built that differ only in hidden facts (``tests.leak_world.Hidden``):

- every pair's labels swapped (the other claim is the false one);
- every claim's gold sentence another sentence of its page (its last clue with it);
- every claim's label settled by release votes, so the player's fact check is a hidden gold item.

with the same ids (the database's sequences are put back between the two), the same random
draws and the same clock. The same script then runs in both: the answer-leak walk over every
operation of the OpenAPI schema and every page, each changing call followed by every read; and
the round and room sockets, every client frame sent and the frames received. Every response
and frame is normalised for what differs between two runs of the same world (times, CSRF
tokens) and must be the same in both worlds, byte for byte: bodies, status codes, error codes,
points, streaks, counts and order. A call after which the player has earned an answer (a vote
that counts, a round's deadline passed) is not compared, nor is anything after it in the same
savepoint: from then on the worlds may differ by what was earned.

The test is shown to fail on a planted leak: ``test_a_planted_implied_leak_fails_the_comparison``
plants the fact-check answer of before issue 36 (points and streak that move only on settled
claims answered right) and a socket frame that carries a hint of the label.
"""

from __future__ import annotations

import difflib
import json
import random
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection

from tests.leak_world import AS_BUILT, Hidden, World, build_world
from tests.test_answer_leak import (
    DESCRIBES_API,
    SAFE,
    Call,
    _about_another_round,
    answers_due,
    login,
    page_calls,
    request,
    rolled_back,
    schema,
    schema_calls,
)

FLIPPED = Hidden(flip_labels=True, other_gold=True, settled=True)
SEED = 36

TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?|[A-Z][a-z]{2} \d{1,2}, \d\d:\d\d")
"""An ISO time, or a page's "Nov 28, 05:02" (a ledger row's ``created`` is the wall clock's)."""
CHECK_OPERATIONS = ("/api/checks",)
"""A fact check shows its claim's gold evidence by design, to the checker alone, who is never
dealt that claim in a round nor while it is in anyone's open round: that evidence is earned by
the deal (tests/leak_world.py says the same), so it is masked before comparing."""
CSRF = re.compile(r'(csrfmiddlewaretoken" value="|csrf-token" content="|csrfToken = "|"csrftoken": ")[^"]+')


def normalised(body: str) -> str:
    """A body as two runs of the same world give it: times and CSRF tokens masked."""
    return CSRF.sub(r"\1<csrf>", TIME.sub("<time>", body))


# --- two worlds with the same ids ------------------------------------------------------------


def _sequences() -> dict[str, tuple[Any, ...]]:
    """Where every id sequence stands (PostgreSQL's sequences, SQLite's AUTOINCREMENT table)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema()")
            state = {}
            for (name,) in cursor.fetchall():
                cursor.execute(f'SELECT last_value, is_called FROM "{name}"')
                state[name] = cursor.fetchone()
            return state
        cursor.execute("SELECT name, seq FROM sqlite_sequence")
        return {name: (seq,) for name, seq in cursor.fetchall()}


def _restore(state: dict[str, tuple[Any, ...]]) -> None:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            for name, (value, called) in state.items():
                cursor.execute("SELECT setval(%s, %s, %s)", [f'"{name}"', value, called])
            return
        cursor.execute("DELETE FROM sqlite_sequence")
        cursor.executemany("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [(name, seq) for name, (seq,) in state.items()])


class _Uuids:
    """uuid4 from a seeded generator: the worlds' tags and markers are the same in both."""

    def __init__(self) -> None:
        self.rng = random.Random(SEED)

    def uuid4(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)


@contextmanager
def replayable(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Whatever runs inside starts from the same ids, random draws and uuids each time, and
    is undone after it."""
    from tests import leak_world

    state = _sequences()
    random.seed(SEED)
    names = _Uuids()
    monkeypatch.setattr(leak_world, "uuid", names)
    monkeypatch.setattr(leak_world, "_worlds", iter(range(1, 1000)))
    try:
        with rolled_back():
            yield
    finally:
        _restore(state)


# --- the REST walk, recorded -----------------------------------------------------------------


class Transcript:
    """What one world's player saw: each call's status and normalised body, in order."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}
        self.skipped = 0

    def record(self, label: str, response: Any) -> None:
        body = b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content
        text = body.decode("utf-8", "replace")
        if "json" in response.get("Content-Type", "") and text:
            data = json.loads(text)
            if label.split(" -> ")[-1].split(" ", 1)[-1].startswith(CHECK_OPERATIONS):
                data = _without_evidence(data)
            text = json.dumps(data, sort_keys=False, indent=1)
        self.seen[label] = f"HTTP {response.status_code}\n" + normalised(text)


def _without_evidence(data: Any) -> Any:
    if isinstance(data, dict):
        return {key: "<the check's evidence>" if key == "evidence" else _without_evidence(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_without_evidence(value) for value in data]
    return data


def walk_rest(client: Any, world: World, spec: dict, *, reads_only: bool = False, only: Callable[[Call], bool] | None = None) -> Transcript:
    """The answer-leak walk of one world, recorded instead of scanned: every read in the world
    as built, then each changing call followed by every read (not about another round),
    each in a savepoint of its own; comparisons stop inside a savepoint once an answer
    became due there."""
    transcript = Transcript()
    components = spec["components"]["schemas"]
    calls = schema_calls(spec, world)
    pages = page_calls(spec, world)
    reads = [c for c in calls + pages if c.method in SAFE and c.template not in DESCRIBES_API and (only is None or only(c))]
    changes = [] if reads_only else [c for c in calls if c.method not in SAFE and (only is None or only(c))]
    forfeited = {world.round("forfeited").pk}
    baseline = answers_due(world, forfeited)
    with rolled_back():
        login(client, world)
        for call in reads:
            transcript.record(call.label(), request(client, call, world, components))
    for change in changes:
        with rolled_back():
            login(client, world)
            done = set(forfeited)
            response = request(client, change, world, components)
            if change.template.endswith(("/forfeit", "/leave")) and response.status_code < 300:
                done.add(change.round_id(world))
            if answers_due(world, done) != baseline:
                transcript.skipped += 1
                continue  # the player earned an answer: the worlds may differ from here on
            transcript.record(change.label(), response)
            if response.status_code < 400:
                for read in reads:
                    if not _about_another_round(read, change):
                        transcript.record(f"{change.label()} -> {read.label()}", request(client, read, world, components))
    return transcript


def differences(first: dict[str, str], second: dict[str, str], limit: int = 8) -> list[str]:
    """Each call whose response differs between the worlds, with the lines that differ."""
    found = []
    for label in first.keys() | second.keys():
        a, b = first.get(label, "<not called>"), second.get(label, "<not called>")
        if a != b:
            diff = [line for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0) if line[:1] in "+-" and line[:3] not in ("+++", "---")]
            found.append(f"{label}:\n    " + "\n    ".join(diff[:6]))
    return sorted(found)[:limit]


@pytest.fixture
def frozen_clock(monkeypatch: pytest.MonkeyPatch):
    """Both worlds at the same instant on the server's clock."""
    from tests.voting.conftest import FakeClock

    clock_ = FakeClock()
    monkeypatch.setattr("foolgame.core.clock.now", clock_)
    return clock_


@pytest.fixture(autouse=True)
def no_sentence_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.leak_world import HashEncoder

    monkeypatch.setattr("foolgame.evidence.services.encoder_get", HashEncoder)


def two_worlds(monkeypatch: pytest.MonkeyPatch, frozen_clock: Any, play: Callable[[World], Any], **options: Any) -> dict[Hidden, Any]:
    start = frozen_clock.current
    seen = {}
    for hidden in (AS_BUILT, FLIPPED):
        frozen_clock.current = start
        with replayable(monkeypatch):
            seen[hidden] = play(build_world(hidden=hidden, **options))
    return seen


@pytest.mark.django_db
def test_the_player_sees_the_same_in_two_worlds_that_differ_only_in_hidden_facts(client, monkeypatch, frozen_clock) -> None:
    """As the player of the leak world (a dealt, a started, a forfeited round, a room they play
    in and one they host, a write task and a fact check): every operation and page."""
    spec = schema()
    seen = two_worlds(monkeypatch, frozen_clock, lambda world: walk_rest(client, world, spec))
    first, second = seen[AS_BUILT], seen[FLIPPED]
    print(f"\nnoninterference walk: {len(first.seen)} responses compared, {first.skipped} calls earned an answer (not compared)")
    assert len(first.seen) > 500 and first.seen.keys() == second.seen.keys()
    found = differences(first.seen, second.seen)
    assert found == [], f"{len(found)}+ responses differ between worlds that differ only in hidden facts:\n" + "\n".join(found)


@pytest.mark.django_db
def test_a_room_guest_sees_the_same_in_both_worlds(client, monkeypatch, frozen_clock) -> None:
    """A guest who joined the room by its code (no account of their own): every read."""
    from foolgame.rooms import services as rooms

    spec = schema()

    def as_guest(world: World) -> Transcript:
        guest, _ = rooms.room_join_as_guest(code=world.room.code, nickname="visitor", ip="198.18.0.9")
        world.player = guest
        return walk_rest(client, world, spec, reads_only=True)

    seen = two_worlds(monkeypatch, frozen_clock, as_guest)
    assert len(seen[AS_BUILT].seen) > 50  # a guest reaches the room's pages and little else
    found = differences(seen[AS_BUILT].seen, seen[FLIPPED].seen)
    assert found == [], "\n".join(found)


# --- the sockets, recorded -------------------------------------------------------------------


async def _frames(world: World, path: str, script: list[Any], player: Any = None) -> list[str]:
    """Each frame the socket received while ``script`` ran (a frame to send, or a callable run
    on the database, or ("until", type)), normalised."""
    from channels.db import database_sync_to_async
    from channels.routing import URLRouter
    from channels.testing import WebsocketCommunicator

    from foolgame.routing import websocket_urlpatterns

    ws = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    ws.scope["user"] = player or world.player
    connected, _ = await ws.connect()
    assert connected
    got: list[str] = []

    async def until(kind: str) -> None:
        while True:
            output = await ws.receive_output(timeout=5)
            if output["type"] == "websocket.close":
                got.append("<close>")
                return
            frame = json.loads(output["text"])
            # Ticks come by the wall clock's beat, and a vote count is sent at most once an
            # interval (two votes may come as one count or two): how many of either is no fact
            # of the world. The count itself is in the room's state, compared at the end.
            if frame["type"] not in ("tick", "votes"):
                got.append(normalised(json.dumps(frame)))
            if frame["type"] == kind:
                return

    try:
        for step in script:
            if isinstance(step, tuple) and step[0] == "until":
                await until(step[1])
            elif callable(step):
                await database_sync_to_async(step)(world)
            else:
                await ws.send_json_to(step)
    finally:
        await ws.disconnect()
    return got


ROUND_SCRIPT = [{"type": "state"}, ("until", "state"), {"type": "reveal", "claim": 0}, ("until", "clue"), {"type": "like", "claim": 0}, ("until", "error")]


async def socket_frames(monkeypatch: pytest.MonkeyPatch, frozen_clock: Any, *, rooms: bool = True) -> dict[Hidden, list[str]]:
    """The round socket on the started round (state, a clue bought, a like refused before the
    vote) and, with ``rooms``, the room socket from the question's start through the others'
    votes, the player's clue and a refused start, in each world: every frame before the
    player's own vote (whose result is earned)."""
    from channels.db import database_sync_to_async

    from tests import leak_world
    from tests.leak_world import deal_question, others_vote

    room_script = [
        ("until", "room"),
        deal_question,
        ("until", "question"),
        others_vote,
        ("until", "votes"),
        {"type": "reveal", "claim": 0},
        ("until", "clue"),
        {"type": "start"},
        ("until", "error"),
        {"type": "state"},
        ("until", "room"),
    ]
    seen: dict[Hidden, list[str]] = {}
    start = frozen_clock.current
    state = await database_sync_to_async(_sequences)()
    for hidden in (AS_BUILT, FLIPPED):
        await database_sync_to_async(_flush_and_restore)(state)  # the same empty tables and ids for each world
        frozen_clock.current = start
        random.seed(SEED)
        monkeypatch.setattr(leak_world, "uuid", _Uuids())
        monkeypatch.setattr(leak_world, "_worlds", iter(range(1, 1000)))
        world = await database_sync_to_async(build_world)(hidden=hidden, question_started=False)
        frames = await _frames(world, f"/ws/rounds/{world.round('started').pk}/", ROUND_SCRIPT)
        if rooms:
            frames += await _frames(world, f"/ws/rooms/{world.room.code}/", room_script)
        seen[hidden] = frames
    return seen


@pytest.mark.django_db(transaction=True)
async def test_socket_frames_are_the_same_in_both_worlds_until_the_answer_is_earned(monkeypatch, frozen_clock) -> None:
    seen = await socket_frames(monkeypatch, frozen_clock)
    assert len(seen[AS_BUILT]) >= 8
    found = differences(dict(enumerate(seen[AS_BUILT])), dict(enumerate(seen[FLIPPED])))
    assert found == [], "frames differ between worlds that differ only in hidden facts:\n" + "\n".join(map(str, found))


# --- the comparison fails on planted leaks ---------------------------------------------------


@pytest.mark.django_db
def test_the_fact_check_answer_of_before_issue_36_fails_the_comparison(client, monkeypatch, frozen_clock) -> None:
    """Before issue 36 an answer's points and streak moved only on a settled claim answered with
    its label. Planted back, the walk over the check's answer and the reads after it finds the
    worlds apart for one of the two labels the player may send."""
    from foolgame.checks import services as checks
    from foolgame.checks.models import Check
    from tests import test_answer_leak

    real = checks.check_answer

    def answer_as_before(*, check_id: int, player: Any, label: str) -> dict:
        check = Check.objects.get(pk=check_id)
        result = real(check_id=check_id, player=player, label=label)
        right = check.gold and label == check.settled_label
        return {**result, "points": 10 if right else 0, "streak": 1 if right else 0}

    monkeypatch.setattr(checks, "check_answer", answer_as_before)

    def answer_both_ways(world: World) -> Transcript:
        transcript = Transcript()
        for label in ("SUPPORTS", "REFUTES"):
            with rolled_back():
                login(client, world)
                response = client.post(f"/api/checks/{world.check_id}", {"label": label}, content_type="application/json")
                transcript.record(f"answer {label}", response)
                transcript.record(f"answer {label} -> GET /api/me", client.get("/api/me"))
        return transcript

    seen = two_worlds(monkeypatch, frozen_clock, answer_both_ways)
    found = differences(seen[AS_BUILT].seen, seen[FLIPPED].seen)
    assert any('"streak": 1' in line for line in found) and any('"points": 10' in line for line in found), found


@pytest.mark.django_db(transaction=True)
async def test_a_planted_leak_in_a_frame_fails_the_comparison(monkeypatch, frozen_clock) -> None:
    """A round's state frame that carries no label, no gold and no answer-bearing key, only a
    "pace" that follows which claim is false: no scan sees it; the comparison does."""
    from foolgame.voting import services
    from foolgame.voting.models import Round

    real = services.round_get_state

    def state_with_a_hint(*, round_id: int, player: Any) -> Any:
        state = real(round_id=round_id, player=player)
        return {**state, "pace": 1.0 + 0.1 * Round.objects.get(pk=round_id).false_claim_index}

    monkeypatch.setattr(services, "round_get_state", state_with_a_hint)
    seen = await socket_frames(monkeypatch, frozen_clock, rooms=False)
    found = differences(dict(enumerate(seen[AS_BUILT])), dict(enumerate(seen[FLIPPED])))
    assert found and all('"pace"' in line for line in found), found


def _flush_and_restore(state: dict[str, tuple[Any, ...]]) -> None:
    """A transactional test's world is committed: empty the tables (as between two such tests),
    then put the sequences back where they stood."""
    from django.core.management import call_command

    call_command("flush", verbosity=0, interactive=False)
    _restore(state)
