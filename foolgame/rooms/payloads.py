"""What a room's members see, as the REST views return it and the room socket sends it.
``tests/test_wire_shapes.py`` holds each shape against its OpenAPI serializer
(``rooms.apis``) and its row in docs/websocket.md, so neither can drift from the other."""

# No ``from __future__ import annotations`` here: Python 3.11 reads NotRequired from a
# TypedDict's evaluated annotations only.
from typing import NotRequired, TypedDict

from foolgame.voting.payloads import Evidence, RoundState, ShownClaim


class Score(TypedDict):
    """A scoreboard row: the member's totals over the room's finished questions."""

    rank: int
    username: str
    points: int
    correct: int
    voted: int
    host: bool
    left: bool


class Found(TypedDict):
    username: str
    points: int


class Winner(TypedDict):
    """A finished question and who found its false claim first (``username`` None: nobody)."""

    number: int
    username: str | None
    points: int | None
    skipped: bool


class RoomAnswer(TypedDict):
    """A finished question's answer (the ``answer`` frame, a question's ``answer``). A member
    who watched the question gets ``found`` only (over REST); one who gave their round up
    gets no answer and no ``found`` before the question's deadline."""

    question_id: NotRequired[int]
    number: NotRequired[int]
    questions: NotRequired[int]
    false_claim: NotRequired[int]
    labels: NotRequired[list[str]]
    gold: NotRequired[list[list[Evidence]]]
    found: NotRequired[list[Found]]
    first: NotRequired[Found | None]
    skipped: NotRequired[bool]
    ended_early: NotRequired[bool]
    scoreboard: NotRequired[list[Score]]
    over: NotRequired[bool]
    votes: NotRequired[int]
    players: NotRequired[int]


class QuestionView(TypedDict):
    """The current question as a member sees it (``question_view``)."""

    id: int
    number: int
    status: str
    started_at: str
    deadline: str
    remaining: float | None
    round: RoundState | None
    votes: int
    players: int
    claims: NotRequired[list[ShownClaim]]
    answer: NotRequired[RoomAnswer]


class RoomState(TypedDict):
    """The room as a player may see it now (``room_state``; the ``room`` frame)."""

    code: str
    host: str
    is_host: bool
    member: bool
    state: str
    end_reason: str | None
    category: str | None
    questions: int
    seconds: int
    number: int
    clue_cost: int
    host_plays: bool
    members: int
    scoreboard: list[Score] | None
    question: QuestionView | None
    winners: list[Winner] | None
    next: str | None


class RoomCreated(RoomState):
    url: str
    socket: str


class QuestionFrame(TypedDict):
    """A question starts: every socket of the room at once (``null`` parts for a watcher;
    ``hosting``: the host who does not play, who gets the claims and no round)."""

    id: int
    number: int
    questions: int
    started_at: str
    deadline: str
    remaining: float
    points: int | None
    round: int | None
    watching: bool
    hosting: bool
    claims: list[ShownClaim] | None
    clues_left: list[int] | None
    clue_cost: int
    players: int


class VotedFrame(TypedDict):
    remaining: float


class MembersFrame(TypedDict):
    scoreboard: list[Score]


class VotesFrame(TypedDict):
    """How many members have voted on the question playing: a count, never who."""

    question_id: int
    votes: int
    players: int


class VotesCount(VotesFrame):
    """A ``votes`` frame's count with the code of its room (whose group it goes to)."""

    code: str


class EndedFrame(TypedDict):
    reason: str
    scoreboard: list[Score]
    winners: list[Winner]

