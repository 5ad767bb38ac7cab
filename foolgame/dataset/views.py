"""The researcher's page: past exports with their progress and files, and a form for a new one
(the page talks to ``/api/exports``; it renders the list from the same JSON the API gives)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from foolgame.dataset.apis import EXPORTS_LISTED, export_payload
from foolgame.dataset.plots import research_plots
from foolgame.dataset.records import BASELINE_MAX_CLAIMS, FORMATS
from foolgame.dataset.selectors import export_list, latest_stats
from foolgame.players.roles import is_researcher, role_page

researchers_only = role_page(is_researcher, "dataset/forbidden.html")


@researchers_only
@ensure_csrf_cookie
def exports(request: HttpRequest) -> HttpResponse:
    listed = export_list()
    context = {
        "initial": {"exports": [export_payload(request, e) for e in listed[:EXPORTS_LISTED]], "count": listed.count()},
        "formats": FORMATS,
        "baseline_max_claims": BASELINE_MAX_CLAIMS,
    }
    latest = latest_stats()
    if latest is not None:
        context["plots_export"], stats = latest
        context["plots"] = research_plots(stats)
    return render(request, "dataset/exports.html", context)
