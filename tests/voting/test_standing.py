"""A round's result tells the player where they stand: the claim they picked, how the round
moved their skill rating (provided by the server once the batched rating task ran) and their
current streak of right votes."""

from __future__ import annotations

import pytest
from django.test import TestCase

from foolgame.players.models import PlayerRating
from foolgame.voting import services
from foolgame.voting.models import Round
from foolgame.voting.selectors import player_streak
from tests.factories import PageFactory, UserFactory
from tests.voting.conftest import make_claim

pytestmark = pytest.mark.django_db


def pairs(n: int) -> None:
    tina, fred = UserFactory(username="tina"), UserFactory(username="fred")
    for i in range(n):
        page = PageFactory(title=f"Standing page {i}")
        make_claim(page, label="SUPPORTS", author=tina)
        make_claim(page, label="REFUTES", author=fred)


def play(player, outcome: str, fake_clock) -> Round:
    """Deal and end a round: ``right``, ``wrong``, ``timeout``, ``forfeit`` (started),
    ``unstarted`` (given up before its start) or ``report``; commit callbacks run."""
    round_ = services.round_create(player=player)
    if outcome != "unstarted":
        services.round_start(round_id=round_.pk, player=player)
    with TestCase.captureOnCommitCallbacks(execute=True):
        if outcome in ("right", "wrong"):
            guess = round_.false_index if outcome == "right" else 1 - round_.false_index
            services.vote_cast(round_id=round_.pk, player=player, false_claim=guess)
        elif outcome == "timeout":
            fake_clock.advance(181)
            services.round_expire(round_id=round_.pk)
        elif outcome in ("forfeit", "unstarted"):
            services.round_forfeit(round_id=round_.pk, player=player)
        elif outcome == "report":
            services.round_report(round_id=round_.pk, player=player, claim=0, reason="spam")
    fake_clock.advance(1)
    return round_


def test_the_vote_answer_says_which_claim_was_picked_and_that_the_rating_is_on_its_way(fake_clock) -> None:
    pairs(1)
    vera = UserFactory(username="vera")
    round_ = services.round_create(player=vera)
    services.round_start(round_id=round_.pk, player=vera)
    with TestCase.captureOnCommitCallbacks(execute=False) as callbacks:
        result = services.vote_cast(round_id=round_.pk, player=vera, false_claim=1 - round_.false_index)
    assert result["picked"] == 1 - round_.false_index and result["false_claim"] == round_.false_index
    assert result["correct"] is False
    # Rated by a task after the commit: not yet in the vote's own answer.
    assert result["rating"] is None and result["rating_pending"] is True
    assert result["streak"] == 0
    for callback in callbacks:
        callback()
    state = services.round_get_state(round_id=round_.pk, player=vera)
    skill = PlayerRating.objects.get(player=vera)
    rating = state["result"]["rating"]
    assert rating == {"before": 1500, "after": round(skill.rating), "change": round(skill.rating) - 1500}
    assert rating["change"] < 0 and state["result"]["rating_pending"] is False
    assert state["result"]["picked"] == 1 - round_.false_index


def test_a_right_vote_raises_the_rating_and_the_next_one_starts_from_it(fake_clock) -> None:
    pairs(2)
    vera = UserFactory(username="vera")
    first, second = play(vera, "right", fake_clock), play(vera, "right", fake_clock)
    one = services.round_get_state(round_id=first.pk, player=vera)["result"]["rating"]
    two = services.round_get_state(round_id=second.pk, player=vera)["result"]["rating"]
    assert one["before"] == 1500 and one["change"] > 0
    assert two["before"] == one["after"] and two["after"] == round(PlayerRating.objects.get(player=vera).rating)


@pytest.mark.parametrize(
    ("outcomes", "streak"),
    [
        ([], 0),
        (["right"], 1),
        (["right", "right", "right"], 3),
        (["right", "wrong", "right", "right"], 2),
        (["right", "right", "timeout"], 0),
        (["right", "right", "forfeit"], 0),
        (["right", "timeout", "right"], 1),
        # Neither a report nor a round given up before it started is an answer: the run goes on.
        (["right", "report", "unstarted", "right"], 2),
    ],
)
def test_the_streak_counts_the_latest_right_votes_in_a_row(fake_clock, outcomes: list[str], streak: int) -> None:
    pairs(len(outcomes))
    vera = UserFactory(username="vera")
    for outcome in outcomes:
        play(vera, outcome, fake_clock)
    assert player_streak(player_id=vera.pk) == streak


def test_the_streak_in_the_result_includes_the_vote_itself(fake_clock) -> None:
    pairs(3)
    vera = UserFactory(username="vera")
    play(vera, "right", fake_clock)
    play(vera, "right", fake_clock)
    round_ = services.round_create(player=vera)
    services.round_start(round_id=round_.pk, player=vera)
    result = services.vote_cast(round_id=round_.pk, player=vera, false_claim=round_.false_index)
    assert result["streak"] == 3


def test_a_timeout_shows_no_rating_change_and_ends_the_streak(fake_clock) -> None:
    pairs(2)
    vera = UserFactory(username="vera")
    play(vera, "right", fake_clock)
    round_ = play(vera, "timeout", fake_clock)
    result = services.round_get_state(round_id=round_.pk, player=vera)["result"]
    assert result["rating"] is None and result["rating_pending"] is False and result["streak"] == 0
    assert "picked" not in result and "correct" not in result


def test_a_round_given_up_shows_its_rating_change_with_its_answer_only(fake_clock) -> None:
    pairs(1)
    vera = UserFactory(username="vera")
    round_ = play(vera, "forfeit", fake_clock)
    assert "result" not in services.round_get_state(round_id=round_.pk, player=vera)
    fake_clock.advance(180)
    result = services.round_get_state(round_id=round_.pk, player=vera)["result"]
    assert result["rating"]["before"] == 1500 and result["rating"]["change"] < 0
    assert result["rating_pending"] is False and result["streak"] == 0


def test_the_streak_query_is_compiled_once_and_then_only_run(fake_clock, monkeypatch) -> None:
    """Every vote's result reads the streak: its SQL is compiled at the first read only, and
    the later reads give the same answers as Django's own query."""
    from django.db.models.sql.compiler import SQLCompiler

    pairs(4)
    vera = UserFactory(username="vera")
    play(vera, "right", fake_clock)
    assert player_streak(player_id=vera.pk) == 1
    compiles = []
    as_sql = SQLCompiler.as_sql
    monkeypatch.setattr(SQLCompiler, "as_sql", lambda self, *a, **k: compiles.append(self) or as_sql(self, *a, **k))
    play(vera, "right", fake_clock)
    compiles.clear()
    assert player_streak(player_id=vera.pk) == 2
    play(vera, "wrong", fake_clock)
    play(vera, "right", fake_clock)
    newcomer = UserFactory(username="newcomer")
    compiles.clear()
    assert player_streak(player_id=vera.pk) == 1
    assert player_streak(player_id=newcomer.pk) == 0
    assert compiles == []
