from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("foolgame.api.urls")),
    path("accounts/", include("foolgame.players.urls")),
    path("moderation/", include("foolgame.moderation.urls")),
    path("research/", include("foolgame.dataset.urls")),
    path("write/", include("foolgame.authoring.urls")),
    path("rooms/", include("foolgame.rooms.urls")),
    path("checks/", include("foolgame.checks.urls")),
    path("", include("foolgame.voting.urls")),
    path("", include("foolgame.claims.urls")),
]
