"""The per-claim vote counter the dealer orders by: recounted after each vote's commit by
voting's own task (``recount_claim_votes``), equal then to the aggregate over the dealt rows
that it replaces; whatever order the recounts run in, the last one leaves the true count. The
hourly beat job recounts every claim; moderation's quality refresh no longer touches it."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models import Count, Q
from django.utils import timezone

from foolgame.core.errors import ServiceError
from foolgame.claims.models import Claim
from foolgame.moderation.quality import quality_refresh
from foolgame.voting import services, tasks
from foolgame.voting.counters import claim_counters_backfill, claim_votes_refresh
from foolgame.voting.models import Round, SeenClaim
from tests.factories import ClaimFactory, PageFactory, UserFactory


def aggregated() -> dict[int, int]:
    """The count ``claims_for_player`` used to compute at every deal."""
    rows = Claim.objects.annotate(n=Count("dealt", filter=Q(dealt__round__state=Round.State.VOTED), distinct=True))
    return dict(rows.values_list("id", "n"))


def counted() -> dict[int, int]:
    return dict(Claim.objects.values_list("id", "game_votes"))


def pairs(n: int, author) -> list[Claim]:
    claims = []
    for _ in range(n):
        page = PageFactory()
        claims += [ClaimFactory(page=page, label="SUPPORTS", author=author), ClaimFactory(page=page, label="REFUTES", author=author)]
    return claims


@pytest.mark.django_db
def test_votes_count_both_claims_and_other_endings_count_nothing(fake_clock, django_capture_on_commit_callbacks) -> None:
    author = UserFactory()
    pairs(4, author)
    outcomes = ["correct", "wrong", "timeout", "report", "void", "forfeit", "correct", "wrong"]
    with django_capture_on_commit_callbacks(execute=True):  # the votes' follow-ups run, as after a real commit
        play(outcomes, fake_clock)
    assert counted() == aggregated()
    assert sum(counted().values()) == 2 * outcomes.count("correct") + 2 * outcomes.count("wrong")
    # A second vote on a voted round is refused and counts nothing.
    voted = Round.objects.filter(state=Round.State.VOTED).first()
    with pytest.raises(ServiceError) as refused, django_capture_on_commit_callbacks(execute=True):
        services.vote_cast(round_id=voted.pk, player=voted.player, false_claim=0)
    assert refused.value.code == "round_over"
    assert counted() == aggregated()
    assert {c.pk: c.deal_votes for c in Claim.objects.all()} == {pk: n for pk, n in counted().items()}


@pytest.mark.django_db
def test_a_vote_leaves_the_counter_to_its_recount_which_recounts_exactly(fake_clock) -> None:
    # Without its follow-ups (a lost task) a vote leaves the counters as they were; the next
    # recount of the claims (another vote's, the hourly one) sets the true count, however
    # wrong the stored one was.
    author = UserFactory()
    pairs(2, author)
    play(["correct", "wrong", "correct"], fake_clock)
    assert sum(counted().values()) == 0
    Claim.objects.update(game_votes=9)
    claim_votes_refresh(claim_ids=list(counted()))
    assert counted() == aggregated() and sum(counted().values()) == 6


@pytest.mark.django_db
def test_voting_recounts_its_own_counters_and_moderation_leaves_them_alone(fake_clock, settings) -> None:
    """The hourly beat job that recounts every claim is voting's (``recount-claim-votes``);
    moderation's quality refresh, hourly too, no longer writes the dealer's counters."""
    author = UserFactory()
    pairs(3, author)
    play(["correct", "wrong", "correct", "wrong"], fake_clock)
    Claim.objects.update(game_votes=5)
    quality_refresh(claim_ids=list(counted()))
    assert set(counted().values()) == {5}
    entry = settings.CELERY_BEAT_SCHEDULE["recount-claim-votes"]
    assert entry["task"] == tasks.recount_all_claim_votes.name and entry["schedule"] <= 3600
    assert tasks.recount_all_claim_votes.delay().get() == len(counted())
    assert counted() == aggregated() and sum(counted().values()) == 8


def play(outcomes: list[str], fake_clock) -> None:
    for outcome in outcomes:
        player = UserFactory()
        round_ = services.round_create(player=player)
        if outcome == "forfeit":
            services.round_forfeit(round_id=round_.pk, player=player)
            continue
        services.round_start(round_id=round_.pk, player=player)
        if outcome in ("correct", "wrong"):
            guess = round_.false_index if outcome == "correct" else 1 - round_.false_index
            services.vote_cast(round_id=round_.pk, player=player, false_claim=guess)
        elif outcome == "timeout":
            fake_clock.advance(181)
            with pytest.raises(ServiceError) as refused:
                services.vote_cast(round_id=round_.pk, player=player, false_claim=0)
            assert refused.value.code == "round_expired"
            fake_clock.advance(-181)
        elif outcome == "report":
            services.round_report(round_id=round_.pk, player=player, claim=0, reason="spam")
        else:
            services.rounds_void_for_claim(claim_id=round_.left_claim_id)
            assert Round.objects.get(pk=round_.pk).state == Round.State.VOIDED


@pytest.mark.django_db
def test_the_deal_orders_by_release_votes_plus_game_votes(fake_clock, django_capture_on_commit_callbacks) -> None:
    author = UserFactory()
    page = PageFactory()
    played = {ClaimFactory(page=page, label=label, author=author).pk for label in ("SUPPORTS", "REFUTES")}
    for _ in range(2):
        player = UserFactory()
        round_ = services.round_create(player=player)
        services.round_start(round_id=round_.pk, player=player)
        with django_capture_on_commit_callbacks(execute=True):
            services.vote_cast(round_id=round_.pk, player=player, false_claim=0)
    assert set(Claim.objects.filter(pk__in=played).values_list("game_votes", "deal_votes")) == {(2, 2)}
    other = PageFactory()
    fresh = {ClaimFactory(page=other, label=label, author=author, release_total_votes=1).pk for label in ("SUPPORTS", "REFUTES")}
    # The window is tried in a random order weighted towards the least-voted (a claim a vote
    # behind is tried first twice as often): 1 vote in all beats 2 game votes.
    random.seed(97)
    dealt = Counter(frozenset((r.left_claim_id, r.right_claim_id)) for r in (services.round_create(player=UserFactory()) for _ in range(60)))
    assert set(dealt) <= {frozenset(fresh), frozenset(played)}
    assert dealt[frozenset(fresh)] > dealt[frozenset(played)] > 0  # about 2 to 1; the played pair is not shut out


def played_history() -> None:
    """Rounds in every state written directly, as the history was before the counter."""
    author, now = UserFactory(), timezone.now()
    claims = pairs(5, author)
    players = [UserFactory() for _ in range(6)]
    states = ["voted", "timeout", "reported", "voided", "voted", "voted"]
    for p, (player, state) in enumerate(zip(players, states)):
        for i in range(0, len(claims), 2):
            if (i + p) % 3 == 0:
                continue
            round_ = Round.objects.create(player=player, left_claim=claims[i], right_claim=claims[i + 1], state=state,
                                          started_at=now, deadline=now)
            SeenClaim.objects.bulk_create([SeenClaim(player=player, claim=claims[j], round=round_) for j in (i, i + 1)])
    Claim.objects.update(game_votes=7)  # wrong on purpose


@pytest.mark.django_db
def test_backfill_gives_the_counts_of_the_aggregate() -> None:
    played_history()
    claim_counters_backfill()
    assert counted() == aggregated()
    assert 0 < sum(counted().values()) < 2 * Round.objects.count()


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_the_counter_from_the_history() -> None:
    played_history()
    executor = MigrationExecutor(connection)
    executor.migrate([("voting", "0002_round_answer_voided_report_weight")])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert counted() == aggregated()
    assert 0 < sum(counted().values())
