"""The Celery app: tasks on Redis when REDIS_URL is set, in-process (eager) otherwise.

The broker transport is kombu's Redis transport with one fix (``RedisTransport``, chosen by
``CELERY_BROKER_TRANSPORT`` in the settings), without which the worker died with Redis.
"""

from __future__ import annotations

import os
import time
from typing import Any

from celery import Celery, signals
from kombu.transport import redis as kombu_redis
from kombu.transport.virtual import Empty

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foolgame.settings")


class RedisChannel(kombu_redis.Channel):
    """A channel that finishes closing when Redis is gone.

    A worker that loses Redis while it holds an unacknowledged message (a task with acks_late
    running, or one prefetched) died with "Unrecoverable error: AttributeError('NoneType'
    object has no attribute 'hostname')" and never came back. Celery 5.7 closes
    the lost connection twice: ``collect()`` first, then ``close()``. kombu's close of the
    channel waiting in BRPOP reads that reply first; with Redis down the read raises a
    connection error, which aborts the close before the channel is marked closed (the caller
    ignores connection errors). ``collect()`` then drops the transport's client, and the
    second close reaches the restoring of the unacknowledged messages, which builds a Redis
    client from the now missing connection info: an AttributeError, which nothing ignores.

    Here a connection error while draining the BRPOP reply no longer stops the close: the
    channel restores what it can (with Redis down, nothing: the messages stay in Redis'
    unacked hash, redelivered after the visibility timeout if Redis kept them), is marked
    closed, and the second close does nothing. The worker then reconnects as usual.
    """

    def close(self) -> None:
        if self._in_poll and not self.closed:
            try:
                self._brpop_read()
            except Empty:
                pass
            except self.connection.connection_errors:
                pass  # Redis is gone: nothing to read, but the channel must still close.
        super().close()


class RedisTransport(kombu_redis.Transport):
    Channel = RedisChannel


@signals.task_prerun.connect
@signals.task_postrun.connect
def _connections_back(sender: object = None, **kwargs: object) -> None:
    """Before and after each task a worker runs, hand its database connection back as Django
    does around a request (``close_old_connections``): to the pool, which keeps it open for
    the next task, or closed when it is broken or past CONN_MAX_AGE. Celery's own close, of
    the whole pool each time, is turned off (``CELERY_DB_REUSE_MAX`` in the settings). Not
    for eager tasks: they run inside the caller's request and transaction."""
    request = getattr(sender, "request", None)
    if getattr(request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()


_task_started: dict[str, float] = {}


@signals.task_prerun.connect
def _task_clock_start(task_id: str | None = None, **kwargs: object) -> None:
    if task_id is not None:
        _task_started[task_id] = time.perf_counter()


@signals.task_postrun.connect
def _task_clock_stop(task_id: str | None = None, task: Any = None, state: str | None = None, **kwargs: object) -> None:
    """Each task's run time into ``fm2_celery_task_seconds`` (by task name and outcome), as
    the worker's exporter serves it (``FM2_WORKER_METRICS_PORT``)."""
    started = _task_started.pop(task_id, None) if task_id is not None else None
    if started is None or task is None:
        return
    from foolgame.core import metrics

    outcome = {"SUCCESS": "success", "RETRY": "retry"}.get(state or "", "failure")
    metrics.CELERY_TASK_SECONDS.labels(task.name, outcome).observe(time.perf_counter() - started)


@signals.worker_ready.connect
def _serve_metrics(**kwargs: object) -> None:
    """A worker's main process serves the figures its pool children write (with
    PROMETHEUS_MULTIPROC_DIR) when FM2_WORKER_METRICS_PORT is set: the workers serve no other
    HTTP, and their hosts are not the web's."""
    from django.conf import settings

    if settings.FM2_WORKER_METRICS_PORT:
        from foolgame.observability import serve_worker_metrics

        serve_worker_metrics(host=settings.FM2_WORKER_METRICS_HOST, port=settings.FM2_WORKER_METRICS_PORT)


@signals.worker_ready.connect
def _reap_exports_at_start(**kwargs: object) -> None:
    """A worker coming up sweeps the exports at once (beat's sweep waits up to a minute): one
    whose worker was a process of this host that died (the crash this worker replaces) is
    queued again now, not after EXPORT_STALE_SECONDS of silence. A database that is not there
    yet only delays this to beat's next sweep."""
    import logging

    from django.db import connection

    try:
        from foolgame.dataset.jobs import export_jobs_reap
        from foolgame.dataset.tasks import run_export

        export_jobs_reap(requeue=run_export.delay)
    except Exception:
        logging.getLogger(__name__).warning("the export sweep at worker start failed; beat's next sweep retries", exc_info=True)
    finally:
        connection.close()


app = Celery("foolgame")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()



def _django_logging(**kwargs: object) -> None:
    """Celery configures no logging of its own when this receiver is connected: the worker and
    beat log through Django's LOGGING, one JSON object a line as the web processes write."""
    import logging.config

    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)


def _log_format() -> str:
    from django.conf import settings

    return settings.FM2_LOG_FORMAT


if _log_format() == "json":  # the plain format keeps Celery's own lines, as they always were
    signals.setup_logging.connect(_django_logging, weak=False)
