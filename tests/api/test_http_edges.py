"""The HTTP edges: body caps before disk, JSON errors under /api/, 503 when a service is down, safe debug pages."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
from urllib.parse import urlparse

import pytest
from django.test import Client, override_settings

from tests.factories import UserFactory
from tests.waiting import wait_for


def raw_post(base_url: str, head: bytes, body_parts: list[bytes]) -> bytes:
    """Send a request over a plain socket and read the answer, without finishing the body."""
    url = urlparse(base_url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(head)
        for part in body_parts:
            try:
                sock.sendall(part)
            except OSError:
                break
        chunks = []
        while True:
            try:
                data = sock.recv(65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        return b"".join(chunks)


def spy_spool(monkeypatch) -> list[int]:
    """Record every SpooledTemporaryFile Django's ASGI handler opens for a request body."""
    import tempfile

    import django.core.handlers.asgi as asgi_handler

    opened: list[int] = []
    real = tempfile.SpooledTemporaryFile

    def spy(*args, **kwargs):
        opened.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(asgi_handler.tempfile, "SpooledTemporaryFile", spy)
    return opened


def test_a_50_mb_post_is_refused_413_json_before_any_body_is_read(asgi_live_server, monkeypatch) -> None:
    opened = spy_spool(monkeypatch)
    head = (b"POST /api/claims HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 52428800\r\n\r\n")
    answer = raw_post(asgi_live_server, head, [b"x" * 65536])
    status, _, rest = answer.partition(b"\r\n")
    assert b" 413 " in status
    assert b'"code": "body_too_large"' in rest
    assert opened == []


def test_a_chunked_body_past_the_cap_is_refused_413_json_and_reading_stops(asgi_live_server, monkeypatch, settings) -> None:
    settings.FM2_HTTP = {**settings.FM2_HTTP, "MAX_BODY_BYTES": 1000}
    head = b"POST /api/claims HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunk = b"%x\r\n%s\r\n" % (600, b"x" * 600)
    answer = raw_post(asgi_live_server, head, [chunk, chunk, chunk])
    status, _, rest = answer.partition(b"\r\n")
    assert b" 413 " in status
    assert b'"code": "body_too_large"' in rest


