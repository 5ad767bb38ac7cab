"""Ratings in the game (issue 14): each vote rates its voter and its two claims in the vote's
transaction, a refit rebuilds them from the vote table, the dealer looks for claims near a
rated player's level, and the skill leaderboard ranks players by them."""

from __future__ import annotations

import re
import itertools
import random
from collections import Counter
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from foolgame.core.errors import ServiceError
from foolgame.claims.models import Claim
from foolgame.players.models import PlayerRating
from foolgame.voting import ratings as game_ratings
from foolgame.voting import services, tasks
from foolgame.voting import dealing
from foolgame.voting.models import Round, SeenClaim, Vote
from scoring.ratings import Rating, RoundVote, fit_rasch, glicko2_replay, pair_target, round_update
from tests.concurrency import race
from tests.factories import ClaimFactory, PageFactory, UserFactory

pytestmark = pytest.mark.django_db


def claim_rating(claim: Claim) -> Rating:
    claim.refresh_from_db()
    return Rating(claim.rating, claim.rating_deviation, claim.rating_volatility)


def player_rating(player) -> Rating:
    row = PlayerRating.objects.get(player=player)
    return Rating(row.rating, row.deviation, row.volatility)


def pairs(n: int, author, *, votes: int = 0) -> list[tuple[Claim, Claim]]:
    out = []
    for _ in range(n):
        page = PageFactory()
        out.append(
            tuple(ClaimFactory(page=page, label=label, author=author, release_total_votes=votes) for label in ("SUPPORTS", "REFUTES"))
        )
    return out


def play(player, *, correct: bool, category: str | None = None) -> Round:
    """Deal, start and vote; the vote's commit callbacks run (its ``rate_vote`` task)."""
    round_ = services.round_create(player=player, category=category)
    services.round_start(round_id=round_.pk, player=player)
    guess = round_.false_index if correct else 1 - round_.false_index
    with TestCase.captureOnCommitCallbacks(execute=True):
        services.vote_cast(round_id=round_.pk, player=player, false_claim=guess)
    return round_


def sides(round_: Round) -> tuple[Claim, Claim]:
    """(true claim, false claim) of a round."""
    return round_.claims[1 - round_.false_index], round_.claims[round_.false_index]


# --- per vote -------------------------------------------------------------------------------


@pytest.mark.parametrize("correct", [True, False])
def test_a_vote_rates_its_voter_and_both_claims_as_the_update_rule_says(game, correct: bool) -> None:
    round_ = play(game.voter, correct=correct)
    expected = round_update(Rating(), Rating(), Rating(), correct)
    assert player_rating(game.voter) == pytest.approx(expected[0])
    assert claim_rating(game.true_claim) == pytest.approx(expected[1])
    assert claim_rating(game.false_claim) == pytest.approx(expected[2])
    # A correct vote makes the voter look stronger and the claims easier; a wrong one the reverse.
    assert (player_rating(game.voter).rating > 1500) is correct
    assert (claim_rating(game.true_claim).rating < 1500) is correct
    assert PlayerRating.objects.get(player=game.voter).votes == 1
    assert Vote.objects.get(round=round_).correct is correct


def test_each_vote_goes_on_from_the_ratings_the_last_one_left(fake_clock) -> None:
    author = UserFactory()
    pairs(3, author)
    first, second = UserFactory(), UserFactory()
    rounds = [play(first, correct=True), play(second, correct=False), play(first, correct=False)]
    votes = [
        RoundVote(r.player_id, *(c.pk for c in sides(r)), Vote.objects.get(round=r).correct) for r in rounds
    ]
    replay = glicko2_replay(votes)
    for player in (first, second):
        assert player_rating(player) == pytest.approx(replay.players[player.pk])
    for claim in Claim.objects.all():
        assert claim_rating(claim) == pytest.approx(replay.claims[claim.pk]) if claim.pk in replay.claims else claim.rating is None


def test_the_vote_is_rated_after_its_commit_and_only_once(game) -> None:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    with TestCase.captureOnCommitCallbacks(execute=False) as callbacks:
        services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    vote = Vote.objects.get(round=round_)
    assert not vote.rated and not PlayerRating.objects.exists(), "the vote's own transaction rates nobody"
    for callback in callbacks:
        callback()
    vote.refresh_from_db()
    assert vote.rated and PlayerRating.objects.get(player=game.voter).votes == 1
    after = (player_rating(game.voter), claim_rating(game.true_claim), claim_rating(game.false_claim))
    # A redelivered task, the sweep and a second send change nothing.
    assert tasks.rate_vote(vote.pk) is False
    assert game_ratings.ratings_rate_pending() == 0
    assert (player_rating(game.voter), claim_rating(game.true_claim), claim_rating(game.false_claim)) == after
    assert PlayerRating.objects.get(player=game.voter).votes == 1


