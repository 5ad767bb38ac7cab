from django.contrib import admin

from foolgame.authoring.models import GiveawayModel, WriteTask


@admin.register(WriteTask)
class WriteTaskAdmin(admin.ModelAdmin):
    list_display = ["id", "player", "page", "veracity", "created", "expires_at", "used_at", "claim"]
    list_filter = ["veracity"]
    raw_id_fields = ["player", "page", "claim"]
    search_fields = ["player__username", "page__title"]


@admin.register(GiveawayModel)
class GiveawayModelAdmin(admin.ModelAdmin):
    list_display = ["id", "created", "examples", "cv_accuracy", "cv_accuracy_by_page", "threshold", "confident_share"]
    exclude = ["blob"]
    readonly_fields = ["examples", "newest_claim_id", "cv_accuracy", "cv_accuracy_by_page", "threshold", "confident_share", "confident_precision"]