def test_a_body_within_the_cap_still_reaches_the_api(asgi_live_server) -> None:
    import json
    import urllib.error
    import urllib.request

    request = urllib.request.Request(f"{asgi_live_server}/api/auth/login", data=json.dumps({"username": "x", "password": "y"}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403  # the CSRF check answered: the body was read, not refused
    assert json.loads(refused.value.read())["error"]["code"] == "permission_denied"


def test_the_admin_has_its_own_larger_cap(settings) -> None:
    from foolgame.middleware import BodySizeLimitMiddleware

    assert BodySizeLimitMiddleware.limit_for("/admin/claims/claim/") == settings.FM2_HTTP["ADMIN_MAX_BODY_BYTES"]
    assert BodySizeLimitMiddleware.limit_for("/api/claims") == settings.FM2_HTTP["MAX_BODY_BYTES"] == 64 * 1024
    assert settings.FILE_UPLOAD_MAX_MEMORY_SIZE >= settings.FM2_HTTP["ADMIN_MAX_BODY_BYTES"]


@pytest.mark.django_db
def test_an_unknown_api_url_is_a_json_404() -> None:
    response = Client().get("/api/no-such-thing")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.django_db
@override_settings(DEBUG=True)
def test_an_unknown_api_url_is_a_json_404_with_debug_on() -> None:
    response = Client().get("/api/no-such-thing")
    assert (response.status_code, response.json()["error"]["code"]) == (404, "not_found")


@pytest.mark.django_db
def test_a_wrong_method_is_a_json_405() -> None:
    response = Client().delete("/api/leaderboard")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.django_db
def test_an_unhandled_error_in_an_api_view_is_a_json_500_without_details(monkeypatch, caplog) -> None:
    from foolgame.voting import apis

    def boom(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(apis.LeaderboardApi, "get", boom)
    response = Client(raise_request_exception=False).get("/api/leaderboard")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "server_error"
    assert b"secret internals" not in response.content
    assert "secret internals" in caplog.text  # logged, with its traceback


@pytest.mark.django_db
def test_a_csrf_failure_on_the_api_is_a_json_403() -> None:
    response = Client(enforce_csrf_checks=True).post("/api/auth/login", {"username": "a", "password": "b"}, content_type="application/json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"


@pytest.mark.django_db
def test_a_page_outside_the_api_keeps_html_errors() -> None:
    response = Client().get("/no-such-page")
    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/json")


DEAD_REDIS = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0",
                "OPTIONS": {"socket_connect_timeout": 0.5}}
}


@pytest.mark.django_db
def test_with_redis_down_a_logged_in_player_stays_logged_in() -> None:
    client = Client()
    client.force_login(UserFactory(username="ivy"))
    with override_settings(CACHES=DEAD_REDIS):
        from django.core.cache import caches

        caches._settings = None  # noqa: SLF001 - rebuild the handlers from the overridden setting
        response = client.get("/api/me")
    assert response.status_code == 200
    assert response.json()["username"] == "ivy"


@pytest.mark.django_db
def test_with_redis_down_what_needs_redis_gets_a_json_503(monkeypatch) -> None:
    import redis.exceptions

    from foolgame.voting import apis

    def down(*args, **kwargs):
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    monkeypatch.setattr(apis.LeaderboardApi, "get", down)
    response = Client(raise_request_exception=False).get("/api/leaderboard")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "service_unavailable"
    assert response["Retry-After"]


@pytest.mark.django_db
def test_with_the_database_down_under_a_middleware_a_logged_in_player_gets_a_json_503(monkeypatch) -> None:
    """PostgreSQL stopped (tests/cluster): the first read of the player is the guest check's, in
    a middleware, before any view; that was a 500 ``server_error``."""
    from django.db import OperationalError

    from foolgame.players import middleware

    client = Client(raise_request_exception=False)
    client.force_login(UserFactory(username="ivy"))

    def down(*args, **kwargs):
        raise OperationalError("connection to server at 10.1.2.3 failed: Connection refused")

    monkeypatch.setattr(middleware, "is_guest", down)
    response = client.get("/api/leaderboard")  # a page guests may not reach: the check reads the player
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "service_unavailable"
    assert response["Retry-After"]
    assert b"10.1.2.3" not in response.content


# Built from pieces: the debug page shows this file's source lines around the raise.
SECRETS = {name: "-".join(["pw", name, "x7"]) for name in ("redis", "db", "other")}
REDIS_HOST = ".".join(["redis", "internal"]) + ":" + str(6300 + 80)


def test_debug_500_page_hides_service_urls_and_passwords(rf) -> None:
    from django.views.debug import technical_500_response

    redis_url = f"redis://:{SECRETS['redis']}@{REDIS_HOST}/0"
    with override_settings(
        DEBUG=True,
        REDIS_URL=redis_url,
        CELERY_BROKER_URL=redis_url,
        CELERY_RESULT_BACKEND=redis_url,
        CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": redis_url}},
        CHANNEL_LAYERS={"default": {"BACKEND": "x", "CONFIG": {"hosts": [{"address": redis_url}]}}},
        SOME_SERVICE=f"https://user:{SECRETS['other']}@api.example:8443/v1",
    ):
        request = rf.get("/boom")
        request.META["DATABASE_URL"] = f"postgres://fm2:{SECRETS['db']}@{REDIS_HOST}/fm2"
        try:
            url = redis_url  # noqa: F841 - a frame variable holding the URL
            raise RuntimeError("boom")
        except RuntimeError:
            response = technical_500_response(request, *sys.exc_info())
    page = response.content.decode()
    for secret in [*SECRETS.values(), REDIS_HOST]:
        assert secret not in page


# --- malformed multipart, forwarded headers (issue 36) -------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/auth/login", "/api/auth/signup", "/accounts/login/"])
def test_multipart_without_a_boundary_is_a_400_with_a_message_and_no_traceback(path, caplog) -> None:
    """Django answered 400 too, but logged a full traceback (MultiPartParserError) per request."""
    import logging

    with caplog.at_level(logging.INFO):
        response = Client().post(path, b"--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nb\r\n--x--\r\n",
                                 content_type="multipart/form-data")
    assert response.status_code == 400
    if path.startswith("/api/"):
        error = response.json()["error"]
        assert error["code"] == "parse_error" and "multipart" in error["message"] and "boundary" in error["message"]
    else:
        assert b"multipart" in response.content
    assert not [r for r in caplog.records if r.exc_info], "no traceback in the log"
    assert any("malformed multipart" in r.getMessage() for r in caplog.records)


@pytest.mark.django_db
def test_a_well_formed_multipart_form_still_reaches_the_page() -> None:
    from django.contrib.auth import get_user_model

    UserFactory(username="mia")
    response = Client().post("/accounts/login/", {"username": "mia", "password": "wrong"})  # the test client sends multipart
    assert response.status_code == 200 and get_user_model().objects.filter(username="mia").exists()


def signup_over_http(base_url: str, username: str, headers: dict[str, str]) -> int:
    """Sign ``username`` up over HTTP from this host, a CSRF cookie fetched first and
    ``headers`` added to the signup; its status."""
    import http.cookiejar
    import json
    import urllib.error
    import urllib.request

    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{base_url}/api/auth/csrf", timeout=10)
    token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
    request = urllib.request.Request(
        f"{base_url}/api/auth/signup", method="POST",
        data=json.dumps({"username": username, "password": "a long enough password 1"}).encode(),
        headers={"Content-Type": "application/json", "X-CSRFToken": token, **headers},
    )
    try:
        return opener.open(request, timeout=10).status
    except urllib.error.HTTPError as refused:
        return refused.code


def signups_from_forged_addresses(base_url: str, count: int) -> list[int]:
    """Sign up ``count`` accounts over HTTP from this host, each claiming another address in
    X-Forwarded-For; the statuses."""
    return [signup_over_http(base_url, f"forger{n}", {"X-Forwarded-For": f"203.0.113.{n + 1}"}) for n in range(count)]


def test_by_default_a_forged_forwarded_for_is_not_believed(asgi_live_server, settings) -> None:
    """The server runs with the Procfile's flags (foolgame.serving): FORWARDED_ALLOW_IPS unset
    trusts nobody, so three signups from this host with three forged addresses are one
    address's, and the per-address limit (2 here) refuses the third."""
    settings.FM2_SIGNUP = {**settings.FM2_SIGNUP, "SIGNUPS_PER_IP": 2}
    assert signups_from_forged_addresses(asgi_live_server, 3) == [201, 201, 429]


def test_a_proxy_named_in_forwarded_allow_ips_is_believed(transactional_db, settings, monkeypatch) -> None:
    """The same signups through a server told to trust this host (the proxy recipe in
    docs/operations.md) are three addresses: the header is read only when the proxy is named."""
    import threading

    import uvicorn

    from foolgame.asgi import application
    from foolgame.serving import uvicorn_config

    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "127.0.0.1")
    settings.FM2_SIGNUP = {**settings.FM2_SIGNUP, "SIGNUPS_PER_IP": 2}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(application, host="127.0.0.1", port=port, log_level="warning", **uvicorn_config()))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started, what="uvicorn to start", seconds=20)
        assert signups_from_forged_addresses(f"http://127.0.0.1:{port}", 3) == [201, 201, 201]
        # The named proxy's scheme is believed too, by uvicorn (Django's own setting is off):
        # a request it calls https gets https's Referer check.
        assert settings.SECURE_PROXY_SSL_HEADER is None
        assert _csrf_post_without_referer(f"http://127.0.0.1:{port}", "https") == 403
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_the_procfile_and_the_makefile_trust_no_forwarding_header_unless_told() -> None:
    from tests.procfile_server import REPO

    web = next(line for line in (REPO / "Procfile").read_text().splitlines() if line.startswith("web:"))
    assert '--proxy-headers --forwarded-allow-ips "${FORWARDED_ALLOW_IPS:-}"' in web
    assert '--forwarded-allow-ips "$${FORWARDED_ALLOW_IPS:-}"' in (REPO / "Makefile").read_text()


