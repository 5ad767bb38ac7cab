from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from foolgame.health import LiveView, ReadyView
from foolgame.observability import metrics_view


class FaviconView(RedirectView):
    """``/favicon.ico``, which browsers ask for on pages that name no icon (the API's docs, the
    admin): the site's SVG icon (the game's own pages link it from their head)."""

    permanent = True

    def get_redirect_url(self, *args: object, **kwargs: object) -> str:
        return static("fm2/favicon.svg")


urlpatterns = [
    path("favicon.ico", FaviconView.as_view(), name="favicon"),
    # For load balancers and orchestrators (docs/operations.md, Health): JSON, no secrets.
    path("health/live", LiveView.as_view(), name="health-live"),
    path("health/ready", ReadyView.as_view(), name="health-ready"),
    # Prometheus (docs/operations.md, Metrics and logs): 404 unless FM2_METRICS_TOKEN or _NETWORKS.
    path("metrics", metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/", include("foolgame.api.urls")),
    path("accounts/", include("foolgame.players.urls")),
    path("moderation/", include("foolgame.moderation.urls")),
    path("research/studies/", include("foolgame.studies.research_urls")),
    path("research/", include("foolgame.dataset.urls")),
    path("write/", include("foolgame.authoring.urls")),
    path("rooms/", include("foolgame.rooms.urls")),
    path("checks/", include("foolgame.checks.urls")),
    path("s/", include("foolgame.studies.urls")),
    path("", include("foolgame.voting.urls")),
    path("", include("foolgame.claims.urls")),
]
