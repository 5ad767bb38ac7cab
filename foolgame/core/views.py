"""The base of every REST endpoint."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions, serializers
from rest_framework.authentication import CSRFCheck
from rest_framework.request import Request
from rest_framework.views import APIView

from foolgame.core.errors import ServiceError


def _no_response(request: Any) -> None:  # CSRFCheck wants a get_response; it is never called
    return None


class ApiView(APIView):
    """An APIView that applies Django's CSRF rule to every unsafe request.

    DRF's SessionAuthentication checks CSRF only for logged-in users, which would leave
    signup and login open to login-CSRF; the API promises Django's rules for everyone.

    ``validation_details`` is the shape of a 400 ``invalid``'s ``details``: ``"fields"``, an
    object of each field's messages (DRF's own), or ``"problems"``, a list of ``{code, field,
    message}`` (``core.errors.field_problems``) for an endpoint whose other 400s answer such
    a list, so that its ``details`` have one documented shape.
    """

    validation_details = "fields"

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        if request.method not in ("GET", "HEAD", "OPTIONS", "TRACE"):
            check = CSRFCheck(_no_response)
            check.process_request(request._request)
            reason = check.process_view(request._request, None, (), {})
            if reason:
                raise exceptions.PermissionDenied("CSRF check failed: fetch GET /api/auth/csrf and send the token as X-CSRFToken.")
        super().initial(request, *args, **kwargs)


def validated_body(serializer_class: type[serializers.Serializer], request: Request) -> dict:
    """The request's JSON object, checked by ``serializer_class``: 400 ``invalid`` otherwise."""
    if not isinstance(request.data, dict):
        raise ServiceError("invalid", "Send a JSON object.")
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
