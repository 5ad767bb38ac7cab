"""deploy/haproxy.cfg in front of two web hosts started from the Procfile: HTTP and WebSockets
through one address, and only to the host whose /health/ready answers 200."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from websockets.sync.client import connect

from tests.procfile_server import REPO, ProcfileServer, base_env, free_port
from tests.test_pool import Client

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("haproxy") is None, reason="HAProxy is not installed (Debian's haproxy package; CI installs it)"),
]

CONFIG = REPO / "deploy" / "haproxy.cfg"


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except urllib.error.URLError:  # nothing listens (yet)
        return 0


def _haproxy_env(bind: str, web1: str, web2: str) -> dict[str, str]:
    return {**os.environ, "FM2_LB_BIND": bind, "FM2_PUBLIC_HOST": "localhost", "FM2_WEB1": web1, "FM2_WEB2": web2}


def test_the_config_is_valid() -> None:
    out = subprocess.run(["haproxy", "-c", "-f", str(CONFIG)], env=_haproxy_env("127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_balancer_sends_http_and_sockets_only_to_the_ready_host(tmp_path: Path) -> None:
    env = base_env(FM2_DATA_DIR=str(tmp_path), WEB_CONCURRENCY="1", FM2_WARM_MODELS="false")
    for command in (["migrate", "--no-input"], ["load_demo"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=REPO, env=env, check=True, capture_output=True, timeout=600)
    ready = ProcfileServer(env, log=tmp_path / "ready.log")
    # Alive but not ready: its database is an address where nothing listens.
    lost = ProcfileServer({**env, "DATABASE_URL": f"postgres://fm2:fm2@127.0.0.1:{free_port()}/gone", "DB_POOL_TIMEOUT": "1"},
                          log=tmp_path / "lost.log")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    balancer = None
    try:
        ready.start()
        lost.start()
        assert _status(f"{lost.base}/health/ready") == 503 and _status(f"{lost.base}/health/live") == 200
        balancer = subprocess.Popen(["haproxy", "-db", "-f", str(CONFIG)], env=_haproxy_env(f"127.0.0.1:{port}", f"127.0.0.1:{ready.port}",
                                    f"127.0.0.1:{lost.port}"), stdout=open(tmp_path / "haproxy.log", "wb"), stderr=subprocess.STDOUT)
        # Wait for the checks to take the lost host out (two failed checks, 2 s apart).
        deadline, streak = time.monotonic() + 60, 0
        while streak < 10 and time.monotonic() < deadline:
            assert balancer.poll() is None, (tmp_path / "haproxy.log").read_text()
            streak = streak + 1 if _status(f"{base}/health/ready") == 200 else 0
        assert streak == 10, "the balancer never settled on the ready host"
        assert [_status(f"{base}/health/ready") for _ in range(40)] == [200] * 40
        assert _status(f"{base}/metrics") == 404  # scraped on each host, never through the public address

        player = Client(base)
        assert player.call("GET", "/api/auth/csrf")[0] == 200
        assert player.call("POST", "/api/auth/signup", {"username": "balanced", "password": "a long enough passphrase"})[0] in (200, 201)
        status, body = player.call("POST", "/api/rounds")
        assert status in (200, 201), body
        cookie = "; ".join(f"{c.name}={c.value}" for c in player.jar)
        with connect(f"ws://127.0.0.1:{port}/ws/rounds/{json.loads(body)['id']}/", additional_headers={"Cookie": cookie, "Origin": base}) as ws:
            ws.send(json.dumps({"type": "start"}))
            assert json.loads(ws.recv(timeout=10))["type"] == "state"
    finally:
        if balancer is not None:
            balancer.terminate()
            balancer.wait(timeout=30)
        ready.stop()
        lost.stop()
