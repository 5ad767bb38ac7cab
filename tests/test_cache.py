"""The Redis cache (``foolgame.cache``): one pool per process and one redis-py client per pool,
shared by every call and thread, across a restart of Redis."""

from __future__ import annotations

import shutil
import threading

import pytest

from foolgame.cache import RedisCache
from tests.core.test_events_redis_restart import RedisServer, free_port

pytestmark = pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server (apt-get install redis-server)")


def test_every_call_and_thread_shares_one_client_and_it_survives_a_redis_restart() -> None:
    server = RedisServer(free_port())
    server.start()
    try:
        cache = RedisCache(f"redis://127.0.0.1:{server.port}/0", {"KEY_PREFIX": "fm2-cache-test", "OPTIONS": {"pool_class": "foolgame.cache.SharedConnectionPool"}})
        cache.set("hits", 0)
        clients: list[object] = []  # kept: a client freed could leave its id to the next
        errors: list[BaseException] = []

        def play() -> None:
            try:
                for _ in range(50):
                    clients.append(cache._cache.get_client(write=True))
                    cache.incr("hits")
            except BaseException as error:  # noqa: BLE001 - reported by the assert below
                errors.append(error)

        threads = [threading.Thread(target=play) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert errors == [] and cache.get("hits") == 400  # no increment lost among the threads
        assert len(clients) == 400 and all(client is clients[0] for client in clients)  # one client (Django's made one per call)
        # Redis restarts (its keys gone, its connections cut): the same client, through its pool, answers again.
        server.process.kill()
        server.process.wait()
        server.start()
        assert cache.get("hits") is None
        cache.set("back", "yes")
        assert cache.get("back") == "yes" and cache._cache.get_client(write=True) is clients[0]
    finally:
        server.stop()