def _csrf_post_without_referer(base_url: str, proto: str) -> int:
    """A signup over plain HTTP that says ``X-Forwarded-Proto: proto`` and sends no Referer:
    its status. Django checks the Referer of an unsafe request only when it takes the request
    for https, so a 403 here means the forwarded scheme was believed."""
    return signup_over_http(base_url, f"scheme{proto}", {"X-Forwarded-Proto": proto})


def test_by_default_a_forged_forwarded_proto_does_not_make_a_request_https(asgi_live_server, settings) -> None:
    """With production's default (no SECURE_PROXY_SSL_HEADER) and no proxy named, a client
    saying https over plain HTTP is still plain HTTP to Django: the CSRF check does not ask it
    for an https Referer. The same header read by Django's setting would have been believed."""
    settings.SECURE_PROXY_SSL_HEADER = None
    assert _csrf_post_without_referer(asgi_live_server, "https") == 201
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert _csrf_post_without_referer(asgi_live_server, "https") == 403


def test_a_request_runs_its_middleware_and_view_in_one_trip_from_the_event_loop(asgi_live_server, monkeypatch) -> None:
    """``foolgame.asgi.OneTripASGIHandler``: the whole middleware chain and a sync view run in
    one trip to the request's thread. Django's own handler went back to the event loop below
    the first sync-only middleware (``async_to_sync``) and out to the thread again for the
    view and for each middleware hook below it. An async view (liveness) still answers, in
    the loop, under the sync chain."""
    import json
    import urllib.request

    import asgiref.sync

    back_to_the_loop = []
    call = asgiref.sync.AsyncToSync.__call__
    monkeypatch.setattr(asgiref.sync.AsyncToSync, "__call__", lambda self, *a, **k: back_to_the_loop.append(self.awaitable) or call(self, *a, **k))
    with urllib.request.urlopen(f"{asgi_live_server}/api/categories", timeout=10) as answer:
        assert answer.status == 200 and json.loads(answer.read()) == []
        assert answer.headers["X-Frame-Options"] == "DENY"  # the bottom middleware ran, in the same trip
    assert back_to_the_loop == []
    with urllib.request.urlopen(f"{asgi_live_server}/health/live", timeout=10) as answer:
        assert answer.status == 200 and json.loads(answer.read()) == {"status": "ok", "checks": {}}
    assert len(back_to_the_loop) == 1  # the async view's coroutine, handed to the loop


