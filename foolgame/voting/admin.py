from django.contrib import admin

from foolgame.voting.models import Report, Round, Vote


class VoteInline(admin.StackedInline):
    model = Vote
    extra = 0
    can_delete = False
    readonly_fields = ["false_claim_index", "correct", "points", "remaining", "created"]


@admin.register(Round)
class RoundAdmin(admin.ModelAdmin):
    """Rounds are the game's record (votes, clues, clock): readable here, changed only by play."""

    list_display = ["id", "player", "state", "left_claim", "right_claim", "created", "started_at", "ended_at"]
    list_filter = ["state", "created"]
    search_fields = ["player__username", "left_claim__text", "right_claim__text"]
    raw_id_fields = ["player", "left_claim", "right_claim"]
    date_hierarchy = "created"
    inlines = [VoteInline]

    def has_add_permission(self, request):  # noqa: ANN001
        return False

    def has_change_permission(self, request, obj=None):  # noqa: ANN001
        return False


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ["created", "claim", "reporter", "reason", "note"]
    list_filter = ["reason", "created", "claim__status"]
    search_fields = ["note", "claim__text", "reporter__username"]
    raw_id_fields = ["claim", "reporter", "round"]
    date_hierarchy = "created"

    def has_add_permission(self, request):  # noqa: ANN001
        return False

    def has_change_permission(self, request, obj=None):  # noqa: ANN001
        return False
