"""The Celery app: tasks on Redis when REDIS_URL is set, in-process (eager) otherwise.

The broker transport is kombu's Redis transport with one fix (``RedisTransport``, chosen by
``CELERY_BROKER_TRANSPORT`` in the settings), without which the worker died with Redis.
"""

from __future__ import annotations

import os

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