def test_requests_one_after_another_reuse_their_thread(asgi_live_server) -> None:
    """Django's handler started a thread for each request (a sixth of a web process's CPU);
    ``OneTripASGIHandler`` keeps it for the next request, where the request's signals (the
    database connection's closing) run with its view."""
    import urllib.request

    from django.core.signals import request_finished, request_started

    seen: list[tuple[str, str]] = []

    def started(**kwargs) -> None:
        seen.append(("started", threading.current_thread().name))

    def finished(**kwargs) -> None:
        seen.append(("finished", threading.current_thread().name))

    request_started.connect(started, dispatch_uid="test-request-thread-started")
    request_finished.connect(finished, dispatch_uid="test-request-thread-finished")
    try:
        for _ in range(3):
            with urllib.request.urlopen(f"{asgi_live_server}/api/categories", timeout=10) as answer:
                assert answer.status == 200
    finally:
        request_started.disconnect(dispatch_uid="test-request-thread-started")
        request_finished.disconnect(dispatch_uid="test-request-thread-finished")
    assert [event for event, _ in seen] == ["started", "finished"] * 3
    names = {name for _, name in seen}
    assert len(names) == 1 and names.pop().startswith("fm2-request")


def test_requests_at_once_each_have_a_thread_and_leave_them_idle_for_the_next() -> None:
    from asgiref.sync import sync_to_async

    from foolgame.asgi import OneTripASGIHandler

    handler = OneTripASGIHandler()
    threads: list[int] = []

    async def main() -> None:
        both_inside = asyncio.Barrier(2)

        async def handle(scope, receive, send) -> None:
            threads.append(await sync_to_async(threading.get_ident)())
            if len(threads) <= 2:
                await both_inside.wait()  # the first two requests are served at the same time

        handler.handle = handle
        await asyncio.gather(handler({"type": "http"}, None, None), handler({"type": "http"}, None, None))
        assert len(handler._idle_threads) == 2
        await handler({"type": "http"}, None, None)

    asyncio.run(main())
    assert threads[0] != threads[1] and threads[2] in threads[:2]
    with pytest.raises(ValueError, match="only handle ASGI/HTTP"):
        asyncio.run(handler({"type": "websocket"}, None, None))


