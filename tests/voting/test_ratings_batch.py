"""Rating a batch of votes (``ratings_rate_votes``, ``ratings_rate_forfeits``) in one pass: the
same ratings as one vote at a time, in a fixed number of queries, each vote once."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from foolgame.claims.models import Claim
from foolgame.core import clock
from foolgame.players.models import PlayerRating
from foolgame.voting import ratings as game_ratings
from foolgame.voting import tasks
from foolgame.voting.models import Round, Vote
from scoring.ratings import DEFAULT_RATING, Rating, forfeit_update, round_update
from tests.concurrency import race_results
from tests.factories import ClaimFactory, PageFactory, UserFactory

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Play:
    """A vote to record: the voter, the round's two claims (screen order), which is false, whether right."""

    player: int
    left: int
    right: int
    false_index: int
    correct: bool


def world(players: int, claims: int) -> tuple[list, list[Claim]]:
    author, page = UserFactory(), PageFactory()
    return [UserFactory() for _ in range(players)], [ClaimFactory(page=page, author=author) for _ in range(claims)]


def record(plays: list[Play], players: list, claims: list[Claim], *, forfeit: bool = False) -> list[int]:
    """Store these plays as voted rounds (or started rounds given up), in this order: their ids."""
    now = clock.now()
    ids = []
    for play in plays:
        round_ = Round.objects.create(
            player=players[play.player],
            left_claim=claims[play.left],
            right_claim=claims[play.right],
            false_claim_index=play.false_index,
            state=Round.State.FORFEITED if forfeit else Round.State.VOTED,
            started_at=now,
            deadline=now + timedelta(seconds=180),
            ended_at=now,
            forfeit_rated=False if forfeit else None,
        )
        if forfeit:
            ids.append(round_.pk)
        else:
            vote = Vote.objects.create(round=round_, false_claim_index=play.false_index, correct=play.correct, points=0, remaining=60, created=now)
            ids.append(vote.pk)
    return ids


def one_by_one(plays: list[Play], players: list, claims: list[Claim], *, forfeit: bool = False) -> tuple[dict, dict, list]:
    """What rating these plays one at a time gives (``scoring.ratings``' update, vote after
    vote, from the ratings stored before them): players', claims', and each voter's before/after."""
    options = {"tau": settings.FM2_RATINGS["TAU"], "max_step": settings.FM2_RATINGS.get("PLAYER_MAX_STEP") or None}
    skills = {row.player_id: Rating(row.rating, row.deviation, row.volatility) for row in PlayerRating.objects.all()}
    difficulty = {
        c.pk: Rating(c.rating if c.rating is not None else DEFAULT_RATING, c.rating_deviation, c.rating_volatility) for c in Claim.objects.all()
    }
    history = []
    shown = {c.pk for c in Claim.objects.filter(rating__isnull=False)}  # an unrated claim stays NULL until voted on
    for play in plays:
        voter = players[play.player].pk
        left, right = claims[play.left].pk, claims[play.right].pk
        true_claim, false_claim = (right, left) if play.false_index == 0 else (left, right)
        before = skills.get(voter, Rating())
        if forfeit:
            after = forfeit_update(before, difficulty[true_claim], difficulty[false_claim], **options)
        else:
            after = round_update(before, difficulty[true_claim], difficulty[false_claim], play.correct, **options)
        skills[voter], difficulty[true_claim], difficulty[false_claim] = after
        history.append((before.rating, after[0].rating))
        shown.update((true_claim, false_claim))
    return skills, {pk: difficulty[pk] for pk in shown}, history


def stored() -> tuple[dict, dict]:
    skills = {row.player_id: Rating(row.rating, row.deviation, row.volatility) for row in PlayerRating.objects.all()}
    difficulty = {c.pk: Rating(c.rating, c.rating_deviation, c.rating_volatility) for c in Claim.objects.filter(rating__isnull=False)}
    return skills, difficulty


