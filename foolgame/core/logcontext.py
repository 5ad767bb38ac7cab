"""What every log line says about the request or frame it was written for: a request id and
the user's pseudonym (``LOG_FORMAT=json``, docs/operations.md). Set by the HTTP middleware
(``foolgame.observability``) and by the game sockets for each frame; read by ``ContextFilter``.

The pseudonym is a keyed hash of the account id (the server's SECRET_KEY is the key): a log
reader can follow one user's lines without learning who they are; the id is never logged."""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import uuid
from contextvars import ContextVar

from django.conf import settings

request_id: ContextVar[str | None] = ContextVar("fm2_request_id", default=None)
user_pseudonym: ContextVar[str | None] = ContextVar("fm2_user", default=None)


_SANE_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")


def new_request_id() -> str:
    return uuid.uuid4().hex


def request_id_for(offered: str | None) -> str:
    """The client's (or the balancer's) ``X-Request-ID`` when it is a sane token, else a new one."""
    return offered if offered and _SANE_ID.match(offered) else new_request_id()


def pseudonym(user_id: object) -> str:
    key = hashlib.sha256(b"fm2-log-pseudonym\x00" + settings.SECRET_KEY.encode()).digest()
    return "u" + hmac.new(key, str(user_id).encode(), hashlib.sha256).hexdigest()[:12]


class ContextFilter(logging.Filter):
    """Adds ``request_id`` and ``user`` (None outside a request or frame) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        record.user = user_pseudonym.get()
        return True
