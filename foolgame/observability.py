"""Metrics, request ids in the logs, and error reports (docs/operations.md, Metrics and logs).

- ``RequestContextMiddleware`` gives every HTTP request an id (the client's ``X-Request-ID``
  when it is a sane token, else a new one), sent back in ``X-Request-ID`` and written on every
  log line of the request with the user's pseudonym (``foolgame.core.logcontext``); with
  ``LOG_FORMAT=json`` it also writes the access line (uvicorn's own has no request id).
- ``RequestMetricsMiddleware`` counts requests by route pattern, method and status, with their
  latency (``foolgame.core.metrics``).
- ``metrics_view`` serves ``/metrics`` in Prometheus' text format to a bearer of
  ``FM2_METRICS_TOKEN`` or a client of ``FM2_METRICS_NETWORKS``; 403 to anyone else, and 404
  when neither is set. The figures kept in the database are read then (``DatabaseCollector``).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import REGISTRY, Collector

from foolgame.core import logcontext, metrics

access_logger = logging.getLogger("foolgame.access")

# Paths probed every few seconds or served as files: no session read for the log's pseudonym.
_QUIET_PREFIXES = ("/health/", "/metrics", "/static/", "/favicon.ico")


class RequestContextMiddleware:
    """The request id and the user's pseudonym for every log line of the request."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # The id the ASGI edge gave this request (foolgame.middleware), else a new one.
        rid = logcontext.request_id.get() or logcontext.request_id_for(request.headers.get("X-Request-ID"))
        rid_token = logcontext.request_id.set(rid)
        user_token = logcontext.user_pseudonym.set(None)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = rid
            if settings.FM2_LOG_FORMAT == "json" and not request.path.startswith(_QUIET_PREFIXES):
                access_logger.info(
                    "%s %s %s", request.method, request.path, response.status_code,
                    extra={"status": response.status_code, "duration_ms": round((time.perf_counter() - started) * 1000, 1)},
                )
            return response
        finally:
            logcontext.request_id.reset(rid_token)
            logcontext.user_pseudonym.reset(user_token)

    def process_view(self, request: HttpRequest, *args: Any) -> None:
        """Once the session middleware ran: the pseudonym of the logged-in account, if any (the
        account id is read from the session, which the view reads anyway, not the user row)."""
        if request.path.startswith(_QUIET_PREFIXES):
            return
        from django.contrib.auth import SESSION_KEY

        session = getattr(request, "session", None)
        user_id = session.get(SESSION_KEY) if session is not None else None
        if user_id is not None:
            logcontext.user_pseudonym.set(logcontext.pseudonym(user_id))


class RequestMetricsMiddleware:
    """Counts every HTTP request by its route pattern (``api/rounds/<int:round_id>/vote``, never
    the raw path: one series per route), method and status, and times it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = (match.route or match.view_name or "unnamed") if match is not None else "unmatched"
        metrics.HTTP_REQUESTS.labels(route, request.method or "", str(response.status_code)).inc()
        metrics.HTTP_SECONDS.labels(route).observe(time.perf_counter() - started)
        return response


# --- /metrics ---------------------------------------------------------------------------------


class DatabaseCollector(Collector):
    """Figures that live in the database and Redis, read when /metrics is: a few counts."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from django.db.models import Count

        from foolgame.dataset.models import Export
        from foolgame.rooms.models import RoomQuestion
        from foolgame.verifier.services import active_version
        from foolgame.voting.models import Round

        now = timezone.now()
        rounds = GaugeMetricFamily("fm2_rounds_in_play", "Rounds playing (started, deadline not passed): solo rounds and room members' own rounds.")
        rounds.add_metric([], Round.objects.filter(state=Round.State.PLAYING, deadline__gt=now).count())
        yield rounds
        questions = GaugeMetricFamily("fm2_room_questions_in_play", "Live rooms' questions playing (deadline not passed).")
        questions.add_metric([], RoomQuestion.objects.filter(state=RoomQuestion.State.PLAYING, deadline__gt=now).count())
        yield questions
        exports = GaugeMetricFamily("fm2_exports", "Dataset exports by state.", labels=["state"])
        counts = dict(Export.objects.order_by().values("status").annotate(n=Count("pk")).values_list("status", "n"))
        for state in Export.Status.values:
            exports.add_metric([state], counts.get(state, 0))
        yield exports
        version = active_version()
        verifier = GaugeMetricFamily("fm2_verifier_active_version", "The number of the active verifier version (0: none yet).")
        verifier.add_metric([], version.number if version is not None else 0)
        yield verifier
        depths = _queue_depths()
        if depths is not None:
            queues = GaugeMetricFamily("fm2_celery_queue_length", "Tasks waiting in each Celery queue.", labels=["queue"])
            for name, depth in depths.items():
                queues.add_metric([name], depth)
            yield queues