def assert_rated_as_one_by_one(
    expected: tuple[dict, dict, list], round_ids: list[int], plays: list[Play], players: list, *, prior: dict[int, int]
) -> None:
    """Ratings, each round's before/after and each voter's count of rated votes (``prior``:
    what each had before) as ``one_by_one`` says; exactly: the same arithmetic on the same
    numbers in the same order gives the same floats."""
    skills, difficulty, history = expected
    assert stored() == (skills, difficulty)
    rounds = {pk: (before, after) for pk, before, after in Round.objects.filter(pk__in=round_ids).values_list("pk", "rating_before", "rating_after")}
    assert [rounds[pk] for pk in round_ids] == history
    counts = Counter(players[play.player].pk for play in plays)
    assert dict(PlayerRating.objects.filter(player_id__in=counts).values_list("player_id", "votes")) == {
        pk: count + prior.get(pk, 0) for pk, count in counts.items()
    }


plays_strategy = st.lists(
    st.builds(
        lambda player, pair, false_index, correct: Play(player, pair[0], pair[1], false_index, correct),
        st.integers(0, 2),
        st.permutations(range(4)).map(lambda order: order[:2]),
        st.integers(0, 1),
        st.booleans(),
    ),
    min_size=1,
    max_size=12,
)


def test_batched_ratings_are_exactly_the_one_by_one_ratings_however_the_votes_are_batched() -> None:
    players, claims = world(3, 4)
    # One player with a history, one claim already rated: a batch goes on from stored ratings.
    PlayerRating.objects.create(player=players[0], rating=1620.0, deviation=80.0, volatility=0.059, votes=7)
    Claim.objects.filter(pk=claims[0].pk).update(rating=1400.0, rating_deviation=120.0)

    @hypothesis_settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(plays=plays_strategy, cuts=st.lists(st.integers(1, 12), max_size=4))
    def check(plays: list[Play], cuts: list[int]) -> None:
        with transaction.atomic():
            expected = one_by_one(plays, players, claims)
            ids = record(plays, players, claims)
            batches, start = [], 0
            for size in [*cuts, len(ids)]:
                batches.append(ids[start : start + size])
                start += size
            # Each batch handed over in any order: the votes are rated in the order they were cast.
            assert sum(game_ratings.ratings_rate_votes(vote_ids=list(reversed(batch))) for batch in batches) == len(ids)
            round_ids = [Vote.objects.get(pk=pk).round_id for pk in ids]
            assert_rated_as_one_by_one(expected, round_ids, plays, players, prior={players[0].pk: 7})
            assert not Vote.objects.filter(pk__in=ids, rated=False).exists()
            transaction.set_rollback(True)

    check()


def test_a_batch_of_forfeits_rates_each_as_a_wrong_vote_as_one_by_one() -> None:
    players, claims = world(3, 4)
    PlayerRating.objects.create(player=players[0], rating=1620.0, deviation=80.0, volatility=0.059, votes=7)
    plays = [Play(0, 0, 1, 1, False), Play(1, 0, 1, 0, False), Play(0, 2, 3, 1, False), Play(2, 1, 2, 0, False), Play(0, 1, 0, 1, False)]
    expected = one_by_one(plays, players, claims, forfeit=True)
    ids = record(plays, players, claims, forfeit=True)
    assert tasks.rate_forfeits(ids) == len(plays)
    assert_rated_as_one_by_one(expected, ids, plays, players, prior={players[0].pk: 7})
    assert set(Round.objects.filter(pk__in=ids).values_list("forfeit_rated", flat=True)) == {True}
    assert tasks.rate_forfeits(ids) == 0, "a redelivery rates nothing"
    assert_rated_as_one_by_one(expected, ids, plays, players, prior={players[0].pk: 7})


def room_question(voters: int, *, rated: bool = True) -> tuple[list, list[Claim], list[int]]:
    """A room's question: one pair, one vote per member (``rated``: members who voted before)."""
    players, claims = world(voters, 2)
    if rated:
        PlayerRating.objects.bulk_create([PlayerRating(player=player) for player in players])
    return players, claims, record([Play(n, 0, 1, 1, n % 3 != 0) for n in range(voters)], players, claims)


