"""Studies in the admin: studies and their arms readable, status changeable (pause, resume,
close); participants readable without their platform ids, which only a study's owner sees
(in the bonus file and the owner's participant list), and nothing here is editable by hand:
an arm's or a participant's rows are the study's record."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from foolgame.studies.models import Arm, AttentionCheck, Participant, Study


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ArmInline(admin.TabularInline):
    model = Arm
    fields = ["position", "name", "settings"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "owner", "status", "arrivals", "per_arm", "created"]
    list_filter = ["status"]
    search_fields = ["slug", "name", "owner__username"]
    fields = [
        "slug", "name", "owner", "status", "consent_text", "tasks", "page_ids", "categories", "per_arm", "block_size", "seed",
        "arrivals", "completion_code", "screen_out_code", "attention_checks", "attention_max_failures", "time_limit_minutes",
        "bonus", "address_cap", "created", "closed",
    ]
    readonly_fields = [field for field in fields if field != "status"]
    inlines = [ArmInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # POST /api/studies or manage.py study create: the definition is checked there


@admin.register(Participant)
class ParticipantAdmin(ReadOnly):
    list_display = ["study", "sequence", "arm", "user", "platform", "status", "consented", "ended"]
    list_filter = ["status", "platform"]
    search_fields = ["study__slug", "user__username"]
    fields = ["study", "sequence", "arm", "user", "platform", "status", "consented", "ended"]


@admin.register(AttentionCheck)
class AttentionCheckAdmin(ReadOnly):
    list_display = ["participant", "claim", "position", "passed", "answered"]
    list_filter = ["passed"]
