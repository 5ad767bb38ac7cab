"""Authoring hints: what the lexical retriever finds on a page for the author's draft."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.api.views import ApiView
from foolgame.evidence.services import MAX_QUERY_CHARS, page_hints
from foolgame.pages.models import Page


class HintSerializer(serializers.Serializer):
    sentence_id = serializers.IntegerField()
    text = serializers.CharField()
    section_header = serializers.CharField(allow_blank=True)
    highlights = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="[start, end) character offsets in text of the words that match the draft.",
    )


class PageHintsApi(ApiView):
    """Logged-in players only: hints are for authors drafting a claim, who always are."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "q", str, description=f"the author's draft (at most {MAX_QUERY_CHARS} characters); blank gives []"
            )
        ],
        responses={
            200: HintSerializer(many=True),
            400: OpenApiResponse(description="invalid_query: q is longer than the limit"),
            403: OpenApiResponse(description="not logged in"),
            404: OpenApiResponse(description="no such page"),
        },
        summary="Lexical hints for a draft claim, best first (up to 10)",
    )
    def get(self, request: Request, page_id: int) -> Response:
        page = get_object_or_404(Page, pk=page_id)
        hints = page_hints(page=page, query=request.query_params.get("q", ""))
        return Response(HintSerializer(hints, many=True).data)
