"""Live quality flags, reports, the fitted prior, and every moderator action with its audit record."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from foolgame.api.errors import ServiceError
from foolgame.claims.models import Claim
from foolgame.moderation import actions, quality
from foolgame.moderation.models import AuditRecord, ClaimQuality, PriorFit
from foolgame.players.roles import is_moderator
from foolgame.voting import services as voting
from foolgame.voting.selectors import claims_playable
from tests.factories import SentenceFactory, UserFactory
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


def test_keep_clears_the_flags_and_is_audited(moderator) -> None:
    true_claim, _ = claim_pair(true_counts=(0, 6))
    quality.quality_refresh(claim_ids=[true_claim.pk])
    record = actions.claim_moderate(moderator=moderator, claim_id=true_claim.pk, action="keep", reason="Hard, not wrong.")
    row = quality_row(true_claim)
    assert row.too_hard and row.kept and not row.out_of_play, "the score stays what it is; the moderator's decision wins"
    assert (record.moderator, record.claim, record.action, record.reason) == (moderator, true_claim, "keep", "Hard, not wrong.")
    assert record.before["flags"]["out_of_play"] is True and record.after["flags"]["out_of_play"] is False
    assert record.before["flags"]["kept"] is False and record.after["flags"]["kept"] is True
    assert record.created is not None and row.reviewed_by == moderator


def test_remove_takes_the_claim_out_of_play_at_once_and_keeps_it_with_the_reason(moderator) -> None:
    true_claim, false_claim = claim_pair()
    record = actions.claim_moderate(moderator=moderator, claim_id=false_claim.pk, action="remove", reason="Spam.")
    false_claim.refresh_from_db()
    assert (false_claim.status, false_claim.removed_reason) == ("removed", "Spam.")
    assert false_claim not in claims_playable() and Claim.objects.filter(pk=false_claim.pk).exists()
    assert (record.before["status"], record.after["status"]) == ("active", "removed")
    with pytest.raises(ServiceError) as error:
        actions.claim_moderate(moderator=moderator, claim_id=false_claim.pk, action="keep", reason="Changed my mind.")
    assert (error.value.code, error.value.status_code) == ("claim_removed", 409)


def test_relabel_fixes_the_label_and_is_audited(moderator) -> None:
    true_claim, _ = claim_pair()
    record = actions.claim_moderate(moderator=moderator, claim_id=true_claim.pk, action="relabel", reason="The page refutes it.", label="REFUTES")
    true_claim.refresh_from_db()
    assert true_claim.label == "REFUTES"
    assert (record.before["label"], record.after["label"]) == ("SUPPORTS", "REFUTES")


def test_edit_evidence_replaces_the_gold_and_the_clue_lists_gold_tail(moderator) -> None:
    true_claim, _ = claim_pair()
    old_gold = list(true_claim.gold_sentences.all())
    retrieved_ids = [c["sentence_id"] for c in true_claim.clues[:-1]]
    new_gold = [SentenceFactory(page=true_claim.page, text="A better sentence."), SentenceFactory(page=true_claim.page, text="And another.")]
    record = actions.claim_moderate(
        moderator=moderator, claim_id=true_claim.pk, action="edit_evidence", reason="Wrong sentence marked.", gold_sentence_ids=[s.pk for s in new_gold]
    )
    true_claim.refresh_from_db()
    assert list(true_claim.gold_sentences.order_by("gold_links__position")) == new_gold
    assert [c["sentence_id"] for c in true_claim.clues] == retrieved_ids + [s.pk for s in new_gold]
    assert record.before["gold_sentence_ids"] == [s.pk for s in old_gold]
    assert record.after["gold"] == ["A better sentence.", "And another."]

    # A retrieved clue promoted to gold leaves the retrieved part of the list.
    actions.claim_moderate(moderator=moderator, claim_id=true_claim.pk, action="edit_evidence", reason="The first clue is it.", gold_sentence_ids=[retrieved_ids[0]])
    true_claim.refresh_from_db()
    assert [c["sentence_id"] for c in true_claim.clues] == retrieved_ids[1:] + [retrieved_ids[0]]


def _other_page_sentence(claim: Claim) -> int:
    return SentenceFactory().pk


def _retired_sentence(claim: Claim) -> int:
    return SentenceFactory(page=claim.page, retired=True).pk


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        (lambda c: {"action": "delete"}, "invalid_action"),
        (lambda c: {"action": None}, "invalid_action"),
        (lambda c: {"action": "keep", "reason": "   "}, "reason_required"),
        (lambda c: {"action": "keep", "reason": None}, "reason_required"),
        (lambda c: {"action": "remove", "reason": "x" * 1001}, "reason_too_long"),
        (lambda c: {"action": "keep", "label": "REFUTES"}, "unexpected_field"),
        (lambda c: {"action": "relabel", "gold_sentence_ids": [1]}, "unexpected_field"),
        (lambda c: {"action": "relabel", "label": "MAYBE"}, "invalid_label"),
        (lambda c: {"action": "relabel", "label": None}, "invalid_label"),
        (lambda c: {"action": "relabel", "label": "SUPPORTS"}, "label_unchanged"),
        (lambda c: {"action": "edit_evidence", "gold_sentence_ids": []}, "invalid_gold"),
        (lambda c: {"action": "edit_evidence", "gold_sentence_ids": "1,2"}, "invalid_gold"),
        (lambda c: {"action": "edit_evidence", "gold_sentence_ids": [1, 2, 3]}, "invalid_gold"),
        (lambda c: {"action": "edit_evidence", "gold_sentence_ids": [5, 5]}, "invalid_gold"),
        (lambda c: {"action": "edit_evidence", "gold_sentence_ids": [True]}, "invalid_gold"),
        (lambda c: {"action": "edit_evidence", "gold_sentence_ids": [987654]}, "gold_not_found"),
        (lambda c: {"action": "edit_evidence", "gold_sentence_ids": [_other_page_sentence(c)]}, "gold_not_on_page"),
        (lambda c: {"action": "edit_evidence", "gold_sentence_ids": [_retired_sentence(c)]}, "gold_retired"),
        (lambda c: {"action": "edit_evidence", "gold_sentence_ids": [c.gold_links.get().sentence_id]}, "gold_unchanged"),
    ],
)
def test_bad_action_is_refused_with_its_code_and_changes_nothing(moderator, payload, code) -> None:
    true_claim, _ = claim_pair(true_counts=(0, 6))
    quality.quality_refresh(claim_ids=[true_claim.pk])
    data = {"reason": "Because.", **payload(true_claim)}
    before = (Claim.objects.filter(pk=true_claim.pk).values().get(), list(true_claim.gold_links.values_list("sentence_id", flat=True)))
    row_before = ClaimQuality.objects.filter(claim=true_claim).values().get()
    with pytest.raises(ServiceError) as error:
        actions.claim_moderate(moderator=moderator, claim_id=true_claim.pk, **data)
    assert error.value.code == code and error.value.status_code == 400
    after = (Claim.objects.filter(pk=true_claim.pk).values().get(), list(true_claim.gold_links.values_list("sentence_id", flat=True)))
    assert after == before and ClaimQuality.objects.filter(claim=true_claim).values().get() == row_before
    assert not AuditRecord.objects.exists()


def test_unknown_claim_is_404(moderator) -> None:
    with pytest.raises(ServiceError) as error:
        actions.claim_moderate(moderator=moderator, claim_id=424242, action="keep", reason="x")
    assert (error.value.code, error.value.status_code) == ("claim_not_found", 404)


def test_only_moderators_can_act(db) -> None:
    true_claim, _ = claim_pair()
    with pytest.raises(ServiceError) as error:
        actions.claim_moderate(moderator=UserFactory(username="pat"), claim_id=true_claim.pk, action="remove", reason="x")
    assert (error.value.code, error.value.status_code) == ("not_a_moderator", 403)
    assert Claim.objects.get(pk=true_claim.pk).status == "active"


def test_audit_records_cannot_be_changed_or_deleted(moderator) -> None:
    true_claim, _ = claim_pair()
    record = actions.claim_moderate(moderator=moderator, claim_id=true_claim.pk, action="keep", reason="Fine.")
    record.reason = "Rewritten history."
    with pytest.raises(TypeError):
        record.save()
    with pytest.raises(TypeError):
        record.delete()
    with pytest.raises(TypeError):
        AuditRecord.objects.filter(pk=record.pk).update(reason="x")
    with pytest.raises(TypeError):
        AuditRecord.objects.all().delete()
    assert AuditRecord.objects.get(pk=record.pk).reason == "Fine."


def test_createmoderator_puts_a_player_in_the_group(db) -> None:
    player = UserFactory(username="mod-to-be")
    assert not is_moderator(player)
    call_command("createmoderator", "mod-to-be", stdout=None)
    player = type(player).objects.get(pk=player.pk)
    assert is_moderator(player) and player.groups.filter(name="moderators").exists()
    call_command("createmoderator", "mod-to-be", "--remove")
    assert not is_moderator(type(player).objects.get(pk=player.pk))
    with pytest.raises(CommandError, match="nobody"):
        call_command("createmoderator", "nobody")


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