def test_the_sweep_rates_votes_whose_task_was_lost_in_vote_order(fake_clock) -> None:
    author = UserFactory()
    pairs(3, author)
    voter = UserFactory()
    rounds = []
    for _ in range(3):
        round_ = services.round_create(player=voter)
        services.round_start(round_id=round_.pk, player=voter)
        services.vote_cast(round_id=round_.pk, player=voter, false_claim=round_.false_index)  # no commit callbacks: tasks lost
        rounds.append(round_)
    assert game_ratings.ratings_rate_pending() == 0, "too fresh: their tasks may still come"
    fake_clock.advance(game_ratings.PENDING_AFTER_SECONDS + 1)  # the server's clock, which the sweep reads
    assert tasks.rate_pending_votes() == 3
    votes = [RoundVote(voter.pk, *(c.pk for c in sides(r)), True) for r in rounds]
    assert player_rating(voter) == pytest.approx(glicko2_replay(votes).players[voter.pk])
    assert not Vote.objects.filter(rated=False).exists()


def test_a_refit_counts_a_vote_whose_task_comes_later_once(game) -> None:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    with TestCase.captureOnCommitCallbacks(execute=False) as callbacks:
        services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    game_ratings.ratings_refit(method="glicko2")
    refitted = player_rating(game.voter)
    for callback in callbacks:
        callback()  # the task arrives after the refit
    assert player_rating(game.voter) == refitted
    assert PlayerRating.objects.get(player=game.voter).votes == 1


def test_rounds_that_end_without_a_vote_rate_nobody(game, fake_clock) -> None:
    author = UserFactory()
    pairs(3, author)
    timed_out, reported, forfeited = (services.round_create(player=game.voter) for _ in range(3))
    for round_ in (timed_out, reported):
        services.round_start(round_id=round_.pk, player=game.voter)
    services.round_report(round_id=reported.pk, player=game.voter, claim=0, reason="spam")
    services.round_forfeit(round_id=forfeited.pk, player=game.voter)
    fake_clock.advance(181)
    with pytest.raises(ServiceError) as refused:
        services.vote_cast(round_id=timed_out.pk, player=game.voter, false_claim=0)
    assert refused.value.code == "round_expired"
    assert not PlayerRating.objects.exists()
    assert not Claim.objects.filter(rating__isnull=False).exists()


def test_a_refused_vote_changes_no_rating(game) -> None:
    round_ = play(game.voter, correct=True)
    before = (player_rating(game.voter), claim_rating(game.true_claim), claim_rating(game.false_claim))
    with pytest.raises(ServiceError) as refused:
        services.vote_cast(round_id=round_.pk, player=game.voter, false_claim=round_.false_index)
    assert refused.value.code == "round_over"
    assert (player_rating(game.voter), claim_rating(game.true_claim), claim_rating(game.false_claim)) == before
    assert PlayerRating.objects.get(player=game.voter).votes == 1


# --- the batch refit ------------------------------------------------------------------------


def played_game(rng: random.Random, *, players: int = 6, rounds_each: int = 4) -> list[RoundVote]:
    author = UserFactory()
    pairs(players * rounds_each, author)
    voters = [UserFactory() for _ in range(players)]
    for _ in range(rounds_each):
        for voter in voters:
            play(voter, correct=rng.random() < 0.7)
    return [
        RoundVote(v.round.player_id, *(c.pk for c in sides(v.round)), v.correct)
        for v in Vote.objects.select_related("round").order_by("created", "id")
    ]


def ratings_now() -> tuple[dict, dict]:
    return (
        dict(PlayerRating.objects.values_list("player_id", "rating")),
        dict(Claim.objects.values_list("pk", "rating")),
    )


def test_a_glicko2_refit_rebuilds_exactly_what_the_votes_wrote() -> None:
    played_game(random.Random(1))
    live = ratings_now()
    PlayerRating.objects.update(rating=900.0, deviation=20.0, votes=0)
    Claim.objects.update(rating=2400.0)
    summary = game_ratings.ratings_refit(method="glicko2")
    assert summary.votes == 24 and summary.players == 6
    rebuilt = ratings_now()
    assert rebuilt[0] == pytest.approx(live[0])
    assert {k: v for k, v in rebuilt[1].items() if v is not None} == pytest.approx({k: v for k, v in live[1].items() if v is not None})
    assert set(PlayerRating.objects.values_list("votes", flat=True)) == {4}


