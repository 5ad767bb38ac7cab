"""The researcher's REST view of their studies: the list, the figures, pause, resume and close,
the participants (with their platform ids) and the bonus file. Transport only: the rules are
in :mod:`foolgame.studies.research`."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.core.errors import ServiceError
from foolgame.core.schema import errors
from foolgame.core.views import ApiView
from foolgame.players.apis import IsResearcher
from foolgame.studies import research, services
from foolgame.studies.apis import StudyCreateApi

NOT_OWNER = "not_study_owner: logged in, but neither the study's owner nor staff"
OWNER_ONLY = "not_study_owner: logged in, but not the study's owner (staff and other researchers included)"
NO_STUDY = "not_found: no study has this slug"
NOT_RESEARCHER = "permission_denied: logged in, but neither staff nor in the researchers group"


class _NoFormatParameter(DefaultContentNegotiation):
    """``?format=`` names the bonus file's platform here, not a DRF renderer: the answer is
    always the one renderer (JSON, for errors); the file itself is a plain response."""

    class settings:  # noqa: N801 - DRF reads ``self.settings.URL_FORMAT_OVERRIDE``
        URL_FORMAT_OVERRIDE = None


class StudyListApi(ApiView):
    permission_classes = [IsResearcher]
    researchers_may = "may run studies"

    @extend_schema(
        operation_id="studies_list",
        responses={200: OpenApiTypes.OBJECT, **errors(e403=NOT_RESEARCHER)},
        summary="The studies a researcher owns (staff: every study)",
        description="Researchers only. `{studies: [{slug, name, status, created, closed, per_arm, arms: [{name, "
        "settings, participants, filled}], ...}]}` (each study as `POST /api/studies` answers it: `services.study_summary`; "
        "an arm's `participants` arrived, `filled` are those not screened out, which close the study when every arm has "
        "`per_arm`), newest first: the researcher's own studies; staff see every study. The page "
        "`/research/studies/` shows this list.",
    )
    def get(self, request: Request) -> Response:
        studies = research.studies_for(request.user).order_by("-created", "-id")
        return Response({"studies": [services.study_summary(study) for study in studies]})


class StudiesApi(StudyCreateApi):
    """``/api/studies``: POST defines a study (``apis.StudyCreateApi``), GET lists the
    researcher's own (``StudyListApi``). One view, as Django routes one path to one view."""

    get = StudyListApi.get
    researchers_may = StudyListApi.researchers_may

    def get_permissions(self) -> list[Any]:
        if self.request.method == "GET":
            return [IsResearcher()]
        return super().get_permissions()


class StudyFiguresApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        operation_id="studies_figures",
        responses={200: OpenApiTypes.OBJECT, **errors(e403=NOT_OWNER, e404=NO_STUDY)},
        summary="A study's figures per arm (its owner and staff)",
        description="The study's owner and staff only. The study (slug, name, status, tasks, bonus rules) and "
        "`by_arm`, one object per arm in order: `started`, `active`, `finished`, `screened_out`, `timed_out`, "
        "`median_seconds_to_finish`, `drop_off` (per task of the study's order: `reached`, `working`, "
        "`stopped`), `attention` (`answered`, `failed`, `participants_failing`), `collected` (`claims`, "
        "`verified_fooling_claims`, `votes`, `checks`), `vote_accuracy`, `model_error_rate` over "
        "`model_judged_claims`, and `bonus_total`. No platform id is in it (docs/studies.md).",
    )
    def get(self, request: Request, slug: str) -> Response:
        study = research.study_for_reader(slug=slug, user=request.user)
        return Response(research.study_figures(study))


class _StudyStatusApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]
    action = ""

    def post(self, request: Request, slug: str) -> Response:
        study = research.study_set_status(slug=slug, user=request.user, action=self.action)
        return Response(services.study_summary(study))


def _status_schema(action: str, what: str) -> Any:
    return extend_schema(
        operation_id=f"studies_{action}",
        request=None,
        responses={
            200: OpenApiTypes.OBJECT,
            **errors(post=True, reads_body=False, e403=OWNER_ONLY, e404=NO_STUDY,
                     e409="study_already_closed: the study is closed, and closing is final"),
        },
        summary=f"{action.capitalize()} a study (its owner only)",
        description=f"The study's owner only. {what} Answers the study as the list shows it.",
    )


class StudyPauseApi(_StudyStatusApi):
    action = "pause"

    @_status_schema("pause", "Nobody new may start while it is paused; participants already in carry on. Pausing a paused study changes nothing.")
    def post(self, request: Request, slug: str) -> Response:
        return super().post(request, slug)


class StudyResumeApi(_StudyStatusApi):
    action = "resume"

    @_status_schema("resume", "Opens a paused study to new participants again. Resuming an open study changes nothing.")
    def post(self, request: Request, slug: str) -> Response:
        return super().post(request, slug)


class StudyCloseApi(_StudyStatusApi):
    action = "close"

    @_status_schema("close", "Closes the study for good: nobody new may start, and it cannot be opened again.")
    def post(self, request: Request, slug: str) -> Response:
        return super().post(request, slug)


class StudyParticipantsApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        operation_id="studies_participants",
        responses={200: OpenApiTypes.OBJECT, **errors(e403=OWNER_ONLY, e404=NO_STUDY)},
        summary="A study's participants with their platform ids (its owner only)",
        description="The study's owner only (staff too are refused: platform ids are personal data the owner "
        "collected). `{participants: [{sequence, arm, platform, platform_id, platform_extra, status, consented, "
        "ended, work: {write, vote, check}, bonus}]}` in arrival order.",
    )
    def get(self, request: Request, slug: str) -> Response:
        study = research.study_for_reader(slug=slug, user=request.user, owner_only=True)
        return Response({"participants": research.study_participants(study)})


class StudyBonusFileApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]
    content_negotiation_class = _NoFormatParameter

    @extend_schema(
        operation_id="studies_bonuses",
        parameters=[
            OpenApiParameter(
                "format", str, enum=list(research.BONUS_FORMATS), required=False,
                description="`prolific` (the default): `participant id,amount` lines without a header, Prolific's bulk "
                "bonus; `mturk`: `workerId,assignmentId,amount,reason` with a header",
            )
        ],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="the bonus file"),
            **errors(e400="invalid: format is neither prolific nor mturk", e403=OWNER_ONLY, e404=NO_STUDY),
        },
        summary="A study's bonus file (its owner only)",
        description="The study's owner only. The bonuses owed, from verified work only (a claim that fooled the "
        "model and whose label people confirmed, a vote that found the false claim, a check that agrees with the "
        "settled label), by the study's bonus rules, capped per participant, with two decimals; participants owed "
        "nothing are left out, and so are those who arrived from another platform.",
    )
    def get(self, request: Request, slug: str) -> HttpResponse:
        study = research.study_for_reader(slug=slug, user=request.user, owner_only=True)
        file_format = request.query_params.get("format", "prolific")
        if file_format not in research.BONUS_FORMATS:
            raise ServiceError("invalid", f"format is one of {', '.join(research.BONUS_FORMATS)}.")
        response = HttpResponse(research.bonus_file(study, file_format=file_format), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{study.slug}-bonuses-{file_format}.csv"'
        response["Cache-Control"] = "no-store"
        return response
