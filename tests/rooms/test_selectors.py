"""The room's reads written as SQL agree with the ORM's."""

from __future__ import annotations

import pytest

from foolgame.core import clock
from foolgame.rooms import services
from foolgame.rooms.models import RoomRound
from foolgame.rooms.selectors import question_tally, question_votes
from foolgame.voting import services as rounds
from tests.rooms.test_round_rest import start_question

pytestmark = pytest.mark.django_db


def orm_tally(question) -> tuple | None:
    """``question_tally`` from the ORM reads it replaces: ``_question_over`` and the counts."""
    question.refresh_from_db()
    if question.state != "playing":
        return None
    over = services._question_over(question.pk, clock.now())
    still = over[1] if over else RoomRound.objects.filter(question=question, round__state="playing").exists()
    dealt = RoomRound.objects.filter(question=question).count()
    return question.room_id, question.room.code, over is not None, still, question_votes(question=question), dealt


def test_the_question_tally_is_the_orms_at_every_step_of_a_question(party, fake_clock) -> None:
    question, mine = start_question(party)
    hana, pia, otto = party.everyone
    seen = []

    def check() -> None:
        tally = question_tally(question_id=question.pk, now=clock.now())
        assert tally == orm_tally(question)
        seen.append(tally and tally[2:])

    check()
    rounds.vote_cast(round_id=mine["hana"].pk, player=hana, false_claim=0)
    check()
    for _ in range(3):  # pia's own clock runs 30 s ahead of the question's
        rounds.round_reveal_clue(round_id=mine["pia"].pk, player=pia, claim_index=0)
    fake_clock.advance(160)  # past pia's deadline, not the question's: her round still says playing
    check()
    rounds.round_forfeit(round_id=mine["otto"].pk, player=otto)
    check()  # nobody can vote now: over, with pia's round still playing
    fake_clock.advance(30)  # past the question's deadline
    check()
    assert services.room_question_finish(question_id=question.pk)
    check()
    assert seen == [(False, True, 0, 3), (False, True, 1, 3), (False, True, 1, 3), (True, True, 1, 3), (True, True, 1, 3), None]
    assert question_tally(question_id=question.pk + 1000, now=clock.now()) is None
