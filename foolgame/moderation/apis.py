"""The moderation REST endpoints: the queue and a claim's actions (moderators only)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from foolgame.core.errors import ServiceError
from foolgame.core.schema import errors
from foolgame.core.views import ApiView
from foolgame.claims.models import Claim
from foolgame.moderation import actions, integrity, selectors
from foolgame.moderation.models import AuditRecord, PlayerAuditRecord, PlayerHold
from foolgame.players.roles import is_moderator


class IsModerator(permissions.BasePermission):
    """Members of the moderators group; everyone else (anonymous too) gets 403."""

    message = "Only moderators can do this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return is_moderator(request.user)


class _PageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    category = serializers.CharField(allow_null=True)


class _VotesSerializer(serializers.Serializer):
    total = serializers.IntegerField(help_text="the release's votes plus the game's own")
    correct = serializers.IntegerField()
    release_total = serializers.IntegerField()
    release_correct = serializers.IntegerField()
    game = serializers.IntegerField(help_text="votes cast in this game")


class _PriorSerializer(serializers.Serializer):
    a = serializers.FloatField()
    b = serializers.FloatField()


class _FlagsSerializer(serializers.Serializer):
    too_hard = serializers.BooleanField()
    too_easy = serializers.BooleanField()
    kept = serializers.BooleanField(help_text="a moderator kept it: the filters no longer take it out of play")
    hidden_until_review = serializers.BooleanField()
    out_of_play = serializers.BooleanField()
    disputed = serializers.BooleanField(help_text="its checkers' gold label is not its author's label, and no moderator has decided since")


class _ReportSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    reporter = serializers.CharField()
    reason = serializers.CharField()
    note = serializers.CharField(allow_blank=True)
    created = serializers.DateTimeField()
    open = serializers.BooleanField(help_text="filed since the claim's last review")


class _SentenceSerializer(serializers.Serializer):
    sentence_id = serializers.IntegerField(allow_null=True)
    text = serializers.CharField()
    section_header = serializers.CharField(allow_blank=True)


class _DifficultySerializer(serializers.Serializer):
    rating = serializers.IntegerField(help_text="difficulty on the 1500 scale: the higher, the more voters it fools")
    deviation = serializers.IntegerField(help_text="its uncertainty (one standard deviation, same scale)")
    too_hard = serializers.BooleanField(help_text="the lower end of its 90% interval is above the break-even difficulty")
    reason = serializers.CharField(allow_blank=True)


class ClaimReviewSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    label = serializers.CharField()
    status = serializers.CharField()
    removed_reason = serializers.CharField(allow_blank=True)
    page = _PageSerializer()
    author = serializers.CharField()
    why = serializers.ListField(child=serializers.CharField(), help_text="reports, too_hard, too_easy, disputed")
    reasons = serializers.ListField(child=serializers.CharField(), help_text="why, in words")
    votes = _VotesSerializer()
    score = serializers.FloatField(allow_null=True, help_text="smoothed correct-vote rate (posterior mean)")
    interval = serializers.ListField(child=serializers.FloatField(), allow_null=True, help_text="90% credible interval")
    threshold = serializers.FloatField()
    difficulty = _DifficultySerializer(
        allow_null=True, help_text="the claim's difficulty rating from the game's votes (1500 scale); null before its first vote here"
    )
    prior = _PriorSerializer(allow_null=True)
    flags = _FlagsSerializer()
    validation = serializers.JSONField(
        allow_null=True,
        help_text="its checks (fact-check mode), once it has any: the gold label by the weighted 3-of-5 rule (\"-\" without one) "
        "and the labels by kind, e.g. {\"gold_label\": \"REFUTES\", \"labels\": {\"SUPPORTS\": 1, \"REFUTES\": 3}}",
    )
    report_count = serializers.IntegerField()
    open_reports = serializers.IntegerField()
    reports = _ReportSerializer(many=True)
    gold = _SentenceSerializer(many=True)
    clues = _SentenceSerializer(many=True)


class QueueSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    results = ClaimReviewSerializer(many=True)


class _AuditFields(serializers.Serializer):
    """What every audit row shows, of a claim's action or a player's."""

    id = serializers.IntegerField()
    moderator = serializers.CharField()
    action = serializers.CharField()
    reason = serializers.CharField()
    before = serializers.JSONField()
    after = serializers.JSONField()
    created = serializers.DateTimeField()


class AuditRecordSerializer(_AuditFields):
    claim = serializers.IntegerField()


class ActionResultSerializer(ClaimReviewSerializer):
    audit = AuditRecordSerializer()


class ActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=AuditRecord.Action.values)
    reason = serializers.CharField(max_length=actions.REASON_MAX_CHARS)
    label = serializers.ChoiceField(choices=Claim.Label.values, required=False, help_text="relabel only")
    gold_sentence_ids = serializers.ListField(
        child=serializers.IntegerField(), min_length=1, max_length=2, required=False, help_text="edit_evidence only: 1 or 2 sentences of the claim's page"
    )


QUEUE_LIMIT_MAX = 200


class ModerationQueueApi(ApiView):
    permission_classes = [IsModerator]

    @extend_schema(
        parameters=[
            OpenApiParameter("reason", str, enum=list(selectors.REASONS), description="only claims flagged for this reason"),
            OpenApiParameter("category", str, description="a category's slug or name"),
            OpenApiParameter("limit", int, description=f"at most this many (default 50, at most {QUEUE_LIMIT_MAX})"),
        ],
        responses={
            200: QueueSerializer,
            **errors(
                e400=[
                    "invalid_reason: reason is not reports, too_hard, too_easy or disputed",
                    "invalid_limit: limit is not a whole number from 1 to 200",
                ],
                e403="permission_denied: logged in, but not in the moderators group",
            ),
        },
        summary="Claims flagged by reports, too hard or too easy, most urgent first",
        description="Moderators only. Claims that players reported or that the quality filters flag as too hard "
        "(smoothed correct-vote rate under the threshold) or too easy, reported claims first, then the lowest scores; "
        "each with why, its reports, vote counts, smoothed score and interval, gold evidence and clue list. "
        "The claims listed count as seen by this moderator with their answers: they are never dealt to them, and the "
        "dataset export marks a vote of theirs cast afterwards (`voter_saw_answer`).",
    )
    def get(self, request: Request) -> Response:
        reason = request.query_params.get("reason") or None
        if reason is not None and reason not in selectors.REASONS:
            raise ServiceError("invalid_reason", f"reason must be one of: {', '.join(selectors.REASONS)}.")
        try:
            limit = int(request.query_params.get("limit", 50))
        except ValueError:
            raise ServiceError("invalid_limit", "limit must be a whole number.") from None
        if not 1 <= limit <= QUEUE_LIMIT_MAX:
            raise ServiceError("invalid_limit", f"limit must be between 1 and {QUEUE_LIMIT_MAX}.")
        claims = selectors.moderation_queue(reason=reason, category=request.query_params.get("category") or None)
        results = selectors.claim_reviews(claims[:limit])
        actions.sightings_record(moderator=request.user, claim_ids=[item["id"] for item in results])
        return Response({"count": claims.count(), "results": results})


class ClaimActionApi(ApiView):
    permission_classes = [IsModerator]

    @extend_schema(
        request=ActionSerializer,
        responses={
            200: ActionResultSerializer,
            **errors(
                post=True,
                e400=[
                    "invalid: the body is not a JSON object",
                    "invalid_action: action is not keep, remove, relabel or edit_evidence",
                    "reason_required: every action needs a reason",
                    "reason_too_long: the reason is over its length",
                    "unexpected_field: label goes only with relabel, gold_sentence_ids only with edit_evidence",
                    "invalid_label: label is not SUPPORTS or REFUTES",
                    "label_unchanged: the claim already has this label",
                    "invalid_gold: gold_sentence_ids is not 1 or 2 different sentence ids",
                    "gold_not_found, gold_not_on_page, gold_retired: a sentence does not exist, is on another page or "
                    "was retired (details.sentence_ids names them)",
                    "gold_unchanged: those are already the claim's gold sentences",
                ],
                e403="permission_denied: logged in, but not in the moderators group",
                e404="claim_not_found: no claim has this id",
                e409="claim_removed: the claim was removed; removed claims stay as they are",
            ),
        },
        summary="Keep, remove, relabel or re-evidence a claim; returns the claim after the action",
        description="Moderators only. `keep` clears the claim's flags and reports (it returns to play); `remove` takes "
        "it out of play and out of exports; `relabel` flips its label; `edit_evidence` replaces its gold with 1 or 2 "
        "sentences of its page. Rounds in play with the claim are voided. Every action is written to the audit log with "
        "the claim before and after; points already awarded stay.",
    )
    def post(self, request: Request, claim_id: int) -> Response:
        data: Any = request.data
        if not isinstance(data, dict):
            raise ServiceError("invalid", "Send a JSON object.")
        record = actions.claim_moderate(
            moderator=request.user,
            claim_id=claim_id,
            action=data.get("action"),
            reason=data.get("reason"),
            label=data.get("label"),
            gold_sentence_ids=data.get("gold_sentence_ids"),
        )
        body = selectors.claim_reviews([selectors.claim_for_review(claim_id=claim_id)])[0]
        body["audit"] = selectors.audit_record_payload(record)
        return Response(body)


class AuditLogApi(ApiView):
    permission_classes = [IsModerator]

    @extend_schema(
        parameters=[OpenApiParameter("claim", int, description="only this claim's records")],
        responses={
            200: AuditRecordSerializer(many=True),
            **errors(e400="invalid_claim: claim is not a claim id", e403="permission_denied: logged in, but not in the moderators group"),
        },
        summary="The moderation audit log, newest first (read-only)",
        description="Moderators only. The last 200 moderation actions (or one claim's): who, when, which action and "
        "why, with snapshots of the claim before and after. Records are never changed or deleted.",
    )
    def get(self, request: Request) -> Response:
        claim = request.query_params.get("claim")
        if claim is not None and not claim.isdigit():
            raise ServiceError("invalid_claim", "claim must be a claim id.")
        records = list(selectors.audit_records(claim_id=int(claim) if claim else None)[:200])
        actions.sightings_record(moderator=request.user, claim_ids=[r.claim_id for r in records])
        return Response([selectors.audit_record_payload(r) for r in records])


# --- held players (improbable play: foolgame.moderation.integrity) ----------------------------


class _RunEvidenceSerializer(serializers.Serializer):
    votes = serializers.IntegerField(help_text="votes in the most improbable run")
    right = serializers.IntegerField()
    expected = serializers.FloatField(help_text="right votes a population player would expect at those clues and speeds")
    run_p_value = serializers.FloatField(help_text="chance that a person of any plausible skill does as well on this run")
    windows = serializers.IntegerField(help_text="runs tested (the p-value is multiplied by it)")
    p_value = serializers.FloatField()
    first_vote = serializers.IntegerField()
    last_vote = serializers.IntegerField()
    median_seconds = serializers.FloatField()
    clues = serializers.IntegerField(help_text="clues bought in the run")


class _FollowEvidenceSerializer(serializers.Serializer):
    source = serializers.CharField(help_text="the account whose give-ups (timeouts, forfeits) the votes follow")
    source_id = serializers.IntegerField()
    votes = serializers.IntegerField(help_text="votes on pairs the source had given up shortly before")
    right = serializers.IntegerField()
    expected = serializers.FloatField()
    run_p_value = serializers.FloatField()
    sources = serializers.IntegerField(help_text="accounts this voter follows (the p-value is multiplied by it)")
    p_value = serializers.FloatField()
    vote_ids = serializers.ListField(child=serializers.IntegerField(), help_text="the following votes (at most 50)")
    claims = serializers.ListField(child=serializers.IntegerField(), help_text="their claims (at most 100)")


class _HoldEvidenceSerializer(serializers.Serializer):
    alpha = serializers.FloatField(help_text="the threshold the p-values were under")
    tested_votes = serializers.IntegerField()
    since_vote = serializers.IntegerField(help_text="votes up to this id were cleared before and not tested")
    through_vote = serializers.IntegerField()
    population_votes = serializers.IntegerField()
    population_accuracy = serializers.FloatField()
    improbable = _RunEvidenceSerializer(required=False)
    follows = _FollowEvidenceSerializer(required=False)
    linked_accounts = serializers.ListField(child=serializers.CharField(), required=False)


class PlayerHoldSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="the player's id (the actions' path)")
    username = serializers.CharField()
    status = serializers.CharField(help_text="held, cleared or confirmed")
    held = serializers.BooleanField(help_text="off the leaderboards and the ratings, marked in the export")
    reasons = serializers.ListField(child=serializers.CharField(), help_text="improbable_accuracy, follows_give_ups")
    reasons_text = serializers.ListField(child=serializers.CharField())
    p_value = serializers.FloatField()
    evidence = _HoldEvidenceSerializer()
    held_at = serializers.DateTimeField()
    acted_by = serializers.CharField(allow_null=True)
    acted_at = serializers.DateTimeField(allow_null=True)
    votes = serializers.IntegerField(help_text="the player's votes in all")


class PlayerQueueSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    results = PlayerHoldSerializer(many=True)


class PlayerAuditRecordSerializer(_AuditFields):
    player = serializers.CharField()


class PlayerActionResultSerializer(PlayerHoldSerializer):
    audit = PlayerAuditRecordSerializer()


class PlayerActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=PlayerAuditRecord.Action.values)
    reason = serializers.CharField(max_length=integrity.REASON_MAX_CHARS)


class PlayerQueueApi(ApiView):
    permission_classes = [IsModerator]

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=list(PlayerHold.Status.values), description="held (the default), cleared or confirmed"),
            OpenApiParameter("limit", int, description=f"at most this many (default 50, at most {QUEUE_LIMIT_MAX})"),
        ],
        responses={
            200: PlayerQueueSerializer,
            **errors(
                e400=["invalid_status: status is not held, cleared or confirmed", "invalid_limit: limit is not a whole number from 1 to 200"],
                e403="permission_denied: logged in, but not in the moderators group",
            ),
        },
        summary="Players held as improbable, with the evidence, most improbable first",
        description="Moderators only. Accounts whose right answers are improbable for a person (a run of votes right "
        "far more often than players of any plausible skill at the same clues and speed), or whose votes follow another "
        "account's give-ups (timeouts, forfeits) of the same claims. While held they are off the leaderboards, their votes "
        "are not rated and the export marks them `voter_held`, until a moderator clears them.",
    )
    def get(self, request: Request) -> Response:
        status = request.query_params.get("status") or PlayerHold.Status.HELD
        if status not in PlayerHold.Status.values:
            raise ServiceError("invalid_status", f"status must be one of: {', '.join(PlayerHold.Status.values)}.")
        try:
            limit = int(request.query_params.get("limit", 50))
        except ValueError:
            raise ServiceError("invalid_limit", "limit must be a whole number.") from None
        if not 1 <= limit <= QUEUE_LIMIT_MAX:
            raise ServiceError("invalid_limit", f"limit must be between 1 and {QUEUE_LIMIT_MAX}.")
        holds = selectors.player_holds(status=status)
        return Response({"count": holds.count(), "results": selectors.player_hold_payloads(holds[:limit])})


class PlayerActionApi(ApiView):
    permission_classes = [IsModerator]

    @extend_schema(
        request=PlayerActionSerializer,
        responses={
            200: PlayerActionResultSerializer,
            **errors(
                post=True,
                e400=[
                    "invalid: the body is not a JSON object",
                    "invalid_action: action is not clear or confirm",
                    "reason_required: every action needs a reason",
                    "reason_too_long: the reason is over its length",
                ],
                e403="permission_denied: logged in, but not in the moderators group",
                e404="hold_not_found: this player is not held and never was",
                e409="already_cleared, hold_not_open: the hold is cleared already, or only a held player can be confirmed",
            ),
        },
        summary="Clear or confirm a held player; returns the hold after the action",
        description="Moderators only. `clear` returns the player to the leaderboards and the ratings (votes cast while "
        "held stay unrated until a ratings refit) and the votes the evidence covers are never held against them again; "
        "only new votes can hold them again. `confirm` keeps the hold. Every action is written to the players' audit "
        "log with the hold before and after.",
    )
    def post(self, request: Request, player_id: int) -> Response:
        data: Any = request.data
        if not isinstance(data, dict):
            raise ServiceError("invalid", "Send a JSON object.")
        record = integrity.player_hold_moderate(moderator=request.user, player_id=player_id, action=data.get("action"), reason=data.get("reason"))
        body = selectors.player_hold_payloads(selectors.player_holds().filter(player_id=player_id))[0]
        body["audit"] = selectors.player_audit_record_payload(record)
        return Response(body)
