"""The logged-in user of a request or a socket, read from its session with the SQL compiled once.

Every logged-in request and every new socket reads its user by the session's key. Django's
``ModelBackend.get_user`` builds and compiles that query afresh each time, which costs more
CPU than running it; ``session_user`` runs it compiled (``core.queries.compiled_instance``)
for the sessions it can answer alone and leaves every other case to Django's own reader."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import auth
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.middleware import AuthenticationMiddleware as DjangoAuthenticationMiddleware
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils.crypto import constant_time_compare
from django.utils.functional import SimpleLazyObject

from foolgame.core.queries import compiled_instance

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def session_user(session: Any) -> Any | None:
    """The session's user when the session is one of Django's ``ModelBackend`` (every password,
    nickname and study login here), its user exists and may log in, and its hash matches the
    user's current one; otherwise None, and the caller asks Django's own reader (which
    returns ``AnonymousUser``, accepts a hash of a fallback secret, flushes a stale session)."""
    try:
        user_id = get_user_model()._meta.pk.to_python(session[SESSION_KEY])
        backend_path = session[BACKEND_SESSION_KEY]
    except (KeyError, ValueError, TypeError, ValidationError):
        return None
    if backend_path != MODEL_BACKEND or backend_path not in settings.AUTHENTICATION_BACKENDS:
        return None
    user = compiled_instance("session_user", get_user_model()._default_manager.all, user_id)
    if user is None or not ModelBackend().user_can_authenticate(user):
        return None
    session_hash = session.get(HASH_SESSION_KEY)
    if not (session_hash and constant_time_compare(session_hash, user.get_session_auth_hash())):
        return None
    return user


def _request_user(request: HttpRequest) -> Any:
    if not hasattr(request, "_cached_user"):
        user = session_user(request.session)
        request._cached_user = user if user is not None else auth.get_user(request)
    return request._cached_user


class AuthenticationMiddleware(DjangoAuthenticationMiddleware):
    """Django's, with ``request.user`` read by ``session_user`` (Django's reader for every
    session it leaves). ``request.auser`` stays Django's."""

    def process_request(self, request: HttpRequest) -> None:
        super().process_request(request)  # and request.auser, Django's
        request.user = SimpleLazyObject(lambda: _request_user(request))
