"""One error shape for the whole REST API: ``{"error": {"code": ..., "message": ...}}``.

Services raise :class:`ServiceError` with a stable code; DRF's own exceptions (validation,
authentication, permission, not found) are mapped to the same shape so that scripts only
ever parse one thing.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import OperationalError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def _service_down_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [OperationalError]
    try:
        import redis.exceptions

        errors += [redis.exceptions.ConnectionError, redis.exceptions.TimeoutError]
    except ImportError:  # pragma: no cover
        pass
    try:  # the PostgreSQL connection pool, when one is configured
        from psycopg_pool import PoolTimeout

        errors.append(PoolTimeout)
    except ImportError:  # pragma: no cover
        pass
    try:  # Celery's broker unreachable
        from kombu.exceptions import OperationalError as KombuOperationalError

        errors.append(KombuOperationalError)
    except ImportError:  # pragma: no cover
        pass
    return tuple(errors)


SERVICE_DOWN_ERRORS = _service_down_errors()
"""What a backing service down raises: the database, Redis, the connection pool, the broker.
REST answers them 503 (``foolgame.middleware``), sockets close 1013 (``core.sockets``)."""


class ServiceError(Exception):
    """A rule of the game was broken; nothing was written. Carries a stable code."""

    status_code = status.HTTP_400_BAD_REQUEST

    def __init__(self, code: str, message: str, *, status_code: int | None = None, details: Any = None, retry_after: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.code = code
        self.message = message
        self.details = details
        if status_code is not None:
            self.status_code = status_code


def _first_message(detail: Any) -> str:
    if isinstance(detail, dict):
        for field, value in detail.items():
            text = _first_message(value)
            return text if field in ("non_field_errors", "detail") else f"{field}: {text}"
        return "Invalid input."
    if isinstance(detail, list):
        return _first_message(detail[0]) if detail else "Invalid input."
    return str(detail)


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return {"error": error}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ServiceError):
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status_code, headers=headers)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        code, details = "invalid", exc.detail
    else:
        code, details = getattr(exc, "default_code", "error"), None
        if isinstance(exc.detail, exceptions.ErrorDetail):
            code = exc.detail.code or code
    response.data = error_body(str(code), _first_message(exc.detail), details)
    return response
