"""Moderation in the admin: quality rows, priors and the audit log read-only, and claims,
changed only through the moderation actions.

The claims' admin lives here, not in the claims app, which sits below moderation. A
claim's label, gold, text and status are the game's data and history: the admin shows
every field read-only, and a moderator changes a claim with the same actions as the queue
(keep, remove, relabel, edit_evidence), each with its reason, checked and locked by
``check_claim_action``, written by ``do_claim_action`` and recorded in the audit log. The
admin's change view runs in one transaction, so the form's check and the save share it.
There is no action that rewrites a claim's text: a moderator removes it instead.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html

from foolgame.core.errors import ServiceError
from foolgame.claims.models import Claim, ClaimGold
from foolgame.moderation.actions import CheckedAction, check_claim_action, do_claim_action, sightings_record
from foolgame.moderation.models import AuditRecord, ClaimQuality, PriorFit
from foolgame.players.roles import is_moderator


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows that are computed (quality, priors) or history (audit): readable, never edited here."""

    def has_add_permission(self, request):  # noqa: ANN001
        return False

    def has_change_permission(self, request, obj=None):  # noqa: ANN001
        return False

    def has_delete_permission(self, request, obj=None):  # noqa: ANN001
        return False


@admin.register(ClaimQuality)
class ClaimQualityAdmin(ReadOnlyAdmin):
    list_display = ["claim", "score", "correct_votes", "total_votes", "too_hard", "too_easy", "open_reports", "hidden_until_review", "kept", "out_of_play"]
    list_filter = ["too_hard", "too_easy", "hidden_until_review", "kept", "out_of_play", "claim__status", "claim__page__category"]
    search_fields = ["claim__text", "claim__page__title", "claim__external_id"]
    raw_id_fields = ["claim", "reviewed_by"]
    ordering = ["score"]


@admin.register(PriorFit)
class PriorFitAdmin(ReadOnlyAdmin):
    list_display = ["created", "a", "b", "mean", "n_claims", "pooled_correct", "pooled_votes", "converged"]


@admin.register(AuditRecord)
class AuditRecordAdmin(ReadOnlyAdmin):
    list_display = ["created", "moderator", "action", "claim", "reason"]
    list_filter = ["action", "created"]
    search_fields = ["reason", "claim__text", "moderator__username"]
    raw_id_fields = ["claim", "moderator"]
    date_hierarchy = "created"


# --- claims ---------------------------------------------------------------------------------

MODERATION_FIELDS = ["moderation_action", "new_label", "gold_sentence_ids", "reason"]


class ClaimGoldInline(admin.TabularInline):
    model = ClaimGold
    raw_id_fields = ["sentence"]
    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ClaimModerationForm(forms.ModelForm):
    """No model field is edited here; the form holds one moderation action."""

    moderation_action = forms.ChoiceField(choices=[("", "---------"), *AuditRecord.Action.choices], required=False)
    new_label = forms.ChoiceField(choices=[("", "---------"), *Claim.Label.choices], required=False, help_text="relabel only")
    gold_sentence_ids = forms.CharField(
        required=False, max_length=100, help_text="edit_evidence only: 1 or 2 sentence ids of the claim's page, comma-separated"
    )
    reason = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text="Why: recorded in the audit log")

    class Meta:
        model = Claim
        fields: list[str] = []

    checked: CheckedAction | None = None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        action = data.get("moderation_action")
        if not action:
            if data.get("new_label") or data.get("gold_sentence_ids") or (data.get("reason") or "").strip():
                raise forms.ValidationError("Choose a moderation action, or leave its fields empty.")
            return data
        gold = None
        if data.get("gold_sentence_ids"):
            try:
                gold = [int(part) for part in data["gold_sentence_ids"].replace(" ", "").split(",") if part]
            except ValueError:
                raise forms.ValidationError({"gold_sentence_ids": "Sentence ids are whole numbers, comma-separated."}) from None
        try:
            # Takes the claim's and its quality row's locks, held until the admin's transaction ends.
            self.checked = check_claim_action(
                claim_id=self.instance.pk, action=action, reason=data.get("reason"), label=data.get("new_label") or None, gold_sentence_ids=gold
            )
        except ServiceError as error:
            raise forms.ValidationError(error.message, code=error.code) from None
        return data


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    form = ClaimModerationForm
    list_display = ["id", "text", "label", "page", "author", "status", "release_split", "created"]
    list_filter = ["label", "status", "release_split", "page__category", "quality__too_hard", "quality__too_easy", "quality__out_of_play"]
    search_fields = ["text", "page__title", "author__username", "external_id"]
    inlines = [ClaimGoldInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in Claim._meta.concrete_fields] + ["moderation_links"]

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[str | None, dict[str, Any]]]:
        fieldsets: list[tuple[str | None, dict[str, Any]]] = [(None, {"fields": self.get_readonly_fields(request, obj)})]
        if obj is not None and self.has_change_permission(request, obj):
            fieldsets.append(
                (
                    "Moderate (the queue's actions, recorded in the audit log)",
                    {"fields": MODERATION_FIELDS, "description": "Label, gold evidence and status change only through an action."},
                )
            )
        return fieldsets

    @admin.display(description="Moderation")
    def moderation_links(self, obj: Claim) -> str:
        return format_html(
            '<a href="{}?claim={}">Audit log of this claim</a> · <a href="{}">Moderation queue</a>',
            reverse("moderation:audit"), obj.pk, reverse("moderation:queue"),
        )

    # The list and the change page show claims with their labels, as the queue does: record
    # them as seen by this user (never dealt to them; the export marks later votes).
    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        response = super().changelist_view(request, extra_context)
        shown = getattr(response, "context_data", None) or {}
        if "cl" in shown:
            sightings_record(moderator=request.user, claim_ids=[claim.pk for claim in shown["cl"].result_list])
        return response

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None) -> HttpResponse:
        response = super().change_view(request, object_id, form_url, extra_context)
        if response.status_code == 200 and object_id.isdigit() and Claim.objects.filter(pk=object_id).exists():
            sightings_record(moderator=request.user, claim_ids=[int(object_id)])
        return response

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # claims come from authoring and imports, through their rules

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a moderator removes a claim, audited; its rows stay for history

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_moderator(request.user)

    def save_model(self, request: HttpRequest, obj: Claim, form: ClaimModerationForm, change: bool) -> None:
        if form.checked is None:
            return  # every field is read-only: nothing else to save
        record = do_claim_action(form.checked, moderator=request.user)
        self.message_user(request, f"{record.get_action_display()}: {record.reason} (recorded in the audit log).", messages.SUCCESS)
