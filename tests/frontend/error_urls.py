"""The site's URLs plus views that fail, for the error-page tests (``pytest.mark.urls``)."""

from django.http import HttpRequest, HttpResponse
from django.urls import include, path


def explode(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug in a view")


urlpatterns = [
    path("broken/", explode),
    path("api/broken", explode),
    path("", include("foolgame.urls")),
]
