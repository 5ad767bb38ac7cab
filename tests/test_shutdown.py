"""SIGTERM stops the web process within its graceful-shutdown timeout even with round sockets
open (their consumers sit in the channel layer's blocking read on Redis), and every client
gets a close frame rather than a dead TCP connection. Started from the Procfile's web line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.procfile_server import REPO, ProcfileServer, base_env, procfile_command
from tests.test_pool import Client

pytestmark = [pytest.mark.services, pytest.mark.slow]

REDIS_URL = os.environ.get("REDIS_URL", "")
needs_redis = pytest.mark.skipif(not REDIS_URL and not os.environ.get("FM2_REQUIRE_SERVICES"), reason="REDIS_URL is not set")

SHUTDOWN_TIMEOUT = 4
SOCKETS = 3


def test_the_procfile_web_line_bounds_the_graceful_shutdown() -> None:
    assert "--timeout-graceful-shutdown ${WEB_SHUTDOWN_TIMEOUT:-" in procfile_command("web")


@needs_redis
def test_sigterm_closes_open_round_sockets_and_exits_within_the_shutdown_timeout(tmp_path: Path) -> None:
    assert REDIS_URL, "FM2_REQUIRE_SERVICES=1 needs REDIS_URL"
    env = base_env(FM2_DATA_DIR=str(tmp_path), REDIS_URL=REDIS_URL, CELERY_TASK_ALWAYS_EAGER="true", WEB_CONCURRENCY="2",
                   WEB_SHUTDOWN_TIMEOUT=str(SHUTDOWN_TIMEOUT), CHANNEL_PREFIX=f"fm2shutdown{os.getpid()}")
    server = ProcfileServer(env, log=tmp_path / "server.log")
    for command in (["migrate", "--no-input"], ["load_demo"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=REPO, env=env, check=True, capture_output=True, timeout=600)
    server.start()
    sockets = []
    try:
        for n in range(SOCKETS):
            player = Client(server.base)
            assert player.call("GET", "/api/auth/csrf")[0] == 200
            assert player.call("POST", "/api/auth/signup", {"username": f"leaver{n}", "password": "a long enough passphrase"})[0] in (200, 201)
            status, body = player.call("POST", "/api/rounds")
            assert status in (200, 201), body
            round_id = json.loads(body)["id"]
            cookie = "; ".join(f"{c.name}={c.value}" for c in player.jar)
            ws = connect(f"ws://127.0.0.1:{server.port}/ws/rounds/{round_id}/", additional_headers={"Cookie": cookie, "Origin": server.base})
            sockets.append(ws)
            ws.send(json.dumps({"type": "start"}))
            assert json.loads(ws.recv(timeout=10))["type"] == "state"
        assert server.process is not None
        sent_at = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        closes = []
        for ws in sockets:
            try:
                while True:
                    ws.recv(timeout=SHUTDOWN_TIMEOUT + 5)
            except ConnectionClosed as closed:
                closes.append(closed.rcvd.code if closed.rcvd else None)
            except TimeoutError:
                closes.append("no close")
        try:
            server.process.wait(timeout=SHUTDOWN_TIMEOUT + 10)
        except subprocess.TimeoutExpired:
            pass
        took = time.monotonic() - sent_at
        assert server.process.poll() is not None and took <= SHUTDOWN_TIMEOUT + 3, f"still running {took:.1f} s after SIGTERM"
        assert closes == [1012] * SOCKETS, closes
    finally:
        for ws in sockets:
            ws.close()
        server.stop()
