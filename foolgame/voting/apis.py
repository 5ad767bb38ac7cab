"""REST twins of the round's WebSocket frames, the leaderboard and notifications."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.api.errors import ServiceError
from foolgame.api.views import ApiView
from foolgame.players.models import LedgerEntry
from foolgame.voting import services
from foolgame.voting.models import Report
from foolgame.voting.notifications import notifications_mark_read, player_notifications
from foolgame.voting.selectors import leaderboard

CLAIM_CHOICES = [(0, "left"), (1, "right")]  # named once in the schema: settings.ENUM_NAME_OVERRIDES
CLAIM_INDEX = serializers.ChoiceField(choices=CLAIM_CHOICES, help_text="0 = left, 1 = right")


class PageRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()


class ClueSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    text = serializers.CharField()
    section_header = serializers.CharField()


class ShownClaimSerializer(serializers.Serializer):
    text = serializers.CharField()
    page = PageRefSerializer()


class EvidenceSerializer(serializers.Serializer):
    text = serializers.CharField()
    section_header = serializers.CharField()


class ResultSerializer(serializers.Serializer):
    correct = serializers.BooleanField(required=False)
    points = serializers.IntegerField(required=False, help_text="points awarded to the voter")
    remaining = serializers.FloatField(required=False)
    false_claim = serializers.IntegerField()
    labels = serializers.ListField(child=serializers.CharField())
    gold = serializers.ListField(child=EvidenceSerializer(many=True))


class RoundStateSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["ready", "playing", "voted", "timeout", "reported", "voided"])
    pages = PageRefSerializer(many=True)
    started_at = serializers.DateTimeField(allow_null=True)
    clue_cost = serializers.IntegerField()
    claims = ShownClaimSerializer(many=True, allow_null=True, help_text="sent only once the round has started")
    remaining = serializers.FloatField(allow_null=True, help_text="seconds left on the server's clock")
    points = serializers.IntegerField(help_text="what a correct vote would earn now")
    clues = serializers.ListField(child=ClueSerializer(many=True), help_text="clues bought so far, per claim")
    clues_left = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        help_text="clues still to buy per claim; while playing, both show the longer list's length less what was bought "
        "(a claim whose list runs out answers no_more_clues); once over, the true numbers",
    )
    result = ResultSerializer(required=False, help_text="only once the round is over (not for a voided round)")
    message = serializers.CharField(required=False, help_text="why the round was voided (status voided only)")


class RoundCreatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    pages = PageRefSerializer(many=True)


class RevealSerializer(serializers.Serializer):
    claim = CLAIM_INDEX


class ClueResultSerializer(serializers.Serializer):
    claim = serializers.IntegerField()
    clue = ClueSerializer()
    clues_left = serializers.IntegerField(help_text="the longer list's length less the clues bought of this claim (padded)")
    remaining = serializers.FloatField()
    points = serializers.IntegerField()


class VoteSerializer(serializers.Serializer):
    false_claim = CLAIM_INDEX


class LikeSerializer(serializers.Serializer):
    claim = serializers.ChoiceField(choices=CLAIM_CHOICES, allow_null=True, help_text="0 left, 1 right, null not sure")


class ReportSerializer(serializers.Serializer):
    claim = CLAIM_INDEX
    reason = serializers.ChoiceField(choices=Report.Reason.values)
    note = serializers.CharField(required=False, allow_blank=True, max_length=services.NOTE_MAX_CHARS, default="")


class CreateRoundSerializer(serializers.Serializer):
    category = serializers.CharField(required=False, allow_blank=True, max_length=100)


OK = inline_serializer("Ok", {"ok": serializers.BooleanField()})


def _data(serializer_class: type[serializers.Serializer], request: Request) -> dict:
    if not isinstance(request.data, dict):
        raise ServiceError("invalid", "Send a JSON object.")
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class RoundCreateApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=CreateRoundSerializer, responses={201: RoundCreatedSerializer}, summary="Deal a round: one true and one false claim")
    def post(self, request: Request) -> Response:
        data = _data(CreateRoundSerializer, request)
        round_ = services.round_create(player=request.user, category=data.get("category") or None)
        pages = [{"id": c.page_id, "title": c.page.title} for c in round_.claims]
        return Response({"id": round_.pk, "pages": pages}, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[OpenApiParameter("open", str, enum=["1"], required=True, description="only open rounds (dealt or playing); required")],
        responses={200: RoundStateSerializer(many=True)},
        summary="Your open rounds, newest first, as each may be seen now (to resume or forfeit one)",
    )
    def get(self, request: Request) -> Response:
        if request.query_params.get("open") not in ("1", "true"):
            raise ServiceError("open_required", "Only open rounds are listed: ask for /api/rounds?open=1.")
        return Response(services.rounds_open_for_player(player=request.user))


class RoundDetailApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: RoundStateSerializer}, summary="The round as its player may see it now")
    def get(self, request: Request, round_id: int) -> Response:
        return Response(services.round_get_state(round_id=round_id, player=request.user))


class RoundStartApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=None, responses={200: RoundStateSerializer}, summary="Start the clock; the claims are sent now")
    def post(self, request: Request, round_id: int) -> Response:
        return Response(services.round_start(round_id=round_id, player=request.user))


class RoundRevealApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=RevealSerializer, responses={200: ClueResultSerializer}, summary="Buy the next clue of a claim (costs 10 s)")
    def post(self, request: Request, round_id: int) -> Response:
        data = _data(RevealSerializer, request)
        return Response(services.round_reveal_clue(round_id=round_id, player=request.user, claim_index=data["claim"]))


class RoundVoteApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=VoteSerializer, responses={200: ResultSerializer}, summary="Mark the claim you think is false")
    def post(self, request: Request, round_id: int) -> Response:
        data = _data(VoteSerializer, request)
        return Response(services.vote_cast(round_id=round_id, player=request.user, false_claim=data["false_claim"]))


class RoundLikeApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=LikeSerializer, responses={200: OK}, summary="After the vote: which claim was more interesting")
    def post(self, request: Request, round_id: int) -> Response:
        data = _data(LikeSerializer, request)
        return Response(services.round_like(round_id=round_id, player=request.user, claim=data["claim"]))


class RoundReportApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=ReportSerializer, responses={200: OK}, summary="Report a claim; during play this ends the round without points")
    def post(self, request: Request, round_id: int) -> Response:
        data = _data(ReportSerializer, request)
        return Response(services.round_report(round_id=round_id, player=request.user, **data))


class LeaderboardEntrySerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    username = serializers.CharField()
    points = serializers.IntegerField()


class LeaderboardApi(ApiView):
    permission_classes = [permissions.AllowAny]
    KINDS = ["total", *LedgerEntry.Kind.values]

    @extend_schema(
        parameters=[OpenApiParameter("kind", str, enum=KINDS, default="total")],
        responses={200: LeaderboardEntrySerializer(many=True)},
        summary="Players ranked by points",
    )
    def get(self, request: Request) -> Response:
        kind = request.query_params.get("kind", "total")
        if kind not in self.KINDS:
            raise ServiceError("invalid_kind", f"kind must be one of: {', '.join(self.KINDS)}.")
        return Response(leaderboard(kind=kind))


class NotificationSerializer(serializers.Serializer):
    kind = serializers.CharField()
    count = serializers.IntegerField()
    message = serializers.CharField()


class NotificationsSerializer(serializers.Serializer):
    since = serializers.DateTimeField(allow_null=True)
    notifications = NotificationSerializer(many=True)


class NotificationsApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: NotificationsSerializer}, summary="Unread news about your claims, grouped")
    def get(self, request: Request) -> Response:
        return Response(player_notifications(player=request.user))

    @extend_schema(request=None, responses={204: None}, summary="Mark your notifications read")
    def post(self, request: Request) -> Response:
        notifications_mark_read(player=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RoundForfeitApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=None,
        responses={200: RoundStateSerializer},
        summary="Give up an open round: it ends now without points (stored as a timeout); its claims stay dealt",
    )
    def post(self, request: Request, round_id: int) -> Response:
        return Response(services.round_forfeit(round_id=round_id, player=request.user))
