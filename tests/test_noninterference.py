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

The accounts: the leak world's player (their rounds, a room they play in and one they host, a
write task, and a fact check dealt to them, so the walk is a checker's too: ``POST /api/checks``
and the answer to their check); a room guest; the round and room sockets until the player's
vote; a moderator of another claim (their queue holds another category's claim: every
operation but acting on a world claim, which would make them its moderator, then each action
on their own claim and every moderation read); and a writer with a task on a page of the world
whose claims they never saw (every authoring operation and page, their page's hints, and
near-copies of the page's claims, refused as near-duplicates whatever their labels); and a
study's participant midway through its work (``tests.leak_world.build_study``: a check and a
round dealt and not answered), through the study's pages, ``/me``, the reads around them and
the checks they are dealt and answer rightly, which are attention checks in one world only
(``test_a_study_participant_sees_the_same_in_both_worlds``).

The test is shown to fail on planted leaks: the fact-check answer of before issue 36 (points
and streak that move only on settled claims answered right), a socket frame that carries a
hint of the label, a moderator's queue row that counts false claims elsewhere, a writer's
hints that leave out sentences already gold, and a participant's ``/me`` that counts the
attention checks they passed. One leak the comparison found was real: a write
task's veracity was the label the pool lacked, so on a page or category out of balance it
named the label of claims the writer never saw; it is now balanced on the writer's own claims
and tasks (``test_a_write_tasks_veracity_is_the_same_in_both_worlds``).
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


# --- a moderator of another claim, a writer ---------------------------------------------------

MODERATION = ("/api/moderation/", "/moderation/")
AUTHORING = ("/api/claims", "/api/write-tasks", "/write/", "/api/pages", "/pages/", "/api/me")
"""The authoring endpoints and pages, and what a writer reads around them (their page, their
own account)."""


def _reads(spec: dict, world: World, only: Callable[[Call], bool]) -> list[Call]:
    return [c for c in schema_calls(spec, world) + page_calls(spec, world) if c.method in SAFE and c.template not in DESCRIBES_API and only(c)]


def moderator_of_another_claim(world: World) -> Any:
    """A moderator whose queue holds a claim of another category (too hard by its release votes),
    none of the world's: the world's claims are claims they do not moderate."""
    from foolgame.claims.models import Claim
    from foolgame.moderation.actions import moderator_set
    from foolgame.moderation.quality import quality_refresh
    from foolgame.pages.models import Page, Sentence
    from tests.factories import CategoryFactory, UserFactory

    category = CategoryFactory(name=f"Moderated {world.n}", slug=f"moderated-{world.n}")
    page = Page.objects.create(title=f"Moderated page {world.n}", category=category, source=Page.Source.TEXT)
    sentences = Sentence.objects.bulk_create(
        Sentence(page=page, position=n, section_header="", text=f"Moderated page {world.n} sentence {n}.") for n in range(3)
    )
    clues = [{"sentence_id": s.pk, "text": s.text, "section_header": ""} for s in sentences[:2]]
    claim = Claim.objects.create(page=page, label="SUPPORTS", author=world.host, text=f"Moderated page {world.n} is hard.", clues=clues,
                                 release_total_votes=10, release_correct_votes=0)
    quality_refresh(claim_ids=[claim.pk])
    moderator = UserFactory(username=f"leak-moderator-{world.n}")
    moderator_set(username=moderator.username)
    world.player = moderator
    return claim


def walk_as_moderator(client: Any, world: World, spec: dict, *, everything: bool = True) -> Transcript:
    """Every operation and page as the moderator (acting on a world claim would make them its
    moderator: those actions are left out; ``everything=False``, only the moderation reads),
    then each action on their own queue's claim followed by every moderation read."""
    claim = moderator_of_another_claim(world)
    assert world.player.has_perm("moderation.moderate_claims")
    if everything:
        transcript = walk_rest(client, world, spec, only=lambda c: not c.template.startswith("/api/moderation/claims/"))
    else:
        transcript = walk_rest(client, world, spec, reads_only=True, only=lambda c: c.template.startswith(MODERATION))
    components = spec["components"]["schemas"]
    moderation_reads = _reads(spec, world, lambda c: c.template.startswith(MODERATION))
    assert any(c.template == "/api/moderation/queue" for c in moderation_reads)

    def whole_queue(label: str) -> None:
        """The walk fills ``category`` with the world's: the queue of every category too."""
        for path, query in (("/api/moderation/queue", {}), ("/api/moderation/queue", {"reason": "too_hard"}), ("/moderation/", {})):
            transcript.record(f"{label}GET {path} {query} (every category)", client.get(path, query))

    with rolled_back():
        login(client, world)
        whole_queue("")
    for body in ({"action": "keep"}, {"action": "relabel", "label": "REFUTES"}, {"action": "remove"}):
        with rolled_back():
            login(client, world)
            label = f"{body['action']} the moderator's own claim"
            response = client.post(f"/api/moderation/claims/{claim.pk}/actions", {**body, "reason": "walk"}, content_type="application/json")
            assert response.status_code == 200, response.content
            transcript.record(label, response)
            for read in moderation_reads:
                transcript.record(f"{label} -> {read.label()}", request(client, read, world, components))
            whole_queue(f"{label} -> ")
    return transcript


