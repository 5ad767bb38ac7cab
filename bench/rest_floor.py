"""The REST floor: a bare Django view served as the game's web processes are (the Procfile's
uvicorn line, ``bench/rest_floor_settings.py``: the project's settings, database pool, cache
and session engine, the session middleware only), that per request reads one row and commits
one row (``bench_floor_request``, bench/floor_rows.py) and answers a small JSON body.
``bench/bench_rest_pool.py`` drives it with the same clients as the game; what is left of a
figure measured on it is the cost of uvicorn, Django's request cycle, a session read, the pool
and two statements: the honest floor of a REST request.

Every path the clients use answers as the game's does in status (``POST /api/rounds`` 201
with an ``id``, the rest 200; no CSRF check, which is middleware the floor does not run);
``GET /api/auth/csrf`` answers a token, and ``POST /api/auth/login`` puts the name in the
session (no password is checked, no row is written: a login is not a measured request).

    DJANGO_SETTINGS_MODULE=bench.rest_floor_settings uvicorn bench.rest_floor:application ...
"""

from __future__ import annotations

import gc
import itertools
import json
import os

from django.http import HttpRequest, JsonResponse
from django.middleware.csrf import get_token
from django.urls import path, re_path
from django.views.decorators.csrf import csrf_exempt

from bench import floor_rows

TABLE = "bench_floor_request"
_ids = itertools.count(1)


def csrf(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"csrfToken": get_token(request)})


@csrf_exempt
def login(request: HttpRequest) -> JsonResponse:
    try:
        username = str(json.loads(request.body or b"{}").get("username", ""))
    except (ValueError, AttributeError):
        return JsonResponse({"error": {"code": "invalid_body", "message": "A JSON object with a username."}}, status=400)
    request.session["player"] = username
    return JsonResponse({"username": username})


@csrf_exempt
def floor(request: HttpRequest, rest: str = "") -> JsonResponse:
    """Read one row, commit one row, answer: the floor of every measured request."""
    player = request.session.get("player")
    if player is None:
        return JsonResponse({"error": {"code": "not_authenticated", "message": "Log in first."}}, status=403)
    latest = floor_rows.read_latest(TABLE)
    floor_rows.commit(TABLE, request.method or "GET", f"{player} {request.path}")
    body = {"player": player, "path": request.path, "latest": latest[0] if latest else None}
    if request.method == "POST" and request.path == "/api/rounds":
        return JsonResponse({**body, "id": next(_ids)}, status=201)
    return JsonResponse(body)


urlpatterns = [
    path("api/auth/csrf", csrf),
    path("api/auth/login", login),
    re_path(r"^(?P<rest>.*)$", floor),
]

if os.environ.get("DJANGO_SETTINGS_MODULE") == "bench.rest_floor_settings":
    # Served (uvicorn bench.rest_floor:application): set up as foolgame.asgi sets the game up.
    from django.conf import settings
    from django.core.asgi import get_asgi_application

    application = get_asgi_application()
    gc.collect()
    gc.freeze()
    gc.set_threshold(*settings.FM2_GC_THRESHOLDS)
