"""The wire shapes are typed once (the ``payloads`` modules' TypedDicts), and the documented
shapes are held against them: each OpenAPI serializer field by field, required or not and
nested, and each row of docs/websocket.md's frame tables. A shape cannot change without its
docs, nor its docs without it. The services' real payloads are held against the types too,
on a round and a room played through.

(No ``from __future__ import annotations`` here: Python 3.11 reads NotRequired from a
TypedDict's evaluated annotations only.)"""

import re
import types
import typing
from pathlib import Path
from typing import Any, get_type_hints, is_typeddict

import pytest
from rest_framework import serializers

from foolgame.rooms import apis as room_apis
from foolgame.rooms import payloads as room_payloads
from foolgame.voting import apis as round_apis
from foolgame.voting import payloads as round_payloads
from tests.voting.conftest import fake_clock, game  # noqa: F401  (fixtures)

REPO = Path(__file__).resolve().parent.parent


def _unwrap(annotation: Any) -> Any:
    """The TypedDict inside ``X | None``, ``list[X]``, ``list[list[X]]``, or None."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [_unwrap(arg) for arg in typing.get_args(annotation) if arg is not type(None)]
        return next((i for i in inner if i is not None), None)
    if origin is list:
        return _unwrap(typing.get_args(annotation)[0])
    return annotation if is_typeddict(annotation) else None


def _serializer_of(field: serializers.Field) -> serializers.Serializer | None:
    """The serializer inside a nested field, a ``many`` list or a list field's child."""
    while True:
        if isinstance(field, serializers.ListSerializer):
            field = field.child
        elif isinstance(field, serializers.ListField):
            field = field.child
        elif isinstance(field, serializers.Serializer):
            return field
        else:
            return None


def shape_differences(shape: Any, serializer: serializers.Serializer, path: str = "") -> list[str]:
    """Where the TypedDict ``shape`` and the documented ``serializer`` part: a key one has and
    the other lacks, a key required in one and optional in the other, and the same within
    every nested shape."""
    fields = serializer.fields
    typed = set(shape.__required_keys__) | set(shape.__optional_keys__)
    problems = [f"{path}{name}: documented, not in {shape.__name__}" for name in sorted(set(fields) - typed)]
    problems += [f"{path}{name}: in {shape.__name__}, not documented" for name in sorted(typed - set(fields))]
    hints = get_type_hints(shape)
    for name in sorted(typed & set(fields)):
        if (name in shape.__required_keys__) != fields[name].required:
            problems.append(f"{path}{name}: required in {'the type' if name in shape.__required_keys__ else 'the schema'} only")
        inner, nested = _unwrap(hints[name]), _serializer_of(fields[name])
        if (inner is None) != (nested is None):
            problems.append(f"{path}{name}: an object in {'the type' if inner is not None else 'the schema'} only")
        elif inner is not None and nested is not None:
            problems += shape_differences(inner, nested, f"{path}{name}.")
    return problems


SCHEMA_PAIRS = [
    (round_payloads.RoundState, round_apis.RoundStateSerializer),
    (round_payloads.Result, round_apis.ResultSerializer),
    (round_payloads.ClueResult, round_apis.ClueResultSerializer),
    (round_payloads.PastRound, round_apis.PastRoundSerializer),
    (room_payloads.RoomState, room_apis.RoomSerializer),
    (room_payloads.RoomCreated, room_apis.RoomCreatedSerializer),
    (room_payloads.RoomAnswer, room_apis.AnswerSerializer),
]


@pytest.mark.parametrize(("shape", "serializer"), SCHEMA_PAIRS, ids=[shape.__name__ for shape, _ in SCHEMA_PAIRS])
def test_each_rest_shape_is_the_one_its_schema_documents(shape: Any, serializer: type[serializers.Serializer]) -> None:
    assert shape_differences(shape, serializer()) == []


class _Page(typing.TypedDict):
    id: int
    title: str


class _Shape(typing.TypedDict):
    id: int
    extra: typing.NotRequired[str]
    pages: list[_Page]


class _PageSerializer(serializers.Serializer):
    id = serializers.IntegerField()