@pytest.mark.django_db
def test_a_moderator_of_another_claim_sees_the_same_in_both_worlds(client, monkeypatch, frozen_clock) -> None:
    """A moderator whose queue holds another category's claim: their queue (every reason and
    the world's category), audit log, held players and pages, their actions on their own
    claim, and every other operation, are the same whatever the world's hidden facts."""
    spec = schema()
    seen = two_worlds(monkeypatch, frozen_clock, lambda world: walk_as_moderator(client, world, spec))
    first = seen[AS_BUILT].seen
    queue = first["GET /api/moderation/queue {} (every category)"]
    assert '"count": 1' in queue and "is hard." in queue  # the walk saw their own claim in the queue
    assert '"count": 0' in first["keep the moderator's own claim -> GET /api/moderation/queue {} (every category)"]
    assert len(first) > 500 and first.keys() == seen[FLIPPED].seen.keys()
    found = differences(first, seen[FLIPPED].seen)
    assert found == [], "\n".join(found)


def writer_on_a_world_page(world: World, *, balanced: bool = True) -> tuple[Any, list[str]]:
    """A writer (no round, no room) on a page of the world whose true and false claims they never
    saw. The world's claims do not read as sentences (a near-copy of one is refused first as
    ``not_a_sentence``), so the page gets claims that do, labelled as its own (so they too
    differ between the worlds): one per label (``balanced``), or both with the label of the
    page's first claim. Returns the writer and the new claims' texts."""
    from foolgame.claims.models import Claim
    from tests.factories import UserFactory

    writer = UserFactory(username=f"leak-writer-{world.n}")
    page = world.extra_page
    own = list(Claim.objects.filter(page=page).order_by("pk"))
    sentences = ["The river of the town runs past the old hill in the north.", "The bridge of the town crosses the river near the old mill."]
    for claim, text in zip(own if balanced else own[:1] * 2, sentences):
        Claim.objects.create(page=page, label=claim.label, author=world.host, text=text, clues=claim.clues)
    world.player = writer
    return writer, sentences


def walk_as_writer(client: Any, world: World, spec: dict) -> Transcript:
    """Every authoring operation and page as the writer, with a write task on the page, each
    change followed by the reads; then a one-word edit of each sentence-like claim of the
    page, checked and saved: refused as a near-duplicate, whatever the claim's label."""
    from foolgame.authoring.services import write_task_create

    _, sentences = writer_on_a_world_page(world)
    world.task = write_task_create(player=world.player, page_id=world.extra_page.pk)
    transcript = walk_rest(client, world, spec, only=lambda c: c.template.startswith(AUTHORING))
    components = spec["components"]["schemas"]
    reads = _reads(spec, world, lambda c: c.template.startswith(AUTHORING))
    with rolled_back():
        login(client, world)
        writers_page(client, world, transcript, "")
    for text in (sentences[0].replace("north", "south"), sentences[1].replace("crosses", "crossed")):
        for path in ("/api/claims/check", "/api/claims"):
            with rolled_back():
                login(client, world)
                body = {"task": world.task.pk, "text": text, "gold_sentence_ids": _named_gold(world)}
                label = f"POST {path} a near-copy: {text}"
                transcript.record(label, client.post(path, body, content_type="application/json"))
                for read in reads:
                    transcript.record(f"{label} -> {read.label()}", request(client, read, world, components))
                writers_page(client, world, transcript, f"{label} -> ")
    return transcript