def test_a_rasch_refit_stores_the_fit_and_unrates_what_has_no_vote() -> None:
    votes = played_game(random.Random(2))
    unvoted = ClaimFactory(author=UserFactory(), rating=1800.0, rating_deviation=90.0)
    ghost = PlayerRating.objects.create(player=UserFactory(), rating=2000.0, votes=3)
    game_ratings.ratings_refit(method="rasch")
    fitted = fit_rasch(votes).as_glicko2()
    for player_id, rating in fitted.players.items():
        assert player_rating(player_id) == pytest.approx(rating)
    for claim_id, rating in fitted.claims.items():
        assert claim_rating(Claim.objects.get(pk=claim_id)) == pytest.approx(rating)
    unvoted.refresh_from_db()
    assert unvoted.rating is None and unvoted.rating_deviation == 350.0
    assert not PlayerRating.objects.filter(pk=ghost.pk).exists()


def test_the_refit_command_reports_progress_and_a_second_run_writes_the_same(capsys) -> None:
    played_game(random.Random(3))
    call_command("refit_ratings")
    first = ratings_now()
    out = capsys.readouterr().out
    assert "reading votes 24/24" in out and "writing" in out and "rasch: 24 votes" in out
    call_command("refit_ratings")
    assert ratings_now() == first
    call_command("refit_ratings", "--method", "glicko2")
    assert "glicko2: 24 votes" in capsys.readouterr().out


def test_the_refit_command_refuses_an_unknown_method() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError):
        call_command("refit_ratings", "--method", "elo")


# --- the dealer near the player's level ------------------------------------------------------


def rated_pairs(author, ratings: list[float]) -> list[tuple[Claim, Claim]]:
    """A true and a false claim per page, both rated ``rating``, and well voted (so the
    least-voted dealer would never pick them before the unvoted ones made beside them)."""
    out = []
    for rating in ratings:
        page = PageFactory()
        out.append(
            tuple(
                ClaimFactory(page=page, label=label, author=author, rating=rating, rating_deviation=80.0, release_total_votes=50)
                for label in ("SUPPORTS", "REFUTES")
            )
        )
    return out


def strong_player(rating: float) -> object:
    player = UserFactory()
    PlayerRating.objects.create(player=player, rating=rating, deviation=60.0, votes=40)
    return player


