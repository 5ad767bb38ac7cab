"""Account endpoints: signup, login, logout, the CSRF cookie and the current player."""

from __future__ import annotations

from django.contrib.auth import login, logout
from django.middleware.csrf import get_token
from django.views.decorators.csrf import ensure_csrf_cookie
from django.utils.decorators import method_decorator
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from foolgame.api.errors import ServiceError
from foolgame.api.views import ApiView
from foolgame.players.selectors import player_points
from foolgame.players.services import player_authenticate, player_create


class CredentialsSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150, trim_whitespace=True)
    password = serializers.CharField(max_length=256, trim_whitespace=False, style={"input_type": "password"})


class PointsSerializer(serializers.Serializer):
    write = serializers.IntegerField()
    verify = serializers.IntegerField()
    fool = serializers.IntegerField()
    like = serializers.IntegerField()
    total = serializers.IntegerField()


class PlayerSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    is_moderator = serializers.BooleanField()
    points = PointsSerializer()


def player_payload(user) -> dict:
    return {
        "id": user.pk,
        "username": user.get_username(),
        "is_moderator": user.groups.filter(name="moderators").exists(),
        "points": player_points(player=user),
    }


class SignupApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(request=CredentialsSerializer, responses={201: PlayerSerializer}, summary="Create an account and log in")
    def post(self, request: Request) -> Response:
        data = CredentialsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = player_create(**data.validated_data, ip=request.META.get("REMOTE_ADDR"))
        login(request._request, user, backend="django.contrib.auth.backends.ModelBackend")
        return Response(player_payload(user), status=status.HTTP_201_CREATED)


class LoginApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(request=CredentialsSerializer, responses={200: PlayerSerializer}, summary="Log in (sets the session cookie)")
    def post(self, request: Request) -> Response:
        data = CredentialsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = player_authenticate(request=request._request, ip=request.META.get("REMOTE_ADDR"), **data.validated_data)
        login(request._request, user)
        return Response(player_payload(user))


class LogoutApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(request=None, responses={204: None}, summary="Log out")
    def post(self, request: Request) -> Response:
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


@method_decorator(ensure_csrf_cookie, name="get")
class CsrfApi(ApiView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        responses={200: inline_serializer("CsrfToken", {"csrftoken": serializers.CharField()})},
        summary="Set the csrftoken cookie; send it back as X-CSRFToken",
    )
    def get(self, request: Request) -> Response:
        return Response({"csrftoken": get_token(request._request)})


class MeApi(ApiView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: PlayerSerializer}, summary="The current player and their points by kind")
    def get(self, request: Request) -> Response:
        return Response(player_payload(request.user))