def writers_page(client: Any, world: World, transcript: Transcript, label: str) -> None:
    """The writer's own page (the walk's page ids are the rounds'): it, its hints for a draft
    and for the page's own words, and the writing page."""
    page = world.extra_page.pk
    for path, query in (
        (f"/api/pages/{page}", {}),
        (f"/api/pages/{page}/hints", {"q": "Leakland river and hill"}),
        (f"/api/pages/{page}/hints", {"q": "decisive evidence retrieved sentence claim"}),
        (f"/write/{world.task.pk}/", {}),
    ):
        transcript.record(f"{label}GET {path} {query} (the writer's page)", client.get(path, query))


def _named_gold(world: World) -> list[int]:
    return [world.task.page.sentences.order_by("-position", "-id").values_list("pk", flat=True).first()]


@pytest.mark.django_db
def test_a_writer_sees_the_same_in_both_worlds(client, monkeypatch, frozen_clock) -> None:
    spec = schema()
    seen = two_worlds(monkeypatch, frozen_clock, lambda world: walk_as_writer(client, world, spec))
    first = seen[AS_BUILT].seen
    near_copies = [body for label, body in first.items() if "a near-copy" in label and " -> " not in label]
    assert len(near_copies) == 4 and all("near_duplicate" in body for body in near_copies), near_copies
    assert first["POST /api/claims"].startswith("HTTP 201")  # the walk's own claim saved, the reads after it compared
    assert len(first) > 100 and first.keys() == seen[FLIPPED].seen.keys()
    found = differences(first, seen[FLIPPED].seen)
    assert found == [], "\n".join(found)


@pytest.mark.django_db
def test_a_write_tasks_veracity_is_the_same_in_both_worlds(client, monkeypatch, frozen_clock) -> None:
    """A page (and category) two claims out of balance: the veracity handed to a writer is the
    same in both worlds (it was the label those claims lacked, before it was balanced on the
    writer's own claims and tasks)."""

    def ask(world: World) -> Transcript:
        writer_on_a_world_page(world, balanced=False)
        transcript = Transcript()
        with rolled_back():
            login(client, world)
            transcript.record("POST /api/write-tasks", client.post("/api/write-tasks", {"page": world.extra_page.pk}, content_type="application/json"))
        return transcript

    seen = two_worlds(monkeypatch, frozen_clock, ask)
    assert seen[AS_BUILT].seen["POST /api/write-tasks"].startswith("HTTP 201")
    found = differences(seen[AS_BUILT].seen, seen[FLIPPED].seen)
    assert found == [], "\n".join(found)


# --- a study's participant -------------------------------------------------------------------

PARTICIPANT_READS = ("/api/me", "/api/me/rounds", "/api/me/notifications", "/check/", "/play/")
"""What a participant reads around the study's own pages (found by the URL conf: ``studies_route``)."""
PARTICIPANT = re.compile(r"p_[0-9a-f]{16}")
"""A participant account's name: drawn at random on arrival, so it differs between two runs."""


def as_participant(client: Any, world: World, spec: dict) -> Transcript:
    """The leak world's study (``build_study``) with its midway participant only, who wrote a
    claim and voted a round, and holds a check and a round dealt and not answered: every study
    endpoint and page, the reads around them and the check deal (each read as it stands, each
    change followed by every read), then their two checks answered, each with its claim's
    label, each answer followed by every read. The checks dealt are compared with their fields
    and order, and their clocks unmasked (``expires_at``: the same rule in both worlds)."""
    from foolgame.checks.models import Check
    from foolgame.studies.models import AttentionCheck
    from foolgame.voting.models import Round
    from tests.test_answer_leak import studies_route

    participant = world.study.participants["midway"]
    world.player = participant.user
    world.check_id = Check.objects.get(player=participant.user, answered_at__isnull=True).pk

    def around(call: Call) -> bool:
        return studies_route(call.template) or call.template in PARTICIPANT_READS or call.template in CHECK_OPERATIONS

    transcript = walk_rest(client, world, spec, only=around)
    components = spec["components"]["schemas"]
    reads = _reads(spec, world, around)
    login(client, world)
    for step in range(2):
        dealt = client.post("/api/checks", content_type="application/json")
        transcript.record(f"POST /api/checks (deal {step})", dealt)
        transcript.seen[f"deal {step}: its clock"] = f"{dealt.json()['expires_at']} (dealt at {frozen_now()})"
        check = Check.objects.select_related("claim").get(pk=dealt.json()["id"])
        answer = client.post(f"/api/checks/{check.pk}", {"label": check.claim.label}, content_type="application/json")
        transcript.record(f"POST /api/checks/{{check_id}} (answer {step}, its claim's label)", answer)
        for read in reads:
            transcript.record(f"answer {step} -> {read.label()}", request(client, read, world, components))
    transcript.attention = list(AttentionCheck.objects.filter(participant=participant).values_list("passed", flat=True))  # type: ignore[attr-defined]
    # The round the participant voted in before the walk: its answer is earned (the worlds
    # differ there by what the vote earned: which claim was false, which they picked).
    voted = set(Round.objects.filter(player=participant.user, state=Round.State.VOTED).values_list("pk", flat=True))
    transcript.seen = {label: PARTICIPANT.sub("p_<participant>", _earned_masked(body, voted)) for label, body in transcript.seen.items()}
    transcript.seen = {label: _dealt_claim_masked(body) if label.startswith("POST /api/checks") else body for label, body in transcript.seen.items()}
    return transcript


