"""A server restart loses no round: stop the server mid-round, start it again, reconnect,
and the round has the same remaining time less the time that passed."""

from __future__ import annotations

import http.cookiejar
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from websockets.sync.client import connect

from foolgame.serving import uvicorn_flags
from tests.waiting import port_open, wait_for

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    def __init__(self, data_dir: Path, port: int):
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "FM2_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
        self.port = port
        self.process: subprocess.Popen | None = None

    def manage(self, *args: str) -> None:
        subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=self.env, check=True, capture_output=True, timeout=300)

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "foolgame.asgi:application", "--host", "127.0.0.1", "--port", str(self.port), *uvicorn_flags()],
            cwd=REPO, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: port_open(self.port), what="the server to start", seconds=60, every=0.1)

    def stop(self) -> None:
        assert self.process is not None
        self.process.terminate()
        self.process.wait(timeout=30)


def test_round_survives_a_server_restart(tmp_path: Path) -> None:
    server = Server(tmp_path, free_port())
    server.manage("migrate", "--no-input")
    server.manage("load_demo")
    server.start()
    base = f"http://127.0.0.1:{server.port}"
    try:
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

        def call(method: str, path: str, body: dict | None = None) -> dict:
            token = next((c.value for c in jar if c.name == "csrftoken"), "")
            request = urllib.request.Request(base + path, method=method, data=json.dumps(body or {}).encode() if method == "POST" else None,
                                             headers={"Content-Type": "application/json", "X-CSRFToken": token, "Referer": base + "/"})
            with opener.open(request, timeout=30) as response:
                return json.loads(response.read() or b"{}")

        call("GET", "/api/auth/csrf")
        call("POST", "/api/auth/signup", {"username": "restarter", "password": "a long enough passphrase"})
        round_id = call("POST", "/api/rounds")["id"]
        cookie = "; ".join(f"{c.name}={c.value}" for c in jar)
        headers = {"Cookie": cookie, "Origin": base}
        with connect(f"ws://127.0.0.1:{server.port}/ws/rounds/{round_id}/", additional_headers=headers) as ws:
            ws.send(json.dumps({"type": "start"}))
            state = json.loads(ws.recv(timeout=10))
            assert state["type"] == "state" and state["remaining"] == 180
            ws.send(json.dumps({"type": "reveal", "claim": 0}))
            while (clue := json.loads(ws.recv(timeout=10)))["type"] != "clue":
                pass
        before, stopped_at = clue["remaining"], time.monotonic()
        server.stop()
        time.sleep(3)  # the downtime under test: the round's clock runs on while no server is up
        server.start()
        with connect(f"ws://127.0.0.1:{server.port}/ws/rounds/{round_id}/", additional_headers=headers) as ws:
            state = json.loads(ws.recv(timeout=10))
            passed = time.monotonic() - stopped_at
        assert state["type"] == "state" and state["status"] == "playing"
        assert state["clues"][0] == [clue["clue"]] and state["clues"][1] == []
        assert before - passed - 1.0 <= state["remaining"] <= before - passed + 0.5, (before, passed, state["remaining"])
        assert passed >= 3
    finally:
        if server.process and server.process.poll() is None:
            server.stop()
