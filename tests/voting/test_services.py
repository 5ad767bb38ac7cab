"""The round's rules on the server clock: dealing, clues, votes, ledger rows, expiry."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db.models import Sum
from django.test import TestCase

from foolgame.core.errors import ServiceError
from foolgame.moderation.models import Sighting
from foolgame.players.models import LedgerEntry, PlayerRating
from foolgame.voting import ratings, services
from foolgame.voting.models import Report, Round, Vote
from tests.factories import PageFactory, UserFactory
from tests.voting.conftest import make_claim

pytestmark = pytest.mark.django_db


def ledger(player) -> dict[str, int]:
    rows = LedgerEntry.objects.filter(player=player).values("kind").annotate(total=Sum("amount"))
    return {r["kind"]: r["total"] for r in rows}


def start(game, fake_clock) -> tuple[Round, dict]:
    round_ = services.round_create(player=game.voter)
    return round_, services.round_start(round_id=round_.pk, player=game.voter)



def test_deal_gives_one_true_and_one_false_claim(game) -> None:
    round_ = services.round_create(player=game.voter)
    assert {round_.left_claim_id, round_.right_claim_id} == {game.true_claim.pk, game.false_claim.pk}
    assert round_.state == "ready"


def test_deal_never_gives_the_voters_own_claim(game) -> None:
    with pytest.raises(ServiceError) as error:
        services.round_create(player=game.true_author)
    assert (error.value.code, error.value.status_code) == ("no_pair_available", 404)


def test_deal_never_repeats_a_claim_for_a_player(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    with pytest.raises(ServiceError, match="No fair pair"):
        services.round_create(player=game.voter)


def test_deal_skips_removed_claims(game) -> None:
    game.false_claim.status = "removed"
    game.false_claim.save()
    with pytest.raises(ServiceError) as error:
        services.round_create(player=game.voter)
    assert error.value.code == "no_pair_available"


def test_deal_prefers_the_same_page_then_the_same_category(game) -> None:
    other_page = PageFactory(title="Jupiter", category=game.true_claim.page.category)
    author = UserFactory()
    make_claim(other_page, label="REFUTES", author=author)
    round_ = services.round_create(player=game.voter)
    assert round_.left_claim.page_id == round_.right_claim.page_id == game.true_claim.page_id
    lonely = PageFactory(title="Mars", category=game.true_claim.page.category)
    lonely_claim = make_claim(lonely, label="SUPPORTS", author=author)
    second = services.round_create(player=game.voter)
    assert lonely_claim.pk in (second.left_claim_id, second.right_claim_id)
    assert second.left_claim.page.category_id == second.right_claim.page.category_id


def test_deal_prefers_claims_with_fewer_votes(game) -> None:
    page = game.true_claim.page
    author = UserFactory()
    well_voted = make_claim(page, label="SUPPORTS", author=author)
    well_voted.release_total_votes = 50
    well_voted.save()
    for _ in range(5):
        round_ = services.round_create(player=UserFactory())
        assert well_voted.pk not in (round_.left_claim_id, round_.right_claim_id)


def test_claims_are_not_sent_before_start(game, fake_clock) -> None:
    round_ = services.round_create(player=game.voter)
    state = services.round_get_state(round_id=round_.pk, player=game.voter)
    assert state["claims"] is None and state["status"] == "ready"


def test_start_sends_claims_and_the_full_clock(game, fake_clock) -> None:
    round_, state = start(game, fake_clock)
    assert state["remaining"] == 180 and state["points"] == 120
    assert {c["text"] for c in state["claims"]} == {game.true_claim.text, game.false_claim.text}
    assert "label" not in str(state) and "SUPPORTS" not in str(state) and "REFUTES" not in str(state)


def test_correct_vote_pays_floor_remaining_and_authors_share_the_rest(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    fake_clock.advance(40.4)
    result = services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    assert result["correct"] is True and result["points"] == 120
    # 180 - 40.4 = 139.6 remaining: the voter gets min(120, 139) = 120, the authors nothing.
    assert ledger(game.voter) == {"verify": 120}
    assert ledger(game.true_author) == {} and ledger(game.false_author) == {}


def test_slow_correct_vote_is_zero_sum_with_remainder_to_the_false_author(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=0)
    services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=1)
    fake_clock.advance(75.5)  # remaining = 180 - 75.5 - 20 = 84.5 -> voter 84, authors share 36
    result = services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    assert result["points"] == 84
    assert ledger(game.voter) == {"verify": 84}
    assert ledger(game.true_author) == {"fool": 18} and ledger(game.false_author) == {"fool": 18}
    total = LedgerEntry.objects.filter(cause=f"round:{round_.pk}").aggregate(t=Sum("amount"))["t"]
    assert total == 120


def test_odd_remainder_goes_to_the_false_claims_author(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    fake_clock.advance(61)  # remaining 119 -> voter 119, authors share 1
    services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    assert ledger(game.false_author) == {"fool": 1} and ledger(game.true_author) == {}


def test_wrong_vote_pays_nobody_and_reveals_the_answer(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    fake_clock.advance(100)
    result = services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=1 - round_.false_index)
    assert result["correct"] is False and result["points"] == 0
    assert result["false_claim"] == round_.false_index
    assert result["gold"][round_.false_index][0]["text"] == game.false_claim.gold_sentences.get().text
    assert LedgerEntry.objects.count() == 0


def test_vote_after_deadline_is_refused_and_the_round_times_out(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    fake_clock.advance(180)
    with pytest.raises(ServiceError) as error:
        services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    assert error.value.code == "round_expired"
    round_.refresh_from_db()
    assert round_.state == "timeout"
    assert not Vote.objects.exists() and LedgerEntry.objects.count() == 0


def test_reveals_move_the_deadline_forward(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    clue = services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=0)
    assert clue["remaining"] == 170 and clue["points"] == 120
    fake_clock.advance(165)  # 180 - 165 - 10 = 5 s left: a clue would leave no time
    with pytest.raises(ServiceError) as error:
        services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=0)
    assert error.value.code == "not_enough_time"
    fake_clock.advance(5)
    with pytest.raises(ServiceError) as error:
        services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    assert error.value.code == "round_expired"


def test_clues_come_in_order_with_gold_last_and_stop_at_the_end(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    claim = round_.claims[0]
    texts = [services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=0)["clue"]["text"] for _ in claim.clues]
    assert texts == [c["text"] for c in claim.clues]
    assert texts[-1] == claim.gold_sentences.get().text
    with pytest.raises(ServiceError) as error:
        services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=0)
    assert error.value.code == "no_more_clues"
    state = services.round_get_state(round_id=round_.pk, player=game.voter)
    assert [c["text"] for c in state["clues"][0]] == texts and state["clues"][1] == []
    assert state["remaining"] == 180 - 10 * len(texts)


def test_one_vote_per_round(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    with pytest.raises(ServiceError) as error:
        services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    assert error.value.code == "round_over"
    assert Vote.objects.count() == 1 and LedgerEntry.objects.count() == 1


def test_another_players_round_is_not_found(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    with pytest.raises(ServiceError) as error:
        services.vote_cast(round_id=round_.pk, player=game.true_author, false_claim=0)
    assert error.value.code == "round_not_found"


@pytest.mark.parametrize("bad", [2, -1, "0", None, True])
def test_bad_claim_index_is_refused(game, fake_clock, bad) -> None:
    round_, _ = start(game, fake_clock)
    with pytest.raises(ServiceError) as error:
        services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=bad)
    assert error.value.code == "invalid_claim"
    assert Round.objects.get(pk=round_.pk).state == "playing"


def test_like_pays_the_author_once_and_only_after_the_vote(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    with pytest.raises(ServiceError, match="after the vote"):
        services.round_like(round_id=round_.pk, player=game.voter, claim=0)
    services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    services.round_like(round_id=round_.pk, player=game.voter, claim=0)
    liked_author = round_.claims[0].author
    assert ledger(liked_author).get("like") == 10
    with pytest.raises(ServiceError) as error:
        services.round_like(round_id=round_.pk, player=game.voter, claim=1)
    assert error.value.code == "already_liked"
    assert LedgerEntry.objects.filter(kind="like").count() == 1


def test_not_sure_like_pays_nobody(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    services.round_like(round_id=round_.pk, player=game.voter, claim=None)
    assert not LedgerEntry.objects.filter(kind="like").exists()


def test_report_ends_the_round_without_points_and_is_stored(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    services.round_report(round_id=round_.pk, player=game.voter, claim=1, reason="wrong_label", note="The page says otherwise.")
    round_.refresh_from_db()
    assert round_.state == "reported"
    report = Report.objects.get()
    assert (report.claim_id, report.reason, report.note) == (round_.right_claim_id, "wrong_label", "The page says otherwise.")
    with pytest.raises(ServiceError, match="over"):
        services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=0)
    assert LedgerEntry.objects.count() == 0


@pytest.mark.parametrize("reason, note, code", [("rude", "", "invalid_reason"), ("other", "x" * 1001, "note_too_long")])
def test_bad_report_is_refused_and_changes_nothing(game, fake_clock, reason, note, code) -> None:
    round_, _ = start(game, fake_clock)
    with pytest.raises(ServiceError) as error:
        services.round_report(round_id=round_.pk, player=game.voter, claim=0, reason=reason, note=note)
    assert error.value.code == code
    assert Round.objects.get(pk=round_.pk).state == "playing" and not Report.objects.exists()


def test_expiry_is_idempotent_and_sweep_closes_untouched_rounds(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    assert services.round_expire(round_id=round_.pk) is False  # not due yet
    fake_clock.advance(181)
    assert services.rounds_sweep() == 1
    round_.refresh_from_db()
    assert round_.state == "timeout" and round_.ended_at == round_.deadline
    assert services.round_expire(round_id=round_.pk) is False
    assert services.rounds_sweep() == 0


def test_unstarted_round_is_withdrawn_after_the_start_window(game, fake_clock) -> None:
    round_ = services.round_create(player=game.voter)
    fake_clock.advance(11 * 60)
    assert services.rounds_sweep() == 1
    assert not Round.objects.filter(pk=round_.pk).exists()
    assert services.round_create(player=game.voter).pk != round_.pk, "its claims go back to the pool"


def test_open_rounds_are_capped(db, fake_clock) -> None:
    voter, author = UserFactory(), UserFactory()
    for i in range(services.MAX_OPEN_ROUNDS + 1):
        page = PageFactory()
        make_claim(page, label="SUPPORTS", author=author)
        make_claim(page, label="REFUTES", author=author)
    for _ in range(services.MAX_OPEN_ROUNDS):
        services.round_create(player=voter)
    with pytest.raises(ServiceError) as error:
        services.round_create(player=voter)
    assert error.value.code == "too_many_open_rounds"


def _capture_expiry_sends(monkeypatch) -> list[tuple]:
    """The expiry tasks the services send (as a broker would get them), captured where
    ``events.task_on_commit`` is called, with eager mode off."""
    from foolgame.core import events
    from foolgame.voting import tasks

    sent: list[tuple] = []
    monkeypatch.setattr(events, "task_runs_eagerly", lambda task: False)
    monkeypatch.setattr(
        events, "task_on_commit", lambda task, *args, **options: sent.append((args, options.get("eta"))) if task is tasks.expire_round else None
    )
    monkeypatch.setattr(  # the start's: batched with the rounds due in the same second (tasks.expire_rounds)
        events, "task_batched_on_commit", lambda task, ids, *, eta=None: sent.append(("batched", list(ids), eta)) if task is tasks.expire_rounds else None
    )
    return sent


def test_a_round_has_one_pending_expiry_task_however_many_clues_are_bought(game, fake_clock, monkeypatch) -> None:
    sent = _capture_expiry_sends(monkeypatch)
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    for i in range(5):
        services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=i % 2)
    round_.refresh_from_db()
    assert [(how, ids, (eta - round_.started_at).total_seconds()) for how, ids, eta in sent] == [("batched", [round_.pk], 180)]


def test_an_expiry_task_that_runs_before_the_deadline_resends_itself_once(game, fake_clock, monkeypatch) -> None:
    from foolgame.voting import tasks

    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    sent = _capture_expiry_sends(monkeypatch)
    assert tasks.expire_round(round_.pk) is False  # early: not closed, sent again for the deadline
    assert tasks.expire_round(round_.pk, False) is False  # the resent one does not resend
    round_.refresh_from_db()
    assert sent == [((round_.pk, False), round_.deadline)]
    assert round_.state == Round.State.PLAYING


def test_the_shared_expiry_closes_each_due_round_and_resends_one_not_yet_due(game, fake_clock, monkeypatch) -> None:
    """``tasks.expire_rounds``: the rounds of one second's batch, each closed as its own task
    closed it; one found before its deadline (moved, or a clock behind) is sent once alone."""
    from foolgame.voting import tasks

    first = services.round_create(player=game.voter)
    services.round_start(round_id=first.pk, player=game.voter)
    fake_clock.advance(100)
    later = services.round_create(player=UserFactory())
    services.round_start(round_id=later.pk, player=later.player)
    fake_clock.advance(81)  # the first is 1 s past its deadline, the later one 99 s short of it
    sent = _capture_expiry_sends(monkeypatch)
    assert tasks.expire_rounds([first.pk, later.pk, first.pk + later.pk]) == 1  # a vanished id is skipped
    first.refresh_from_db(), later.refresh_from_db()
    assert (first.state, first.ended_at) == (Round.State.TIMED_OUT, first.deadline)
    assert later.state == Round.State.PLAYING and sent == [((later.pk, False), later.deadline)]


# --- a moderator's vote on a claim they saw with its answer (issue 24) -------------------------


def saw(moderator, claim, moment) -> None:
    Sighting.objects.create(moderator=moderator, claim=claim, first_seen=moment)


@pytest.mark.parametrize("seen_claim", ["true_claim", "false_claim"])
def test_a_vote_after_the_voters_moderator_sighting_pays_nobody_and_rates_nobody(game, fake_clock, seen_claim) -> None:
    round_, _ = start(game, fake_clock)  # dealt first: a claim a moderator saw is not dealt to them
    fake_clock.advance(10)
    saw(game.voter, getattr(game, seen_claim), fake_clock.current)  # e.g. in the queue in another tab, mid-round
    with TestCase.captureOnCommitCallbacks(execute=True):
        result = services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    assert result["correct"] is True and result["points"] == 0
    assert result["unpaid"] == "moderator_saw_claim" and "moderator" in result["message"]
    assert not LedgerEntry.objects.exists()  # voter 0, authors 0
    assert not PlayerRating.objects.exists()
    game.true_claim.refresh_from_db()
    assert game.true_claim.rating is None
    vote = Vote.objects.get(round=round_)
    assert vote.unpaid == "moderator_saw_claim" and vote.points == 0
    assert services.round_get_state(round_id=round_.pk, player=game.voter)["result"]["unpaid"] == "moderator_saw_claim"
    assert ratings.ratings_rate_pending() == 0 and ratings.ratings_rate_vote(vote_id=vote.pk) is False


def test_a_sighting_after_the_vote_changes_nothing(game, fake_clock) -> None:
    round_, _ = start(game, fake_clock)
    fake_clock.advance(10)
    result = services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    saw(game.voter, game.false_claim, fake_clock.current + timedelta(seconds=1))
    assert result["points"] == 120 and "unpaid" not in result
    assert ledger(game.voter) == {"verify": 120}
    assert "unpaid" not in services.round_get_state(round_id=round_.pk, player=game.voter)["result"]


def test_whether_a_voter_is_a_guest_is_read_without_compiling_its_query_again(monkeypatch) -> None:
    """Every vote asks whether its player is a guest: after the first, the query only runs."""
    from django.contrib.auth import get_user_model
    from django.db.models.sql.compiler import SQLCompiler
    from django.utils import timezone

    from foolgame.players.models import Guest

    player, guest = UserFactory(username="ordinary"), UserFactory(username="nick")
    Guest.objects.create(user=guest, created=timezone.now())
    assert services.is_guest(player) is False
    compiles = []
    as_sql = SQLCompiler.as_sql
    monkeypatch.setattr(SQLCompiler, "as_sql", lambda self, *a, **k: compiles.append(self) or as_sql(self, *a, **k))
    users = get_user_model().objects.in_bulk([player.pk, guest.pk])
    compiles.clear()
    assert (services.is_guest(users[player.pk]), services.is_guest(users[guest.pk])) == (False, True)
    assert compiles == []
    assert services.is_guest(users[guest.pk]) is True  # remembered on the user object


def test_compiled_update_writes_what_save_writes_and_refuses_a_missing_row(game) -> None:
    """``core.queries.compiled_update`` (a round's start and vote): the fields given are
    written as ``save(update_fields=...)`` writes them, the others are left alone, the SQL is
    written once, and a row that is gone raises as Django's save does."""
    from datetime import timedelta

    from django.db import DatabaseError
    from django.db.models.sql.compiler import SQLUpdateCompiler
    from django.utils import timezone

    from foolgame.core.queries import compiled_update
    from foolgame.voting import services
    from foolgame.voting.models import Round

    round_ = services.round_create(player=game.voter)
    now = timezone.now()
    round_.state, round_.started_at, round_.deadline, round_.ended_at = Round.State.PLAYING, now, now + timedelta(seconds=180), now
    compiled_update(round_, ("started_at", "state", "deadline"))
    stored = Round.objects.get(pk=round_.pk)
    assert (stored.state, stored.started_at, stored.deadline, stored.ended_at) == (Round.State.PLAYING, now, now + timedelta(seconds=180), None)
    compiled = []
    as_sql = SQLUpdateCompiler.as_sql
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SQLUpdateCompiler, "as_sql", lambda self, *a, **k: compiled.append(self.query.model) or as_sql(self, *a, **k))
        round_.state = Round.State.VOTED
        compiled_update(round_, ("started_at", "state", "deadline"))
    assert compiled == [] and Round.objects.get(pk=round_.pk).state == Round.State.VOTED
    gone = Round.objects.get(pk=round_.pk)
    Round.objects.filter(pk=round_.pk).delete()
    with pytest.raises(DatabaseError):
        compiled_update(gone, ("state",))


