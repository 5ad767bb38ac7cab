"""A room's rounds played with the solo round's REST twins (``/api/rounds/<id>/...``).

The room socket asks the room whether its question is over after each vote; a member who
votes, gives up or reports over REST gets the same: once the round service has committed,
``room_round_settled`` asks ``room_question_finish``, so when that round was the last one the
question waited for, every socket of the room gets the answer at once (not at the deadline).
"""

from __future__ import annotations

from foolgame.rooms.selectors import round_room_question
from foolgame.rooms.services import room_question_finish


def room_round_settled(*, round_id: int) -> bool:
    """After a round service's commit: if the round is a room's, end its question when
    nothing is left to wait for. A solo round, or a question not over or already done,
    changes nothing. Returns True when this call ended the question."""
    question_id = round_room_question(round_id=round_id)
    return question_id is not None and room_question_finish(question_id=question_id)
