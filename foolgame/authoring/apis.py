"""Authoring endpoints: take a write task, read hints for a draft, check a draft, save a claim."""

from __future__ import annotations

from typing import Any

from django.core.validators import ProhibitNullCharactersValidator
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.core.schema import errors
from foolgame.core.views import ApiView
from foolgame.authoring.services import claim_create, claim_draft_check, player_page_hints, write_task_create
from foolgame.players.selectors import points_shown
from foolgame.evidence.services import MAX_QUERY_CHARS
from foolgame.pages.models import Page


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField()
    field = serializers.CharField()
    message = serializers.CharField()


class ErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    details = ErrorDetailSerializer(
        many=True,
        required=False,
        help_text="Each rule broken (a 400 refusing the claim), or each field of a malformed body (400 invalid, code "
        "invalid, field the top-level field or non_field_errors).",
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorBodySerializer()


class WriteTaskRequestSerializer(serializers.Serializer):
    category = serializers.CharField(required=False, allow_blank=True, max_length=100, help_text="a category name or slug")
    page = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=2**62, help_text="a page chosen by the player; category is then ignored"
    )


class WriteTaskSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    page = serializers.IntegerField(source="page_id")
    page_title = serializers.CharField(source="page.title")
    veracity = serializers.ChoiceField(choices=["TRUE", "FALSE"])
    write_by = serializers.DateTimeField(help_text="What the author's 8-minute timer counts down to.")
    expires_at = serializers.DateTimeField(help_text="The last moment a claim is accepted (write_by plus the grace period).")


