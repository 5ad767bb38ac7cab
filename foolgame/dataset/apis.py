"""Background dataset exports for researchers (staff or the ``researchers`` group)."""

from __future__ import annotations

from django.conf import settings
from django.http import FileResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.core.errors import ServiceError
from foolgame.core.schema import errors
from foolgame.core.views import ApiView
from foolgame.dataset.models import Export
from foolgame.dataset.records import BASELINE_MAX_CLAIMS, FORMATS
from foolgame.dataset.selectors import export_list
from foolgame.dataset.services import export_file_open, export_request
from foolgame.dataset.splits import RESPLIT_OPTION, RULES, SPLITS, SPLITS_OPTION
from foolgame.players.apis import IsResearcher


class ExportRequestSerializer(serializers.Serializer):
    seed = serializers.IntegerField(required=False, default=0)
    splits = serializers.CharField(required=False, default="0.8,0.1,0.1", max_length=100, help_text="train,dev,test proportions of claims")
    formats = serializers.ListField(child=serializers.ChoiceField(choices=FORMATS), required=False, default=list(FORMATS), min_length=1)
    include_removed = serializers.BooleanField(required=False, default=False)
    resplit_release = serializers.BooleanField(
        required=False, default=False,
        help_text="split release pages by the requested proportions like new pages, instead of keeping their release split",
    )
    exclusive_test_authors = serializers.ListField(
        child=serializers.CharField(max_length=150), required=False, default=list, max_length=10_000,
        help_text="usernames whose claims go to test only",
    )
    baseline_max_claims = serializers.IntegerField(
        required=False, default=BASELINE_MAX_CLAIMS, min_value=10, max_value=1_000_000,
        help_text="the claim-only baseline learns from at most this many train claims (memory grows about 10 MB per 1000)",
    )
    certify = serializers.BooleanField(
        required=False, default=False,
        help_text="also write quality.json, the release's quality gates (docs/dataset.md); the export's quality lists them",
    )


class ExportCreatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()


class ExportFileSerializer(serializers.Serializer):
    name = serializers.CharField()
    size = serializers.IntegerField(help_text="bytes")
    url = serializers.CharField(help_text="download URL")


class SplitCountsSerializer(serializers.Serializer):
    train = serializers.IntegerField()
    dev = serializers.IntegerField()
    test = serializers.IntegerField()


class SplitRuleSerializer(serializers.Serializer):
    rule = serializers.ChoiceField(choices=list(RULES), help_text="; ".join(f"{rule}: {text}" for rule, text in RULES.items()))
    description = serializers.CharField()
    pages = SplitCountsSerializer(help_text="pages this rule placed in each split")
    claims = SplitCountsSerializer(help_text="claims written to each split from those pages")


class EmptySplitSerializer(serializers.Serializer):
    split = serializers.ChoiceField(choices=SPLITS)
    reason = serializers.CharField(help_text="why no claim landed in it")
    option = serializers.ChoiceField(
        choices=[RESPLIT_OPTION, SPLITS_OPTION], allow_null=True,
        help_text="the request field that would fill it (resplit_release: true, or other splits); null when there is nothing to export",
    )


class SplitSummarySerializer(serializers.Serializer):
    resplit_release = serializers.BooleanField(help_text="release pages were re-split by the requested proportions")
    rules = SplitRuleSerializer(many=True, help_text="each rule that placed a page, in the order the rules are tried")
    empty_splits = EmptySplitSerializer(many=True, help_text="each split that holds no claim")


class QualityGateSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="checked_share, kappa, artifacts, lmi, page_disjoint, exclusive_test_authors, personal_data or offensive_language")
    passed = serializers.BooleanField()
    value = serializers.JSONField(allow_null=True, help_text="the gate's figure; null when it could not be measured")
    threshold = serializers.JSONField(help_text="the setting it is held to (FM2_CERTIFY)")
    reason = serializers.CharField(required=False, help_text="why the figure is missing")


class ExportStatusSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Export.Status.values)
    stage = serializers.CharField(help_text="plan, claims, votes, stats, model, artifacts, certify, card or done")
    progress = serializers.FloatField(help_text="0 to 1")
    options = serializers.DictField(help_text="the request's seed, splits, formats, include_removed, resplit_release, exclusive_test_authors")
    requested_by = serializers.CharField(allow_null=True, help_text="the researcher who asked for it")
    created = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField(allow_blank=True)
    files = ExportFileSerializer(many=True, help_text="once done")
    split_summary = SplitSummarySerializer(
        allow_null=True, help_text="once done: how many pages and claims each rule placed in each split, and why a split is empty"
    )
    quality = QualityGateSerializer(
        many=True, allow_null=True, help_text="once done, for a certified export: its quality gates (quality.json has their details)"
    )
    attempts = serializers.IntegerField(help_text="runs started; a run whose worker died is taken over, up to a limit")
    max_attempts = serializers.IntegerField(help_text="after this many runs whose worker died the export fails")
    heartbeat_at = serializers.DateTimeField(allow_null=True, help_text="last sign of life of the running job")


