"""Read-only corpus endpoints: categories, pages and a page's sentences."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.core.schema import errors
from foolgame.core.views import ApiView
from foolgame.pages.models import Page
from foolgame.pages.selectors import category_list, page_list, page_sentences, reading_order


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


class SentenceSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    section_header = serializers.CharField()


class PageDetailSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    category = serializers.CharField(source="category.name", allow_null=True, default=None)
    priority = serializers.BooleanField()
    source = serializers.CharField()
    sentences = SentenceSerializer(many=True, source="sentences_in_order")


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
        pages = page_list(category=request.query_params.get("category"), search=request.query_params.get("q"))
        return Response(PageSummarySerializer(pages, many=True).data)


class PageDetailApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        responses={200: PageDetailSerializer, **errors(login=False, e404="not_found: no page has this id")},
        summary="A page and its sentences in order",
        description="One page with its current sentences in reading order (`id`, `text`, `section_header`); "
        "sentence ids are what a claim's `gold_sentence_ids` name.",
    )
    def get(self, request: Request, page_id: int) -> Response:
        page = get_object_or_404(Page.objects.select_related("category"), pk=page_id)
        page.sentences_in_order = reading_order(list(page_sentences(page=page)))
        return Response(PageDetailSerializer(page).data)
