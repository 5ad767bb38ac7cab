"""Account endpoints: signup, login, logout, the CSRF cookie and the current player."""

from __future__ import annotations

from django.contrib.auth import login, logout, update_session_auth_hash
from django.middleware.csrf import get_token
from django.views.decorators.csrf import ensure_csrf_cookie
from django.utils.decorators import method_decorator
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.core.schema import errors
from foolgame.core.views import ApiView, validated_body
from foolgame.players.roles import is_guest, is_moderator, is_researcher
from foolgame.players.selectors import player_points, player_skill, points_shown
from foolgame.players.services import TUTORIAL_STATES, guest_claim, player_authenticate, player_create, player_tutorial_get, player_tutorial_set


class IsResearcher(permissions.BasePermission):
    """Researchers only (``players.roles.is_researcher``: staff or the researchers group): the
    dataset's exports and the studies' lists. The refusal says what the view's
    ``researchers_may`` names ("may export the dataset")."""

    def has_permission(self, request: Request, view: object) -> bool:
        self.message = f"Only researchers (staff or the researchers group) {getattr(view, 'researchers_may', 'may do this')}."
        return is_researcher(request.user)


class CredentialsSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150, trim_whitespace=True)
    password = serializers.CharField(max_length=256, trim_whitespace=False, style={"input_type": "password"})


class PointsSerializer(serializers.Serializer):
    write = serializers.IntegerField()
    verify = serializers.IntegerField()
    fool = serializers.IntegerField()
    like = serializers.IntegerField()
    check = serializers.IntegerField(help_text="Points for checking claims against their evidence")
    model = serializers.IntegerField(help_text="Points for claims that fooled the model, once people confirmed their label")
    total = serializers.IntegerField()


class SkillSerializer(serializers.Serializer):
    skill = serializers.IntegerField(help_text="rating - 2 x deviation: the skill leaderboard's order")
    rating = serializers.IntegerField(help_text="Glicko-2 rating from the player's votes (1500 scale)")
    deviation = serializers.IntegerField(help_text="its uncertainty")
    provisional = serializers.BooleanField(help_text="the deviation is still high (over 150): shown with a ? after the rating")
    votes = serializers.IntegerField(help_text="rated votes")


class PlayerSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    is_moderator = serializers.BooleanField(help_text="may work the moderation queue (the moderators group, or a superuser)")
    is_researcher = serializers.BooleanField(help_text="may export the dataset (the researchers group, staff, or a superuser)")
    is_guest = serializers.BooleanField(help_text="a guest account (a nickname, for live rooms only) until claimed with a password")
    points = PointsSerializer(required=False, help_text="left out when the player's game hides points (a study's arm); the ledger keeps them")
    skill = SkillSerializer(allow_null=True, help_text="null before the first vote")
    tutorial = serializers.ChoiceField(
        choices=list(TUTORIAL_STATES),
        help_text="the first-run tutorial: new (the pages show it), done or skipped; done by itself once you have finished a round "
        "with a vote and saved a claim (unless you asked for it again); set with POST /api/me/tutorial",
    )


def player_payload(user) -> dict:
    payload = {
        "id": user.pk,
        "username": user.get_username(),
        "is_moderator": is_moderator(user),
        "is_researcher": is_researcher(user),
        "is_guest": is_guest(user),
        "points": player_points(player=user),
        "skill": player_skill(player_id=user.pk),
        "tutorial": player_tutorial_get(player_id=user.pk),
    }
    if not points_shown(player_id=user.pk):
        del payload["points"]  # a study's arm hides points from its participants
    return payload


class SignupApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        request=CredentialsSerializer,
        responses={
            201: PlayerSerializer,
            **errors(
                post=True,
                login=False,
                e400=[
                    "invalid_username: empty, over 150 characters, or holding characters other than letters, digits and @ . + - _",
                    "weak_password: the password fails Django's password validators (the message says which)",
                ],
                e409=[
                    "username_taken: another account has this user name (compared without case), or it is reserved or looks like a reserved name",
                    "username_confusable: the name looks like another account's: the same Unicode TR39 confusable skeleton, "
                    "compared without case (admın, admіn with a Cyrillic і, ɑdmin all look like admin)",
                ],
                e429="signup_throttled: too many accounts created from this IP address (FM2_SIGNUPS_PER_IP an hour); see Retry-After",
            ),
        },
        summary="Create an account and log in",
        description="Creates a player account and logs it in: the answer sets the session cookie, and the body is the "
        "new player (no points yet). Needs the CSRF token like every unsafe request, logged in or not.",
    )
    def post(self, request: Request) -> Response:
        data = CredentialsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = player_create(**data.validated_data, ip=request.META.get("REMOTE_ADDR"))
        login(request._request, user, backend="django.contrib.auth.backends.ModelBackend")
        return Response(player_payload(user), status=status.HTTP_201_CREATED)


class LoginApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        request=CredentialsSerializer,
        responses={
            200: PlayerSerializer,
            **errors(
                post=True,
                login=False,
                e400="invalid_credentials: wrong user name or password (which of the two is not said)",
                e429="login_throttled: too many failed logins for this user name from this IP, or from this IP at all; "
                "refused even with the right password until Retry-After seconds have passed",
            ),
        },
        summary="Log in (sets the session cookie)",
        description="Checks the user name and password and starts a session: the answer sets the `sessionid` cookie "
        "and a new `csrftoken`. Failed attempts are counted per user name and IP and per IP.",
    )
    def post(self, request: Request) -> Response:
        data = CredentialsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = player_authenticate(request=request._request, ip=request.META.get("REMOTE_ADDR"), **data.validated_data)
        login(request._request, user)
        return Response(player_payload(user))


class LogoutApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        request=None,
        responses={204: None, **errors(post=True, reads_body=False, login=False)},
        summary="Log out",
        description="Ends the session (also when there is none). When Redis is down the logout waits for it (503), "
        "so a cached session cannot outlive the logout.",
    )
    def post(self, request: Request) -> Response:
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


@method_decorator(ensure_csrf_cookie, name="get")
class CsrfApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        responses={200: inline_serializer("CsrfToken", {"csrftoken": serializers.CharField()}), **errors(login=False, e405="method_not_allowed: only GET (and HEAD, OPTIONS) is answered here")},
        summary="Set the csrftoken cookie; send it back as X-CSRFToken",
        description="Sets the `csrftoken` cookie and returns its value. Scripts send it back as the `X-CSRFToken` "
        "header on every POST (Django's CSRF rule applies to everyone, logged in or not).",
    )
    def get(self, request: Request) -> Response:
        return Response({"csrftoken": get_token(request._request)})


class MeApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        responses={200: PlayerSerializer, **errors()},
        summary="The current player, their points by kind and their skill",
        description="The logged-in player: id, user name, whether they moderate, their points by kind "
        "(write, verify, fool, like) with the total, and their skill rating (null before their first vote; "
        "see `GET /api/leaderboard?kind=skill`).",
    )
    def get(self, request: Request) -> Response:
        return Response(player_payload(request.user))


class ClaimSerializer(serializers.Serializer):
    password = serializers.CharField(max_length=256, trim_whitespace=False, style={"input_type": "password"})


class GuestClaimApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=ClaimSerializer,
        responses={
            200: PlayerSerializer,
            **errors(
                post=True,
                e400="weak_password: the password fails Django's password validators (the message says which)",
                e403="not_a_guest: this account has a password already",
            ),
        },
        summary="Keep a guest account: set its password",
        description="A guest (who joined a live room with a nickname) sets a password: the account becomes an ordinary "
        "one, keeping its name, rooms, votes and points, and may then do everything a player does (and shows on the "
        "leaderboards). The session stays logged in.",
    )
    def post(self, request: Request) -> Response:
        data = ClaimSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = guest_claim(user=request.user, password=data.validated_data["password"])
        update_session_auth_hash(request._request, user)
        user._fm2_is_guest = False
        return Response(player_payload(user))

class TutorialSerializer(serializers.Serializer):
    tutorial = serializers.ChoiceField(choices=list(TUTORIAL_STATES), help_text="done: finished; skipped; new: show it again")


class TutorialApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        request=TutorialSerializer,
        responses={
            200: inline_serializer("TutorialState", {"tutorial": serializers.ChoiceField(choices=list(TUTORIAL_STATES))}),
            **errors(post=True, e400="invalid: tutorial is not new, done or skipped"),
        },
        summary="Finish, skip or restart your first-run tutorial",
        description="Stores on the server, for the account, whether the player finished (`done`) or skipped the short "
        "tutorial the game's pages show to newcomers (spotting the false claim, writing a claim); `new` shows it again. "
        "`GET /api/me` says where it stands (`tutorial`).",
    )
    def post(self, request: Request) -> Response:
        data = validated_body(TutorialSerializer, request)
        return Response({"tutorial": player_tutorial_set(player=request.user, state=data["tutorial"])})