class ExportListSerializer(serializers.Serializer):
    exports = ExportStatusSerializer(many=True, help_text="newest first")
    count = serializers.IntegerField(help_text="every export ever requested (the list holds the latest ones)")


FORBIDDEN = "permission_denied: logged in, but neither staff nor in the researchers group"
EXPORTS_LISTED = 50


def export_payload(request: Request, export: Export) -> dict:
    """An export as researchers see it: status, progress, heartbeat and, once done, its files
    with absolute download URLs."""
    files = [
        {**f, "url": request.build_absolute_uri(reverse("export-file", args=[export.pk, f["name"]]))}
        for f in (export.files if export.status == Export.Status.DONE else [])
    ]
    return ExportStatusSerializer(
        {
            "id": export.pk,
            "status": export.status,
            "stage": export.stage,
            "progress": export.progress,
            "options": export.options,
            "requested_by": export.requested_by.get_username() if export.requested_by else None,
            "created": export.created,
            "started_at": export.started_at,
            "finished_at": export.finished_at,
            "error": export.error,
            "files": files,
            "split_summary": export.split_summary if export.status == Export.Status.DONE else None,
            "quality": export.quality if export.status == Export.Status.DONE else None,
            "attempts": export.attempts,
            "max_attempts": settings.FM2_JOBS["EXPORT_MAX_ATTEMPTS"],
            "heartbeat_at": export.heartbeat_at,
        }
    ).data


class ExportListCreateApi(ApiView):
    permission_classes = [IsResearcher]
    researchers_may = "may export the dataset"

    @extend_schema(
        operation_id="exports_list",
        responses={200: ExportListSerializer, **errors(e403=FORBIDDEN)},
        summary="The latest exports, newest first (researchers only)",
        description=f"Researchers only. The {EXPORTS_LISTED} latest exports, whoever asked for them, each as "
        "`GET /api/exports/<id>` gives it (status, stage, progress and, once done, the files with their download "
        "URLs), and the count of all exports. The researcher's page `/research/` shows this list.",
    )
    def get(self, request: Request) -> Response:
        exports = export_list()
        return Response(
            {"exports": [export_payload(request, e) for e in exports[:EXPORTS_LISTED]], "count": exports.count()}
        )

    @extend_schema(
        request=ExportRequestSerializer,
        responses={
            201: ExportCreatedSerializer,
            **errors(
                post=True,
                e400=[
                    "invalid: the body is not a JSON object, or a field has the wrong type (details names it)",
                    "invalid_options: splits is not three numbers for train,dev,test, or they are negative or all 0",
                ],
                e403=FORBIDDEN,
            ),
        },
        summary="Start a dataset export in the background (researchers only)",
        description="Queues an export of the collected claims, votes and evidence with a seed, train/dev/test "
        "proportions and formats; a Celery worker runs it. Poll `GET /api/exports/<id>` for progress and files. "
        "Release pages keep their release split unless `resplit_release` is true.",
    )
    def post(self, request: Request) -> Response:
        if not isinstance(request.data, dict):
            raise ServiceError("invalid", "Send a JSON object.")
        serializer = ExportRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        export = export_request(user=request.user, **serializer.validated_data)
        return Response({"id": export.pk}, status=status.HTTP_201_CREATED)


class ExportDetailApi(ApiView):
    permission_classes = [IsResearcher]
    researchers_may = "may export the dataset"

    @extend_schema(
        responses={200: ExportStatusSerializer, **errors(e403=FORBIDDEN, e404="not_found: no export has this id")},
        summary="An export's progress and, once done, its files",
        description="Researchers only. The export's status, stage and progress (0 to 1), its heartbeat and attempts; "
        "once done, each file with its size and download URL, and the split summary: how many pages and claims each "
        "rule (kept its release split, test-exclusive author, split by the proportions, re-split release page) placed "
        "in train, dev and test, and for a split that came out empty, why and which request field would fill it.",
    )
    def get(self, request: Request, export_id: int) -> Response:
        return Response(export_payload(request, get_object_or_404(Export.objects.select_related("requested_by"), pk=export_id)))


class ExportFileApi(ApiView):
    permission_classes = [IsResearcher]
    researchers_may = "may export the dataset"

    @extend_schema(
        responses={
            (200, "application/octet-stream"): OpenApiResponse(OpenApiTypes.BINARY, description="the file"),
            **errors(e403=FORBIDDEN, e404="not_found: no such export, the export is not done, or it has no file of this name"),
        },
        summary="Download one file of a finished export",
        description="Researchers only. One file of a finished export, as an attachment.",
    )
    def get(self, request: Request, export_id: int, name: str) -> FileResponse:
        export = get_object_or_404(Export, pk=export_id)
        return FileResponse(export_file_open(export=export, name=name), as_attachment=True, filename=name)
