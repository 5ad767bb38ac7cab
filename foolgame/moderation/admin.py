from django.contrib import admin

from foolgame.moderation.models import AuditRecord, ClaimQuality, PriorFit


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
