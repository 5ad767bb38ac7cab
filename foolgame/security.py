"""The WebSocket origin check (ASGI middleware, transport only).

A browser sends ``Origin: scheme://host[:port]`` of the page that opens the socket. It is
accepted only when the handshake's Host is in ALLOWED_HOSTS and the origin is the server's
own origin as the browser sees it (same scheme, host and port: ``https`` when the socket is
``wss``, which uvicorn's --proxy-headers sets from X-Forwarded-Proto behind a TLS proxy), or
is listed in CSRF_TRUSTED_ORIGINS (the list Django's CSRF check uses for HTTP, ``*.`` wildcards
included). Anything else, a missing Origin or ``null`` included, is refused at the handshake
(HTTP 403), as channels' AllowedHostsOriginValidator did; scripts send an Origin header.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin_parts(origin: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) origin, or None when it is not one."""
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        return None
    return scheme, parts.hostname.lower().rstrip("."), port or _DEFAULT_PORTS[scheme]


def _trusted(origin: tuple[str, str, int]) -> bool:
    scheme, host, port = origin
    for entry in settings.CSRF_TRUSTED_ORIGINS:
        wildcard = "://*." in entry
        trusted = _origin_parts(entry.replace("://*.", "://", 1))
        if trusted is None or (trusted[0], trusted[2]) != (scheme, port):
            continue
        if host == trusted[1] or (wildcard and host.endswith("." + trusted[1])):
            return True
    return False


def origin_allowed(scope: dict[str, Any]) -> bool:
    headers = dict(scope.get("headers", []))
    host_header = headers.get(b"host", b"").decode("latin-1").lower()
    origin_header = headers.get(b"origin")
    if origin_header is None or not host_header:
        return False
    host, port = split_domain_port(host_header)
    if not host or not validate_host(host, settings.ALLOWED_HOSTS):
        return False
    origin = _origin_parts(origin_header.decode("latin-1"))
    if origin is None:
        return False
    own_scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
    try:
        own_port = int(port) if port else _DEFAULT_PORTS[own_scheme]
    except ValueError:
        return False
    if origin == (own_scheme, host.strip("[]").rstrip("."), own_port):  # urlsplit drops IPv6 brackets
        return True
    return _trusted(origin)


class OriginValidator:
    """Refuses a WebSocket handshake (HTTP 403) whose Origin is not the server's own."""

    def __init__(self, application: Any):
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not origin_allowed(scope):
            denier = WebsocketDenier()
            return await denier(scope, receive, send)
        return await self.application(scope, receive, send)
