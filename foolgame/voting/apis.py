"""REST twins of the round's WebSocket frames, the leaderboard and notifications."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.core.errors import ServiceError
from foolgame.core.schema import errors
from foolgame.core.views import ApiView, validated_body
from foolgame.players.models import LedgerEntry
from foolgame.voting import services
from foolgame.voting.models import Report
from foolgame.voting.notifications import notifications_mark_read, notifications_unread_count, player_notifications
from foolgame.voting.ratings import skill_table
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


ROOM_WITHHELD = "left out for a live room's round while its question plays"


class RatingChangeSerializer(serializers.Serializer):
    before = serializers.IntegerField(help_text="the player's skill rating (1500 scale) before this round's rating update")
    after = serializers.IntegerField(help_text="and after it")
    change = serializers.IntegerField(help_text="after - before")


class ResultSerializer(serializers.Serializer):
    correct = serializers.BooleanField(required=False, help_text=f"after a vote; {ROOM_WITHHELD}")
    points = serializers.IntegerField(required=False, help_text=f"points awarded to the voter; {ROOM_WITHHELD}; left out when the player's game hides points (a study's arm)")
    remaining = serializers.FloatField(required=False, help_text="seconds left when the vote was cast")
    false_claim = serializers.IntegerField(required=False, help_text=f"0 left, 1 right; {ROOM_WITHHELD}")
    labels = serializers.ListField(child=serializers.CharField(), required=False, help_text=ROOM_WITHHELD)
    gold = serializers.ListField(child=EvidenceSerializer(many=True), required=False, help_text=ROOM_WITHHELD)
    unpaid = serializers.ChoiceField(
        choices=["moderator_saw_claim", "question_skipped"],
        required=False,
        help_text="only on a vote that pays nothing and is not rated: moderator_saw_claim, the voter had seen one of the "
        "claims with its answer as a moderator before voting; question_skipped, the host of the live room skipped the "
        "question (points 0, no points for the authors either)",
    )
    message = serializers.CharField(required=False, help_text="with unpaid: why, in a player's words")
    picked = serializers.IntegerField(required=False, help_text="after a vote: the claim the player marked as false (0 left, 1 right)")
    rating = RatingChangeSerializer(
        required=False,
        allow_null=True,
        help_text="how this round moved the player's skill rating; null until its rating update ran (see rating_pending), and "
        "for a round that rates nobody (a timeout, a report, an unpaid vote, a round given up before its start)",
    )
    rating_pending = serializers.BooleanField(
        required=False,
        help_text="the rating update is on its way (a task after the vote's commit, batched): read the round again "
        "(GET /api/rounds/<id>) in a second for rating",
    )
    streak = serializers.IntegerField(
        required=False,
        help_text="the player's current streak: right votes in a row over their latest solo rounds (a wrong vote, a "
        "timeout or a started round given up ends it)",
    )


class RoundStateSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["ready", "playing", "voted", "timeout", "reported", "voided", "forfeited"])
    pages = PageRefSerializer(many=True)
    started_at = serializers.DateTimeField(allow_null=True)
    deadline = serializers.DateTimeField(allow_null=True, help_text="while playing: when the clock runs out (each clue bought moves it closer), else null")
    clue_cost = serializers.IntegerField()
    claims = ShownClaimSerializer(many=True, allow_null=True, help_text="sent only once the round has started")
    remaining = serializers.FloatField(allow_null=True, help_text="seconds left on the server's clock")
    points = serializers.IntegerField(required=False, help_text="what a correct vote would earn now; left out when the player's game hides points (a study's arm)")
    clues = serializers.ListField(child=ClueSerializer(many=True), help_text="clues bought so far, per claim")
    clues_left = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        help_text="clues still to buy per claim; while playing, both show the longer list's length less what was bought "
        "(a claim whose list runs out answers no_more_clues); once over, the true numbers",
    )
    result = ResultSerializer(
        required=False,
        help_text="only once the round is over (not for a voided round, nor for a live room's round before its question is "
        "over, nor for a forfeited round before its answer_at)",
    )
    message = serializers.CharField(
        required=False, help_text="why the round was voided (status voided), or that it was given up and its answer waits (forfeited)"
    )
    answer_at = serializers.DateTimeField(
        required=False,
        help_text="status forfeited only: when its result (and, for a round given up before its start, its claims) is shown: "
        "the deadline the round had when given up, or for a round never started the forfeit + 180 s. A live room's round "
        "shows it when its question is over",
    )


class PastRoundSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["voted", "timeout", "reported", "forfeited"])
    pages = PageRefSerializer(many=True)
    claims = ShownClaimSerializer(many=True)
    outcome = serializers.ChoiceField(
        choices=["right", "wrong", "timeout", "forfeited", "reported"], help_text="right or wrong vote, timed out, given up, ended by a report"
    )
    picked = serializers.IntegerField(allow_null=True, help_text="the claim the player marked as false (0 left, 1 right); null without a vote")
    false_claim = serializers.IntegerField(help_text="the false claim: 0 left, 1 right")
    points = serializers.IntegerField(required=False, help_text="points the vote earned the player; left out when the player's game hides points (a study's arm)")
    ended_at = serializers.DateTimeField(allow_null=True)
    room = serializers.BooleanField(help_text="played in a live room")
    ended_by_room = serializers.BooleanField(help_text="a room's round its host ended (by ending the room) before you voted: not a give-up of yours, not rated")


class RoundHistorySerializer(serializers.Serializer):
    rounds = PastRoundSerializer(many=True)
    next_offset = serializers.IntegerField(allow_null=True, help_text="the offset of the next rounds; null at the end")


class RoundCreatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    pages = PageRefSerializer(many=True)


class _OneClaim(serializers.Serializer):
    """A claim index under its own name (``field``) or the other one the game uses (``also``):
    ``reveal`` takes ``claim``, ``vote`` takes ``false_claim``, and each takes the other's
    name too; both given must agree. ``validated_data[field]`` holds it."""

    field = "claim"
    also = "false_claim"

    def validate(self, attrs: dict) -> dict:
        named = [attrs[name] for name in (self.field, self.also) if attrs.get(name) is not None]
        if not named:
            raise serializers.ValidationError({self.field: ["This field is required."]})
        if len(set(named)) > 1:
            raise serializers.ValidationError({self.field: [f"{self.field} and {self.also} name the same claim: give one of them."]})
        return {self.field: named[0]}


class RevealSerializer(_OneClaim):
    claim = serializers.ChoiceField(choices=CLAIM_CHOICES, required=False, help_text="0 = left, 1 = right")
    false_claim = serializers.ChoiceField(choices=CLAIM_CHOICES, required=False, help_text="the same, under the name vote takes")


class ClueResultSerializer(serializers.Serializer):
    claim = serializers.IntegerField()
    clue = ClueSerializer()
    clues_left = serializers.IntegerField(help_text="the longer list's length less the clues bought of this claim (padded)")
    remaining = serializers.FloatField()
    points = serializers.IntegerField(required=False, help_text="what a correct vote would earn now; left out when the player's game hides points (a study's arm)")
    deadline = serializers.DateTimeField(help_text="the round's deadline, moved closer by this clue")


class VoteSerializer(_OneClaim):
    field, also = "false_claim", "claim"
    false_claim = serializers.ChoiceField(choices=CLAIM_CHOICES, required=False, help_text="the claim you mark false: 0 = left, 1 = right")
    claim = serializers.ChoiceField(choices=CLAIM_CHOICES, required=False, help_text="the same, under the name reveal takes")


class LikeSerializer(serializers.Serializer):
    claim = serializers.ChoiceField(choices=CLAIM_CHOICES, allow_null=True, help_text="0 left, 1 right, null not sure")


class ReportSerializer(serializers.Serializer):
    claim = CLAIM_INDEX
    reason = serializers.ChoiceField(choices=Report.Reason.values)
    note = serializers.CharField(required=False, allow_blank=True, max_length=services.NOTE_MAX_CHARS, default="")


class CreateRoundSerializer(serializers.Serializer):
    category = serializers.CharField(required=False, allow_blank=True, max_length=100, help_text="a category's slug or name: deal from it")
    page = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="a page's id: deal both claims from this page (with category, it must be in it too)"
    )


OK = inline_serializer("Ok", {"ok": serializers.BooleanField()})


class RoundCreateApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=CreateRoundSerializer,
        responses={
            201: RoundCreatedSerializer,
            **errors(
                post=True,
                e400="invalid: the body is not a JSON object, category is not text of at most 100 characters, or page is "
                "not a positive integer",
                e404=[
                    "no_pair_available: no fair pair of claims (one true, one false, none seen or written by you) is left, "
                    "in this category or on this page if one was named",
                    "unknown_category: no category has this slug or name (the message names it; GET /api/categories lists them)",
                    "unknown_page: no page has this id",
                ],
                e409=[
                    "too_many_open_rounds: finish or abandon one of your open rounds first",
                    "no_pair_available: those claims were just dealt to you by a parallel request; try again",
                ],
                e429="deal_rate_limited: too many rounds dealt to you in the last hour (FM2_DEALS_PER_HOUR, fewer for a new "
                "account); details has retry_after (seconds) and retry_at",
            ),
        },
        summary="Deal a round: one true and one false claim",
        description="The server picks a fair pair for this player (same page when it can, else the same category) and "
        "returns the round's id and its two pages; with `category` (a slug or name) the pair comes from that category, "
        "with `page` (an id) both claims come from that page. The claims are sent only when the round starts, over the WebSocket "
        "`/ws/rounds/<id>/` (docs/websocket.md) or with `POST /api/rounds/<id>/start`.",
    )
    def post(self, request: Request) -> Response:
        data = validated_body(CreateRoundSerializer, request)
        round_ = services.round_create(player=request.user, category=data.get("category") or None, page_id=data.get("page"))
        pages = [{"id": c.page_id, "title": c.page.title} for c in round_.claims]
        return Response({"id": round_.pk, "pages": pages}, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[OpenApiParameter("open", str, enum=["1"], required=True, description="only open rounds (dealt or playing); required")],
        responses={200: RoundStateSerializer(many=True), **errors(e400="open_required: the query lacks open=1")},
        summary="Your open rounds, newest first (to resume or give up one)",
        description="The player's rounds that are dealt or playing, newest first, each as its state may be seen now: the "
        "true remaining time from the server's clock and the clues already bought. Rounds past their deadline are "
        "timed out first and not listed. A live room's rounds are never listed: they are played in their room. "
        "Only `open=1` is served.",
    )
    def get(self, request: Request) -> Response:
        if request.query_params.get("open") not in ("1", "true"):
            raise ServiceError("open_required", "Only open rounds are listed: ask for /api/rounds?open=1.")
        return Response(services.rounds_open_for_player(player=request.user))


def _whole_number(request: Request, name: str, default: int, low: int, high: int, *, code: str) -> int:
    raw = request.query_params.get(name)
    try:
        value = default if raw in (None, "") else int(raw)
    except ValueError:
        raise ServiceError(code, f"{name} must be a whole number.") from None
    if not low <= value <= high:
        raise ServiceError(code, f"{name} must be between {low} and {high}.")
    return value


class RoundHistoryApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        parameters=[
            OpenApiParameter("offset", int, description="skip this many of your finished rounds (default 0)"),
            OpenApiParameter("limit", int, description=f"at most this many (default 20, at most {services.HISTORY_MAX_LIMIT})"),
        ],
        responses={
            200: RoundHistorySerializer,
            **errors(
                e400=[
                    "invalid_offset: offset is not a whole number from 0 up",
                    f"invalid_limit: limit is not a whole number from 1 to {services.HISTORY_MAX_LIMIT}",
                ]
            ),
        },
        summary="Your past rounds and how you did, newest first",
        description="The player's own finished rounds whose answer is out for them, newest first: both claims, the claim "
        "they picked, which one was false, the outcome (right, wrong, timeout, forfeited, reported) and the points. A round "
        "whose answer is not out yet is left out (a round given up before its deadline, a solo round reported before "
        "its deadline, a live room's round while its question plays), as are open and voided rounds; so a page may hold "
        "fewer than `limit`. `next_offset` pages on.",
    )
    def get(self, request: Request) -> Response:
        offset = _whole_number(request, "offset", 0, 0, 10**9, code="invalid_offset")
        limit = _whole_number(request, "limit", 20, 1, services.HISTORY_MAX_LIMIT, code="invalid_limit")
        rounds, next_offset = services.rounds_history(player=request.user, offset=offset, limit=limit)
        return Response({"rounds": rounds, "next_offset": next_offset})


class RoundDetailApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        responses={200: RoundStateSerializer, **errors(e404="round_not_found")},
        summary="The round as its player may see it now",
        description="Before the vote: no labels, no gold evidence and no unrevealed clues. A round found past its deadline "
        "is timed out by this read. Once over, `result` holds the answer and both claims' gold evidence; a live room's "
        "round shows no `result` (and padded `clues_left`) until its question is over, when the whole room gets the answer.",
    )
    def get(self, request: Request, round_id: int) -> Response:
        return Response(services.round_read(round_id=round_id, player=request.user))


class RoundStartApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=None,
        responses={200: RoundStateSerializer, **errors(post=True, reads_body=False, e404="round_not_found")},
        summary="Start the clock; the claims are sent now",
        description="Starts the round's 180 s clock and returns its state with the two claims. Starting a round that is "
        "already started (or over) changes nothing and returns its state: that is how a client resynchronises.",
    )
    def post(self, request: Request, round_id: int) -> Response:
        return Response(services.round_start(round_id=round_id, player=request.user))


class RoundRevealApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=RevealSerializer,
        responses={
            200: ClueResultSerializer,
            **errors(
                post=True,
                e400="invalid: the body is not a JSON object, or claim is not 0 (left) or 1 (right); details names the field",
                e404="round_not_found",
                e409=[
                    "round_not_started: start the round first",
                    "round_over: the round already has its vote, timed out, was reported or voided",
                    "round_expired: time ran out just now; the round is timed out",
                    "no_more_clues: every clue of this claim is revealed",
                    "not_enough_time: the clue's cost would leave no time to vote",
                ],
                e403="clues_off: the round is played without clues (a study's arm); nothing changes",
            ),
        },
        summary="Buy the next clue of a claim (costs 10 s)",
        description="Reveals the next evidence clue of the left (0) or right (1) claim. It costs clue_cost seconds of "
        "the round's clock, so the points a correct vote earns drop; the answer has the new remaining time and points.",
    )
    def post(self, request: Request, round_id: int) -> Response:
        data = validated_body(RevealSerializer, request)
        return Response(services.round_reveal_clue(round_id=round_id, player=request.user, claim_index=data["claim"]))


class RoundVoteApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=VoteSerializer,
        responses={
            200: ResultSerializer,
            **errors(
                post=True,
                e400="invalid: the body is not a JSON object, or false_claim is not 0 (left) or 1 (right); details names the field",
                e404="round_not_found",
                e409=[
                    "round_not_started: start the round first",
                    "round_over: the round already has its vote, timed out, was reported or voided",
                    "round_expired: time ran out just now; the round is timed out",
                ],
            ),
        },
        summary="Mark the claim you think is false",
        description="Casts the round's one vote. A correct vote earns the points left on the clock; the author of the "
        "false claim earns fool points when the vote is wrong. A vote by a player who had seen either claim as a "
        "moderator (in the queue or the audit log) before voting pays nobody and is not rated: its result says "
        "`unpaid: moderator_saw_claim` with a message. The answer reveals which claim was false and both "
        "claims' gold evidence. On a live room's round the answer is only `remaining` (as the room socket's `voted` "
        "frame): the whole room gets the answer when the question is over, at once when this was the last vote it "
        "waited for.",
    )
    def post(self, request: Request, round_id: int) -> Response:
        data = validated_body(VoteSerializer, request)
        result = services.vote_cast(round_id=round_id, player=request.user, false_claim=data["false_claim"])
        return Response(result)


class RoundLikeApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=LikeSerializer,
        responses={
            200: OK,
            **errors(
                post=True,
                e400="invalid: the body is not a JSON object, or claim is not 0, 1 or null; details names the field",
                e403="guest_not_allowed",
                e404="round_not_found",
                e409=["vote_first: likes come after the vote", "already_liked: this round already has its like"],
            ),
        },
        summary="After the vote: which claim was more interesting",
        description="Once per voted round: the claim (0 left, 1 right) the player found more interesting, or null for "
        "neither. A like pays the claim's author like points (not when it is the player's own claim).",
    )
    def post(self, request: Request, round_id: int) -> Response:
        data = validated_body(LikeSerializer, request)
        return Response(services.round_like(round_id=round_id, player=request.user, claim=data["claim"]))


class RoundReportApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=ReportSerializer,
        responses={
            200: OK,
            **errors(
                post=True,
                e400="invalid: the body is not a JSON object, claim is not 0 or 1, reason is not spam, inappropriate, "
                "wrong_label or other, or the note is too long; details names the field",
                e403="guest_not_allowed",
                e404="round_not_found",
                e409=[
                    "round_not_started: start the round to see its claims first",
                    "round_voided: a moderator already changed a claim of this round",
                    "report_window_closed: reports are taken during a round and for a while after it ends",
                    "already_reported: you already reported this claim",
                ],
                e429="report_rate_limited: too many reports in the last hour or day; details has retry_after (seconds) "
                "and retry_at",
            ),
        },
        summary="Report a claim; during play this ends the round without points",
        description="Reports one claim of the round to the moderators with a reason and an optional note. During play "
        "the round ends at once without points; after it ends a report is still taken for a while. Reports of trusted "
        "players can hide a claim until a moderator reviews it.",
    )
    def post(self, request: Request, round_id: int) -> Response:
        data = validated_body(ReportSerializer, request)
        return Response(services.round_report(round_id=round_id, player=request.user, **data))


class LeaderboardEntrySerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    username = serializers.CharField()
    points = serializers.IntegerField(required=False, help_text="points kinds only")
    skill = serializers.IntegerField(required=False, help_text="kind=skill only: rating - 2 x deviation, the table's order")
    rating = serializers.IntegerField(required=False, help_text="kind=skill only: the Glicko-2 rating (1500 scale)")
    deviation = serializers.IntegerField(required=False, help_text="kind=skill only: its uncertainty")
    provisional = serializers.BooleanField(required=False, help_text="kind=skill only: the deviation is still high (shown as 1397? ± 176)")
    votes = serializers.IntegerField(required=False, help_text="kind=skill only: rated votes")


class LeaderboardApi(ApiView):
    permission_classes = [permissions.AllowAny]
    KINDS = ["total", *LedgerEntry.Kind.values, "skill"]

    @extend_schema(
        parameters=[OpenApiParameter("kind", str, enum=KINDS, default="total")],
        responses={
            200: LeaderboardEntrySerializer(many=True),
            **errors(login=False, e400="invalid_kind: kind is not total, write, verify, fool, like or skill"),
        },
        summary="Players ranked by points, or by skill",
        description="The top players by points of one kind, or in total; equal points share a rank and system players "
        "(the release's author) are left out. `kind=skill` ranks by skill rating instead: each vote is a game against "
        "the pair of claims (Glicko-2), ordered by `skill` = rating - 2 x deviation so that a lucky newcomer does not "
        "top it, among players with `FM2_SKILL_MIN_VOTES` (10) rated votes; its rows carry skill, rating, deviation and "
        "votes instead of points. Open to everyone.",
    )
    def get(self, request: Request) -> Response:
        kind = request.query_params.get("kind", "total")
        if kind not in self.KINDS:
            raise ServiceError("invalid_kind", f"kind must be one of: {', '.join(self.KINDS)}.")
        return Response(skill_table() if kind == "skill" else leaderboard(kind=kind))


class NotificationSerializer(serializers.Serializer):
    kind = serializers.CharField()
    count = serializers.IntegerField()
    message = serializers.CharField()


class NotificationClaimSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()


class NotificationItemSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["fooled", "fool_points", "liked", "moderated", "model_fooled"])
    message = serializers.CharField(help_text="the news in a player's words")
    claim = NotificationClaimSerializer(allow_null=True)
    points = serializers.IntegerField(allow_null=True, help_text="points it paid the player (0 when none); null when the player's game hides points (a study's arm)")
    reason = serializers.CharField(allow_blank=True, help_text="a moderator's reason, for kind moderated")
    created = serializers.DateTimeField()
    read = serializers.BooleanField()


class NotificationsSerializer(serializers.Serializer):
    since = serializers.DateTimeField(allow_null=True, help_text="when the player last marked notifications read")
    unread = serializers.IntegerField(help_text="how many notifications are unread")
    notifications = NotificationSerializer(many=True, help_text="the unread ones, grouped by kind")
    items = NotificationItemSerializer(many=True, help_text="the unread ones, newest first (at most 50)")


class NotificationsApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        responses={200: NotificationsSerializer, **errors()},
        summary="Unread news about your claims, grouped and one by one",
        description="What happened to the player's claims since they last read their notifications: grouped by kind "
        "(e.g. \"3 players were fooled by your claims\") and as items, newest first, with the unread count "
        "that the nav badge shows.",
    )
    def get(self, request: Request) -> Response:
        return Response(player_notifications(player=request.user))

    @extend_schema(
        request=None,
        responses={204: None, **errors(post=True, reads_body=False)},
        summary="Mark all your notifications read",
        description="Everything up to now counts as read: the next GET starts from this moment.",
    )
    def post(self, request: Request) -> Response:
        notifications_mark_read(player=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MarkReadSerializer(serializers.Serializer):
    ids = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False, max_length=500)
    up_to = serializers.IntegerField(required=False, min_value=1, help_text="mark every notification with an id up to this one")

    def validate(self, attrs: dict) -> dict:
        if "ids" not in attrs and "up_to" not in attrs:
            raise serializers.ValidationError("Send ids, up_to, or both.")
        return attrs


class NotificationsReadApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=MarkReadSerializer,
        responses={200: inline_serializer("NotificationsMarked", {"marked": serializers.IntegerField(), "unread": serializers.IntegerField()}),
                   **errors(post=True, e400="invalid: neither ids nor up_to, or an id that is not a positive integer")},
        summary="Mark some of your notifications read (by ids, or up to an id)",
        description="Marks the player's own notifications with these ids, or with an id up to ``up_to``, as read and "
        "answers how many were marked and how many stay unread. Ids of another player's notifications match nothing.",
    )
    def post(self, request: Request) -> Response:
        data = validated_body(MarkReadSerializer, request)
        marked = notifications_mark_read(player=request.user, ids=data.get("ids"), up_to=data.get("up_to"))
        return Response({"marked": marked, "unread": notifications_unread_count(player=request.user)})


class RoundForfeitApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=None,
        responses={
            200: RoundStateSerializer,
            **errors(
                post=True,
                reads_body=False,
                e404="round_not_found",
                e409="round_over: the round has already ended",
                e429="forfeit_rate_limited: you gave up too many rounds in the last hour (FM2_FORFEITS_PER_HOUR, 30); "
                "details has retry_after (seconds) and retry_at",
            ),
        },
        summary="Give up an open round: it ends now without points",
        description="Ends one of the player's open rounds (dealt or playing) now, with no points for anyone, as status "
        "`forfeited`; its claims stay dealt to the player. The answer is not in the response: `answer_at` says when "
        "`GET /api/rounds/<id>` shows it, no sooner than waiting would have (the round's deadline as it stood, clues "
        "bought included; for a round never started, now + 180 s, and its claims' text not before then either). A "
        "started round given up counts as a wrong answer in the player's skill rating. A live room's round shows its "
        "answer when its question is over (at once when this was the last round the question waited for).",
    )
    def post(self, request: Request, round_id: int) -> Response:
        return Response(services.round_forfeit(round_id=round_id, player=request.user))
