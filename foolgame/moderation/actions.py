"""Moderation's actions: the moderators, what they do to a claim, and what they have seen.

``check_claim_action`` validates the request and takes the locks (the claim, then its
quality row, as every writer of the flags does: see :mod:`foolgame.moderation.quality`);
``do_claim_action`` writes the change, the refreshed flags and the audit record, all in the
caller's transaction; ``claim_moderate`` runs both in one. Points already awarded for a
claim are never touched: the ledger is history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.utils import timezone

from foolgame.core.errors import ServiceError
from foolgame.claims.models import Claim, ClaimGold
from foolgame.moderation.models import AuditRecord, ClaimQuality, Sighting
from foolgame.moderation.quality import prior_current, quality_rows_lock, quality_rows_refresh
from foolgame.pages.models import Sentence
from foolgame.players.roles import is_moderator
from foolgame.players.services import player_role_set, role_group_ensure
from foolgame.voting.models import Report
from foolgame.voting.notifications import notification_for_moderation

MODERATORS_GROUP = "moderators"
REASON_MAX_CHARS = 1000

# What the moderators group may do beyond the queue: read claims, reports and the audit log
# in the admin (when a moderator is also staff).
MODERATOR_PERMISSIONS = [
    ("moderation", "moderate_claims"),
    ("moderation", "view_claimquality"),
    ("moderation", "view_auditrecord"),
    ("moderation", "view_priorfit"),
    ("claims", "view_claim"),
    ("voting", "view_report"),
    ("voting", "view_round"),
]


# --- moderators ---------------------------------------------------------------------------


def moderators_group_ensure() -> Group:
    """The ``moderators`` group with its permissions (created when missing; run after migrate)."""
    return role_group_ensure(name=MODERATORS_GROUP, permissions=MODERATOR_PERMISSIONS)


def moderator_set(*, username: str, moderator: bool = True) -> AbstractBaseUser:
    """Add a player to the moderators group (or take them out of it)."""
    return player_role_set(username=username, group=moderators_group_ensure(), member=moderator)


# --- moderator actions --------------------------------------------------------------------

ACTIONS = AuditRecord.Action.values
_ACTION_FIELDS = {"relabel": "label", "edit_evidence": "gold_sentence_ids"}


@dataclass
class CheckedAction:
    claim: Claim
    quality: ClaimQuality
    action: str
    reason: str
    label: str | None = None
    gold: list[Sentence] | None = None


def _check_input(*, action: Any, reason: Any, label: Any, gold_sentence_ids: Any) -> tuple[str, str]:
    if action not in ACTIONS:
        raise ServiceError("invalid_action", f"action must be one of: {', '.join(ACTIONS)}.")
    if not isinstance(reason, str) or not reason.strip():
        raise ServiceError("reason_required", "Say why: every moderation action needs a reason.")
    reason = reason.strip()
    if len(reason) > REASON_MAX_CHARS:
        raise ServiceError("reason_too_long", f"A reason holds at most {REASON_MAX_CHARS} characters.")
    for other_action, name in _ACTION_FIELDS.items():
        given = label if name == "label" else gold_sentence_ids
        if other_action != action and given is not None:
            raise ServiceError("unexpected_field", f"{name} goes only with action {other_action!r}.")
    if action == "relabel" and label not in Claim.Label.values:
        raise ServiceError("invalid_label", f"label must be one of: {', '.join(Claim.Label.values)}.")
    if action == "edit_evidence":
        ids = gold_sentence_ids
        if (
            not isinstance(ids, list)
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids)
            or not 1 <= len(ids) <= 2
            or len(set(ids)) != len(ids)
        ):
            raise ServiceError("invalid_gold", "gold_sentence_ids must list 1 or 2 different sentence ids.")
    return action, reason


def check_claim_action(
    *, claim_id: int, action: Any, reason: Any, label: Any = None, gold_sentence_ids: Any = None
) -> CheckedAction:
    """Validate a moderator's action and lock what it changes.

    Locking: the claim's row, then its quality row (``select_for_update``); must run inside a
    transaction, which ``do_claim_action`` then writes in. Raises :class:`ServiceError`
    (nothing written) when the action does not apply."""
    action, reason = _check_input(action=action, reason=reason, label=label, gold_sentence_ids=gold_sentence_ids)
    try:
        claim = Claim.objects.select_for_update(of=("self",)).select_related("page").get(pk=claim_id)
    except Claim.DoesNotExist:
        raise ServiceError("claim_not_found", "No such claim.", status_code=404) from None
    if claim.status == Claim.Status.REMOVED:
        raise ServiceError("claim_removed", "This claim was removed; removed claims stay as they are.", status_code=409)
    quality = quality_rows_lock([claim.pk])[claim.pk]
    checked = CheckedAction(claim=claim, quality=quality, action=action, reason=reason)
    if action == "relabel":
        if label == claim.label:
            raise ServiceError("label_unchanged", f"The claim is already labelled {label}.")
        checked.label = label
    elif action == "edit_evidence":
        found = {s.pk: s for s in Sentence.objects.filter(pk__in=gold_sentence_ids)}
        missing = [pk for pk in gold_sentence_ids if pk not in found]
        if missing:
            raise ServiceError("gold_not_found", f"No sentence has id {missing[0]}.", details={"sentence_ids": missing})
        other_page = [pk for pk in gold_sentence_ids if found[pk].page_id != claim.page_id]
        if other_page:
            raise ServiceError("gold_not_on_page", "Gold sentences must belong to the claim's own page.", details={"sentence_ids": other_page})
        retired = [pk for pk in gold_sentence_ids if found[pk].retired]
        if retired:
            raise ServiceError("gold_retired", "That sentence is no longer part of the page.", details={"sentence_ids": retired})
        if list(claim.gold_links.order_by("position").values_list("sentence_id", flat=True)) == list(gold_sentence_ids):
            raise ServiceError("gold_unchanged", "Those are already the claim's gold sentences.")
        checked.gold = [found[pk] for pk in gold_sentence_ids]
    return checked


def _snapshot(claim: Claim, quality: ClaimQuality) -> dict[str, Any]:
    gold = list(claim.gold_links.select_related("sentence").order_by("position"))
    return {
        "status": claim.status,
        "removed_reason": claim.removed_reason,
        "label": claim.label,
        "gold_sentence_ids": [g.sentence_id for g in gold],
        "gold": [g.sentence.text for g in gold],
        "flags": {
            "too_hard": quality.too_hard,
            "too_easy": quality.too_easy,
            "kept": quality.kept,
            "open_reports": quality.open_reports,
            "hidden_until_review": quality.hidden_until_review,
            "out_of_play": quality.out_of_play,
            "score": round(quality.score, 4),
        },
    }


def _clue(sentence: Sentence) -> dict[str, Any]:
    return {"sentence_id": sentence.pk, "text": sentence.text, "section_header": sentence.section_header}


def _replace_gold(claim: Claim, gold: list[Sentence]) -> None:
    """New gold sentences, and the clue list's gold tail with them: the clues keep the
    retrieved sentences in their order (less any that became gold) and end with the gold."""
    old_ids = set(claim.gold_links.values_list("sentence_id", flat=True))
    old_texts = set(Sentence.objects.filter(pk__in=old_ids).values_list("text", flat=True))
    new_ids = {s.pk for s in gold}
    retrieved = [
        clue
        for clue in claim.clues
        if clue.get("sentence_id") not in old_ids | new_ids and (clue.get("sentence_id") is not None or clue.get("text") not in old_texts)
    ]
    claim.gold_links.all().delete()
    ClaimGold.objects.bulk_create(ClaimGold(claim=claim, sentence=s, position=i) for i, s in enumerate(gold))
    claim.clues = retrieved + [_clue(s) for s in gold]
    claim.save(update_fields=["clues"])


def do_claim_action(checked: CheckedAction, *, moderator: AbstractBaseUser) -> AuditRecord:
    """Apply a checked action under its locks: the claim's change, its review (every action
    reviews the claim: open reports are seen, filters cleared unless it was removed), its
    refreshed flags, and the audit record with the claim before and after."""
    claim, quality = checked.claim, checked.quality
    before = _snapshot(claim, quality)
    if checked.action == "remove":
        claim.status, claim.removed_reason = Claim.Status.REMOVED, checked.reason
        claim.save(update_fields=["status", "removed_reason"])
    elif checked.action == "relabel":
        assert checked.label is not None
        claim.label = checked.label
        claim.save(update_fields=["label"])
    elif checked.action == "edit_evidence":
        assert checked.gold is not None
        _replace_gold(claim, checked.gold)
    if checked.action != "keep":
        # Open rounds holding the claim were dealt under what just changed: they end
        # without points, in this transaction (a finished round keeps its stored answer).
        from foolgame.voting.services import rounds_void_for_claim  # voting imports moderation's tasks

        rounds_void_for_claim(claim_id=claim.pk, action=checked.action)
    if checked.action != "remove":
        quality.kept = True
    quality.disputed = False  # a moderator decided; the checks' verdict stays in ``validation``
    last_report = Report.objects.filter(claim=claim).order_by("-id").values_list("id", flat=True).first()
    quality.reviewed_report_id = max(quality.reviewed_report_id, last_report or 0)
    quality.reviewed_at, quality.reviewed_by = timezone.now(), moderator
    quality.save(update_fields=["kept", "disputed", "reviewed_report_id", "reviewed_at", "reviewed_by"])
    quality_rows_refresh({claim.pk: quality}, prior_current())
    record = AuditRecord.objects.create(
        moderator=moderator, claim=claim, action=checked.action, reason=checked.reason, before=before, after=_snapshot(claim, quality)
    )
    notification_for_moderation(claim=claim, moderator=moderator, action=checked.action, reason=checked.reason)
    sightings_record(moderator=moderator, claim_ids=[claim.pk])
    return record


def sightings_record(*, moderator: AbstractBaseUser, claim_ids: Iterable[int]) -> None:
    """Record that the moderator now sees these claims with their answers (a queue page,
    a claim after an action, the audit log): one bulk insert, idempotent (a claim already
    seen keeps its first moment). See ``Sighting`` for what it changes."""
    now = timezone.now()
    rows = [Sighting(moderator=moderator, claim_id=claim_id, first_seen=now) for claim_id in dict.fromkeys(claim_ids)]
    if rows:
        Sighting.objects.bulk_create(rows, ignore_conflicts=True)


def claim_moderate(
    *,
    moderator: AbstractBaseUser,
    claim_id: int,
    action: Any,
    reason: Any,
    label: Any = None,
    gold_sentence_ids: Any = None,
) -> AuditRecord:
    """Keep, remove, relabel or re-evidence a claim, in one transaction, audited.

    ``keep`` clears the claim's flags and reports (it returns to play); ``remove`` takes it
    out of play and out of exports at once, kept in the database with the reason;
    ``relabel`` fixes its label; ``edit_evidence`` replaces its gold with 1 or 2 current
    sentences of its page. Points already awarded stay as they are."""
    if not is_moderator(moderator):
        raise ServiceError("not_a_moderator", "Only moderators can do this.", status_code=403)
    with transaction.atomic():
        checked = check_claim_action(claim_id=claim_id, action=action, reason=reason, label=label, gold_sentence_ids=gold_sentence_ids)
        return do_claim_action(checked, moderator=moderator)