def test_a_request_thread_still_running_an_abandoned_view_is_not_handed_to_the_next_request(monkeypatch) -> None:
    """A client that hangs up has its request's task cancelled, but the view runs on in the
    thread: the thread is idle, and given to another request, only once the view returns.
    Past the cap of idle threads a finished one is shut down."""
    from foolgame import asgi

    idle: list[asgi.RequestThread] = []
    thread = asgi.RequestThread(idle)
    view_may_return = threading.Event()
    running = thread.submit(view_may_return.wait, 10)
    thread.release()  # the request is over for the event loop
    assert idle == []
    view_may_return.set()
    assert running.result(timeout=10) is True
    wait_for(lambda: idle == [thread], what="the thread to become idle", seconds=5)
    monkeypatch.setattr(asgi, "IDLE_REQUEST_THREADS", 1)
    spare = asgi.RequestThread(idle)
    assert spare.submit(lambda: 42).result(timeout=10) == 42
    spare.release()
    assert idle == [thread]
    with pytest.raises(RuntimeError, match="shutdown"):
        spare.submit(lambda: 42)
    thread.shutdown()


def _streamed(request):
    from django.http import StreamingHttpResponse

    return StreamingHttpResponse(part for part in (b"one,", b"two"))


def _whole(request):
    from django.http import HttpResponse

    return HttpResponse(b"whole")


def _asgi_get(path: str) -> list[str]:
    """What happens, in order, as the handler serves GET ``path``: the ASGI messages it sends
    and the request signals, each with the thread it ran on."""
    from django.core.signals import request_finished, request_started

    from foolgame.asgi import OneTripASGIHandler

    events: list[str] = []
    started = lambda **kwargs: events.append("started")  # noqa: E731
    finished = lambda **kwargs: events.append("finished")  # noqa: E731
    request_started.connect(started, dispatch_uid="test-asgi-get-started")
    request_finished.connect(finished, dispatch_uid="test-asgi-get-finished")
    scope = {"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": [(b"host", b"testserver")],
             "server": ("testserver", 80), "client": ("127.0.0.1", 5000), "scheme": "http", "asgi": {"version": "3.0"}}

    async def main() -> None:
        sent_all = asyncio.Event()
        requests = [{"type": "http.request", "body": b"", "more_body": False}]

        async def receive():
            if requests:
                return requests.pop()
            await sent_all.wait()  # the client stays until it has the whole answer
            return {"type": "http.disconnect"}

        async def send(message):
            events.append(message["type"] + (f":{message['body'].decode()}" if message.get("body") else ""))
            if message["type"] == "http.response.body" and not message.get("more_body"):
                sent_all.set()

        await OneTripASGIHandler()(scope, receive, send)

    try:
        asyncio.run(main())
    finally:
        request_started.disconnect(dispatch_uid="test-asgi-get-started")
        request_finished.disconnect(dispatch_uid="test-asgi-get-finished")
    return events




@pytest.mark.django_db
@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume synchronous iterators")  # as the export's download
@override_settings(ROOT_URLCONF=__name__)
def test_a_whole_response_is_closed_before_it_is_sent_and_a_streamed_one_after() -> None:
    """A whole response is closed in its one trip (``request_finished``: the database
    connection goes back to the pool) before a byte is written; a streamed one only once its
    last part is sent, as Django's handler does."""
    assert _asgi_get("/whole") == ["started", "finished", "http.response.start", "http.response.body:whole"]
    assert _asgi_get("/streamed") == [
        "started", "http.response.start", "http.response.body:one,", "http.response.body:two", "http.response.body", "finished",
    ]


def _handler_test_urls() -> list:
    from django.urls import path

    return [path("whole", _whole), path("streamed", _streamed)]


urlpatterns = _handler_test_urls()  # the handler tests' ROOT_URLCONF
