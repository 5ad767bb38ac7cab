from django.contrib import admin

from foolgame.claims.models import Claim, ClaimGold


class ClaimGoldInline(admin.TabularInline):
    model = ClaimGold
    raw_id_fields = ["sentence"]
    extra = 0


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = ["id", "text", "label", "page", "author", "status", "release_split", "created"]
    list_filter = ["label", "status", "release_split", "page__category", "quality__too_hard", "quality__too_easy", "quality__out_of_play"]
    search_fields = ["text", "page__title", "author__username", "external_id"]
    raw_id_fields = ["page", "author"]
    inlines = [ClaimGoldInline]
