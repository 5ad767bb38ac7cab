"""The participant's pages: ``/s/<slug>/`` is the consent page for someone arriving from a
platform's link (its parameters read here, never stored before consent), and once they are
signed in as the study's participant, their progress through the work, with the link to the
game's page for the next task and, when the server's count says so, their code."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.csrf import ensure_csrf_cookie

from foolgame.core.errors import ServiceError
from foolgame.studies import services
from foolgame.studies.models import Participant, Study

MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
TASK_PAGES = {"write": "authoring:start", "vote": "voting:play", "check": "checks:check"}


def arrival_from_query(query: dict[str, str]) -> dict[str, object]:
    """Which platform sent the participant, with their id and the platform's other
    parameters: Prolific's ``PROLIFIC_PID``, ``STUDY_ID``, ``SESSION_ID``; Mechanical Turk's
    ``workerId``, ``assignmentId``, ``hitId`` (a preview has no worker yet); or ``pid``."""
    if query.get("PROLIFIC_PID"):
        platform, pid = Participant.Platform.PROLIFIC, query["PROLIFIC_PID"]
    elif query.get("workerId") or query.get("assignmentId"):
        platform, pid = Participant.Platform.MTURK, query.get("workerId", "")
    else:
        platform, pid = Participant.Platform.LINK, query.get("pid", "")
    extra = {key: query[key] for key in services.PLATFORM_EXTRA[platform] if query.get(key)}
    preview = platform == Participant.Platform.MTURK and query.get("assignmentId") == MTURK_PREVIEW
    return {"platform": str(platform), "participant": pid[:200], "extra": extra, "preview": preview}


@ensure_csrf_cookie
def study_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise Http404("No study has this address.")
    try:
        participant = services.participant_in(user=request.user, slug=slug) if request.user.is_authenticated else None
    except ServiceError:
        participant = None
    if participant is None:
        arrival = arrival_from_query(request.GET)
        context = {
            "study": study, "arrival": arrival, "open": study.status == Study.Status.OPEN,
            # Consent signs the browser in as a new participant account: say so to anyone
            # signed in as another (a researcher trying the link, a student with an account).
            "signed_in_as": request.user.get_username() if request.user.is_authenticated else "",
        }
        return render(request, "studies/study_consent.html", context)
    state = services.participant_state(participant=participant)
    context = {
        "study": study,
        "state": state,
        "step": min(state["done"] + 1, state["total"]),
        "next_url": reverse(TASK_PAGES[state["next"]]) if state["next"] else None,
        "code": state["completion_code"] or state["screen_out_code"],
    }
    return render(request, "studies/study_progress.html", context)
