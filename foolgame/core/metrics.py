"""The process's own Prometheus figures (prometheus-client), counted where things happen.

Requests are counted by ``foolgame.metrics.RequestMetricsMiddleware``, sockets and their frames
by ``foolgame.core.sockets``, Celery tasks by ``foolgame.celery`` (served by the worker itself,
``FM2_WORKER_METRICS_PORT``); the figures read from the database (rounds and room questions in
play, exports by state, the active verifier version, Celery's queues) are gathered when
``/metrics`` is read (``foolgame.metrics``). Counting costs a microsecond or two and nothing is
served until ``FM2_METRICS_TOKEN`` or ``FM2_METRICS_NETWORKS`` is set.

With several processes per host, set ``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's own
multi-process mode, docs/operations.md): every process then writes its figures there and
``/metrics`` answers for all of them, whichever process serves it.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

# Latency buckets in seconds, from a millisecond (a vote's ack on an idle server) to 10 s.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

HTTP_REQUESTS = Counter(
    "fm2_http_requests", "HTTP requests answered, by route pattern, method and status.", ["route", "method", "status"]
)
HTTP_SECONDS = Histogram(
    "fm2_http_request_seconds", "Time to answer an HTTP request, by route pattern.", ["route"], buckets=LATENCY_BUCKETS
)
SOCKETS_OPEN = Gauge(
    "fm2_sockets_open", "Game sockets open (admitted, holding a lease), by kind (round, room).", ["kind"], multiprocess_mode="livesum"
)
SOCKET_FRAMES = Histogram(
    "fm2_socket_frame_seconds",
    "Time from a client's frame to the end of its handling (its reply sent), by socket kind, frame type and outcome "
    "(ok, refused: an error frame with a game code, failed: a service down or a bug). "
    'The vote-ack latency is frame="vote".',
    ["kind", "frame", "outcome"],
    buckets=LATENCY_BUCKETS,
)

# A task runs from milliseconds (a vote's follow-ups) to many minutes (an export, a training).
TASK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
CELERY_TASK_SECONDS = Histogram(
    "fm2_celery_task_seconds",
    "Time a Celery task ran in a worker, by task name and outcome (success, failure, retry).",
    ["task", "outcome"],
    buckets=TASK_BUCKETS,
)
