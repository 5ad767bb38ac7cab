"""HTTP edges: the request body cap (ASGI), JSON errors under /api/, 503 when a backing service is down."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from django.conf import settings
from django.core.signals import got_request_exception
from django.dispatch import receiver
from django.http import HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.utils.html import escape
from django.utils.deprecation import MiddlewareMixin

from foolgame.core import logcontext
from foolgame.core.errors import SERVICE_DOWN_ERRORS, error_body

logger = logging.getLogger("foolgame.http")



def _limits() -> dict[str, int]:
    return settings.FM2_HTTP


class BodySizeLimitMiddleware:
    """ASGI middleware: refuse a request body past the cap before Django spools it.

    Django's ASGI handler reads the whole body into a SpooledTemporaryFile (on disk past
    FILE_UPLOAD_MAX_MEMORY_SIZE) before any view or DATA_UPLOAD_MAX_MEMORY_SIZE check runs.
    A declared Content-Length over the cap gets 413 without the app being called; a streamed
    (chunked) body is counted and reading stops at the cap: the app sees a disconnect and
    this middleware answers 413.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    @staticmethod
    def limit_for(path: str) -> int:
        limits = _limits()
        if path.startswith(limits["ADMIN_PATH_PREFIX"]):
            return limits["ADMIN_MAX_BODY_BYTES"]
        return limits["MAX_BODY_BYTES"]

    @staticmethod
    async def refuse(send: Any, limit: int) -> None:
        body = json.dumps(error_body("body_too_large", f"The request body is larger than {limit} bytes.")).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), (b"connection", b"close")],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        # The request's id for its log lines, from here on (a refusal below logs one).
        offered = next((value.decode("latin-1") for name, value in scope.get("headers", []) if name == b"x-request-id"), None)
        logcontext.request_id.set(logcontext.request_id_for(offered))
        limit = self.limit_for(scope.get("path", ""))
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = limit + 1
                if declared > limit:
                    logger.warning("Refused a %s-byte body for %s (cap %s)", value.decode("latin-1"), scope.get("path"), limit)
                    return await self.refuse(send, limit)
        state = {"received": 0, "over": False, "started": False}

        async def limited_receive() -> dict:
            if state["over"]:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                if state["received"] > limit:
                    state["over"] = True
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: dict) -> None:
            if state["over"] and not state["started"]:
                return  # the 413 below answers instead
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        await self.app(scope, limited_receive, guarded_send)
        if state["over"] and not state["started"]:
            logger.warning("Refused a streamed body past %s bytes for %s", limit, scope.get("path"))
            await self.refuse(send, limit)


def is_api(request: Any) -> bool:
    return request.path.startswith("/api/")


_STATUS_CODES = {
    400: ("bad_request", "The request could not be understood."),
    403: ("permission_denied", "You do not have permission to perform this action."),
    404: ("not_found", "Not found."),
    405: ("method_not_allowed", "Method not allowed."),
    413: ("body_too_large", "The request body is too large."),
    500: ("server_error", "The server failed to answer; the error was logged."),
    503: ("service_unavailable", "A service the server needs is down; try again shortly."),
}


def bad_body(request: Any, message: str) -> HttpResponse:
    """400 ``parse_error`` with this message: JSON under /api/, a plain page elsewhere."""
    if is_api(request):
        return JsonResponse(error_body("parse_error", message), status=400)
    return HttpResponse(
        f"<!doctype html><title>Bad request</title><h1>Bad request</h1><p>{escape(message)}</p>",
        status=400,
        content_type="text/html; charset=utf-8",
    )


def service_unavailable(request: Any) -> HttpResponse:
    retry = str(settings.FM2_HTTP["RETRY_AFTER_SECONDS"])
    if is_api(request):
        code, message = _STATUS_CODES[503]
        response: HttpResponse = JsonResponse(error_body(code, message), status=503)
    else:
        response = HttpResponse(
            "<!doctype html><title>Service unavailable</title><h1>Service unavailable</h1>"
            "<p>A service fm2 needs is down. Please try again in a moment.</p>",
            status=503,
            content_type="text/html; charset=utf-8",
        )
    response["Retry-After"] = retry
    return response


class HttpErrorsMiddleware(MiddlewareMixin):
    """First in MIDDLEWARE. Under /api/ every error answer is JSON ({"error": {code, message}}),
    whatever produced it (the URL resolver's 404, Django's 500 or debug pages, CSRF); and a
    backing service that is down (database, Redis, the connection pool, the broker) gives
    503 with Retry-After instead of a 500: JSON under /api/, a plain page elsewhere."""

    def process_request(self, request: Any) -> HttpResponse | None:
        """A multipart body Django cannot parse (no boundary, a broken part) is refused here
        with 400 ``parse_error`` and a one-line warning. Left to Django, the first read of
        ``request.POST`` (the CSRF check's, a form's) raised ``MultiPartParserError``, which
        Django answered 400 but logged with a full traceback, one per request."""
        if not request.content_type.startswith("multipart/"):
            return None
        try:
            request.POST  # noqa: B018 - parsed now, as Django would on the first read
        except MultiPartParserError as exc:
            logger.warning("Refused a malformed multipart body for %s %s: %s", request.method, request.path, exc)
            return bad_body(request, f"The multipart body could not be read ({exc}); send JSON, or multipart/form-data with its boundary.")
        return None

    def process_exception(self, request: Any, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, SERVICE_DOWN_ERRORS):
            logger.error("Service unavailable for %s %s", request.method, request.path, exc_info=exception)
            return service_unavailable(request)
        return None

    def process_response(self, request: Any, response: HttpResponse) -> HttpResponse:
        if response.status_code == 500 and getattr(request, "_fm2_service_down", False):
            # A service went down under a middleware (the user read for the guest check, a
            # session saved), not a view: Django made it a 500 before this middleware saw it.
            return service_unavailable(request)
        if not is_api(request) or response.status_code < 400:
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        code, message = _STATUS_CODES.get(response.status_code, ("error", response.reason_phrase or "Error."))
        replaced = JsonResponse(error_body(code, message), status=response.status_code)
        for header in ("Allow", "Retry-After"):
            if response.has_header(header):
                replaced[header] = response[header]
        return replaced


@receiver(got_request_exception)
def _note_service_down(sender: Any, request: Any = None, **kwargs: Any) -> None:
    """Django sends this while it turns an exception raised anywhere below the first middleware
    into a 500: mark the request when the exception was a backing service going down, so that
    ``HttpErrorsMiddleware`` answers 503 ``service_unavailable`` rather than ``server_error``
    (PostgreSQL stopped: a player's read of their round got a 500 from the guest check's user
    lookup)."""
    error = sys.exc_info()[1]
    if request is not None and isinstance(error, SERVICE_DOWN_ERRORS):
        request._fm2_service_down = True