class _ShapeSerializer(serializers.Serializer):
    id = serializers.IntegerField(required=False)
    other = serializers.CharField()
    pages = _PageSerializer(many=True)


def test_a_drift_between_type_and_schema_is_found() -> None:
    """The check can fail: a key the schema lacks, one it has too many, a requiredness that
    differs, a nested shape that differs."""
    assert shape_differences(_Shape, _ShapeSerializer()) == [
        "other: documented, not in _Shape",
        "extra: in _Shape, not documented",
        "id: required in the type only",
        "pages.title: in _Page, not documented",
    ]


# --- docs/websocket.md ------------------------------------------------------------------------


def documented_frames(socket: str) -> dict[str, set[str]]:
    """The fields each frame of the "The server sends" table lists, for the ``round`` socket
    (docs/websocket.md up to "# The room WebSocket") or the ``room`` socket (from there on):
    the backquoted names of its fields cell, leaving out what is in parentheses (values,
    nested shapes) and what follows the first top-level ";" (remarks)."""
    text = (REPO / "docs" / "websocket.md").read_text(encoding="utf-8")
    split = text.index("\n# The room WebSocket")
    body = text[:split] if socket == "round" else text[split:]
    table = body[body.index("### The server sends") :]
    frames: dict[str, set[str]] = {}
    rows = [line for line in table.splitlines() if line.startswith("| ")][2:]  # under the header row and its rule
    for line in rows:
        if not line.startswith("| `"):
            break
        name_cell, _, fields_cell = (cell.strip() for cell in line.strip("|").split(" | ", 2))
        top, depth, cut = [], 0, fields_cell
        for i, char in enumerate(fields_cell):
            depth += char == "("
            depth -= char == ")"
            if char == ";" and depth == 0:
                cut = fields_cell[:i]
                break
        depth = 0
        for char in cut:
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
            elif depth == 0:
                top.append(char)
        frames[name_cell.strip("`")] = set(re.findall(r"`([a-z_]+)(?::[^`]*)?`", "".join(top)))
    return frames


def typed_keys(shape: Any) -> set[str]:
    return set(shape.__required_keys__) | set(shape.__optional_keys__)


ROUND_FRAMES = {
    "state": round_payloads.RoundState,
    "clue": round_payloads.ClueResult,
    "result": round_payloads.Result,
    "ok": round_payloads.OkFrame,
    "tick": round_payloads.ClockFrame,
    "timeout": round_payloads.ClockFrame,
    "void": round_payloads.VoidFrame,
    "forfeited": round_payloads.ForfeitedFrame,
    "error": round_payloads.ErrorFrame,
}
ROOM_FRAMES = {
    "room": room_payloads.RoomState,
    "question": room_payloads.QuestionFrame,
    "tick": round_payloads.ClockFrame,
    "voted": room_payloads.VotedFrame,
    "timeout": round_payloads.ClockFrame,
    "answer": room_payloads.RoomAnswer,
    "members": room_payloads.MembersFrame,
    "votes": room_payloads.VotesFrame,
    "ended": room_payloads.EndedFrame,
    "error": round_payloads.ErrorFrame,
}


@pytest.mark.parametrize(("socket", "frames"), [("round", ROUND_FRAMES), ("room", ROOM_FRAMES)])
def test_each_socket_frame_lists_the_fields_of_its_type(socket: str, frames: dict[str, Any]) -> None:
    documented = documented_frames(socket)
    assert set(frames) - set(documented) == set()  # every typed frame has its row
    differences = {name: (documented[name] ^ typed_keys(shape)) for name, shape in frames.items() if documented[name] != typed_keys(shape)}
    assert differences == {}


def test_a_frame_row_that_drifts_is_found() -> None:
    """The parser reads what a row names at the top level: a field dropped from a row shows."""
    documented = documented_frames("round")
    assert documented["forfeited"] == {"remaining", "points", "answer_at", "message"}
    assert documented["result"] - {"unpaid"} != typed_keys(round_payloads.Result)


# --- the real payloads ------------------------------------------------------------------------


