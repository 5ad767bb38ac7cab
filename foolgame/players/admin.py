from django.contrib import admin

from foolgame.players.models import LedgerEntry, Notification


@admin.register(LedgerEntry)
class LedgerEntryAdmin(admin.ModelAdmin):
    """Ledger rows are the record of every award: readable here, never editable."""

    list_display = ["created", "player", "kind", "amount", "cause", "claim"]
    list_filter = ["kind"]
    search_fields = ["player__username", "cause"]
    raw_id_fields = ["player", "claim"]

    def has_add_permission(self, request):  # noqa: ANN001
        return False

    def has_change_permission(self, request, obj=None):  # noqa: ANN001
        return False

    def has_delete_permission(self, request, obj=None):  # noqa: ANN001
        return False


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    """Authors' news, for support questions ("why did I get this?"): read-only."""

    list_display = ["created", "player", "kind", "detail", "points", "claim", "read_at"]
    list_filter = ["kind", ("read_at", admin.EmptyFieldListFilter)]
    search_fields = ["player__username"]
    raw_id_fields = ["player", "claim", "actor"]

    def has_add_permission(self, request):  # noqa: ANN001
        return False

    def has_change_permission(self, request, obj=None):  # noqa: ANN001
        return False
