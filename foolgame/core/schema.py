"""The error responses of the OpenAPI schema (/api/schema/, /api/docs/): one body shape,
``{"error": {"code", "message", "details"?}}``, documented per endpoint with the codes it
really returns, each a code of the registry (``core.errors.ErrorCode``) under one of its
statuses (``tests/api/test_docs.py`` holds them to it). Documentation only: nothing here
changes what an endpoint answers."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from foolgame.core.errors import ErrorCode


class ApiErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField(help_text="stable, machine-readable: e.g. round_over, not_authenticated")
    message = serializers.CharField(help_text="for people: what went wrong and what to do")
    details = serializers.JSONField(
        required=False,
        help_text="only some errors: the fields of a validation error, each rule a claim broke, "
        "the sentence ids a moderation action refused, or retry_after and retry_at of a rate limit",
    )


class ApiErrorSerializer(serializers.Serializer):
    error = ApiErrorBodySerializer()


# What every endpoint of a kind can answer, whatever its own rules.
NOT_LOGGED_IN = "not_authenticated: not logged in (send the session cookie)"
CSRF_FAILED = "permission_denied: the CSRF check failed (send the csrftoken cookie's value as X-CSRFToken)"
BAD_BODY = [
    "parse_error: the body is not valid JSON",
    "too_deep: the body's JSON nests arrays and objects deeper than FM2_MAX_JSON_DEPTH (20 by default); it was not parsed",
    "invalid: a field is missing or has the wrong type (details names each field)",
]
BODY_TOO_LARGE = "body_too_large: the body is over FM2_MAX_BODY_BYTES (64 KiB by default); nothing was read"
NOT_JSON = "unsupported_media_type: the body is not sent as application/json"
SERVICE_DOWN = (
    "service_unavailable: the database, Redis or the task broker is down, or no database connection "
    "came free in time; retry after the Retry-After header's seconds"
)


def errors(
    *,
    post: bool = False,
    reads_body: bool | None = None,
    login: bool = True,
    body: Any = ApiErrorSerializer,
    **by_status: str | list[str],
) -> dict[int, OpenApiResponse]:
    """OpenAPI error responses, ``e400="code: why", e409=[...]`` (a bare ``"code"`` says what
    the registry says of it). ``post`` adds what any unsafe
    request may get (the CSRF check, a body too large) and, unless ``reads_body`` is False
    (an endpoint that never parses its body), a body that is not JSON or not a JSON type;
    ``login`` adds the 403 of a request without a session. 503 is always possible. ``body``
    is the error serializer, for an endpoint whose ``details`` have a documented shape."""
    lines: dict[int, list[str]] = {}
    for key, value in by_status.items():
        status = int(key.removeprefix("e"))
        lines.setdefault(status, []).extend([value] if isinstance(value, str) else value)
    if post and reads_body is not False:
        lines.setdefault(400, []).extend(BAD_BODY)
        lines.setdefault(415, []).append(NOT_JSON)
    if post:
        lines.setdefault(403, []).append(CSRF_FAILED)
        lines.setdefault(413, []).append(BODY_TOO_LARGE)
    if login:
        lines.setdefault(403, []).insert(0, NOT_LOGGED_IN)
    lines.setdefault(503, []).append(SERVICE_DOWN)
    return {status: OpenApiResponse(body, description=_markdown(lines[status])) for status in sorted(lines)}


def _markdown(lines: list[str]) -> str:
    """``code: why`` lines as a list with the codes in code type; a line that is only a code
    takes its meaning from the registry (``ErrorCode``)."""
    items = []
    for line in lines:
        code, _, why = line.partition(": ")
        if not why and code in ErrorCode._value2member_map_:
            why = ErrorCode(code).meaning
        items.append(f"- `{code}`: {why}" if why else f"- {line}")
    return "\n".join(items)
