from django.contrib import admin

from foolgame.rooms.models import Room, RoomMember, RoomQuestion


class RoomMemberInline(admin.TabularInline):
    model = RoomMember
    extra = 0
    raw_id_fields = ["player"]


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    """Rooms are a record of play: readable here, changed only by play."""

    list_display = ["code", "host", "state", "questions", "seconds", "current", "created", "ended_at", "end_reason"]
    list_filter = ["state"]
    search_fields = ["code", "host__username"]
    raw_id_fields = ["host"]
    inlines = [RoomMemberInline]


@admin.register(RoomQuestion)
class RoomQuestionAdmin(admin.ModelAdmin):
    list_display = ["room", "number", "state", "started_at", "deadline", "ended_at"]
    raw_id_fields = ["room", "left_claim", "right_claim"]
