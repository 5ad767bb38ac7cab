"""Concurrency on the real database (PostgreSQL in CI's second pass): the database, not a
read-then-write check, keeps one vote per round, one like per round and no shared claims."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from foolgame.players.models import LedgerEntry
from foolgame.voting import services
from foolgame.voting.models import Like, Report, Round, SeenClaim, Vote
from tests.concurrency import race
from tests.factories import PageFactory, UserFactory
from tests.voting.conftest import make_claim

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("postgresql_only")]


def test_twenty_concurrent_votes_give_one_vote_and_one_set_of_ledger_rows(game) -> None:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    outcomes = race(20, lambda: services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index))
    assert outcomes == Counter({"ok": 1, "round_over": 19})
    assert Vote.objects.filter(round=round_).count() == 1
    assert sum(LedgerEntry.objects.filter(cause=f"round:{round_.pk}").values_list("amount", flat=True)) == 120


def test_twenty_concurrent_likes_give_one_like(game) -> None:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    outcomes = race(20, lambda: services.round_like(round_id=round_.pk, player=game.voter, claim=0))
    assert outcomes == Counter({"ok": 1, "already_liked": 19})
    assert Like.objects.count() == 1 and LedgerEntry.objects.filter(kind="like").count() == 1


def test_concurrent_deals_never_give_one_player_the_same_claim(db) -> None:
    voter, author = UserFactory(), UserFactory()
    for _ in range(3):
        page = PageFactory()
        make_claim(page, label="SUPPORTS", author=author)
        make_claim(page, label="REFUTES", author=author)
    outcomes = race(8, lambda: services.round_create(player=voter))
    assert outcomes["ok"] == 3
    dealt = list(SeenClaim.objects.filter(player=voter).values_list("claim_id", flat=True))
    assert len(dealt) == len(set(dealt)) == 6
    assert Round.objects.filter(player=voter).count() == 3


def test_concurrent_reveals_each_cost_ten_seconds_once(game) -> None:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    outcomes = race(10, lambda: services.round_reveal_clue(round_id=round_.pk, player=game.voter, claim_index=0))
    clues = len(round_.claims[0].clues)
    assert outcomes == Counter({"ok": clues, "no_more_clues": 10 - clues})
    state = services.round_get_state(round_id=round_.pk, player=game.voter)
    assert [c["position"] for c in state["clues"][0]] == list(range(clues))
    assert 180 - 10 * clues - 1 < state["remaining"] <= 180 - 10 * clues


def test_concurrent_reports_cannot_beat_the_reports_rate_limit(db, settings) -> None:
    settings.FM2 = {**settings.FM2, "REPORTS_PER_WINDOW": 3, "REPORTS_PER_DAY": 20}
    voter, author = UserFactory(), UserFactory()
    for _ in range(8):
        page = PageFactory()
        make_claim(page, label="SUPPORTS", author=author)
        make_claim(page, label="REFUTES", author=author)
    rounds = []
    for _ in range(8):
        round_ = services.round_create(player=voter)
        services.round_start(round_id=round_.pk, player=voter)
        services.vote_cast(round_id=round_.pk, player=voter, false_claim=0)
        rounds.append(round_.pk)
    pending, taken = list(rounds), threading.Lock()

    def report() -> object:
        with taken:
            round_id = pending.pop()
        return services.round_report(round_id=round_id, player=voter, claim=0, reason="spam")

    outcomes = race(8, report)
    assert outcomes == Counter({"ok": 3, "report_rate_limited": 5})
    assert Report.objects.filter(reporter=voter).count() == 3


def test_votes_racing_a_moderation_action_on_their_claim_neither_deadlock_nor_miscount(db) -> None:
    """A vote locks its claims before its round, as moderation does before voiding rounds:
    no deadlock, and the counters equal the voted rounds whichever came first."""
    from foolgame.claims.models import Claim
    from foolgame.moderation.actions import claim_moderate, moderator_set
    from foolgame.moderation.quality import quality_refresh

    author, page = UserFactory(), PageFactory()
    true_claim = make_claim(page, label="SUPPORTS", author=author)
    false_claim = make_claim(page, label="REFUTES", author=author)
    # The claims' quality rows exist, as after their first refresh: creating one waits on the
    # claim row (its foreign key), a separate matter from the order votes take their locks in.
    quality_refresh(claim_ids=[true_claim.pk, false_claim.pk])
    moderator = UserFactory()
    moderator_set(username=moderator.username)
    rounds = []
    for _ in range(8):
        player = UserFactory()
        round_ = services.round_create(player=player)
        services.round_start(round_id=round_.pk, player=player)
        rounds.append((player, round_))
    jobs = iter([lambda p=p, r=r: services.vote_cast(round_id=r.pk, player=p, false_claim=r.false_index) for p, r in rounds]
                + [lambda: claim_moderate(moderator=moderator, claim_id=true_claim.pk, action="relabel", reason="race", label="REFUTES")])
    take = threading.Lock()

    def next_job() -> object:
        with take:
            job = next(jobs)
        return job()

    outcomes = race(9, next_job)
    voted = Round.objects.filter(state=Round.State.VOTED).count()
    assert outcomes["ok"] == voted + 1 and outcomes["ok"] + outcomes["round_over"] == 9
    assert set(Claim.objects.values_list("game_votes", flat=True)) == {voted}


def test_deals_and_votes_on_the_same_claims_at_once_never_deadlock(db) -> None:
    """A deal writes rows that reference its two claims (the round, the dealt rows), which
    takes a key-share lock on each, in screen order. A deal that locked the higher id first
    deadlocked with a vote when votes locked their claims for update in id order, so the deal
    locks its pair in id order before writing (votes now take key share, as deals do)."""
    author = UserFactory()
    page = PageFactory()
    make_claim(page, label="SUPPORTS", author=author)
    make_claim(page, label="REFUTES", author=author)
    for attempt in range(4):
        voters = [UserFactory() for _ in range(6)]
        rounds = [services.round_create(player=v) for v in voters]
        for voter, round_ in zip(voters, rounds):
            services.round_start(round_id=round_.pk, player=voter)
        newcomers = [UserFactory() for _ in range(6)]
        jobs = [
            *(lambda v=v, r=r: services.vote_cast(round_id=r.pk, player=v, false_claim=r.false_index) for v, r in zip(voters, rounds)),
            *(lambda n=n: services.round_create(player=n) for n in newcomers),
        ]
        queue = list(jobs)
        lock = threading.Lock()

        def next_job() -> object:
            with lock:
                job = queue.pop()
            return job()

        assert race(len(jobs), next_job) == Counter({"ok": 12}), f"attempt {attempt}"


def test_a_vote_does_not_wait_for_another_vote_on_the_same_pair(monkeypatch) -> None:
    """A room's players all vote on one pair at once: a vote in flight (held open here just
    before its commit) must not hold back another player's vote on the same claims, nor a
    deal of them. (The vote used to lock the pair's rows for update to count on them.)"""
    from django.db import connection

    from foolgame.voting import notifications

    author, page = UserFactory(), PageFactory()
    make_claim(page, label="SUPPORTS", author=author)
    make_claim(page, label="REFUTES", author=author)
    players = [UserFactory() for _ in range(2)]
    rounds = [services.round_create(player=p) for p in players]
    assert len({(r.left_claim_id, r.right_claim_id) for r in rounds} | {(r.right_claim_id, r.left_claim_id) for r in rounds}) == 2
    for player, round_ in zip(players, rounds):
        services.round_start(round_id=round_.pk, player=player)
    paused, release = threading.Event(), threading.Event()
    original = notifications.notifications_for_vote

    def held(**kwargs: object) -> object:
        result = original(**kwargs)
        if threading.current_thread().name == "held":
            paused.set()
            release.wait(15)
        return result

    monkeypatch.setattr(notifications, "notifications_for_vote", held)
    done: list[str] = []

    def vote(i: int) -> None:
        try:
            services.vote_cast(round_id=rounds[i].pk, player=players[i], false_claim=rounds[i].false_index)
            done.append(f"vote {i}")
        finally:
            connection.close()

    def deal() -> None:
        try:
            services.round_create(player=UserFactory())
            done.append("deal")
        finally:
            connection.close()

    first = threading.Thread(target=vote, args=(0,), name="held")
    first.start()
    try:
        assert paused.wait(10), "the first vote never reached its ledger rows"
        others = [threading.Thread(target=vote, args=(1,)), threading.Thread(target=deal)]
        for thread in others:
            thread.start()
        for thread in others:
            thread.join(timeout=5)
        assert sorted(done) == ["deal", "vote 1"], "a vote or deal waited for the vote in flight"
    finally:
        release.set()
        first.join(timeout=15)
    assert sorted(done) == ["deal", "vote 0", "vote 1"]
    assert Vote.objects.count() == 2
