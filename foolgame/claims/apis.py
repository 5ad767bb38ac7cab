"""Read-only corpus endpoints that count claims: categories and pages with how many active
claims each holds (here rather than in pages, which knows nothing of claims)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.claims.selectors import category_list, page_summary_rows
from foolgame.core.schema import errors
from foolgame.core.views import ApiView


class CategorySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    slug = serializers.CharField()
    page_count = serializers.IntegerField()
    claim_count = serializers.IntegerField()


class PageSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    category = serializers.CharField(source="category.name", allow_null=True, default=None)
    priority = serializers.BooleanField()
    sentence_count = serializers.IntegerField()
    claim_count = serializers.IntegerField()


class CategoryListApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        responses={200: CategorySerializer(many=True), **errors(login=False, e405="method_not_allowed: only GET (and HEAD, OPTIONS) is answered here")},
        summary="Categories with their page counts",
        description="Every category of the corpus with how many pages and claims it has; open to everyone.",
    )
    def get(self, request: Request) -> Response:
        return Response(CategorySerializer(category_list(), many=True).data)


class PageListApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter("category", str, description="a category name or slug"),
            OpenApiParameter("q", str, description="part of a page title"),
        ],
        responses={200: PageSummarySerializer(many=True), **errors(login=False, e405="method_not_allowed: only GET (and HEAD, OPTIONS) is answered here")},
        summary="Pages, priority pages first",
        description="The corpus's pages, priority pages first, optionally in one category or matching part of a title. "
        "An unknown category gives an empty list, not an error.",
    )
    def get(self, request: Request) -> Response:
        rows = page_summary_rows(category=request.query_params.get("category"), search=request.query_params.get("q"))
        return Response(page_summaries(rows))


# PageSummarySerializer's fields, in PAGE_SUMMARY_COLUMNS' order: the whole corpus's pages
# come in one answer, and the serializer's work per field and page was most of its CPU.
_SUMMARY_FIELDS = ("id", "title", "category", "priority", "sentence_count", "claim_count")


def page_summaries(rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """What ``PageSummarySerializer(pages, many=True).data`` gives, from ``page_summary_rows``."""
    return [dict(zip(_SUMMARY_FIELDS, row)) for row in rows]