def test_compiled_create_stores_what_save_stores_and_refuses_a_second_vote(game) -> None:
    """``core.queries.compiled_create`` (a vote's row): every field stored as Django's save
    stores it, the key read back, the INSERT compiled once, a broken rule raises Django's
    ``IntegrityError`` (the round's second vote, which the vote service answers 409), and a
    model with a ``pre_save`` receiver is saved by Django, receiver called."""
    from django.db import IntegrityError, transaction
    from django.db.models.signals import pre_save
    from django.db.models.sql.compiler import SQLInsertCompiler
    from django.utils import timezone

    from foolgame.core.queries import compiled_create
    from foolgame.voting import services
    from foolgame.voting.models import Vote

    rounds = [services.round_create(player=game.voter)] * 2  # one pair for this voter: the receiver's vote follows a delete
    now = timezone.now()
    made = []
    insert = SQLInsertCompiler.as_sql
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SQLInsertCompiler, "as_sql", lambda self, *a, **k: made.append(self.query.model) or insert(self, *a, **k))
        first = compiled_create(Vote(round=rounds[0], false_claim_index=1, correct=True, points=37, remaining=12.5, created=now, unpaid="guest", settled=False))
    assert made == [] and first.pk is not None and not first._state.adding
    stored = Vote.objects.get(pk=first.pk)
    assert (stored.round_id, stored.false_claim_index, stored.correct, stored.points, stored.remaining, stored.created, stored.unpaid, stored.rated, stored.settled) == (
        rounds[0].pk, 1, True, 37, 12.5, now, "guest", False, False
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        compiled_create(Vote(round=rounds[0], false_claim_index=0, correct=False, points=0, remaining=3.0, created=now))
    assert Vote.objects.filter(round=rounds[0]).count() == 1
    Vote.objects.filter(pk=first.pk).delete()
    heard = []

    def receiver(sender, instance, **kwargs) -> None:
        heard.append(instance.points)

    pre_save.connect(receiver, sender=Vote)
    try:
        second = compiled_create(Vote(round=rounds[1], false_claim_index=0, correct=False, points=0, remaining=3.0, created=now))
    finally:
        pre_save.disconnect(receiver, sender=Vote)
    assert heard == [0] and Vote.objects.get(pk=second.pk).round_id == rounds[1].pk