def _json_masked(body: str, mask: Callable[[Any], Any]) -> str:
    """A recorded response (its status line, then its JSON) with ``mask`` applied to the JSON;
    a body that is not JSON as it was."""
    head, _, text = body.partition("\n")
    try:
        data = json.loads(text)
    except ValueError:
        return body
    return head + "\n" + json.dumps(mask(data), indent=1)


def _dealt_claim_masked(body: str) -> str:
    """A check's JSON body with the identity of its claim masked (ids, texts, titles under
    ``claim``), its structure and every other field kept. A study owes each participant its
    attention checks, settled claims dealt at seeded places among their checks (issue 41, item
    1): *which* claim is dealt there follows which claims are settled, by design, and is all
    that may. That the claim is dealt at the same place, with the same fields, clock and
    answer, is still compared; and the plain player's comparison keeps claims unmasked."""

    def identity_masked(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: "<dealt>" if k in ("id", "text", "title") and not isinstance(v, (dict, list)) else identity_masked(v) for k, v in node.items()}
        if isinstance(node, list):
            return [identity_masked(v) for v in node]
        return node

    def mask(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: identity_masked(v) if k == "claim" else mask(v) for k, v in node.items()}
        if isinstance(node, list):
            return [mask(v) for v in node]
        return node

    return _json_masked(body, mask)


def _earned_masked(body: str, rounds: set[int]) -> str:
    """A JSON body with the answer-bearing fields of ``rounds`` (the voted ones) masked."""
    from tests.leak_world import ANSWER_KEYS

    def mask(node: Any) -> Any:
        if isinstance(node, dict):
            earned = node.get("id") in rounds and "false_claim" in node
            return {k: "<earned>" if earned and (k in ANSWER_KEYS or k in ("picked", "correct")) else mask(v) for k, v in node.items()}
        if isinstance(node, list):
            return [mask(v) for v in node]
        return node

    return _json_masked(body, mask)


def frozen_now() -> str:
    from foolgame.core import clock

    return clock.now().isoformat()


@pytest.mark.django_db
def test_a_study_participant_sees_the_same_in_both_worlds(client, monkeypatch, frozen_clock) -> None:
    """Issue 41, item 6: the truth of the claims a participant has not answered yet (their open
    check's, their open round's) and which claims are settled (attention checks, hidden gold
    items) change nothing of what they see through the study's pages, ``/me``, and the checks
    they are dealt, before and after answering them rightly: in the second world every check
    they answer is an attention check, passed, in the first not. Which claim an attention place
    deals follows which claims are settled, by design, so the dealt claims' identity is masked
    (``_dealt_claim_masked``); everything else about each check is compared."""
    spec = schema()
    seen = two_worlds(monkeypatch, frozen_clock, lambda world: as_participant(client, world, spec), study=("midway",))
    first, second = seen[AS_BUILT], seen[FLIPPED]
    print(f"\nparticipant noninterference: {len(first.seen)} responses compared; attention checks {first.attention} and {second.attention}")
    assert second.attention == [True, True] and first.attention != second.attention  # the hidden facts differ where it matters
    me = "answer 1 -> GET /api/studies/{slug}/me [slug=study]"
    assert '"completion_code": "LEAKDONE41"' in first.seen[me], first.seen[me]  # the work done, counted alike
    assert any(label.startswith("GET /s/{slug}/") for label in first.seen)
    assert len(first.seen) > 40 and first.seen.keys() == second.seen.keys()
    found = differences(first.seen, second.seen)
    assert found == [], f"{len(found)}+ responses differ between worlds that differ only in hidden facts:\n" + "\n".join(found)