class ClaimTextField(serializers.CharField):
    """A CharField that lets NUL through, so the service refuses it with its own code."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.validators = [v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)]


class ClaimRequestSerializer(serializers.Serializer):
    # Types only: every rule of the game is checked by the service, each with its own code.
    task = serializers.IntegerField(min_value=1, max_value=2**62)
    text = ClaimTextField(allow_blank=True, trim_whitespace=False, help_text="4 to 60 words")
    gold_sentence_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**62), max_length=20, help_text="1 or 2 sentence ids of the task's page"
    )


class WarningSerializer(serializers.Serializer):
    code = serializers.CharField()
    field = serializers.CharField()
    message = serializers.CharField()


class VerdictSerializer(serializers.Serializer):
    version = serializers.IntegerField(help_text="The model version that judged the claim (the collection round it is written in).")
    label = serializers.CharField(required=False, help_text="SUPPORTS or REFUTES: what the model says the gold sentences make of the claim.")
    probability = serializers.FloatField(required=False, help_text="The model's probability of that label, 0.5-1.")
    fooled = serializers.BooleanField(required=False, help_text="The model got the claim's label wrong: people confirming the label pays `model` points.")
    pending = serializers.BooleanField(required=False, help_text="The model is still loading in this server: the verdict comes with a later check (or after the save, by notification).")
    message = serializers.CharField(required=False)


class ClaimCreatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    warnings = WarningSerializer(many=True)
    points = serializers.IntegerField(required=False, help_text="Write points earned; left out when the player's game hides points (a study's arm)")
    verdict = VerdictSerializer(allow_null=True, help_text="The active model's verdict on the saved claim with its gold sentences (null when no model is active, or when the author's game hides the model's verdict: a study's arm; it is recorded all the same).")


class DraftCheckRequestSerializer(ClaimRequestSerializer):
    gold_sentence_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**62),
        max_length=20,
        required=False,
        default=list,
        help_text="the sentence ids ticked so far (may be empty while drafting)",
    )


class DraftCheckSerializer(serializers.Serializer):
    ok = serializers.BooleanField(help_text="Saving now would be accepted.")
    problems = WarningSerializer(many=True, help_text="The rules a save would refuse, with the save's codes and messages.")
    warnings = WarningSerializer(many=True, help_text="The warnings a save would carry.")
    verdict = VerdictSerializer(allow_null=True, help_text="The active model's verdict on the claim with its ticked gold sentences; null until the draft would save as it stands, when no model is active, or when the author's game hides the model's verdict (a study's arm).")


class WriteTaskCreateApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=WriteTaskRequestSerializer,
        responses={
            201: WriteTaskSerializer,
            **errors(
                post=True,
                e404=[
                    "unknown_category: no category has this name or slug",
                    "unknown_page: no page has this id",
                    "no_page: no page is ready for writing (in this category)",
                ],
                e409=[
                    "too_many_open_tasks: the player already holds the maximum of open tasks; write one or let it expire",
                    "page_not_writable: the chosen page has too few sentences to write about",
                ],
            ),
        },
        summary="Take a write task: a page (the server's pick, or the player's) and a veracity",
        description="Hands the player a page (the one named by `page`, else priority pages first, in the category if "
        "one is named) and the veracity to write: TRUE (the page supports the claim) or FALSE (it refutes it), "
        "balancing the player's own claims. The claim must be saved before `expires_at` (the 8-minute timer plus a "
        "grace period).",
    )
    def post(self, request: Request) -> Response:
        data = WriteTaskRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        task = write_task_create(
            player=request.user, category=data.validated_data.get("category") or None, page_id=data.validated_data.get("page")
        )
        return Response(WriteTaskSerializer(task).data, status=status.HTTP_201_CREATED)


class ClaimCreateApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]
    validation_details = "problems"  # a malformed body's details as a refused claim's: [{code, field, message}]

    @extend_schema(
        request=ClaimRequestSerializer,
        responses={
            201: ClaimCreatedSerializer,
            **errors(
                post=True,
                body=ErrorSerializer,
                e400=[
                    "text_empty, text_invalid, text_too_short, text_too_long, text_no_words, text_control_characters: the "
                    "text is missing, not text, outside 4 to 60 words (600 characters), not words, or holds control characters",
                    "text_off_page: the claim names nothing of its page",
                    "not_a_sentence: the claim's words read as well in any order (word salad): write a sentence",
                    "not_fluent: the claim does not read as a claim (a template of page words: it ends on a word like "
                    "'the' or 'of', or a phrase that 'the' or 'of' opens breaks off: 'of between in')",
                    "gold_invalid, gold_count, gold_duplicate, gold_not_on_page: gold_sentence_ids is not 1 or 2 different "
                    "current sentences of the task's page",
                    "gold_too_easy: a gold sentence is the retriever's top hit for the claim",
                    "copies_gold: the claim repeats a gold sentence nearly word for word",
                    "(each rule broken is in details, the first one is code; a malformed body's invalid lists each "
                    "field in details the same way)",
                ],
                e403="task_not_yours: the write task was given to another player",
                e404="task_not_found: there is no such write task",
                e409=[
                    "task_used: the task already has its claim",
                    "near_duplicate: an active claim of the page is nearly identical to this one, or one word away from it "
                    "(a word changed, put in or taken out)",
                ],
                e410="task_expired: the task's time (with the grace period) is over; take a new one",
                e429="claim_rate_limited: the player saved CLAIMS_PER_WINDOW claims in the window or CLAIMS_PER_DAY in a day "
                "(Retry-After says in how many seconds the next is accepted)",
            ),
        },
        summary="Save a claim written for a write task",
        description="Checks every rule of a claim (length, words, its page, 1 or 2 gold sentences of the page, not too "
        "easy to find, not a copy) and saves it with its clue list. A 400 lists each rule broken in `details` "
        "(`code`, `field`, `message`); `warnings` in a 201 are advice that did not stop the claim.",
    )
    def post(self, request: Request) -> Response:
        data = ClaimRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        claim, warnings, verdict = claim_create(
            author=request.user,
            task_id=data.validated_data["task"],
            text=data.validated_data["text"],
            gold_sentence_ids=data.validated_data["gold_sentence_ids"],
        )
        body: dict[str, Any] = {"id": claim.pk, "warnings": warnings, "verdict": verdict}
        if points_shown(player_id=request.user.pk):
            body["points"] = claim.ledger.filter(kind="write").values_list("amount", flat=True).first() or 0
        return Response(body, status=status.HTTP_201_CREATED)


class ClaimDraftCheckApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=DraftCheckRequestSerializer,
        responses={
            200: DraftCheckSerializer,
            **errors(
                post=True,
                e403=[
                    "task_not_yours: the task belongs to another player",
                    "check_during_round: the player is in a round about the task's page",
                ],
                e404="task_not_found: no task has this id",
                e409="task_used: a claim was already saved for this task",
                e410="task_expired: the task's time ran out",
                e429="check_throttled: too many checks this minute (Retry-After says when to try again)",
            ),
        },
        summary="Check a draft claim as a save would, saving nothing",
        description="The problems (text_no_words, not_a_sentence, not_fluent, text_off_page, near_duplicate, gold_too_easy, ...) and warnings "
        "(not_standalone, close_to_existing_claim, giveaway) that saving this draft would give. Nothing is stored and "
        "no points are paid. Only for the task's own player.",
    )
    def post(self, request: Request) -> Response:
        data = DraftCheckRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        check = claim_draft_check(
            author=request.user,
            task_id=data.validated_data["task"],
            text=data.validated_data["text"],
            gold_sentence_ids=data.validated_data["gold_sentence_ids"],
        )
        return Response({"ok": check.ok, "problems": check.problems, "warnings": check.warnings, "verdict": check.verdict})


class HintSerializer(serializers.Serializer):
    sentence_id = serializers.IntegerField()
    text = serializers.CharField()
    section_header = serializers.CharField(allow_blank=True)
    highlights = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="[start, end) character offsets in text of the words that match the draft.",
    )


class PageHintsApi(ApiView):
    """Hints are for authors drafting a claim: logged-in players holding an open write task
    on the page, and not in a round about it."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "q", str, description=f"the author's draft (at most {MAX_QUERY_CHARS} characters); blank gives []"
            )
        ],
        responses={
            200: HintSerializer(many=True),
            **errors(
                e400="invalid_query: q is longer than the limit",
                e403=[
                    "hints_need_task: no open write task of yours on this page",
                    "hints_during_round: you are in a round (ready or playing) on this page",
                    "hints_off: your game has hints off (a study's arm)",
                ],
                e404="not_found: no page has this id",
            ),
        },
        summary="Lexical hints for a draft claim, best first (up to 10)",
        description="Only for a player holding an open (unexpired, unused) write task on the page, "
        "and never during one of the player's open rounds about the page.",
    )
    def get(self, request: Request, page_id: int) -> Response:
        page = get_object_or_404(Page, pk=page_id)
        hints = player_page_hints(player_id=request.user.pk, page=page, query=request.query_params.get("q", ""))
        return Response(HintSerializer(hints, many=True).data)