@pytest.mark.parametrize("voters", [1, 5, 20])
def test_a_room_question_rates_its_votes_in_the_queries_of_one_vote(voters: int) -> None:
    """Rating one vote took 12 queries, so a question of 20 members 240; a batch now takes 9
    however many votes it holds (a savepoint, the claims' locked read, the votes' locked
    read, the voters' locked read, one update each of players, claims, votes and rounds, the
    release), and two more when some voter has no rating row yet."""
    _, _, ids = room_question(voters)
    with CaptureQueriesContext(connection) as queries:
        assert tasks.rate_votes(ids) == voters
    assert len(queries) == 9, [q["sql"][:80] for q in queries.captured_queries]
    _, _, newcomers = room_question(voters, rated=False)
    with CaptureQueriesContext(connection) as queries:
        assert tasks.rate_votes(newcomers) == voters
    assert len(queries) == 11, [q["sql"][:80] for q in queries.captured_queries]


def test_a_redelivered_batch_rates_nothing_twice_and_a_wider_one_only_what_is_new() -> None:
    players, claims = world(3, 4)
    plays = [Play(0, 0, 1, 1, True), Play(1, 2, 3, 0, False), Play(2, 0, 3, 1, True), Play(0, 1, 2, 0, True)]
    PlayerRating.objects.create(player=players[0], votes=7)
    expected = one_by_one(plays, players, claims)
    ids = record(plays, players, claims)
    assert tasks.rate_votes(ids[:2]) == 2
    after_first = stored()
    with CaptureQueriesContext(connection) as queries:
        assert tasks.rate_votes(ids[:2]) == 0
    assert stored() == after_first
    assert len(queries) == 3, "a savepoint, the claims' read that finds no unrated vote, the release"
    assert tasks.rate_votes(ids) == 2, "the batch with the two new votes rates only them"
    assert game_ratings.ratings_rate_vote(vote_id=ids[0]) is False
    assert tasks.rate_vote(ids[3]) is False
    round_ids = [Vote.objects.get(pk=pk).round_id for pk in ids]
    assert_rated_as_one_by_one(expected, round_ids, plays, players, prior={players[0].pk: 7})


def test_the_sweep_takes_its_age_from_the_server_clock(fake_clock) -> None:
    """A vote whose task was lost is swept once the server clock is PENDING_AFTER_SECONDS past
    it: the tests' clock, not the wall clock."""
    players, claims = world(1, 2)
    ids = record([Play(0, 0, 1, 1, True)], players, claims)
    assert game_ratings.ratings_rate_pending() == 0, "too fresh: its task may still come"
    fake_clock.advance(game_ratings.PENDING_AFTER_SECONDS + 1)
    assert game_ratings.ratings_rate_pending() == 1
    assert Vote.objects.get(pk=ids[0]).rated


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("postgresql_only")
def test_two_workers_racing_one_batch_rate_each_vote_once() -> None:
    voters = 12
    players, claims = world(voters, 4)
    PlayerRating.objects.bulk_create([PlayerRating(player=player) for player in players[: voters // 2]])  # half are newcomers
    plays = [Play(n, n % 2, 2 + n % 2, n % 2, n % 3 != 0) for n in range(voters)]
    expected = one_by_one(plays, players, claims)
    ids = record(plays, players, claims)
    results = race_results(2, lambda: tasks.rate_votes(ids))
    assert sorted(results) == [0, voters], "one worker rates the batch, the other finds it rated"
    round_ids = [Vote.objects.get(pk=pk).round_id for pk in ids]
    assert_rated_as_one_by_one(expected, round_ids, plays, players, prior={})


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("postgresql_only")
def test_overlapping_batches_racing_rate_each_vote_once() -> None:
    """Two runs with overlapping votes of the same players (a redelivery racing the sweep): each
    vote once, every count right, in one of the orders the two runs' locks allow."""
    voters = 8
    players, claims = world(voters, 4)
    plays = [Play(n % 4, n % 2, 2 + n % 2, 1, True) for n in range(voters)]
    ids = record(plays, players, claims)
    batches = iter([ids[:6], ids[2:]])
    results = race_results(2, lambda: tasks.rate_votes(next(batches)))
    assert sum(results) == voters
    assert not Vote.objects.filter(rated=False).exists()
    assert sorted(PlayerRating.objects.values_list("votes", flat=True)) == [2, 2, 2, 2]
    assert Round.objects.filter(rating_after__isnull=False).count() == voters
