"""Every moderator action with its audit record, and the moderators group: foolgame/moderation/actions.py."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from foolgame.core.errors import ServiceError
from foolgame.claims.models import Claim
from foolgame.moderation import actions, quality
from foolgame.moderation.models import AuditRecord, ClaimQuality
from foolgame.players.roles import is_moderator
from foolgame.voting.selectors import claims_playable
from tests.factories import SentenceFactory, UserFactory
from tests.moderation.conftest import claim_pair

pytestmark = pytest.mark.django_db


def quality_row(claim: Claim) -> ClaimQuality:
    return ClaimQuality.objects.get(claim=claim)


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
