"""Read-only corpus endpoint: a page and its sentences (the lists of categories and pages,
with their claim counts, are the claims app's: ``claims/apis.py``)."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.core.queries import compiled_instance
from foolgame.core.schema import errors
from foolgame.core.views import ApiView
from foolgame.pages.models import Page
from foolgame.pages.selectors import SentenceRow, page_sentence_rows, reading_order


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


class PageDetailApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        responses={200: PageDetailSerializer, **errors(login=False, e404="not_found: no page has this id")},
        summary="A page and its sentences in order",
        description="One page with its current sentences in reading order (`id`, `text`, `section_header`); "
        "sentence ids are what a claim's `gold_sentence_ids` name.",
    )
    def get(self, request: Request, page_id: int) -> Response:
        page = compiled_instance("page_detail", lambda: Page.objects.select_related("category"), page_id)
        if page is None:
            raise Http404("No page has this id.")
        return Response(page_detail(page, reading_order(page_sentence_rows(page_id=page.pk))))


def page_detail(page: Page, sentences: list[SentenceRow]) -> dict[str, Any]:
    """What ``PageDetailSerializer`` gives for the page with ``sentences`` in order, written
    out: a page has hundreds of sentences, and the serializer's work per field and sentence
    was most of the endpoint's CPU."""
    return {
        "id": page.pk,
        "title": page.title,
        "category": page.category.name if page.category is not None else None,
        "priority": page.priority,
        "source": page.source,
        "sentences": [{"id": s.id, "text": s.text, "section_header": s.section_header} for s in sentences],
    }
