"""Authoring hints: what the lexical retriever finds on a page for the author's draft."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.core.schema import errors
from foolgame.core.views import ApiView
from foolgame.evidence.services import MAX_QUERY_CHARS, player_page_hints
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
    """Hints are for authors drafting a claim: logged-in players holding an open write task
    on the page, and not in a round about it."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "q", str, description=f"the author's draft (at most {MAX_QUERY_CHARS} characters); blank gives []"
            )
        ],
        responses={
            200: HintSerializer(many=True),
            **errors(
                e400="invalid_query: q is longer than the limit",
                e403=[
                    "hints_need_task: no open write task of yours on this page",
                    "hints_during_round: you are in a round (ready or playing) on this page",
                ],
                e404="not_found: no page has this id",
            ),
        },
        summary="Lexical hints for a draft claim, best first (up to 10)",
        description="Only for a player holding an open (unexpired, unused) write task on the page, "
        "and never during one of the player's open rounds about the page.",
    )
    def get(self, request: Request, page_id: int) -> Response:
        page = get_object_or_404(Page, pk=page_id)
        hints = player_page_hints(player_id=request.user.pk, page=page, query=request.query_params.get("q", ""))
        return Response(HintSerializer(hints, many=True).data)
