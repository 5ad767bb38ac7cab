"""Issue 24: a room vote pays, notifies and rates nobody while its question plays. Points on
the public leaderboards, an author's "fooled" news or a skill that moved would tell the room
who was right before the answer (a canary votes, the others read the board)."""

from __future__ import annotations

import pytest

from foolgame.players.models import LedgerEntry
from foolgame.rooms.models import RoomQuestion
from foolgame.rooms import services
from foolgame.voting import services as rounds
from foolgame.voting.models import Round, Vote
from foolgame.voting.selectors import leaderboard
from tests.rooms.conftest import current
from tests.rooms.test_services import rounds_of
from tests.voting.test_apis import login


def verify_board() -> dict[str, int]:
    return {row["username"]: row["points"] for row in leaderboard(kind="verify")}


def voted_question(party, clock) -> tuple[RoomQuestion, dict[str, Round]]:
    """The room's next question dealt and, 20 s into it, voted by all three members: hana
    right, pia and otto wrong. The question is left playing."""
    services.room_next_question(code=party.room.code, player=party.host)
    question = current(party.room)
    clock.advance(20)
    plays = rounds_of(question)
    rounds.vote_cast(round_id=plays["hana"].pk, player=party.host, false_claim=question.false_claim_index)
    for name, player in (("pia", party.players[0]), ("otto", party.players[1])):
        rounds.vote_cast(round_id=plays[name].pk, player=player, false_claim=1 - question.false_claim_index)
    return question, plays


@pytest.mark.django_db
def test_a_room_vote_pays_and_rates_only_once_the_question_is_over(party, fake_clock, django_capture_on_commit_callbacks) -> None:
    code = party.room.code
    services.room_next_question(code=code, player=party.host)
    question = current(party.room)
    fake_clock.advance(30)
    hana = rounds_of(question)["hana"]
    with django_capture_on_commit_callbacks(execute=True):
        rounds.vote_cast(round_id=hana.pk, player=party.host, false_claim=question.false_claim_index)  # the canary, right

    assert verify_board() == {}, "no room points on the public board while the question plays"
    assert not LedgerEntry.objects.filter(cause=f"round:{hana.pk}").exists()
    vote = Vote.objects.get(round=hana)
    assert (vote.settled, vote.rated) == (False, False)
    assert rounds.votes_settle() == 0, "the sweep leaves a playing question's votes alone"

    for name, player in (("pia", party.players[0]), ("otto", party.players[1])):
        rounds.vote_cast(round_id=rounds_of(question)[name].pk, player=player, false_claim=1 - question.false_claim_index)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.room_question_finish(question_id=question.pk)

    vote.refresh_from_db()
    assert (vote.settled, vote.rated) == (True, True), "paid and rated when the answer is out"
    assert verify_board() == {"hana": 120}
    paid = LedgerEntry.objects.filter(cause=f"round:{hana.pk}")
    assert sum(paid.values_list("amount", flat=True)) == 120, "zero-sum: the voter's 120 and the authors' 0"
    assert rounds.votes_settle() == 0, "each vote is paid once"
    assert sum(LedgerEntry.objects.filter(cause=f"round:{hana.pk}").values_list("amount", flat=True)) == 120


@pytest.mark.django_db
def test_the_sweep_pays_a_vote_whose_question_ended_without_settling_it(party, fake_clock) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    question = current(party.room)
    hana = rounds_of(question)["hana"]
    rounds.vote_cast(round_id=hana.pk, player=party.host, false_claim=question.false_claim_index)
    question.state = question.State.DONE  # ended by a path that crashed before paying
    question.save(update_fields=["state"])
    assert rounds.rounds_sweep() == 0
    assert Vote.objects.get(round=hana).settled
    assert sum(LedgerEntry.objects.filter(cause=f"round:{hana.pk}").values_list("amount", flat=True)) > 0


@pytest.mark.django_db
def test_after_a_give_up_the_room_votes_are_paid_at_the_questions_deadline(party, fake_clock) -> None:
    """The last member leaves after the others voted: the question ends at once for the
    room, but the one who gave up must not read who was right on the public board sooner
    than waiting for the question's clock would have told them."""
    services.room_next_question(code=party.room.code, player=party.host)
    question = current(party.room)
    fake_clock.advance(20)
    rounds.vote_cast(round_id=rounds_of(question)["hana"].pk, player=party.host, false_claim=question.false_claim_index)
    rounds.vote_cast(round_id=rounds_of(question)["pia"].pk, player=party.players[0], false_claim=1 - question.false_claim_index)
    services.room_leave(code=party.room.code, player=party.players[1])  # otto gives up: the question is over
    question.refresh_from_db()
    assert question.state == question.State.DONE
    assert verify_board() == {}
    assert rounds.rounds_sweep() == 0 and verify_board() == {}, "not before the question's deadline"
    fake_clock.current = question.deadline
    rounds.rounds_sweep()
    assert verify_board() == {"hana": 120}