def _queue_depths() -> dict[str, int] | None:
    """LLEN of each Celery queue on the Redis broker (none on the embedded default)."""
    if not settings.REDIS_URL:
        return None
    import redis

    prefix = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}).get("global_keyprefix", "")
    names = ["celery", *sorted({route["queue"] for route in settings.CELERY_TASK_ROUTES.values()})]
    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    try:
        with client.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.llen(prefix + name)
            return dict(zip(names, (int(n) for n in pipe.execute())))
    except redis.RedisError:
        return None
    finally:
        client.close()


def _allowed(request: HttpRequest) -> bool | None:
    return metrics_allowed(authorization=request.headers.get("Authorization", ""), address=request.META.get("REMOTE_ADDR", ""))


def metrics_allowed(*, authorization: str, address: str) -> bool | None:
    """True for a bearer of the token or a client of the networks, False for anyone else,
    None when /metrics is off (neither is set). The web processes' /metrics and the workers'
    exporter answer by this one rule."""
    token, networks = settings.FM2_METRICS_TOKEN, settings.FM2_METRICS_NETWORKS
    if not token and not networks:
        return None
    if token:
        scheme, _, offered = authorization.partition(" ")
        if scheme.lower() == "bearer" and offered and constant_time_compare(offered.strip(), token):
            return True
    if networks:
        try:
            client = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(client in ipaddress.ip_network(network, strict=False) for network in networks)
    return False


def _registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return REGISTRY


_database_collector = DatabaseCollector()


def metrics_view(request: HttpRequest) -> HttpResponse:
    allowed = _allowed(request)
    if allowed is None:
        return JsonResponse({"error": {"code": "not_found", "message": "Not found."}}, status=404)
    if not allowed:
        return JsonResponse({"error": {"code": "forbidden", "message": "Metrics need the bearer token or an allowed network."}}, status=403)
    registry = _registry()
    body = generate_latest(registry)
    extra = CollectorRegistry(auto_describe=False)
    extra.register(_database_collector)
    body += generate_latest(extra)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)


# --- the Celery workers' figures ----------------------------------------------------------------


def worker_metrics_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """A WSGI app serving a worker host's figures (task durations) at ``/metrics``, under the
    web's rule (token or networks; 404 when neither is set). With PROMETHEUS_MULTIPROC_DIR it
    sums every process writing there: the worker's pool children, where the tasks run."""
    allowed = metrics_allowed(authorization=environ.get("HTTP_AUTHORIZATION", ""), address=environ.get("REMOTE_ADDR", ""))
    if environ.get("PATH_INFO") != "/metrics" or allowed is None:
        start_response("404 Not Found", [("Content-Type", "application/json")])
        return [b'{"error": {"code": "not_found", "message": "Not found."}}']
    if not allowed:
        start_response("403 Forbidden", [("Content-Type", "application/json")])
        return [b'{"error": {"code": "forbidden", "message": "Metrics need the bearer token or an allowed network."}}']
    body = generate_latest(_registry())
    start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(body)))])
    return [body]


def serve_worker_metrics(*, host: str, port: int) -> Any:
    """Serve ``worker_metrics_app`` on a thread of this process (a Celery worker's main process,
    ``foolgame.celery``); returns the server. A port already taken (another worker of the host
    serves the same folder) is logged and skipped."""
    import threading
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: Any) -> None:  # a scrape every 15 s is no news
            pass

    class Threaded(WSGIServer):
        daemon_threads = True

    try:
        server = make_server(host, port, worker_metrics_app, server_class=Threaded, handler_class=Quiet)
    except OSError as error:
        logging.getLogger("foolgame.metrics").warning("Worker metrics not served on port %s: %s", port, error)
        return None
    threading.Thread(target=server.serve_forever, name="fm2-worker-metrics", daemon=True).start()
    return server
