"""The researcher's pages of their studies: ``/research/studies/`` (the list),
``/research/studies/new`` (the form that defines one, posting to ``POST /api/studies``) and
``/research/studies/<slug>/`` (the figures per arm beside plots drawn on the server, the entry
URL to paste into Prolific, the pause, resume and close buttons, the bonus file's links).

The same figures as ``GET /api/studies/<slug>`` (:func:`foolgame.studies.research.study_figures`);
the buttons post to the API. Only the owner and staff see a study's page: 403 for everyone
else, as on the API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.csrf import ensure_csrf_cookie

from foolgame.core.arms import ARM_SETTINGS
from foolgame.core.errors import ServiceError
from foolgame.core.plots import SERIES, Frame, Plot, axis, pct
from foolgame.players.roles import is_researcher, role_page
from foolgame.pages.models import Category, Page
from foolgame.studies import research, services

researchers_only = role_page(is_researcher, "studies/study_research_forbidden.html")
study_runners_only = role_page(services.may_run_studies, "studies/study_research_forbidden.html")
PAGE_CHOICES = 1000
"""Pages offered by name on the form (priority pages first); a corpus larger than this is
chosen by category there, or by page id over REST."""
PROLIFIC_QUERY = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
"""What Prolific substitutes in a study URL ("URL parameters" in its study form)."""


def _bars(plot_id: str, title: str, summary: str, labels: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], *,
          y_label: str, x_label: str, share: bool = False) -> Plot:
    """Grouped bars, one group per label and a bar per series (at most two: ``SERIES``)."""
    rows = [[label, *(pct(values[i]) if share else f"{values[i]:,.0f}" for _, values in series)] for i, label in enumerate(labels)]
    head = [x_label, *(name for name, _ in series)]
    if not labels or not any(value for _, values in series for value in values):
        return Plot(plot_id, title, summary, "", head, rows)
    top, ticks = (1.0, [0, 0.25, 0.5, 0.75, 1.0]) if share else axis(max(value for _, values in series for value in values))
    frame = Frame(plot_id, title, summary, x=(-0.5, len(labels) - 0.5), y=(0, top))
    frame.y_axis(ticks, y_label, (lambda v: f"{100 * v:.0f}%") if share else (lambda v: f"{v:,.0f}"))
    width = (frame.sx(1) - frame.sx(0)) * 0.7
    bar = width / len(series)
    for index, (_, values) in enumerate(series):
        for i, value in enumerate(values):
            if value:
                x = frame.sx(i) - width / 2 + index * bar
                frame.parts.append(f'<rect x="{round(x, 1)}" y="{frame.sy(value)}" width="{round(bar, 1)}" '
                                   f'height="{round(frame.sy(0) - frame.sy(value), 1)}" fill="{SERIES[index]}"/>')
    frame.x_axis([(i, label) for i, label in enumerate(labels)], x_label)
    if len(series) > 1:
        frame.legend([name for name, _ in series])
    return Plot(plot_id, title, summary, frame.svg(), head, rows)


def study_plots(figures: Mapping[str, Any]) -> list[Plot]:
    """The study page's plots, from ``study_figures``: participants per arm, drop-off by task,
    the work collected and the votes' accuracy per arm."""
    arms = figures["by_arm"]
    names = [arm["arm"] for arm in arms]
    started = [arm["started"] for arm in arms]
    finished = [arm["finished"] for arm in arms]
    plots = [
        _bars("plot-study-arms", "Participants per arm",
              "; ".join(f"{a['arm']}: {a['started']} started, {a['finished']} finished, {a['screened_out']} screened out" for a in arms) + ".",
              names, [("started", started), ("finished", finished)], y_label="participants", x_label="arm"),
    ]
    tasks = figures.get("tasks") or []
    if tasks:
        labels = [f"{i + 1}. {task['kind']}" for i, task in enumerate(tasks)]
        reached = [sum(arm["drop_off"][i]["reached"] for arm in arms) for i in range(len(tasks))]
        stopped = [sum(arm["drop_off"][i]["stopped"] for arm in arms) for i in range(len(tasks))]
        summary = "; ".join(f"task {label}: {r} reached, {s} stopped there" for label, r, s in zip(labels, reached, stopped)) + "."
        plots.append(_bars("plot-study-drop-off", "Drop-off by task (all arms)", summary, labels,
                           [("reached", reached), ("stopped", stopped)], y_label="participants", x_label="task, in the study's order"))
    claims = [arm["collected"]["claims"] for arm in arms]
    votes = [arm["collected"]["votes"] for arm in arms]
    plots.append(_bars("plot-study-collected", "Claims and votes collected per arm",
                       "; ".join(f"{a['arm']}: {a['collected']['claims']} claims ({a['collected']['verified_fooling_claims']} verified "
                                 f"model-fooling), {a['collected']['votes']} votes, {a['collected']['checks']} checks" for a in arms) + ".",
                       names, [("claims", claims), ("votes", votes)], y_label="collected", x_label="arm"))
    accuracy = [arm["vote_accuracy"] or 0.0 for arm in arms]
    plots.append(_bars("plot-study-accuracy", "Votes that found the false claim, per arm",
                       "; ".join(f"{a['arm']}: {pct(a['vote_accuracy'])} of {a['collected']['votes']} votes" for a in arms) + ".",
                       names, [("accuracy", accuracy)], y_label="votes correct", x_label="arm", share=True))
    return plots