@pytest.mark.django_db
def test_settling_a_questions_votes_writes_them_in_a_few_queries_whatever_their_number(party, fake_clock, django_assert_max_num_queries) -> None:
    """A question's votes settle together at its end (every room ends its questions at
    once): one insert of all their ledger rows, one of all their news, one update, not three
    writes a vote; what they pay and tell is each vote's own."""
    from foolgame.players.models import Notification

    question, plays = voted_question(party, fake_clock)
    question.state = question.State.DONE  # over: its votes are due
    question.save(update_fields=["state"])
    with django_assert_max_num_queries(8):
        assert rounds.votes_settle(round_ids=[r.pk for r in plays.values()]) == 3
    assert rounds.votes_settle() == 0, "each vote once"
    assert set(Vote.objects.filter(round__in=plays.values()).values_list("settled", flat=True)) == {True}
    for round_ in plays.values():
        assert sum(LedgerEntry.objects.filter(cause=f"round:{round_.pk}").values_list("amount", flat=True)) in (0, 120)
    assert LedgerEntry.objects.filter(cause=f"round:{plays['hana'].pk}", player=party.host, amount__gt=0).exists()
    fooled = Notification.objects.filter(kind=Notification.Kind.FOOLED).values_list("actor_id", flat=True)
    assert sorted(fooled) == sorted([party.players[0].pk] * 2 + [party.players[1].pk] * 2), "each wrong vote fooled both authors"


def last_votes_in(party, question) -> None:
    """Every member but otto votes; otto's is left for the test to cast."""
    plays = rounds_of(question)
    rounds.vote_cast(round_id=plays["hana"].pk, player=party.host, false_claim=question.false_claim_index)
    rounds.vote_cast(round_id=plays["pia"].pk, player=party.players[0], false_claim=1 - question.false_claim_index)


@pytest.mark.django_db(transaction=True)
def test_the_room_gets_its_answer_before_its_votes_are_paid(party, fake_clock, monkeypatch) -> None:
    """The answer goes out when the question's end commits; paying its votes (ledger rows and
    news for every vote) follows, and no longer holds the room's answer back."""
    from foolgame.core import events

    seen: list[str] = []
    publish, settle = events._publish, rounds.votes_settle

    def publishing(group, message, skip=None):
        seen.append(message["type"])
        publish(group, message, skip)

    def settling(**kwargs):
        seen.append(f"paid {LedgerEntry.objects.count()} before")
        return settle(**kwargs)

    monkeypatch.setattr(events, "_publish", publishing)
    monkeypatch.setattr(services.rounds, "votes_settle", settling)
    services.room_next_question(code=party.room.code, player=party.host)
    question = current(party.room)
    fake_clock.advance(20)
    last_votes_in(party, question)
    seen.clear()
    with services.rounds_settled_here():  # the caller ends the question, as the room socket does
        rounds.vote_cast(round_id=rounds_of(question)["otto"].pk, player=party.players[1], false_claim=1 - question.false_claim_index)
    assert services.room_question_voted(question_id=question.pk)[0]

    assert seen.index("room.answer") < seen.index("paid 0 before"), seen
    assert verify_board() == {"hana": 120}, "and then they are paid, in the same call"


@pytest.mark.django_db(transaction=True)
def test_when_paying_the_votes_fails_the_question_still_ends_and_the_sweep_pays_them(party, fake_clock, monkeypatch, caplog) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    question = current(party.room)
    fake_clock.advance(20)
    last_votes_in(party, question)
    with services.rounds_settled_here():  # the caller ends the question, as the room socket does
        rounds.vote_cast(round_id=rounds_of(question)["otto"].pk, player=party.players[1], false_claim=1 - question.false_claim_index)

    def down(**kwargs):
        raise RuntimeError("the database went away")

    with monkeypatch.context() as patched:
        patched.setattr(services.rounds, "votes_settle", down)
        assert services.room_question_voted(question_id=question.pk)[0], "the end stands"
    question.refresh_from_db()
    assert question.state == question.State.DONE
    assert verify_board() == {} and "left to the sweep" in caplog.text

    assert rounds.rounds_sweep() == 0
    assert verify_board() == {"hana": 120}, "the sweep paid them"
    assert rounds.votes_settle() == 0
