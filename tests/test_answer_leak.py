"""Nothing of the answer before a vote that counts (GAME.md; issue 24, item 2): one systematic
walk instead of one test per hole.

The player under test holds a dealt round, a started round (no clue bought), a forfeited round
(given up before its deadline), a live room's round whose question the other members have
voted on, some right, and (REST walk) the round of a room they host (``tests/leak_world.py``). The walks call, as that player:

- every operation of the OpenAPI schema (generated in-process, as tests/api/test_docs.py
  does): every path parameter filled with each of the world's objects it can name, every
  enum query value, a body built from the operation's request schema so that the call
  reaches the service. Each call that may change something runs in the world as built (and
  is undone after it: a savepoint) and, when it succeeds, is followed by every read (each
  GET operation and each page but those about another round) in that world;
- every page of Django's URL conf that the schema does not describe (GET, ids filled);
- every frame the round socket and the room socket take from the client, and every frame
  type the consumers send, made to happen (``test_no_socket_frame_carries_an_answer_before_it_is_due``).

A body carries a leak when it holds, for a round whose answer is not due for the player, a
label, a gold sentence (each has a marker word), ``false_claim``, ``correct``, ``result`` or
another answer-bearing field, or, while the room's question plays, anything that sets the
member who voted right apart from the one who voted wrong (points, right answers, rank, order,
"who found it"). An answer is due after a vote that counts (the room's: once its question is
over), after a report during play (the rules show a reported round's answer), and at the
round's deadline; a forfeit's answer is not due before the round's original deadline. Pages
are public (a voter may read them, as in the original game): a page's own sentences may hold
the gold sentences, unmarked.

An operation added to the schema later is walked without a change here; one the walk cannot
fill or call fails the walk, so nothing escapes it by accident.

The world holds a study (``tests.leak_world.build_study``); a route served by the studies app
(``studies_route``, decided by the URL conf) gets the study's slug. The player's walk also
searches every body for the participants' platform ids; and every study endpoint and page is
walked, read and changed, as each of ``STUDY_WALKERS`` (participants at each stage, the player,
a room guest, a visitor signed out, another researcher, staff, the owner): no answer, and no
platform id but in the owner's participant list and bonus file (403 for everyone else), nor in
the logs (``test_no_study_endpoint_or_page_shows_an_answer_or_a_platform_id``).
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from contextlib import contextmanager
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import transaction
from django.test import TestCase
from django.urls import Resolver404, URLPattern, URLResolver, get_resolver, resolve
from drf_spectacular.generators import SchemaGenerator

from foolgame.core import clock
from foolgame.voting.models import Round
from tests.leak_world import ROOM_ROUNDS, ROUNDS, HashEncoder, Secrets, World, build_world, scan_html, scan_json

HTTP_METHODS = ("get", "put", "post", "patch", "delete")
SAFE = {"GET", "HEAD", "OPTIONS"}

# Bodies a page's own text may fill: the page's sentences, public by the rules (gold ones unmarked).
PAGE_TEXT = {("GET", "/api/pages/{page_id}"), ("GET", "/api/pages/{page_id}/hints"), ("GET", "/pages/{page_id}/"), ("GET", "/write/{task_id}/")}
# The interface's own description names the label enum.
DESCRIBES_API = {"/api/schema/", "/api/docs/"}
OWN_DRAFT_VERDICT = {("POST", "/api/claims"), ("POST", "/api/claims/check")}
"""The model's verdict on the author's own draft (or just-saved claim) is about no round: the
walk's drafts are the author's own words. A copy of a claim in play never gets a verdict
(``near_duplicate`` comes first): tests/verifier/test_writing.py holds that."""
# Django's admin is for staff: every page of it sends a player to the login form.
NOT_FOR_PLAYERS = ("admin/",)


# --- what the walk calls ------------------------------------------------------------------


def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


@lru_cache(maxsize=None)
def studies_route(template: str) -> bool:
    """Is ``template`` (a path in the schema's ``{name}`` form) served by a view of the studies
    app? Its ``slug`` then names a study, not a category: decided by the URL conf, so a new
    study endpoint or page is walked with the study by itself."""
    try:
        match = resolve(re.sub(r"\{\w+\}", "1", template))
    except Resolver404:
        return False
    return match.func.__module__.startswith("foolgame.studies.")


def path_values(name: str, world: World, template: str = "") -> list[tuple[str, Any]]:
    """Each value the walk gives a path parameter (by its name), labelled for the report."""
    if name == "slug" and world is not None and world.study is not None and studies_route(template):
        return [("study", world.study.slug)]
    if name == "round_id":
        return [(n, world.round(n).pk) for n in world.rounds]
    if name == "page_id":
        return [(f"page of {n}", world.page(n).pk) for n in world.rounds]
    if name == "claim_id":
        return [(f"claim {i} of {n}", c.pk) for n in world.rounds for i, c in enumerate(world.claims(n))]
    if name == "code":
        return [(label, room.code) for label, room in world.rooms().items()]
    if name == "task_id":
        return [("write task", world.task.pk)]
    if name == "check_id":
        return [("the player's fact check", world.check_id)]
    if name == "slug":
        return [("category", world.category.slug)]
    if name == "export_id":
        return [("an export", 1)]
    if name == "name":
        return [("train.jsonl", "train.jsonl")]
    if name == "player_id":
        return [("the right voter", world.right.pk), ("the player", world.player.pk)]
    raise LookupError(f"the walk cannot fill the path parameter {name!r}: say in path_values which of the world's objects it names")


def _named_values(world: World) -> dict[str, Any]:
    """Body and query fields the schema's types alone cannot fill so that a call reaches its
    service: the world's ids and texts, by field name."""
    task_page = world.task.page
    return {
        "username": world.player.username,
        "password": world.password,
        "task": world.task.pk,
        "text": f"{task_page.title} has a river and a hill by the old road.",
        # A sentence that is not the retriever's top hit for ``text``: the claim saves.
        "gold_sentence_ids": [task_page.sentences.order_by("-position", "-id").values_list("pk", flat=True).first()],
        "category": world.category.slug,
        "page": world.extra_page.pk,
        "questions": 1,
        "seconds": 60,
        "claim": 0,
        "false_claim": 0,
        "q": "Leakland river",
        "ids": [1],
        "up_to": 1,
        "limit": 10,
        # A study (``POST /api/studies``) that saves: on the world's category, codes that
        # differ, amounts as decimal strings.
        "categories": [world.category.slug],
        "pages": [world.extra_page.pk],
        "completion_code": "WALKDONE",
        "screen_out_code": "WALKOUT",
        "attention_checks": 0,
        "attention_max_failures": 0,
        "block_size": 1,
        "currency": "GBP",
        "per_verified_fooling_claim": "1.00",
        "per_right_vote": "0.05",
        "per_right_check": "0.02",
        "cap": "2.00",
    }


def _value(name: str, spec: dict, components: dict, named: dict[str, Any]) -> Any:
    spec = _resolve(spec, components)
    if "allOf" in spec or "oneOf" in spec or "anyOf" in spec:
        options = [s for s in spec.get("allOf") or spec.get("oneOf") or spec.get("anyOf") if _resolve(s, components).get("enum") != [None]]
        return _value(name, options[0], components, named)
    if name in named and not spec.get("enum"):
        return named[name]
    if spec.get("enum"):
        return next(v for v in spec["enum"] if v is not None)
    kind = spec.get("type")
    if kind == "integer":
        return max(1, int(spec.get("minimum", 1)))
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    if kind == "array":
        return [_value(name, spec.get("items", {}), components, named)]
    if kind == "object" or "properties" in spec:
        return {key: _value(key, prop, components, named) for key, prop in spec.get("properties", {}).items() if not prop.get("readOnly")}
    return "walk"


def _resolve(spec: dict, components: dict) -> dict:
    while "$ref" in spec:
        spec = components[spec["$ref"].rsplit("/", 1)[-1]]
    return spec


@dataclass
class Call:
    method: str
    template: str  # the schema's path (or the URL conf's route in the schema's {name} form)
    operation: dict | None  # None for a page of the URL conf
    choice: dict[str, str] = field(default_factory=dict)  # path parameter -> which of its values (label)
    query_enum: tuple[str, Any] | None = None  # a query parameter walked through its enum

    @property
    def key(self) -> tuple[str, str]:
        return (self.method, self.template)

    def label(self) -> str:
        parts = [f"{p}={v}" for p, v in self.choice.items()]
        if self.query_enum:
            parts.append(f"{self.query_enum[0]}={self.query_enum[1]}")
        return f"{self.method} {self.template}" + (f" [{', '.join(parts)}]" if parts else "")

    def url(self, world: World) -> str:
        url = self.template
        for name, label in self.choice.items():
            value = dict(path_values(name, world, self.template))[label]
            url = url.replace("{" + name + "}", str(value))
        return url

    def round_id(self, world: World) -> int | None:
        if "round_id" in self.choice:
            return dict(path_values("round_id", world))[self.choice["round_id"]]
        if "code" in self.choice:
            return world.round(ROOM_ROUNDS[self.choice["code"]]).pk
        return None


def _expand(method: str, template: str, operation: dict | None, names: list[str], world: World) -> Iterator[Call]:
    choices: list[dict[str, str]] = [{}]
    for name in names:
        choices = [{**c, name: label} for c in choices for label, _ in path_values(name, world, template)]
    enums = [(p["name"], p["schema"]["enum"]) for p in (operation or {}).get("parameters", []) if p["in"] == "query" and p.get("schema", {}).get("enum")]
    for choice in choices:
        if not enums:
            yield Call(method, template, operation, choice)
        for param, values in enums:
            for value in values:
                yield Call(method, template, operation, choice, query_enum=(param, value))


def schema_calls(spec: dict, world: World) -> list[Call]:
    calls = []
    for template, item in spec["paths"].items():
        for method, operation in item.items():
            if method not in HTTP_METHODS:
                continue
            names = [p["name"] for p in operation.get("parameters", []) if p["in"] == "path"]
            calls += _expand(method.upper(), template, operation, names, world)
    return calls


def _routes(patterns: list, prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern


def page_calls(spec: dict, world: World) -> list[Call]:
    """Every route of the URL conf that the schema does not describe, as a GET, ids filled."""
    described = set(spec["paths"])
    calls = []
    for route, pattern in _routes(get_resolver().url_patterns):
        if route.startswith(NOT_FOR_PLAYERS) or isinstance(pattern.pattern, type(None)):
            continue
        if not hasattr(pattern.pattern, "converters"):
            raise LookupError(f"the walk cannot read the route {route!r} (a regex route): give it a path() with named converters")
        template = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
        if template in described:
            continue
        calls += _expand("GET", template, None, list(pattern.pattern.converters), world)
    return calls


def request(client, call: Call, world: World, components: dict) -> Any:
    named = _named_values(world)
    url = call.url(world)
    query = {}
    for param in (call.operation or {}).get("parameters", []):
        if param["in"] != "query":
            continue
        if call.query_enum and call.query_enum[0] == param["name"]:
            query[param["name"]] = call.query_enum[1]
        elif param["name"] in named or param.get("required") or param.get("schema", {}).get("enum"):
            query[param["name"]] = _value(param["name"], param.get("schema", {}), components, named)
    if call.method == "GET":
        return client.get(url, query)
    body_spec = (call.operation or {}).get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    body = _value("", body_spec, components, named) if body_spec else None
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    send: Callable = getattr(client, call.method.lower())
    # The walk's changes are rolled back, so nothing of theirs ever commits: what a commit
    # would set off (``transaction.on_commit``: a room's question settled by the round
    # services, events, tasks) is run at the end of the call, before the next read, as in
    # production.
    with TestCase.captureOnCommitCallbacks(execute=True):
        return send(url, data=json.dumps(body) if body is not None else None, content_type="application/json")


# --- when an answer is due --------------------------------------------------------------


def answers_due(world: World, forfeited: set[int]) -> set[int]:
    """The player's rounds whose answer they may see now: voted (a room's once its question
    is over), timed out at the deadline; ended by a report during play, or forfeited, only
    from the deadline it had (a forfeit's: started + ROUND_SECONDS)."""
    due = set()
    now = clock.now()
    rows = {r.pk: r for r in Round.objects.filter(pk__in=[r.pk for r in world.rounds.values()])}
    for name, known in world.rounds.items():
        round_ = rows.get(known.pk)
        if round_ is None:
            continue
        if name in ROOM_ROUNDS.values() and not world.question_done(name):
            continue
        if round_.pk in forfeited:
            original = (round_.started_at or known.created) + timedelta(seconds=settings.FM2["ROUND_SECONDS"])
            if now >= original:
                due.add(round_.pk)
        elif round_.state == Round.State.VOTED:
            due.add(round_.pk)
        elif round_.state == Round.State.REPORTED and (name in ROOM_ROUNDS.values() or now >= round_.deadline):
            due.add(round_.pk)  # a solo report during play is no faster way to the answer than waiting
        elif round_.state == Round.State.TIMED_OUT and round_.deadline is not None and now >= round_.deadline:
            due.add(round_.pk)
        elif round_.state == Round.State.TIMED_OUT and name in ROOM_ROUNDS.values():
            due.add(round_.pk)  # the host ended the question early: its clock ran out then, for everyone
    return due


# --- the walk over REST and pages ---------------------------------------------------------


@dataclass
class Walk:
    components: dict
    leaks: list[str] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    walked: set[tuple[str, str]] = field(default_factory=set)
    calls: int = 0
    verdicts: int = 0  # model verdicts on the author's own drafts the walk saw
    baseline: set[str] = field(default_factory=set)  # the leaks of the read-only world
    due: tuple[World, set[int]] | None = None
    platform_ids: set[str] = field(default_factory=set)  # the study's participants': none may show in a body
    owner: bool = False  # the walker owns the study: platform ids are theirs to see (``ids_seen`` notes where)
    nothing_due: bool = False  # the walker is not the world's player: no answer of the world is due to them
    ids_seen: set[str] = field(default_factory=set)

    def run(self, client, call: Call, world: World, forfeited: set[int], *, after: str = "") -> Any:
        response = request(client, call, world, self.components)
        self.calls += 1
        self.walked.add(call.key)
        where = f"{after} -> {call.label()}" if after else call.label()
        self.statuses.setdefault(call.label(), response.status_code)
        if response.status_code >= 500 or response.status_code == 405 and call.operation is not None:
            self.unreachable.append(f"{where}: HTTP {response.status_code}")
        if call.operation is not None and response.status_code == 404 and "json" not in response.get("Content-Type", ""):
            self.unreachable.append(f"{where}: no route")
        if call.method not in SAFE and response.status_code < 300:
            if call.template.endswith("/forfeit"):
                forfeited.add(call.round_id(world))
            if call.template.endswith("/leave"):
                forfeited.add(call.round_id(world))
        # The REST walk's clock stands still: only a changing call changes what is due.
        if self.nothing_due:
            self.due = (world, set())
        elif call.method not in SAFE or self.due is None or self.due[0] is not world:
            self.due = (world, answers_due(world, forfeited))
        secrets = Secrets(world, self.due[1])
        page_text = call.key in PAGE_TEXT
        content_type = response.get("Content-Type", "")
        body = b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content
        if "json" in content_type and body:
            data = json.loads(body)
            if call.key in OWN_DRAFT_VERDICT and isinstance(data, dict) and data.get("verdict") is not None:
                data = {key: value for key, value in data.items() if key != "verdict"}
                self.verdicts += 1
            found = scan_json(data, secrets, context=call.round_id(world), page_text=page_text)
        else:
            found = scan_html(body.decode("utf-8", "replace"), secrets, page_text=page_text, describes_api=call.template in DESCRIBES_API)
        text = body.decode("utf-8", "replace")
        shown = {pid for pid in self.platform_ids if pid in text}
        if self.owner:
            self.ids_seen |= {call.label()} if shown else set()
        else:
            found += [f"the platform id {pid}" for pid in sorted(shown)]
        for leak in found:
            line = f"{call.label()} (HTTP {response.status_code}): " + re.sub(r"goldmark[0-9a-f]+", "goldmark...", re.sub(r"\[\d+\]", "[]", leak))
            if line in self.baseline:
                continue  # as in the world where nothing was changed: reported there
            line = f"{after} -> {line}" if after else line
            if line not in self.leaks:
                self.leaks.append(line)
        return response


@contextmanager
def rolled_back() -> Iterator[None]:
    """What happens inside is undone after it (a savepoint rolled back)."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


@contextmanager
def fresh_world(**options: Any) -> Iterator[World]:
    with rolled_back():
        yield build_world(**options)


def test_an_operation_the_walk_cannot_fill_fails_the_walk() -> None:
    """A path parameter the walk does not know is an error, not a silent skip."""
    spec = {"paths": {"/api/things/{mystery_id}": {"get": {"parameters": [{"name": "mystery_id", "in": "path"}]}}}}
    with pytest.raises(LookupError, match="mystery_id"):
        schema_calls(spec, world=None)  # type: ignore[arg-type]


def login(client, world: World) -> None:
    """A new session for the player (the last one was undone with its savepoint)."""
    client.cookies.clear()
    client.force_login(world.player)


def _about_another_round(read: Call, call: Call) -> bool:
    """Whether ``read`` names another round (or its page) than the one ``call`` changed:
    rounds are separate, so such a read answers as in the world where nothing changed."""
    changed = call.choice.get("round_id")
    if changed is None:
        return False
    named = read.choice.get("round_id") or read.choice.get("page_id", "").removeprefix("page of ")
    return bool(named) and named != changed


def _operations(spec: dict) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in spec["paths"].items() for method in item if method in HTTP_METHODS}


@pytest.fixture(autouse=True)
def no_sentence_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("foolgame.evidence.services.encoder_get", HashEncoder)


@pytest.fixture(params=["no model", "an oracle model"])
def model_in_the_loop(request):
    """The walk runs twice: with no verifier, and with an active version that knows every
    claim's label (the strongest model an operator could bring): its verdicts must leak
    nothing either."""
    if request.param == "no model":
        yield None
        return
    from foolgame.claims.models import Claim
    from foolgame.verifier import runtime
    from foolgame.verifier.models import VerifierVersion
    from retrieval.verifier import Verdict

    class Oracle:
        name = "oracle"

        def verdicts(self, items, *, show_progress=False):
            labels = dict(Claim.objects.values_list("text", "label"))
            return [Verdict.from_supports(0.99 if labels.get(text, "SUPPORTS") == "SUPPORTS" else 0.01) for text, _ in items]

    version = VerifierVersion.objects.create(number=1, kind="head", name="oracle", status="active", fingerprint="oracle", blob=b"")
    runtime.remember(version, Oracle())
    yield version
    runtime.forget()


@pytest.mark.django_db
def test_no_operation_or_page_shows_an_answer_before_it_is_due(client, model_in_the_loop, fake_clock) -> None:
    # The server's clock stands still for the whole walk: on a loaded machine the walk takes
    # longer than a round, and a deadline passing mid-walk would make an answer due between
    # two reads (a leak that is not one).
    from django.utils import timezone

    fake_clock.current = timezone.now()
    spec = schema()
    walk = Walk(spec["components"]["schemas"])
    with fresh_world(study=True) as world:
        walk.platform_ids = world.study.platform_ids()
        calls = schema_calls(spec, world)
        pages = page_calls(spec, world)
        reads = [c for c in calls + pages if c.method in SAFE]
        changes = [c for c in calls if c.method not in SAFE]
        # Reads change nothing the player could not change by waiting: all of them in the world as built.
        with rolled_back():
            login(client, world)
            for call in reads:
                walk.run(client, call, world, {world.round("forfeited").pk})
        walk.baseline = set(walk.leaks)
        # Every other call in the world as built (each undone after it), followed, when it
        # succeeds, by every read (the API's description aside: it describes, it does not
        # read the world), but those about another round than the one the call changed.
        after_reads = [c for c in reads if c.template not in DESCRIBES_API]
        for call in changes:
            with rolled_back():
                walk.due = None
                login(client, world)
                forfeited = {world.round("forfeited").pk}
                if walk.run(client, call, world, forfeited).status_code < 400:
                    for read in after_reads:
                        if not _about_another_round(read, call):
                            walk.run(client, read, world, forfeited, after=call.label())
    operations = _operations(spec)
    print(
        f"\nanswer-leak walk: {len(operations)} schema operations walked ({len(calls)} calls with their parameters) "
        f"and {len({c.template for c in pages})} pages ({len(pages)} calls); {len(changes)} changing calls, each "
        f"in the world as built and, when it succeeded, followed by up to {len(after_reads)} reads: {walk.calls} requests"
    )
    for label, status in sorted(walk.statuses.items()):
        print(f"  {status} {label}")
    if model_in_the_loop is not None:
        assert walk.verdicts >= 2, "the walk never saw the model's verdict on a draft and a save"
    assert operations - walk.walked == set(), "operations the walk did not call"
    assert walk.unreachable == [], "calls that did not reach the service:\n" + "\n".join(walk.unreachable)
    assert walk.leaks == [], f"{len(walk.leaks)} answers shown before they are due:\n" + "\n".join(walk.leaks)


# --- the study's endpoints and pages, as everyone who may reach them --------------------------

STUDY_WALKERS = (
    "the participant (midway)", "another participant (finished)", "a participant screened out", "a participant just arrived",
    "the world's player", "a room guest", "a visitor (signed out)", "another researcher", "staff", "the owner",
)
OWNER_ONLY = ("/api/studies/{slug}/participants", "/api/studies/{slug}/bonuses.csv")
"""What only the study's owner may read: the platform ids (403 for everyone else, staff included)."""
STUDY_ROUTES = {"/s/{slug}/", "/api/studies/{slug}/me", "/api/studies/{slug}/enter", "/api/studies/{slug}", *OWNER_ONLY, "/research/studies/{slug}/"}
"""Study routes the walk must reach (it finds every one by the URL conf; these say it found them)."""


def study_walker(world: World, who: str) -> Any:
    """The account of ``who`` (None: signed out)."""
    from foolgame.rooms import services as rooms

    study = world.study
    stages = {"the participant (midway)": "midway", "another participant (finished)": "finished",
              "a participant screened out": "screened", "a participant just arrived": "arrived"}
    if who in stages:
        return study.participants[stages[who]].user
    if who == "a room guest":
        return rooms.room_join_as_guest(code=world.room.code, nickname="studyvisitor", ip="198.18.41.99")[0]
    return {"the world's player": world.player, "a visitor (signed out)": None, "another researcher": study.other_researcher,
            "staff": study.staff, "the owner": study.owner}[who]


def sign_in(client, user: Any) -> None:
    client.cookies.clear()
    if user is not None:
        client.force_login(user)


@pytest.mark.django_db
def test_no_study_endpoint_or_page_shows_an_answer_or_a_platform_id(client, fake_clock, caplog) -> None:
    """Every endpoint and page of the studies app (found in the URL conf and the schema), with
    the world's study, read and changed (each change followed by every read) as each of
    ``STUDY_WALKERS``: no label, no gold sentence, no answer-bearing field of a claim of the
    world, and no platform id but to the owner; the platform ids in the owner's participant
    list and bonus file and nowhere else, not even in the logs."""
    import logging

    from django.utils import timezone

    from tests.factories import UserFactory

    fake_clock.current = timezone.now()
    spec = schema()
    leaks: list[str] = []
    unreachable: list[str] = []
    statuses: dict[str, dict[str, int]] = {}
    walked: set[tuple[str, str]] = set()
    with caplog.at_level(logging.DEBUG), fresh_world(study=True) as world:
        platform_ids = world.study.platform_ids()
        calls = [c for c in schema_calls(spec, world) + page_calls(spec, world) if studies_route(c.template)]
        reads = [c for c in calls if c.method in SAFE]
        changes = [c for c in calls if c.method not in SAFE]
        for who in STUDY_WALKERS:
            with rolled_back():
                user = study_walker(world, who)
                player = who == "the world's player"
                # Whose own checks' evidence is theirs (signed out: an account that checked nothing).
                seen = world if player else replace(world, player=user or UserFactory(username=f"leak-visitor-{world.n}"))
                walk = Walk(spec["components"]["schemas"], platform_ids=platform_ids, owner=who == "the owner", nothing_due=not player)
                forfeited = {world.round("forfeited").pk}
                with rolled_back():
                    sign_in(client, user)
                    for call in reads:
                        walk.run(client, call, seen, forfeited)
                walk.baseline = set(walk.leaks)
                for call in changes:
                    with rolled_back():
                        sign_in(client, user)
                        if walk.run(client, call, seen, forfeited).status_code < 400:
                            for read in reads:
                                walk.run(client, read, seen, forfeited, after=call.label())
                leaks += [f"as {who}: {leak}" for leak in walk.leaks]
                unreachable += [f"as {who}: {line}" for line in walk.unreachable]
                statuses[who] = walk.statuses
                walked |= walk.walked
                if who == "the owner":
                    owner_saw = walk.ids_seen
    print(f"\nstudy walk: {len(calls)} study calls ({len(reads)} reads, {len(changes)} changes) as {len(STUDY_WALKERS)} walkers")
    for who, seen_statuses in statuses.items():
        print(f"  {who}: " + ", ".join(f"{status} {label}" for label, status in sorted(seen_statuses.items())))
    assert STUDY_ROUTES - {template for _, template in walked} == set(), "study routes the walk did not find"
    for who, seen_statuses in statuses.items():
        for label, status in seen_statuses.items():
            if label.split(" ")[1].startswith(OWNER_ONLY):
                assert status == (200 if who == "the owner" else 403), f"{label} as {who}: HTTP {status}"
    # The scan sees platform ids where they are: in the owner's participant list and bonus file.
    assert {label.split(" ")[1] for label in owner_saw} >= set(OWNER_ONLY), owner_saw
    assert unreachable == [], "calls that did not reach the service:\n" + "\n".join(unreachable)
    assert leaks == [], f"{len(leaks)} study responses show what they must not:\n" + "\n".join(leaks)
    logged = [pid for pid in platform_ids if pid in caplog.text]
    assert logged == [], f"platform ids in the logs: {logged}"


# --- the walk over the sockets --------------------------------------------------------------


def _frame_types(module: str) -> set[str]:
    """The frame types a consumer module sends (``send_frame("type", ...)``)."""
    source = (Path(__file__).resolve().parents[1] / "foolgame" / module / "consumers.py").read_text(encoding="utf-8")
    return set(re.findall(r'send_frame\(\s*"([a-z_]+)"', source))


@dataclass
class SocketWalk:
    """One socket of the player's, every frame it receives checked against the answers due
    at the moment it arrives (a vote's own answer arrives after the vote, so it is due)."""

    world: World
    path: str
    context: int | None
    forfeited: set[int]
    leaks: list[str]
    sent: set[str]
    received: set[str]
    label: str = ""
    closed: bool = False
    released: set[int] = field(default_factory=set)  # answers due by what the player saw happen

    async def __aenter__(self) -> SocketWalk:
        from channels.routing import URLRouter
        from channels.testing import WebsocketCommunicator

        from foolgame.routing import websocket_urlpatterns

        self.ws = WebsocketCommunicator(URLRouter(websocket_urlpatterns), self.path)
        self.ws.scope["user"] = self.world.player
        connected, code = await self.ws.connect()
        assert connected, (self.path, code)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.ws.disconnect()

    async def send(self, frame: dict[str, Any]) -> None:
        self.sent.add(frame["type"])
        await self.ws.send_json_to(frame)

    async def until(self, *types: str, timeout: float = 5) -> dict[str, Any]:
        """Frames up to the next one of ``types`` (each checked), that frame."""
        while True:
            frame = await self.one(timeout)
            if frame["type"] in types:
                return frame

    async def one(self, timeout: float = 5) -> dict[str, Any]:
        """The next frame, checked (a close is ``{"type": "<close>"}``)."""
        from channels.db import database_sync_to_async

        output = await self.ws.receive_output(timeout=timeout)
        if output["type"] == "websocket.close":
            self.closed = True
            return {"type": "<close>", "code": output.get("code")}
        frame = json.loads(output["text"])
        self.received.add(frame["type"])
        due = await database_sync_to_async(answers_due)(self.world, self.forfeited)
        for leak in scan_json(frame, Secrets(self.world, due | self.released), context=self.context):
            line = f"{self.label} frame `{frame['type']}`: " + re.sub(r"goldmark[0-9a-f]+", "goldmark...", re.sub(r"\[\d+\]", "[]", leak))
            if line not in self.leaks:
                self.leaks.append(line)
        return frame

    async def drain(self, timeout: float = 0.2) -> None:
        """Whatever arrives within ``timeout`` of the last frame (each checked)."""
        while not self.closed and not await self.ws.receive_nothing(timeout=timeout):
            await self.one()


async def _world(fake_clock, **options: Any) -> World:
    from channels.db import database_sync_to_async
    from django.utils import timezone

    fake_clock.current = timezone.now()
    return await database_sync_to_async(build_world)(**options)


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch):
    from tests.voting.conftest import FakeClock

    clock_ = FakeClock()
    monkeypatch.setattr("foolgame.core.clock.now", clock_)
    return clock_


@pytest.mark.django_db(transaction=True)
async def test_no_socket_frame_carries_an_answer_before_it_is_due(fake_clock) -> None:
    from channels.db import database_sync_to_async

    from foolgame.moderation.actions import claim_moderate, moderator_set
    from foolgame.rooms import services as rooms
    from foolgame.voting.services import round_forfeit
    from foolgame.rooms.consumers import RoomConsumer
    from foolgame.voting.consumers import RoundConsumer
    from tests.leak_world import deal_question, others_vote

    db = database_sync_to_async
    leaks: list[str] = []
    walked = {"round": (set(), set()), "room": (set(), set())}  # kind -> (sent, received)
    worlds = 0

    def socket(world: World, kind: str, name: str, forfeited: set[int], label: str) -> SocketWalk:
        path = f"/ws/rounds/{world.round(name).pk}/" if kind == "round" else f"/ws/rooms/{world.room.code}/"
        sent, received = walked[kind]
        return SocketWalk(world, path, world.round(name).pk, forfeited, leaks, sent, received, label=label)

    # The round socket on each of the player's rounds: every client frame, the vote last.
    for name in ROUNDS:
        for ending in ("report", "vote", "void", "timeout", "forfeit"):
            if ending in ("void", "timeout", "forfeit") and name != "started":
                continue  # pushed to a playing round: walked once (the room socket has its own timeout)
            world = await _world(fake_clock)
            worlds += 1
            forfeited = {world.round("forfeited").pk}
            async with socket(world, "round", name, forfeited, f"/ws/rounds/<{name}>/ ({ending})") as ws:
                await ws.drain(0.1)  # a started round's state, at once; a dealt one's nothing
                await ws.send({"type": "state"})
                await ws.until("state")
                await ws.send({"type": "start"})
                state = await ws.until("state")
                if state["status"] == "playing" and "tick" not in walked["round"][1]:
                    await ws.until("tick")  # a second of the socket's clock: once is enough
                await ws.send({"type": "reveal", "claim": 0})
                await ws.until("clue", "error")
                await ws.send({"type": "like", "claim": 0})
                await ws.until("ok", "error")
                if ending == "report":
                    await ws.send({"type": "report", "claim": 0, "reason": "spam", "note": "walk"})
                    await ws.until("ok", "error")
                elif ending == "vote":
                    await ws.send({"type": "vote", "false_claim": 0})
                    await ws.until("result", "error")
                    await ws.send({"type": "like", "claim": 0})
                    await ws.until("ok", "error")
                    await ws.send({"type": "report", "claim": 1, "reason": "other", "note": "walk"})
                    await ws.until("ok", "error")
                elif ending == "void":
                    moderator = await db(lambda: moderator_set(username=world.newcomer.username))()
                    claim = world.round(name).left_claim
                    other = "REFUTES" if claim.label == "SUPPORTS" else "SUPPORTS"
                    await db(claim_moderate)(moderator=moderator, claim_id=claim.pk, action="relabel", reason="walk", label=other)
                    await ws.until("void")
                elif ending == "timeout":
                    fake_clock.advance(181)
                    await ws.until("timeout")
                elif ending == "forfeit":  # given up over REST (another tab) while the socket listens
                    forfeited.add(world.round(name).pk)
                    await db(round_forfeit)(round_id=world.round(name).pk, player=world.player)
                    await ws.until("forfeited")
                await ws.send({"type": "state"})
                await ws.until("state")
                await ws.drain()

    # The room socket: the question starts while it listens, the others vote, someone joins;
    # then each way a question ends for the player, in a world of its own.
    for ending in ("vote", "timeout", "host_leaves", "leave", "host_ends", "host_skips"):
        world = await _world(fake_clock, question_started=False)
        worlds += 1
        forfeited = {world.round("forfeited").pk}
        ws = socket(world, "room", "dealt", forfeited, f"/ws/rooms/<code>/ ({ending})")
        async with ws:
            await ws.until("room")
            await db(deal_question)(world)
            ws.context = world.round("room_round").pk
            await ws.until("question")
            await db(others_vote)(world)
            await ws.until("votes")  # how many have voted: a count, never who
            await db(rooms.room_join)(code=world.room.code, player=world.newcomer)
            await ws.until("members")
            await ws.send({"type": "state"})
            await ws.until("room")
            await ws.send({"type": "start"})
            await ws.until("error")
            await ws.send({"type": "end_question"})  # not the host: refused
            await ws.until("error")
            await ws.send({"type": "skip_question"})
            await ws.until("error")
            if "tick" not in walked["room"][1]:
                await ws.until("tick")
            await ws.send({"type": "reveal", "claim": 0})
            await ws.until("clue")
            if ending == "vote":
                await ws.send({"type": "vote", "false_claim": 0})
                await ws.until("voted")
                await ws.until("answer")
            elif ending == "timeout":
                fake_clock.advance(181)
                await ws.until("timeout")
                await ws.until("answer")
            elif ending == "host_leaves":
                # The host ends the room: the question ends for everyone at once (the
                # player's round with it), so its answer is everyone's.
                ws.released.add(world.round("room_round").pk)
                await db(rooms.room_leave)(code=world.room.code, player=world.host)
                await ws.until("ended")
            elif ending in ("host_ends", "host_skips"):
                # The host ends (or skips) the question: its clock runs out now, for everyone.
                await db(rooms.room_question_end)(code=world.room.code, player=world.host, skip=ending == "host_skips")
                await ws.until("answer")
            else:
                await ws.send({"type": "leave"})
                ws.forfeited.add(world.round("room_round").pk)
                await ws.until("ok")
            await ws.drain()

    expected = {
        "round": (set(RoundConsumer.HANDLERS), _frame_types("voting")),
        "room": (set(RoomConsumer.HANDLERS), _frame_types("rooms") | {"error"}),
    }
    print(
        f"\nanswer-leak socket walk in {worlds} worlds: "
        + "; ".join(
            f"{kind} socket: {len(walked[kind][0])} client frame types sent ({', '.join(sorted(walked[kind][0]))}), "
            f"{len(walked[kind][1])} server frame types received ({', '.join(sorted(walked[kind][1]))})"
            for kind in walked
        )
    )
    for kind, (sent, received) in expected.items():
        assert sent - walked[kind][0] == set(), f"{kind} socket: client frames the walk did not send"
        assert received - walked[kind][1] == set(), f"{kind} socket: frame types the walk did not make the server send"
    assert leaks == [], f"{len(leaks)} frames carry an answer before it is due:\n" + "\n".join(leaks)
