"""The web process keeps at most DB_POOL_MAX_SIZE PostgreSQL connections however many REST
clients it serves at once (issue 12: persistent connections are never reused under ASGI, and
40 clients exhausted PostgreSQL's max_connections). Real PostgreSQL, real uvicorn."""

from __future__ import annotations

import http.cookiejar
import json
import os
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from tests.procfile_server import LiveDatabase, ProcfileServer, base_env

pytestmark = [pytest.mark.services, pytest.mark.slow]

DATABASE_URL = os.environ.get("DATABASE_URL", "")
needs_postgres = pytest.mark.skipif(
    not DATABASE_URL.startswith("postgres") and not os.environ.get("FM2_REQUIRE_SERVICES"),
    reason="DATABASE_URL is not a PostgreSQL database",
)

POOL_MAX = 4
CLIENTS = 40
WAVES = 3


class Client:
    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        token = next((c.value for c in self.jar if c.name == "csrftoken"), "")
        request = urllib.request.Request(self.base + path, method=method, data=json.dumps(body or {}).encode() if method == "POST" else None,
                                         headers={"Content-Type": "application/json", "X-CSRFToken": token, "Referer": self.base + "/"})
        try:
            with self.opener.open(request, timeout=60) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()


@needs_postgres
def test_forty_concurrent_rest_clients_never_hold_more_connections_than_the_pool(tmp_path: Path) -> None:
    assert DATABASE_URL.startswith("postgres"), "FM2_REQUIRE_SERVICES=1 needs DATABASE_URL on PostgreSQL"
    database = LiveDatabase(DATABASE_URL, "pool")
    env = base_env(FM2_DATA_DIR=str(tmp_path), WEB_CONCURRENCY="1", DB_POOL_MIN_SIZE="1", DB_POOL_MAX_SIZE=str(POOL_MAX),
                   DB_POOL_TIMEOUT="30")
    database.create(env)
    server = ProcfileServer({**env, "DATABASE_URL": database.url}, log=tmp_path / "server.log")
    server.start()
    try:
        player = Client(server.base)
        assert player.call("GET", "/api/auth/csrf")[0] == 200
        assert player.call("POST", "/api/auth/signup", {"username": "pooled", "password": "a long enough passphrase"})[0] in (200, 201)
        peak: list[tuple] = []
        stop = threading.Event()

        def watch() -> None:
            nonlocal peak
            with psycopg.connect(database.url, autocommit=True) as conn:
                while not stop.is_set():
                    rows = database.backend_rows(conn)
                    if len(rows) > len(peak):
                        peak = rows
                    stop.wait(0.02)

        watcher = threading.Thread(target=watch)
        watcher.start()
        statuses: list[int] = []
        try:
            with ThreadPoolExecutor(CLIENTS) as pool:
                for _ in range(WAVES):
                    paths = ["/api/me" if i % 2 else "/api/pages" for i in range(CLIENTS)]
                    statuses += list(pool.map(lambda path: player.call("GET", path)[0], paths))
        finally:
            stop.set()
            watcher.join()
        assert statuses == [200] * (CLIENTS * WAVES), sorted(set(statuses))
        assert 0 < len(peak) <= POOL_MAX, f"the server held {len(peak)} connections, the pool allows {POOL_MAX}: {peak}"
    finally:
        server.stop()
        database.drop()


@needs_postgres
def test_round_sockets_give_their_connections_back_to_the_pool(tmp_path: Path) -> None:
    """Consumers run their ORM calls in a thread pool (thread_sensitive=False on PostgreSQL):
    each call must hand its connection back, or a few sockets would drain the pool and every
    later request wait for DB_POOL_TIMEOUT."""
    from websockets.sync.client import connect

    assert DATABASE_URL.startswith("postgres"), "FM2_REQUIRE_SERVICES=1 needs DATABASE_URL on PostgreSQL"
    database = LiveDatabase(DATABASE_URL, "poolws")
    env = base_env(FM2_DATA_DIR=str(tmp_path), WEB_CONCURRENCY="1", DB_POOL_MIN_SIZE="1", DB_POOL_MAX_SIZE=str(POOL_MAX), DB_POOL_TIMEOUT="5")
    database.create(env)
    import subprocess
    import sys

    from tests.procfile_server import REPO

    subprocess.run([sys.executable, "manage.py", "load_demo"], cwd=REPO, env={**env, "DATABASE_URL": database.url}, check=True,
                   capture_output=True, timeout=600)
    server = ProcfileServer({**env, "DATABASE_URL": database.url}, log=tmp_path / "server.log")
    server.start()
    try:
        for n in range(3 * POOL_MAX):
            player = Client(server.base)
            assert player.call("GET", "/api/auth/csrf")[0] == 200
            assert player.call("POST", "/api/auth/signup", {"username": f"socket{n}", "password": "a long enough passphrase"})[0] in (200, 201)
            status, body = player.call("POST", "/api/rounds")
            assert status == 201, body
            cookie = "; ".join(f"{c.name}={c.value}" for c in player.jar)
            with connect(f"ws://127.0.0.1:{server.port}/ws/rounds/{json.loads(body)['id']}/",
                         additional_headers={"Cookie": cookie, "Origin": server.base}) as ws:
                ws.send(json.dumps({"type": "start"}))
                assert json.loads(ws.recv(timeout=10))["type"] == "state"
                ws.send(json.dumps({"type": "vote", "false_claim": 0}))
                while json.loads(ws.recv(timeout=10))["type"] != "result":
                    pass
        with psycopg.connect(database.url, autocommit=True) as conn:
            held = database.backends(conn)
        assert held <= POOL_MAX, f"the server holds {held} connections after the sockets closed"
        assert player.call("GET", "/api/me")[0] == 200
    finally:
        server.stop()
        database.drop()
