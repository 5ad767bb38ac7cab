"""A room across web processes: the host on one uvicorn process and a player on another
share the room through the Redis channel layer, and the room survives a restart of the
host's process (the host reconnects to find the question as the database holds it)."""

from __future__ import annotations

import http.cookiejar
import json
import os
import urllib.request
from pathlib import Path

import pytest
from websockets.sync.client import connect

from tests.voting.test_restart import Server, free_port

pytestmark = pytest.mark.slow


def client(base: str, username: str):
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    def call(method: str, path: str, body: dict | None = None) -> dict:
        token = next((c.value for c in jar if c.name == "csrftoken"), "")
        request = urllib.request.Request(base + path, method=method, data=json.dumps(body or {}).encode() if method == "POST" else None,
                                         headers={"Content-Type": "application/json", "X-CSRFToken": token, "Referer": base + "/"})
        with opener.open(request, timeout=30) as response:
            return json.loads(response.read() or b"{}")

    call("GET", "/api/auth/csrf")
    call("POST", "/api/auth/signup", {"username": username, "password": "a long enough passphrase"})
    return call, {"Cookie": "; ".join(f"{c.name}={c.value}" for c in jar), "Origin": base}


def next_frame(ws, kind: str) -> dict:
    while (frame := json.loads(ws.recv(timeout=15)))["type"] != kind:
        pass
    return frame


def test_a_room_spans_two_processes_and_survives_a_restart(tmp_path: Path) -> None:
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        pytest.skip("two processes share a room through Redis (set REDIS_URL)")
    one, two = Server(tmp_path, free_port()), Server(tmp_path, free_port())
    for server in (one, two):
        server.env["REDIS_URL"] = redis_url
    one.manage("migrate", "--no-input")
    one.manage("load_demo")
    one.start()
    two.start()
    base_one, base_two = f"http://127.0.0.1:{one.port}", f"http://127.0.0.1:{two.port}"
    try:
        host_call, host_headers = client(base_one, "room-host")
        code = host_call("POST", "/api/rooms", {"questions": 1, "host_plays": True})["code"]
        player_call, player_headers = client(base_two, "room-player")
        player_call("POST", f"/api/rooms/{code}/join")
        with connect(f"ws://127.0.0.1:{two.port}/ws/rooms/{code}/", additional_headers=player_headers) as player:
            assert next_frame(player, "room")["code"] == code
            with connect(f"ws://127.0.0.1:{one.port}/ws/rooms/{code}/", additional_headers=host_headers) as host:
                next_frame(host, "room")
                host.send(json.dumps({"type": "start"}))
                asked = next_frame(host, "question")
            told = next_frame(player, "question")  # through Redis, from the other process
            assert told["claims"] == asked["claims"] and told["deadline"] == asked["deadline"]
            one.stop()
            one.start()
            with connect(f"ws://127.0.0.1:{one.port}/ws/rooms/{code}/", additional_headers=host_headers) as host:
                state = next_frame(host, "room")
                assert state["question"]["round"]["status"] == "playing" and state["question"]["round"]["claims"] == asked["claims"]
                host.send(json.dumps({"type": "vote", "false_claim": 0}))
                next_frame(host, "voted")
                player.send(json.dumps({"type": "vote", "false_claim": 1}))
                answers = next_frame(host, "answer"), next_frame(player, "answer")
                assert answers[0]["scoreboard"] == answers[1]["scoreboard"] and answers[0]["over"] is True
                assert next_frame(player, "ended")["reason"] == "done"
    finally:
        for server in (one, two):
            if server.process and server.process.poll() is None:
                server.stop()