def _entry_url(request: HttpRequest, slug: str) -> str:
    return request.build_absolute_uri(f"/s/{slug}/")


@researchers_only
def study_list(request: HttpRequest) -> HttpResponse:
    studies = research.studies_for(request.user).order_by("-created", "-id")
    return render(request, "studies/study_research_list.html", {"studies": [services.study_summary(s) for s in studies]})


@researchers_only
@ensure_csrf_cookie
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        study = research.study_for_reader(slug=slug, user=request.user)
    except ServiceError as error:
        if error.status_code == 404:
            raise Http404(error.message) from None
        return render(request, "studies/study_research_forbidden.html", {"message": error.message}, status=error.status_code)
    figures = research.study_figures(study)
    entry = _entry_url(request, study.slug)
    return render(request, "studies/study_research_detail.html", {
        "study": study,
        "figures": figures,
        "plots": study_plots(figures),
        "owner": study.owner_id == request.user.pk,
        "entry_url": entry,
        "prolific_url": f"{entry}?{PROLIFIC_QUERY}",
        "mturk_url": f"{entry}?workerId=...&assignmentId=...&hitId=...",
        "link_url": f"{entry}?pid=NAME",
        "prolific_complete": f"https://app.prolific.com/submissions/complete?cc={study.completion_code}",
        "bonus_prolific": reverse("study-bonuses", args=[study.slug]) + "?format=prolific",
        "bonus_mturk": reverse("study-bonuses", args=[study.slug]) + "?format=mturk",
        "actions": {action: reverse(f"study-{action}", args=[study.slug]) for action in ("pause", "resume", "close")},
    })


def arm_fields() -> list[dict[str, Any]]:
    """The form's fields of an arm, one per setting of ``ARM_SETTINGS`` (the contract the
    server checks an arm against): a new setting appears on the form by itself, with its
    bounds and its default."""
    fields = []
    for key, spec in ARM_SETTINGS.items():
        default = spec.default_value()
        fields.append({
            "key": key,
            "kind": "bool" if spec.kind is bool else "int",
            "meaning": spec.meaning,
            "low": spec.low,
            "high": spec.high,
            "default": ("on" if default else "off") if spec.kind is bool else default,
        })
    return fields


@study_runners_only
@ensure_csrf_cookie
def study_new(request: HttpRequest) -> HttpResponse:
    """The form of a new study. It checks nothing itself: the page posts it to
    ``POST /api/studies``, whose per-field messages it shows beside the fields."""
    pages = list(Page.objects.order_by("-priority", "title").values("id", "title")[: PAGE_CHOICES + 1])
    return render(request, "studies/study_research_new.html", {
        "tasks": [{"kind": kind, "title": services.TASK_TITLES[kind]} for kind in services.TASK_KINDS],
        "task_max": services.TASK_MAX,
        "arm_fields": arm_fields(),
        "max_arms": services.MAX_ARMS,
        "categories": Category.objects.order_by("name"),
        "pages": pages[:PAGE_CHOICES],
        "more_pages": len(pages) > PAGE_CHOICES,
        "page_choices": PAGE_CHOICES,
        "address_cap": settings.FM2_STUDIES["ADDRESS_CAP"],
        "create_url": reverse("studies"),
    })