def test_a_rated_player_is_dealt_pairs_near_their_level_the_nearest_likeliest(settings) -> None:
    settings.FM2_RATINGS = {**settings.FM2_RATINGS, "DEAL_LEVEL_SHARE": 1.0, "DEAL_SOLVE_CHANCE": 0.6}
    random.seed(271)
    author = UserFactory()
    levels = list(range(1000, 2100, 25))
    by_claim = {c.pk: level for level, pair in zip(levels, rated_pairs(author, [float(x) for x in levels])) for c in pair}
    pairs(20, author)  # unvoted claims: the least-voted dealer's choice
    target = pair_target(Rating(1900.0, 60.0), 0.6)
    weak_target = pair_target(Rating(1300.0, 60.0), 0.6)
    assert weak_target < target - 250  # a weaker player is sent easier claims

    def dealt_levels(rating: float) -> list[int]:
        found = []
        for _ in range(40):  # a fresh player each time: the window is the same for all
            round_ = services.round_create(player=strong_player(rating))
            left, right = by_claim[round_.left_claim_id], by_claim[round_.right_claim_id]
            assert left == right  # each level's pair is one page's
            found.append(left)
        return found

    for aim, rating in ((target, 1900.0), (weak_target, 1300.0)):
        found = dealt_levels(rating)
        window = sorted(levels, key=lambda x: abs(x - aim))[: dealing.DEAL_WINDOW // 2]  # 32 claims: 16 pages
        assert set(found) <= set(window)
        assert len(set(found)) >= 5  # drawn from the window, not one pair for everyone
        # The nearer the likelier: uniform over the window would put 9 of 16 levels (56%)
        # within 100 points; halving every 50 points, about 84%.
        assert sum(abs(x - aim) <= 100 for x in found) / len(found) > 0.7


def test_consecutive_rated_players_of_one_rating_are_not_dealt_the_same_sequence(settings) -> None:
    """Issue 36: the level deal read its window nearest first, so every player of one rating
    was dealt the same claims in the same order, and one account could give them up for the
    next to vote on knowing the answers. Now each draws from the window, the nearer likelier."""
    settings.FM2_RATINGS = {**settings.FM2_RATINGS, "DEAL_LEVEL_SHARE": 1.0}
    random.seed(36)
    author = UserFactory()
    target = pair_target(Rating(1600.0, 60.0), settings.FM2_RATINGS["DEAL_SOLVE_CHANCE"])
    rated = {c.pk for pair in rated_pairs(author, [target + offset for offset in range(-20, 20, 2)]) for c in pair}  # 40 claims
    fresh = {c.pk for pair in pairs(10, author) for c in pair}
    sequences = []
    for _ in range(4):
        player = strong_player(1600.0)
        sequence = []
        for _ in range(5):
            round_ = services.round_create(player=player)
            services.round_start(round_id=round_.pk, player=player)
            services.vote_cast(round_id=round_.pk, player=player, false_claim=0)
            sequence.append((round_.left_claim_id, round_.right_claim_id))
        sequences.append(sequence)
    assert all({claim for pair in sequence for claim in pair} <= rated for sequence in sequences)  # level deals, none fresh
    assert not {claim for sequence in sequences for pair in sequence for claim in pair} & fresh
    for before, after in zip(sequences, sequences[1:]):
        assert before != after, "two consecutive players of one rating were dealt the same claims in the same order"
        assert before[0] != after[0]


def test_the_partner_makes_the_pair_add_up_to_the_target(settings) -> None:
    settings.FM2_RATINGS = {**settings.FM2_RATINGS, "DEAL_LEVEL_SHARE": 1.0}
    author, page = UserFactory(), PageFactory()
    player = strong_player(1700.0)
    target = pair_target(Rating(1700.0, 60.0), settings.FM2_RATINGS["DEAL_SOLVE_CHANCE"])
    anchor = ClaimFactory(page=page, label="SUPPORTS", author=author, rating=target, release_total_votes=9)
    right = ClaimFactory(page=page, label="REFUTES", author=author, rating=target + 10, release_total_votes=9)
    for offset in (-400, 300, 600):
        ClaimFactory(page=page, label="REFUTES", author=author, rating=target + offset, release_total_votes=0)
    round_ = services.round_create(player=player)
    assert {round_.left_claim_id, round_.right_claim_id} == {anchor.pk, right.pk}


def test_the_mix_keeps_dealing_least_voted_claims(settings) -> None:
    author = UserFactory()
    rated_pairs(author, [1500.0 + 10 * i for i in range(30)])
    fresh = {c.pk for pair in pairs(30, author) for c in pair}
    settings.FM2_RATINGS = {**settings.FM2_RATINGS, "DEAL_LEVEL_SHARE": 0.0}
    assert {services.round_create(player=strong_player(1600.0)).left_claim_id for _ in range(5)} <= fresh
    settings.FM2_RATINGS = {**settings.FM2_RATINGS, "DEAL_LEVEL_SHARE": 0.5}
    random.seed(7)
    kinds = Counter(services.round_create(player=strong_player(1600.0)).left_claim_id in fresh for _ in range(40))
    assert kinds[True] >= 10 and kinds[False] >= 10


def test_a_newcomer_gets_the_least_voted_deal_whatever_the_share(settings) -> None:
    settings.FM2_RATINGS = {**settings.FM2_RATINGS, "DEAL_LEVEL_SHARE": 1.0}
    author = UserFactory()
    rated_pairs(author, [1500.0] * 5)
    fresh = {c.pk for pair in pairs(3, author) for c in pair}
    newcomer = UserFactory()
    PlayerRating.objects.create(player=newcomer, rating=1800.0, votes=settings.FM2_RATINGS["DEAL_LEVEL_MIN_VOTES"] - 1)
    round_ = services.round_create(player=newcomer)
    assert {round_.left_claim_id, round_.right_claim_id} <= fresh


def test_a_level_deal_keeps_the_rules_and_falls_back_when_nothing_is_near(settings) -> None:
    settings.FM2_RATINGS = {**settings.FM2_RATINGS, "DEAL_LEVEL_SHARE": 1.0}
    author = UserFactory()
    player = strong_player(1600.0)
    mine = rated_pairs(player, [1500.0])[0]  # the player's own: never dealt to them
    seen = rated_pairs(author, [1510.0])[0]  # already dealt to them
    held = Round.objects.create(player=player, left_claim=seen[0], right_claim=seen[1], false_claim_index=1)
    SeenClaim.objects.bulk_create([SeenClaim(player=player, claim=c, round=held) for c in seen])
    removed = rated_pairs(author, [1505.0])[0]
    Claim.objects.filter(pk__in=[c.pk for c in removed]).update(status=Claim.Status.REMOVED)
    lone = ClaimFactory(page=PageFactory(category=None), label="SUPPORTS", author=author, rating=1500.0)  # no partner anywhere
    fresh = {c.pk for pair in pairs(2, author) for c in pair}
    round_ = services.round_create(player=player)
    dealt = {round_.left_claim_id, round_.right_claim_id}
    assert dealt <= fresh
    assert not dealt & {c.pk for c in (*mine, *seen, *removed, lone)}
    assert {c.label for c in round_.claims} == {"SUPPORTS", "REFUTES"}


def test_a_level_deal_reads_a_bounded_number_of_rows(settings) -> None:
    settings.FM2_RATINGS = {**settings.FM2_RATINGS, "DEAL_LEVEL_SHARE": 1.0}
    author = UserFactory()

    def deal_queries() -> list[str]:
        with CaptureQueriesContext(connection) as queries:
            services.round_create(player=strong_player(1650.0))
        return [q["sql"] for q in queries.captured_queries]

    rated_pairs(author, [1000.0 + 3 * i for i in range(dealing.DEAL_WINDOW * 2)])
    small = deal_queries()
    rated_pairs(author, [1000.0 + 1 * i for i in range(dealing.DEAL_WINDOW * 6)])
    large = deal_queries()
    assert len(large) == len(small)
    reads = [q for q in large if q.startswith("SELECT") and ('"claims_claim"."rating" >=' in q or '"claims_claim"."rating" <' in q)]
    assert len(reads) == 2 and all(" LIMIT " in q for q in reads)


# --- concurrency (PostgreSQL) ---------------------------------------------------------------


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("postgresql_only")
def test_concurrent_votes_of_one_player_each_count_once_in_their_rating() -> None:
    author, voter = UserFactory(), UserFactory()
    pairs(3, author)
    rounds = [services.round_create(player=voter) for _ in range(3)]
    for round_ in rounds:
        services.round_start(round_id=round_.pk, player=voter)
    queue = list(rounds)

    def vote() -> object:
        round_ = queue.pop()
        return services.vote_cast(round_id=round_.pk, player=voter, false_claim=round_.false_index)

    assert race(3, vote) == Counter({"ok": 3})
    assert PlayerRating.objects.get(player=voter).votes == 3
    votes = [RoundVote(voter.pk, *(c.pk for c in sides(r)), True) for r in rounds]
    # The three updates ran one after the other, in some order: one of the orders' replays.
    outcomes = [glicko2_replay(order).players[voter.pk] for order in itertools.permutations(votes)]
    assert any(player_rating(voter) == pytest.approx(o) for o in outcomes)


# --- where players see it -------------------------------------------------------------------


def test_the_skill_leaderboard_ranks_by_the_conservative_rating_among_players_with_enough_votes(settings) -> None:
    from django.test import Client

    settings.FM2_RATINGS = {**settings.FM2_RATINGS, "SKILL_MIN_VOTES": 10}
    for name, rating, deviation, votes in [
        ("steady", 1750.0, 50.0, 200),  # floor 1650
        ("lucky", 1900.0, 200.0, 12),  # floor 1500: higher rating, less sure
        ("twin", 1700.0, 25.0, 80),  # floor 1650: shares the rank
        ("newbie", 2300.0, 100.0, 9),  # too few votes
        ("fm2-release", 2500.0, 10.0, 500),  # a system player
    ]:
        PlayerRating.objects.create(player=UserFactory(username=name), rating=rating, deviation=deviation, votes=votes)
    board = Client().get("/api/leaderboard?kind=skill").json()
    assert board == [
        {"rank": 1, "username": "steady", "skill": 1650, "rating": 1750, "deviation": 50, "provisional": False, "votes": 200},
        {"rank": 1, "username": "twin", "skill": 1650, "rating": 1700, "deviation": 25, "provisional": False, "votes": 80},
        {"rank": 3, "username": "lucky", "skill": 1500, "rating": 1900, "deviation": 200, "provisional": True, "votes": 12},
    ]
    page = Client().get("/leaderboard/?kind=skill").content.decode()
    text = re.sub(r"<[^>]+>", "", page)
    assert "1750 ± 50" in text and "1900? ± 200" in text and "newbie" not in page and 'aria-current="page">Skill' in page
    assert "1650" not in text  # one number a player: the rating, not the conservative order beside it


def test_a_player_sees_their_skill_once_they_have_voted(game) -> None:
    from django.test import Client

    client = Client()
    client.force_login(game.voter)
    assert client.get("/api/me").json()["skill"] is None
    play(game.voter, correct=True)
    skill = client.get("/api/me").json()["skill"]
    row = PlayerRating.objects.get(player=game.voter)
    assert skill == {"skill": round(row.rating - 2 * row.deviation), "rating": round(row.rating), "deviation": round(row.deviation), "provisional": True, "votes": 1}
    assert skill["rating"] > 1500


# --- forfeits ---------------------------------------------------------------------------------


def forfeit_started(player, *, clues: int = 0) -> Round:
    """Deal, start, buy clues, give up; the forfeit's commit callbacks run (its rating task)."""
    round_ = services.round_create(player=player)
    services.round_start(round_id=round_.pk, player=player)
    for _ in range(clues):
        services.round_reveal_clue(round_id=round_.pk, player=player, claim_index=0)
    with TestCase.captureOnCommitCallbacks(execute=True):
        services.round_forfeit(round_id=round_.pk, player=player)
    return round_


def test_a_started_round_given_up_rates_as_a_wrong_vote_on_its_pair(game) -> None:
    round_ = forfeit_started(game.voter, clues=1)
    expected = round_update(Rating(), Rating(), Rating(), False)
    assert player_rating(game.voter) == pytest.approx(expected[0])
    assert player_rating(game.voter).rating < 1500
    assert claim_rating(game.true_claim) == pytest.approx(expected[1])
    assert claim_rating(game.false_claim) == pytest.approx(expected[2])
    assert PlayerRating.objects.get(player=game.voter).votes == 1
    round_.refresh_from_db()
    assert round_.forfeit_rated is True
    # A redelivered task and the sweep change nothing.
    assert tasks.rate_forfeits([round_.pk]) == 0
    assert game_ratings.ratings_rate_pending() == 0
    assert PlayerRating.objects.get(player=game.voter).votes == 1


def test_a_round_given_up_before_its_start_rates_nobody(game) -> None:
    round_ = services.round_create(player=game.voter)
    with TestCase.captureOnCommitCallbacks(execute=True):
        services.round_forfeit(round_id=round_.pk, player=game.voter)
    assert not PlayerRating.objects.exists() and not Claim.objects.filter(rating__isnull=False).exists()
    assert Round.objects.get(pk=round_.pk).forfeit_rated is None
    assert SeenClaim.objects.filter(player=game.voter, round=round_).count() == 2


def test_the_sweep_rates_a_forfeit_whose_task_was_lost(game) -> None:
    round_ = services.round_create(player=game.voter)
    services.round_start(round_id=round_.pk, player=game.voter)
    services.round_forfeit(round_id=round_.pk, player=game.voter)  # no commit callbacks: the task is lost
    assert not PlayerRating.objects.exists()
    assert game_ratings.ratings_rate_pending() == 0, "too fresh: its task may still come"
    Round.objects.filter(pk=round_.pk).update(ended_at=timezone.now() - timedelta(seconds=game_ratings.PENDING_AFTER_SECONDS + 1))
    assert tasks.rate_pending_votes() == 1
    assert player_rating(game.voter) == pytest.approx(round_update(Rating(), Rating(), Rating(), False)[0])


def test_a_refit_replays_votes_and_forfeits_in_the_order_they_happened(fake_clock) -> None:
    author = UserFactory()
    pairs(3, author)
    voter = UserFactory()
    first = play(voter, correct=True)
    fake_clock.advance(1)
    given_up = forfeit_started(voter)
    fake_clock.advance(1)
    last = play(voter, correct=True)
    live = player_rating(voter)
    replay = glicko2_replay(
        [RoundVote(voter.pk, *(c.pk for c in sides(first)), True), RoundVote(voter.pk, *(c.pk for c in sides(given_up)), False), RoundVote(voter.pk, *(c.pk for c in sides(last)), True)]
    )
    assert live == pytest.approx(replay.players[voter.pk])
    game_ratings.ratings_refit(method="glicko2")
    assert player_rating(voter) == pytest.approx(replay.players[voter.pk])
    assert PlayerRating.objects.get(player=voter).votes == 3
