"""The active version answers settled rounds and answered checks beside the players, and is
rated on the players' scale."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from foolgame.checks.models import Check
from foolgame.claims.models import Claim
from foolgame.core import hooks
from foolgame.verifier import services
from foolgame.verifier.models import MachineAnswer
from foolgame.voting.models import Round, Vote
from tests.factories import UserFactory
from tests.verifier.conftest import learnable_claims

pytestmark = pytest.mark.django_db


def _round(left: Claim, right: Claim, *, state: str = Round.State.VOTED, settled: bool = True) -> Round:
    now = timezone.now()
    round_ = Round.objects.create(
        player=UserFactory(), left_claim=left, right_claim=right, state=state, started_at=now - timedelta(seconds=60),
        deadline=now + timedelta(seconds=120), false_claim_index=0 if left.label == Claim.Label.REFUTES else 1,
    )
    if state == Round.State.VOTED:
        Vote.objects.create(round=round_, false_claim_index=round_.false_claim_index, correct=True, points=60, remaining=60.0, created=now, settled=settled)
    return round_


def test_the_model_answers_settled_rounds_only_and_once() -> None:
    claims = learnable_claims(pages=8)
    services.verifier_train_now()
    supports = [c for c in claims if c.label == Claim.Label.SUPPORTS]
    refutes = [c for c in claims if c.label == Claim.Label.REFUTES]
    settled = [_round(supports[i], refutes[i]) for i in range(6)] + [_round(refutes[6], supports[6])]
    open_round = _round(supports[7], refutes[7], state=Round.State.PLAYING)
    unsettled = _round(supports[8], refutes[8], settled=False)  # a room's vote, its answer not out yet
    assert services.machine_answers_write() == 7
    answered = set(MachineAnswer.objects.values_list("round_id", flat=True))
    assert answered == {r.pk for r in settled}
    assert open_round.pk not in answered and unsettled.pk not in answered
    # The rule is learnable, so the model finds the false claim, on either side.
    assert MachineAnswer.objects.filter(correct=True).count() >= 6
    assert services.machine_answers_write() == 0


def test_an_answered_check_is_answered_by_the_model_after_the_commit(django_capture_on_commit_callbacks) -> None:
    claims = learnable_claims(pages=8)
    services.verifier_train_now()
    now = timezone.now()
    check = Check.objects.create(player=UserFactory(), claim=claims[0], dealt_at=now, expires_at=now + timedelta(seconds=45), answered_at=now, label="SUPPORTS")
    with django_capture_on_commit_callbacks(execute=True):
        hooks.check_answered.send(check_id=check.pk, claim_id=check.claim_id)
    answer = MachineAnswer.objects.get(fact_check=check)
    assert answer.answer in ("SUPPORTS", "REFUTES") and answer.correct == (answer.answer == claims[0].label)


def test_versions_are_rated_on_the_players_scale_and_shown_on_the_skill_board(client: Client) -> None:
    claims = learnable_claims(pages=8)
    version = services.verifier_train_now()
    supports = [c for c in claims if c.label == Claim.Label.SUPPORTS]
    refutes = [c for c in claims if c.label == Claim.Label.REFUTES]
    for i in range(10):
        _round(supports[i], refutes[i])
    services.machine_answers_write()
    assert services.versions_rate() == 1
    version.refresh_from_db()
    assert version.answers == 10 and version.rating > 1500  # right far more often than a coin against average pairs
    page = client.get("/leaderboard/?kind=skill").content.decode()
    assert "Models" in page and f"v{version.number}" in page


def test_fixed_item_skill_rises_with_wins_and_its_error_shrinks_with_games() -> None:
    from scoring.ratings import fit_fixed_skill

    even = fit_fixed_skill([(0.0, True), (0.0, False)] * 5)
    strong = fit_fixed_skill([(0.0, True)] * 9 + [(0.0, False)])
    assert abs(even.value) < 1e-6 and strong.value > 0.5
    assert fit_fixed_skill([(0.0, True), (0.0, False)] * 50).se < even.se


def test_the_games_own_settled_votes_confirm_a_claims_label(settings) -> None:
    """The counting rule alone (who counts as independent: tests/verifier/test_independence.py)."""
    settings.FM2_VERIFIER = {**settings.FM2_VERIFIER, "INDEPENDENT_MIN_VOTES": 1, "INDEPENDENT_MAX_AUTHOR_SHARE": 1.0}
    claims = learnable_claims(pages=2, imported=False)  # game claims: nobody confirmed them yet
    game_claim = claims[0]
    assert game_claim.pk not in set(services.verified_claims().values_list("pk", flat=True))
    partners = [c for c in claims[1:] if c.label != game_claim.label]
    for partner, correct in zip(partners, [True, True, True, False]):
        _round(game_claim, partner)
        Vote.objects.filter(round__left_claim=game_claim, round__right_claim=partner).update(correct=correct)
    assert game_claim.pk not in services.settled_by_game_votes()  # 4 votes: under GOLD_MIN_VOTES (5)
    _round(game_claim, partners[0])
    assert game_claim.pk in services.settled_by_game_votes()  # 4 of 5 right: 0.8
    assert game_claim.pk in set(services.verified_claims().values_list("pk", flat=True))
    unsettled = _round(game_claim, partners[1], settled=False)
    Vote.objects.filter(round=unsettled).update(correct=False)  # a room's vote, answer not out: not counted
    assert game_claim.pk in services.settled_by_game_votes()
    Vote.objects.filter(round__left_claim=game_claim, settled=True).exclude(round=unsettled).order_by("pk").first()
    _round(game_claim, partners[2])
    Vote.objects.filter(round__left_claim=game_claim, round__right_claim=partners[2]).update(correct=False)
    assert game_claim.pk not in services.settled_by_game_votes()  # 4 of 6: under 0.8