@pytest.mark.django_db
def test_a_planted_count_of_passed_attention_checks_fails_the_participants_comparison(client, monkeypatch, frozen_clock) -> None:
    """``/me`` planted with how many attention checks the participant passed (no label, no
    claim named): the participant's comparison finds it, and only there."""
    from foolgame.studies import services
    from foolgame.studies.models import AttentionCheck

    real = services.participant_state

    def state_with_attention(*, participant: Any) -> dict:
        passed = AttentionCheck.objects.filter(participant=participant, passed=True).count()
        return {**real(participant=participant), "attention_passed": passed}

    monkeypatch.setattr(services, "participant_state", state_with_attention)
    spec = schema()
    seen = two_worlds(monkeypatch, frozen_clock, lambda world: as_participant(client, world, spec), study=("midway",))
    found = differences(seen[AS_BUILT].seen, seen[FLIPPED].seen, limit=100)
    assert found and all("attention_passed" in line for entry in found for line in entry.splitlines()[1:]), found


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


@pytest.mark.django_db
def test_a_planted_leak_in_the_moderators_queue_fails_the_comparison(client, monkeypatch, frozen_clock) -> None:
    """Each queue row (of the moderator's own claim) planted with a count of the claims of its
    kind still in play elsewhere that are false: no label, no gold, no claim of the world named;
    the moderator's comparison finds it."""
    from foolgame.claims.models import Claim
    from foolgame.moderation import selectors

    real = selectors.claim_reviews

    def reviews_with_a_count(claims: Any) -> list[dict]:
        rows = real(claims)
        similar = Claim.objects.filter(label=Claim.Label.REFUTES, text__contains=" claim number 0 ").count()
        return [{**row, "similar_false_in_play": similar} for row in rows]

    monkeypatch.setattr(selectors, "claim_reviews", reviews_with_a_count)
    spec = schema()
    seen = two_worlds(monkeypatch, frozen_clock, lambda world: walk_as_moderator(client, world, spec, everything=False))
    found = differences(seen[AS_BUILT].seen, seen[FLIPPED].seen)
    assert found and all("similar_false_in_play" in line for entry in found for line in entry.splitlines()[1:]), found


@pytest.mark.django_db
def test_a_planted_leak_in_a_writers_hints_fails_the_comparison(client, monkeypatch, frozen_clock) -> None:
    """Hints that leave out the sentences already gold for a claim (a plausible courtesy: "that
    one is taken") tell a writer which sentence is a live claim's evidence; only the writer's
    comparison sees it (the hints carry no label and no gold marker of their own)."""
    from foolgame.claims.models import ClaimGold
    from foolgame.evidence import services as evidence

    real = evidence.page_hints

    def hints_without_gold(*, page: Any, query: str, k: int = evidence.HINT_COUNT) -> list[dict]:
        taken = set(ClaimGold.objects.filter(claim__page=page).values_list("sentence_id", flat=True))
        return [hint for hint in real(page=page, query=query, k=k) if hint["sentence_id"] not in taken]

    monkeypatch.setattr(evidence, "page_hints", hints_without_gold)

    def hints_only(world: World) -> Transcript:
        from foolgame.authoring.services import write_task_create

        writer_on_a_world_page(world)
        world.task = write_task_create(player=world.player, page_id=world.extra_page.pk)
        transcript = Transcript()
        with rolled_back():
            login(client, world)
            writers_page(client, world, transcript, "")
        return transcript

    seen = two_worlds(monkeypatch, frozen_clock, hints_only)
    found = differences(seen[AS_BUILT].seen, seen[FLIPPED].seen)
    assert found and all("/hints" in entry.splitlines()[0] for entry in found), found


def _flush_and_restore(state: dict[str, tuple[Any, ...]]) -> None:
    """A transactional test's world is committed: empty the tables (as between two such tests),
    then put the sequences back where they stood."""
    from django.core.management import call_command

    call_command("flush", verbosity=0, interactive=False)
    _restore(state)
