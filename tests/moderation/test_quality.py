"""Live quality flags (votes, reports, review) and the fitted prior: foolgame/moderation/quality.py."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from foolgame.core.errors import ServiceError
from foolgame.claims.models import Claim
from foolgame.moderation import actions, quality
from foolgame.moderation.models import ClaimQuality, PriorFit
from foolgame.voting import services as voting
from foolgame.voting.selectors import claims_playable
from tests.factories import UserFactory
from tests.moderation.conftest import claim_pair, play

pytestmark = pytest.mark.django_db

FAST_RIGHT, FAST_WRONG, SLOW_RIGHT, CLUED_RIGHT = (True, 10, 0), (False, 10, 0), (True, 100, 0), (True, 10, 1)


def quality_row(claim: Claim) -> ClaimQuality:
    return ClaimQuality.objects.get(claim=claim)


@pytest.mark.parametrize(
    ("release", "game_votes", "score", "too_hard", "too_easy"),
    [
        ((0, 0), [], 0.8, False, False),  # no votes: the prior mean
        ((2, 7), [], 0.5, False, False),  # exactly on the threshold is not under it
        ((2, 8), [], 6 / 13, True, False),  # the release's counts alone can flag a claim
        ((2, 7), [FAST_WRONG], 6 / 13, True, False),  # release plus game votes
        ((0, 0), [FAST_RIGHT] * 3, 7 / 8, False, True),
        ((0, 0), [FAST_RIGHT] * 2, 6 / 7, False, False),  # too few votes to call it easy
        ((0, 0), [FAST_RIGHT, FAST_RIGHT, SLOW_RIGHT], 7 / 8, False, False),  # one slow vote clears it
        ((0, 0), [FAST_RIGHT, FAST_RIGHT, CLUED_RIGHT], 7 / 8, False, False),  # one clue clears it
        ((3, 4), [FAST_RIGHT] * 3, 10 / 12, False, False),  # a wrong release vote clears it
        ((4, 4), [FAST_RIGHT] * 3, 11 / 12, False, True),
    ],
)
def test_live_flags_follow_release_counts_and_game_votes(
    fake_clock, django_capture_on_commit_callbacks, release, game_votes, score, too_hard, too_easy
) -> None:
    true_claim, _ = claim_pair(true_counts=release)
    quality.quality_refresh(claim_ids=[true_claim.pk])
    for n, (correct, seconds, clues) in enumerate(game_votes):
        with django_capture_on_commit_callbacks(execute=True):
            play(UserFactory(username=f"voter{n}"), fake_clock, correct=correct, seconds=seconds, clues=clues)
    row = quality_row(true_claim)
    assert row.score == pytest.approx(score)
    assert (row.too_hard, row.too_easy) == (too_hard, too_easy)
    assert row.total_votes == release[1] + len(game_votes) and row.game_votes == len(game_votes)
    assert row.interval_low <= row.score <= row.interval_high
    assert row.out_of_play == too_hard, "too-hard claims leave play; too-easy ones stay"


def test_claim_crossing_the_threshold_after_a_vote_is_flagged_and_leaves_pairing(fake_clock, moderator, django_capture_on_commit_callbacks) -> None:
    true_claim, false_claim = claim_pair(true_counts=(2, 7))
    assert set(claims_playable()) == {true_claim, false_claim}
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        play(UserFactory(username="vera"), fake_clock, correct=False)
    assert callbacks, "the vote enqueues the refresh on commit"
    row = quality_row(true_claim)
    assert row.too_hard and row.out_of_play and row.score < 0.5
    assert true_claim not in claims_playable()
    with pytest.raises(ServiceError) as error:
        voting.round_create(player=UserFactory(username="walt"))
    assert error.value.code == "no_pair_available"
    actions.claim_moderate(moderator=moderator, claim_id=true_claim.pk, action="keep", reason="Tricky but correct: the gold says so.")
    assert true_claim in claims_playable()
    assert voting.round_create(player=UserFactory(username="walt")).left_claim_id in {true_claim.pk, false_claim.pk}


def test_refresh_is_idempotent(fake_clock) -> None:
    true_claim, _ = claim_pair(true_counts=(1, 6))
    play(UserFactory(username="vera"), fake_clock, correct=False)
    quality.quality_refresh(claim_ids=[true_claim.pk])
    first = ClaimQuality.objects.filter(claim=true_claim).values().get()
    quality.quality_refresh(claim_ids=[true_claim.pk, true_claim.pk])
    quality.quality_refresh_all(fit=False)
    assert ClaimQuality.objects.filter(claim=true_claim).values().get() == first, "a second delivery changes nothing"
    assert first["total_votes"] == 7 and first["correct_votes"] == 1


def report(player, clock, target: Claim, reason: str = "spam", note: str = "") -> None:
    round_ = voting.round_create(player=player)
    voting.round_start(round_id=round_.pk, player=player)
    voting.round_report(round_id=round_.pk, player=player, claim=0 if round_.left_claim_id == target.pk else 1, reason=reason, note=note)


def test_three_different_trusted_reporters_hide_a_claim_until_it_is_reviewed(
    fake_clock, moderator, django_capture_on_commit_callbacks, settings
) -> None:
    # Reporters with enough votes and an old enough account (here: any).
    settings.FM2 = {**settings.FM2, "REPORT_TRUST_MIN_VOTES": 0, "REPORT_TRUST_MIN_ACCOUNT_HOURS": 0}
    true_claim, _ = claim_pair()
    for n in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            report(UserFactory(username=f"r{n}"), fake_clock, true_claim, note=f"note {n}")
    row = quality_row(true_claim)
    assert (row.open_reports, row.hidden_until_review) == (2, False)
    assert true_claim in claims_playable()
    with django_capture_on_commit_callbacks(execute=True):
        report(UserFactory(username="r2"), fake_clock, true_claim, reason="wrong_label")
    row = quality_row(true_claim)
    assert (row.open_reports, row.hidden_until_review, row.out_of_play) == (3, True, True)
    assert true_claim not in claims_playable()

    actions.claim_moderate(moderator=moderator, claim_id=true_claim.pk, action="keep", reason="The reports are wrong.")
    row = quality_row(true_claim)
    assert (row.report_count, row.open_reports, row.hidden_until_review) == (3, 0, False)
    assert true_claim in claims_playable()
    with django_capture_on_commit_callbacks(execute=True):
        report(UserFactory(username="r3"), fake_clock, true_claim)
    assert (quality_row(true_claim).open_reports, quality_row(true_claim).hidden_until_review) == (1, False), "only reports since the review count"



def test_fitted_prior_is_used_only_when_the_setting_says_so(db, settings) -> None:
    claim_pair(true_counts=(8, 10), false_counts=(5, 10))
    fit = quality.prior_fit()
    assert fit.pooled_correct == 13 and fit.pooled_votes == 20
    assert quality.prior_current() == (4.0, 1.0)
    settings.FM2_MODERATION = {**settings.FM2_MODERATION, "USE_FITTED_PRIOR": True}
    assert quality.prior_current() == (fit.a, fit.b)


@pytest.mark.slow
def test_on_the_fm2_dev_split_the_fitted_prior_matches_the_pooled_accuracy_and_the_queue_lists_too_hard_claims(fm2_dev, capsys) -> None:
    from foolgame.moderation.selectors import moderation_queue

    call_command("import_fm2", str(fm2_dev), "--no-progress")
    call_command("refresh_quality", "--fit-prior", "--no-progress")
    fit = PriorFit.objects.get()
    assert (fit.pooled_correct, fit.pooled_votes) == (1935, 2402)
    assert abs(fit.mean - 1935 / 2402) < 0.01
    too_hard, _ = quality.flags_under_prior(a=4, b=1)
    queue = list(moderation_queue(reason="too_hard"))
    assert len(queue) == too_hard > 0
    assert all(c.quality.score < 0.5 for c in queue)
    assert "fitted prior: a=" in capsys.readouterr().out