def conforms(value: Any, shape: Any, path: str = "") -> list[str]:
    """Where a real payload parts from its TypedDict: a key it lacks or has too many (nested too)."""
    if not isinstance(value, dict):
        return [f"{path or shape.__name__}: not an object"]
    problems = [f"{path}{key}: missing" for key in sorted(shape.__required_keys__ - set(value))]
    problems += [f"{path}{key}: not in {shape.__name__}" for key in sorted(set(value) - typed_keys(shape))]
    hints = get_type_hints(shape)
    for key in sorted(set(value) & typed_keys(shape)):
        inner = _unwrap(hints[key])
        if inner is None or value[key] is None:
            continue
        items: list[Any] = [value[key]]
        while items and isinstance(items[0], list):
            items = [x for item in items for x in item]
        for item in items:
            problems += conforms(item, inner, f"{path}{key}.")
    return problems



def test_a_payload_that_drifts_is_found() -> None:
    """The check can fail: a key too many, a required key missing, in a nested object too."""
    payload = {"other": "x", "extra": "y", "pages": [{"id": 2, "title": "t"}, {"id": 3}]}
    assert conforms(payload, _Shape) == ["id: missing", "other: not in _Shape", "pages.title: missing"]


@pytest.mark.django_db
def test_a_solo_rounds_payloads_have_their_types(game, fake_clock) -> None:
    """Every payload of a round played through the services, at each state, is its type."""
    from foolgame.voting import services

    voter = game.voter
    dealt = services.round_create(player=voter)
    payloads = {"ready": (services.round_get_state(round_id=dealt.pk, player=voter), round_payloads.RoundState)}
    payloads["started"] = (services.round_start(round_id=dealt.pk, player=voter), round_payloads.RoundState)
    payloads["clue"] = (services.round_reveal_clue(round_id=dealt.pk, player=voter, claim_index=0), round_payloads.ClueResult)
    payloads["playing"] = (services.round_get_state(round_id=dealt.pk, player=voter), round_payloads.RoundState)
    payloads["vote"] = (services.vote_cast(round_id=dealt.pk, player=voter, false_claim=0), round_payloads.Result)
    payloads["voted"] = (services.round_get_state(round_id=dealt.pk, player=voter), round_payloads.RoundState)
    assert "result" in payloads["voted"][0] and payloads["clue"][0]["clue"]
    problems = {name: conforms(value, shape) for name, (value, shape) in payloads.items()}
    assert problems == {name: [] for name in payloads}


@pytest.mark.django_db
def test_a_rooms_payloads_have_their_types(fake_clock) -> None:
    """The room as a member, a watcher and an outsider see it, before and after a question's
    answer, and the answer everyone gets, are their types."""
    from foolgame.rooms import services as rooms
    from foolgame.rooms.models import RoomQuestion, RoomRound
    from foolgame.voting import services as rounds
    from tests.factories import UserFactory
    from tests.rooms.conftest import claim_pool

    claim_pool()
    host, pia, outsider = UserFactory(username="hana"), UserFactory(username="pia"), UserFactory(username="olaf")
    room = rooms.room_create(host=host, questions=2)
    rooms.room_join(code=room.code, player=pia)
    rooms.room_next_question(code=room.code, player=host)
    question = RoomQuestion.objects.get(room=room, number=1)
    payloads = {"playing": rooms.room_state(code=room.code, player=pia), "outsider": rooms.room_state(code=room.code, player=outsider)}
    for play in RoomRound.objects.filter(question=question).select_related("player"):
        rounds.vote_cast(round_id=play.round_id, player=play.player, false_claim=0)
    rooms.room_question_finish(question_id=question.pk)
    payloads["answered"] = rooms.room_state(code=room.code, player=pia)
    watcher = UserFactory(username="wim")
    rooms.room_join(code=room.code, player=watcher)
    payloads["watcher"] = rooms.room_state(code=room.code, player=watcher)
    answer = rooms.question_answer(RoomQuestion.objects.get(pk=question.pk), room=room)
    assert payloads["answered"]["question"]["answer"]["labels"] and payloads["playing"]["question"]["round"]
    problems = {name: conforms(value, room_payloads.RoomState) for name, value in payloads.items()}
    problems["answer"] = conforms(answer, room_payloads.RoomAnswer)
    assert problems == {name: [] for name in problems}
