"""A room's rounds as the round services see them: rooms registers ``RoomGroups`` (the answer
of a room's round is the whole room's, out when its question is over) and its receiver of
``round_settled`` in ``RoomsConfig.ready()``; voting itself knows nothing of rooms.

The round services send ``round_settled`` once a vote, a give-up or a report on a room's
round has committed, whichever transport carried it (REST, the round socket, the room
socket); it reaches ``room_round_settled``, which asks ``room_question_voted`` (the same
question as ``room_question_finish``, and the count of votes in the same query), so when that
round was the last one the question waited for, every socket of the room gets the answer at
once (not at the deadline). Where the caller settles the question itself
(``services.rounds_settled_here``: the room socket's vote, the room's own finish) the
receiver leaves it to it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet

from foolgame.core.hooks import RoundGroups
from foolgame.rooms.models import RoomRound
from foolgame.rooms.selectors import given_up, round_answer_withheld, round_room_question
from foolgame.rooms.services import room_question_voted, room_votes_counted, rounds_settled_by_caller
from foolgame.voting.models import Round


def room_round_settled(*, round_id: int) -> bool:
    """After a round service's commit: if the round is a room's, end its question when
    nothing is left to wait for. A solo round, or a question not over or already done,
    changes nothing; one still playing tells the room how many have voted (``room_votes_counted``):
    one query for both (``room_question_voted``).
    Returns True when this call ended the question."""
    if rounds_settled_by_caller():
        return False
    question_id = round_room_question(round_id=round_id)
    if question_id is None:
        return False
    ended, counted = room_question_voted(question_id=question_id)
    if counted is not None:
        room_votes_counted(question_id=question_id, counted=counted)  # the room's answers-in count, when it moved
    return ended


class RoomGroups(RoundGroups):
    """Rounds dealt for a room's question (``RoomRound``, the round's ``room_play``)."""

    related = ("room_play__question",)

    def solo(self, prefix: str = "") -> Q:
        return Q(**{f"{prefix}room_play__isnull": True})

    def in_group(self, round_: Round) -> bool:
        return hasattr(round_, "room_play")  # the reverse one-to-one is absent for a solo round

    def answer_withheld(self, round_: Round) -> bool:
        return round_answer_withheld(round_=round_)

    def forfeit_answer_at(self, round_: Round) -> datetime | None:
        """A member's round given up shows its answer with the question's own clock, which
        clues bought by this member never moved, as for every member who waited."""
        play = getattr(round_, "room_play", None)
        return play.question.deadline if play is not None and play.question.deadline else None

    def votes_due(self, votes: QuerySet[Any], now: datetime) -> list[int]:
        """A room's vote once its question's answer is out for everyone: when the question is
        over, or, when a member gave up on it (a forfeit, a leave), not before the question's
        deadline, since the public leaderboards would tell the one who gave up who was right
        sooner than waiting would have. A solo vote at once."""
        rows = list(votes.values_list("pk", "round__room_play__question_id", "round__room_play__question__state", "round__room_play__question__deadline"))
        questions = {question for _, question, _, _ in rows if question is not None}
        gave_up = set(RoomRound.objects.filter(given_up("round__"), question_id__in=questions).values_list("question_id", flat=True)) if questions else set()
        return [
            pk
            for pk, question, state, deadline in rows
            if question is None or (state != "playing" and (question not in gave_up or deadline is None or now >= deadline))
        ]
