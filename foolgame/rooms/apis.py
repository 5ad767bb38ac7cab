"""REST for live rooms: create one, read it, join, start the next question, leave. The
questions are played over the room's WebSocket /ws/rooms/<code>/ (docs/websocket.md, "The
room WebSocket"), or with the round REST twins on the round each question names."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.urls import reverse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.core.errors import ServiceError
from foolgame.core.schema import errors
from foolgame.core.views import ApiView, validated_body
from foolgame.rooms import services
from foolgame.voting.apis import OK, EvidenceSerializer, RoundStateSerializer, ShownClaimSerializer

NOT_FOUND = "room_not_found: no room has this code"
JOIN_LEAVE_LIMIT = (
    f"join_leave_rate_limited: more than {settings.FM2_ROOMS['JOIN_LEAVES_PER_WINDOW']} joins and leaves of yours in "
    f"{settings.FM2_ROOMS['JOIN_LEAVE_WINDOW_SECONDS']} s; nothing changed; details.retry_after (seconds, also the Retry-After header)"
)


class CreateRoomSerializer(serializers.Serializer):
    category = serializers.CharField(required=False, allow_blank=True, max_length=100, help_text="a category's slug or name; any when left out")
    questions = serializers.IntegerField(required=False, help_text="how many questions (1 to 20; 5 when left out)")
    seconds = serializers.IntegerField(required=False, help_text="each question's clock in seconds (30 to 180, the round's own; 180 when left out)")
    host_plays = serializers.BooleanField(
        required=False,
        help_text="you play the questions too (\"I'll play too\"); false when left out: you run the room (the projector) and are "
        "dealt nothing, counted in no answers-in count, finish, scoreboard or podium",
    )


class ScoreSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    username = serializers.CharField()
    points = serializers.IntegerField(help_text="what this member's votes on the room's finished questions earned (a question still playing counts once it is over)")
    correct = serializers.IntegerField(help_text="right answers on the finished questions")
    voted = serializers.IntegerField(help_text="votes on the finished questions")
    host = serializers.BooleanField()
    left = serializers.BooleanField()


class FoundSerializer(serializers.Serializer):
    username = serializers.CharField()
    points = serializers.IntegerField()


class WinnerSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    username = serializers.CharField(allow_null=True, help_text="who found the false claim first (the earliest right vote); null: nobody")
    points = serializers.IntegerField(allow_null=True, help_text="what that vote earned")
    skipped = serializers.BooleanField(help_text="the host skipped the question: it counts on no scoreboard")


class AnswerSerializer(serializers.Serializer):
    question_id = serializers.IntegerField(required=False)
    number = serializers.IntegerField(required=False)
    questions = serializers.IntegerField(required=False, help_text="how many questions the room plays")
    false_claim = serializers.IntegerField(required=False, help_text="0 left, 1 right; left out for a member who only watched the question")
    labels = serializers.ListField(child=serializers.CharField(), required=False)
    gold = serializers.ListField(child=EvidenceSerializer(many=True), required=False, help_text="per claim, its gold evidence")
    found = FoundSerializer(many=True, required=False, help_text="who found the false claim, most points first")
    first = FoundSerializer(required=False, allow_null=True, help_text="who found it first (the earliest right vote); null: nobody")
    skipped = serializers.BooleanField(required=False, help_text="the host skipped the question: its votes pay nothing and count on no scoreboard")
    ended_early = serializers.BooleanField(required=False, help_text="the host ended the question before its clock ran out")
    scoreboard = ScoreSerializer(many=True, required=False)
    over = serializers.BooleanField(required=False, help_text="no question follows")
    votes = serializers.IntegerField(required=False, help_text="how many members voted on the question, all votes in (the answers-in count's last value)")
    players = serializers.IntegerField(required=False, help_text="how many members played the question (were dealt it)")


class QuestionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["playing", "done"])
    started_at = serializers.DateTimeField()
    deadline = serializers.DateTimeField()
    remaining = serializers.FloatField(allow_null=True)
    votes = serializers.IntegerField(help_text="how many members have voted on this question so far (never who)")
    players = serializers.IntegerField(help_text="how many members play this question (were dealt it)")
    round = RoundStateSerializer(allow_null=True, help_text="your own round (null: you watch this question); no result until the question is over")
    claims = ShownClaimSerializer(many=True, required=False, help_text="the host who does not play: the question's two claims (they play no round)")
    answer = AnswerSerializer(required=False, help_text="once the question is over")


class RoomSerializer(serializers.Serializer):
    code = serializers.CharField()
    host = serializers.CharField()
    is_host = serializers.BooleanField()
    member = serializers.BooleanField()
    state = serializers.ChoiceField(choices=["lobby", "playing", "ended"])
    end_reason = serializers.CharField(allow_null=True)
    category = serializers.CharField(allow_null=True)
    questions = serializers.IntegerField()
    seconds = serializers.IntegerField()
    number = serializers.IntegerField(help_text="the current question's number (0 before the first)")
    clue_cost = serializers.IntegerField()
    host_plays = serializers.BooleanField(help_text="the host plays the questions too; false: the host runs the room and is on no board")
    members = serializers.IntegerField(help_text="how many players are in the room now (a host who does not play is not one)")
    scoreboard = ScoreSerializer(
        many=True, allow_null=True, help_text="members (and those who left) only, else null: the finished questions' totals, nothing of the question playing"
    )
    question = QuestionSerializer(allow_null=True, help_text="members only: the current question")
    winners = WinnerSerializer(many=True, allow_null=True, help_text="members only, once the room has ended: each question and who found it first")
    next = serializers.CharField(allow_null=True, help_text="members only: the code of the room the host opened to play again (you are in it already)")


class RoomCreatedSerializer(RoomSerializer):
    url = serializers.CharField(help_text="the page to share: /rooms/<code>/")
    socket = serializers.CharField(help_text="the WebSocket path: /ws/rooms/<code>/")


class RoomCreateApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=CreateRoomSerializer,
        responses={
            201: RoomCreatedSerializer,
            **errors(
                post=True,
                e400=[
                    "invalid: the body is not a JSON object, or a field has the wrong type",
                    "invalid_questions: questions is not 1 to 20",
                    "invalid_seconds: seconds is not 30 to 180",
                    "unknown_category: no category has this slug or name",
                ],
                e409=[
                    f"too_many_open_rooms: you host {settings.FM2_ROOMS['MAX_OPEN_ROOMS_PER_HOST']} rooms not ended already; details.rooms lists their codes",
                    "try_again: no free room code was found (very unlikely); try again",
                ],
                e429=f"room_rate_limited: you made {settings.FM2_ROOMS['ROOMS_PER_HOUR']} rooms in the last hour; details has retry_after "
                "(seconds, also the Retry-After header) and retry_at",
            ),
        },
        summary="Host a live room",
        description="Creates a room with you as its host and first member, and answers its short join code, the page "
        "to share (`/rooms/<code>/`) and its WebSocket. Others join with `POST /api/rooms/<code>/join`; you start each "
        "question with `POST /api/rooms/<code>/start` (or the socket's `start` frame).",
    )
    def post(self, request: Request) -> Response:
        data = validated_body(CreateRoomSerializer, request)
        room = services.room_create(
            host=request.user, category=data.get("category"), questions=data.get("questions"), seconds=data.get("seconds"), host_plays=data.get("host_plays", False)
        )
        state = services.room_state(code=room.code, player=request.user)
        links = {"url": reverse("rooms:room", args=[room.code]), "socket": f"/ws/rooms/{room.code}/"}
        return Response({**state, **links}, status=status.HTTP_201_CREATED)


class RoomDetailApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        responses={200: RoomSerializer, **errors(e404=NOT_FOUND)},
        summary="The room as you may see it now",
        description="Its settings and member count; for a member, the scoreboard of the finished questions and the "
        "current question with their own round (no answer before the question is over, even after their vote; of the "
        "others, only how many have voted). Anyone else gets no scoreboard (null) and no question. A question found "
        "past its deadline is finished by this read. A member who gave up their round of a question (forfeit, leave, or "
        "the host ending the room) gets no `answer` and a scoreboard without that question until the question's own "
        "deadline, even when it ended early. A member's read counts as being present.",
    )
    def get(self, request: Request, code: str) -> Response:
        return Response(services.room_state(code=code, player=request.user))


class RoomJoinApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=None,
        responses={
            200: RoomSerializer,
            **errors(post=True, reads_body=False, e404=NOT_FOUND, e409=["room_over: the room has ended", f"room_full: the room holds its {settings.FM2_ROOMS['MAX_MEMBERS']} players"], e429=JOIN_LEAVE_LIMIT),
        },
        summary="Join a room by its code",
        description="Makes you a member (again, after leaving). Joining while a question plays, you watch it and play "
        "from the next one. Then open the room's WebSocket `/ws/rooms/<code>/`.",
    )
    def post(self, request: Request, code: str) -> Response:
        return Response(services.room_join(code=code, player=request.user))


class RoomStartApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=None,
        responses={
            200: inline_serializer("QuestionStarted", {"number": serializers.IntegerField(), "deadline": serializers.DateTimeField()}),
            **errors(
                post=True,
                reads_body=False,
                e403="not_host: only the host starts questions",
                e404=[NOT_FOUND, "no_pair_available: no fair pair is left for everyone present"],
                e409=[
                    "room_over: the room has ended",
                    "question_playing: the current question is still being played",
                    "nobody_present: no member is present",
                    "no_pair_available: those claims were just dealt to a member; try again",
                ],
            ),
        },
        summary="Host: deal the next question",
        description="Deals one fair pair for every member present (none written by any of them, none dealt to any of "
        "them before) and starts everyone's round at this instant; every socket of the room gets the `question` frame.",
    )
    def post(self, request: Request, code: str) -> Response:
        return Response(services.room_next_question(code=code, player=request.user))


class RoomLeaveApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=None,
        responses={200: OK, **errors(post=True, reads_body=False, e403="not_a_member: you are not in this room", e404=NOT_FOUND, e429=JOIN_LEAVE_LIMIT)},
        summary="Leave a room (the host leaving ends it)",
        description="You give up your round of the open question (no points) and leave. When the host leaves, the room "
        "ends for everyone: the open question ends at once (votes already cast keep their points).",
    )
    def post(self, request: Request, code: str) -> Response:
        return Response(services.room_leave(code=code, player=request.user))


HOST_ONLY_QUESTION = {
    "request": None,
    "responses": {
        200: inline_serializer("QuestionEnded", {"number": serializers.IntegerField(), "skipped": serializers.BooleanField()}),
        **errors(
            post=True,
            reads_body=False,
            e403="not_host: only the host ends or skips a question",
            e404=NOT_FOUND,
            e409=["room_over: the room has ended", "no_question_playing: no question is playing now"],
        ),
    },
}


class RoomEndQuestionApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        **HOST_ONLY_QUESTION,
        summary="Host: end the question now",
        description="Ends the question playing as if its clock ran out now: members who have not voted time out (no "
        "points), votes cast count as usual, and every socket gets the `answer` at once (a member who gave up on it "
        "too: its deadline is now). After the last question the room ends. The socket's `end_question` frame does the same.",
    )
    def post(self, request: Request, code: str) -> Response:
        return Response(services.room_question_end(code=code, player=request.user))


class RoomSkipQuestionApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        **HOST_ONLY_QUESTION,
        summary="Host: skip the question",
        description="Ends the question playing now, as `end-question` does, and drops it: no vote on it pays anything "
        "(`unpaid: question_skipped`, not rated, nothing for the authors) and it counts on no scoreboard; it is still one "
        "of the room's questions. Every socket gets the `answer` with `skipped: true`. The socket's `skip_question` frame "
        "does the same.",
    )
    def post(self, request: Request, code: str) -> Response:
        return Response(services.room_question_end(code=code, player=request.user, skip=True))


class RoomPlayAgainApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=None,
        responses={
            201: RoomCreatedSerializer,
            **errors(
                post=True,
                reads_body=False,
                e403="not_host: only the host plays the room again",
                e404=NOT_FOUND,
                e409=[
                    "room_not_over: the room has not ended yet",
                    f"too_many_open_rooms: you host {settings.FM2_ROOMS['MAX_OPEN_ROOMS_PER_HOST']} rooms not ended already",
                ],
                e429=f"room_rate_limited: you made {settings.FM2_ROOMS['ROOMS_PER_HOUR']} rooms in the last hour; details.retry_after",
            ),
        },
        summary="Host: play again with the same members",
        description="Once the room has ended, opens a new room with its settings and moves its members (those who had "
        "not left) into it: they are members of the new room at once, and the old room's `next` names it (their page "
        "goes there). The host's caps on rooms apply. Asked again, it answers the same new room.",
    )
    def post(self, request: Request, code: str) -> Response:
        room = services.room_play_again(code=code, player=request.user)
        state = services.room_state(code=room.code, player=request.user)
        links = {"url": reverse("rooms:room", args=[room.code]), "socket": f"/ws/rooms/{room.code}/"}
        return Response({**state, **links}, status=status.HTTP_201_CREATED)


class GuestJoinSerializer(serializers.Serializer):
    nickname = serializers.CharField(max_length=150, trim_whitespace=True, help_text="the name the room shows; checked as a user name is, at most 30 characters")


class RoomGuestJoinApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        request=GuestJoinSerializer,
        responses={
            201: RoomSerializer,
            **errors(
                post=True,
                login=False,
                e400=[
                    "invalid: the body is not a JSON object, or nickname is missing",
                    "invalid_username: the nickname is empty, over 30 characters, or holds characters other than letters, digits and @ . + - _",
                ],
                e404=NOT_FOUND,
                e409=[
                    "already_logged_in: you have an account here already: join with POST /api/rooms/<code>/join",
                    "username_taken: an account has this name (or it is reserved)",
                    "username_confusable: the nickname looks like another account's name",
                    "room_over: the room has ended",
                    f"room_full: the room holds its {settings.FM2_ROOMS['MAX_MEMBERS']} players",
                ],
                e429=f"guest_throttled: {settings.FM2_GUESTS['GUESTS_PER_IP']} guests joined from this address in the last hour; see Retry-After",
            ),
        },
        summary="Join a room as a guest, with a nickname alone",
        description="For someone without an account (a class in front of a projector): makes a guest account named "
        "after the nickname, logs it in (the answer sets the session cookie) and joins the room. A guest plays live rooms "
        "and nothing else (403 `guest_not_allowed` elsewhere), stays off the public leaderboards, and keeps its account "
        "by setting a password (`POST /api/me/claim`). Guests made per client address are throttled.",
    )
    def post(self, request: Request, code: str) -> Response:
        if request.user.is_authenticated:
            raise ServiceError("already_logged_in", "You are logged in: join with POST /api/rooms/<code>/join.", status_code=409)
        data = validated_body(GuestJoinSerializer, request)
        guest, state = services.room_join_as_guest(code=code, nickname=data["nickname"], ip=request.META.get("REMOTE_ADDR"))
        login(request._request, guest, backend="django.contrib.auth.backends.ModelBackend")
        return Response(services.room_state(code=state["code"], player=guest), status=status.HTTP_201_CREATED)
