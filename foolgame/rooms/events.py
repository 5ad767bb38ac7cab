"""What the rooms' services send once their change is committed: one channel-layer group per
room (every member's socket, on any web process, through the Redis layer), and the task that
finishes a question at its deadline. The messages carry what every socket needs, so that
starting a question reaches all members without a query per socket."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from foolgame.rooms.payloads import RoomAnswer, Score, Winner
from foolgame.rooms.models import Room, RoomQuestion
from foolgame.rooms.selectors import room_scoreboard, withheld_players
from foolgame.core.events import group_send_on_commit, task_on_commit, task_runs_eagerly


def room_group(code: str) -> str:
    """By code, so a socket joins its room's group before its first read of the database."""
    return f"room-{code.upper()}"


def _withheld(players: set[int]) -> list[str]:
    """The members (by id, as ``rounds`` names them) who gave up a question whose deadline is
    ahead: their sockets replace the message's board and answer by their own view."""
    return sorted(str(p) for p in players)


def members_changed_on_commit(room: Room) -> None:
    message = {"type": "room.members", "scoreboard": room_scoreboard(room=room), "withheld": _withheld(withheld_players(room=room))}
    group_send_on_commit(room_group(room.code), message)


def question_started_on_commit(room: Room, question: RoomQuestion, rounds: dict[int, int]) -> None:
    """The question for everyone at once: the claims' text (never a label or gold), the
    deadline, and which round is whose (each socket keeps only its own player's)."""
    lengths = [len(c.clues) for c in question.claims]
    message = {
        "type": "room.question",
        "question_id": question.pk,
        "number": question.number,
        "questions": room.questions,
        "started_at": question.started_at.isoformat(),
        "deadline": question.deadline.timestamp(),
        "claims": [{"text": c.text, "page": {"id": c.page_id, "title": c.page.title}} for c in question.claims],
        "clues_left": [max(lengths)] * 2,  # as a playing round shows them: both the longer list's length
        "rounds": {str(player_id): round_id for player_id, round_id in rounds.items()},
        "players": len(rounds),
    }
    group_send_on_commit(room_group(room.code), message)


def question_ended_on_commit(room: Room, answer: RoomAnswer, *, withheld: set[int], question_deadline: datetime) -> None:
    """The answer for every socket; ``withheld`` (who gave up) and the question's deadline, when
    theirs is due, are for the sockets, not the frame."""
    message = {"type": "room.answer", **answer, "withheld": _withheld(withheld), "deadline": question_deadline.timestamp()}
    group_send_on_commit(room_group(room.code), message)


def room_ended_on_commit(room: Room, *, scoreboard: list[Score] | None = None, winners: list[Winner], withheld: set[int]) -> None:
    scoreboard = room_scoreboard(room=room) if scoreboard is None else scoreboard
    message = {"type": "room.ended", "reason": room.end_reason, "scoreboard": scoreboard, "winners": winners, "withheld": _withheld(withheld)}
    group_send_on_commit(room_group(room.code), message)


def votes_message(*, question_id: int, votes: int, players: int) -> dict[str, Any]:
    """How many have voted on the question playing: a count for every socket, never who."""
    return {"type": "room.votes", "question_id": question_id, "votes": votes, "players": players}


def votes_counted_on_commit(code: str, *, question_id: int, votes: int, players: int) -> None:
    group_send_on_commit(room_group(code), votes_message(question_id=question_id, votes=votes, players=players))


def finish_task_on_commit(question: RoomQuestion) -> None:
    """After the commit, ask a worker to finish the question at its deadline (the sockets and
    the sweep do it too; finishing a finished question does nothing). Not sent with eager
    tasks: it would run at once and find nothing due."""
    from foolgame.rooms import tasks

    if not task_runs_eagerly(tasks.finish_question):
        task_on_commit(tasks.finish_question, question.pk, eta=question.deadline)


def prepare_task_on_commit(room: Room) -> None:
    """After the commit, ask a worker to choose the room's next pair ahead of its deal
    (``services.room_prepare_pair``). Not sent with eager tasks: the deal chooses it then."""
    from foolgame.rooms import tasks

    if not task_runs_eagerly(tasks.prepare_pair):
        task_on_commit(tasks.prepare_pair, room.pk)
