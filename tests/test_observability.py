"""/metrics behind its token or networks, JSON logs with request ids (docs/operations.md,
Metrics and logs)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from websockets.sync.client import connect

from tests.procfile_server import REPO, ProcfileServer, base_env
from tests.test_pool import Client

TOKEN = "metrics-token-7c1f9e"
PASSWORD = "a long enough passphrase"


@pytest.mark.django_db
def test_metrics_are_off_until_a_token_or_network_is_set(client) -> None:
    assert client.get("/metrics").status_code == 404


@pytest.mark.django_db
def test_metrics_need_the_bearer_token(client, settings) -> None:
    settings.FM2_METRICS_TOKEN = TOKEN
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong-token").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}").status_code == 403
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    body = response.content.decode()
    assert "fm2_rounds_in_play 0.0" in body
    assert 'fm2_exports{state="done"} 0.0' in body
    assert "fm2_verifier_active_version 0.0" in body
    assert TOKEN not in body


@pytest.mark.django_db
@pytest.mark.parametrize(("networks", "status"), [(["127.0.0.0/8"], 200), (["10.0.0.0/8", "192.168.0.0/16"], 403)])
def test_metrics_answer_clients_of_the_configured_networks(client, settings, networks: list[str], status: int) -> None:
    settings.FM2_METRICS_NETWORKS = networks  # the test client comes from 127.0.0.1
    assert client.get("/metrics").status_code == status


def _metrics(base: str) -> str:
    request = urllib.request.Request(f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read().decode()


def _sample(text: str, name: str, **labels: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0])) if "{" in line else {}
            if all(found.get(key) == value for key, value in labels.items()):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.mark.slow
def test_a_played_round_shows_in_the_metrics_and_every_log_line_is_json_with_a_request_id(tmp_path: Path) -> None:
    """The Procfile's web line with LOG_FORMAT=json and the deploy folder's uvicorn log config:
    a round played over its socket counts its vote (the vote-ack histogram), the REST routes
    count by pattern, and every line the server wrote is a JSON object; the lines of requests
    carry their request id (the one the client sent, when it sent one), and no line holds the
    password or the metrics token."""
    log = tmp_path / "server.log"
    env = base_env(FM2_DATA_DIR=str(tmp_path), WEB_CONCURRENCY="1", FM2_WARM_MODELS="false", FM2_METRICS_TOKEN=TOKEN,
                   LOG_FORMAT="json", UVICORN_LOG_CONFIG=str(REPO / "deploy" / "uvicorn-logging.json"))
    for command in (["migrate", "--no-input"], ["load_demo"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=REPO, env=env, check=True, capture_output=True, timeout=600)
    server = ProcfileServer(env, log=log)
    server.start()
    try:
        player = Client(server.base)
        assert player.call("GET", "/api/auth/csrf")[0] == 200
        assert player.call("POST", "/api/auth/signup", {"username": "metered", "password": PASSWORD})[0] in (200, 201)
        status, body = player.call("POST", "/api/rounds")
        assert status in (200, 201), body
        round_id = json.loads(body)["id"]
        before = _metrics(server.base)
        assert _sample(before, "fm2_http_requests_total", route="api/rounds", method="POST", status="201") == 1.0
        cookie = "; ".join(f"{c.name}={c.value}" for c in player.jar)
        with connect(f"ws://127.0.0.1:{server.port}/ws/rounds/{round_id}/", additional_headers={"Cookie": cookie, "Origin": server.base}) as ws:
            ws.send(json.dumps({"type": "start"}))
            assert json.loads(ws.recv(timeout=10))["type"] == "state"
            assert _sample(_metrics(server.base), "fm2_rounds_in_play") == 1.0
            assert _sample(_metrics(server.base), "fm2_sockets_open", kind="round") == 1.0
            ws.send(json.dumps({"type": "vote", "false_claim": 1}))
            reply = json.loads(ws.recv(timeout=10))
            while reply["type"] == "tick":  # the clock's beat may come first
                reply = json.loads(ws.recv(timeout=10))
            assert reply["type"] == "result", reply
        after = _metrics(server.base)
        assert _sample(after, "fm2_socket_frame_seconds_count", kind="round", frame="vote", outcome="ok") == 1.0
        assert _sample(after, "fm2_rounds_in_play") == 0.0
        # A client's own request id is kept and sent back.
        request = urllib.request.Request(f"{server.base}/api/me", headers={"X-Request-ID": "trace-0123456789"})
        try:
            urllib.request.urlopen(request, timeout=30)
        except urllib.error.HTTPError as error:
            assert error.headers["X-Request-ID"] == "trace-0123456789"
        # A refused body logs at the ASGI edge, before Django: with its request id too.
        assert player.call("POST", "/api/rounds", {"x": "y" * 70_000})[0] == 413
    finally:
        server.stop()
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = []
    for line in lines:
        record = json.loads(line)  # every line is a JSON object
        assert isinstance(record, dict) and {"time", "level", "logger", "message"} <= set(record), line
        records.append(record)
    access = [r for r in records if r["logger"] == "foolgame.access"]
    assert any(r["message"].startswith("POST /api/rounds 201") for r in access)
    assert all(r["request_id"] for r in access)
    assert any(r["request_id"] == "trace-0123456789" for r in access)
    assert any(r["user"] and r["message"].startswith("POST /api/rounds 201") for r in access)  # the player's pseudonym
    refused = [r for r in records if r["message"].startswith("Refused a")]
    assert refused and all(r["request_id"] for r in refused)
    text = "\n".join(lines)
    assert PASSWORD not in text and TOKEN not in text and "metered" not in text


@pytest.mark.slow
def test_with_a_multiprocess_folder_metrics_sum_every_web_process(tmp_path: Path) -> None:
    """Two uvicorn workers, each a process of its own: with PROMETHEUS_MULTIPROC_DIR whichever
    answers /metrics reports the requests both served."""
    folder = tmp_path / "prometheus"
    folder.mkdir()
    env = base_env(FM2_DATA_DIR=str(tmp_path), WEB_CONCURRENCY="2", FM2_WARM_MODELS="false", FM2_METRICS_TOKEN=TOKEN,
                   PROMETHEUS_MULTIPROC_DIR=str(folder))
    subprocess.run([sys.executable, "manage.py", "migrate", "--no-input"], cwd=REPO, env=env, check=True, capture_output=True, timeout=600)
    server = ProcfileServer(env, log=tmp_path / "server.log")
    server.start()
    try:
        for _ in range(12):
            with urllib.request.urlopen(f"{server.base}/health/live", timeout=30) as response:
                assert response.status == 200
        counts = {_sample(_metrics(server.base), "fm2_http_requests_total", route="health/live", status="200") for _ in range(6)}
        assert counts == {12.0}
        assert len(list(folder.glob("*.db"))) >= 2  # both processes wrote their figures
    finally:
        server.stop()


@pytest.mark.parametrize("dsn", ["", "http://publickey@127.0.0.1:9/1"])
def test_a_sentry_dsn_turns_on_error_reports_for_django_and_celery(dsn: str) -> None:
    code = ("import django; django.setup(); import sentry_sdk; client = sentry_sdk.get_client();"
            "print(client.is_active(), sorted(name for name in ('django', 'celery') if name in client.integrations),"
            " client.options.get('send_default_pii'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=base_env(SENTRY_DSN=dsn), capture_output=True, text=True, timeout=120)
    expected = "True ['celery', 'django'] False" if dsn else "False [] None"
    assert out.stdout.strip() == expected, out.stderr[-2000:]


@pytest.mark.django_db
def test_a_celery_task_s_duration_is_served_by_the_worker_s_exporter_under_the_metrics_rule(settings) -> None:
    """The worker's main process serves /metrics (FM2_WORKER_METRICS_PORT); a task run is there
    by its name, for a bearer of the token only (tests/cluster scrapes it from another host)."""
    from foolgame.dataset.tasks import reap_stale_exports
    from foolgame.observability import serve_worker_metrics

    settings.FM2_METRICS_TOKEN = TOKEN
    name = "foolgame.dataset.tasks.reap_stale_exports"
    server = serve_worker_metrics(host="127.0.0.1", port=0)
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        before = _sample(_metrics(base), "fm2_celery_task_seconds_count", task=name, outcome="success")
        reap_stale_exports.delay()
        assert _sample(_metrics(base), "fm2_celery_task_seconds_count", task=name, outcome="success") == before + 1
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/metrics", timeout=30)
        assert refused.value.code == 403
        settings.FM2_METRICS_TOKEN = ""
        with pytest.raises(urllib.error.HTTPError) as off:
            urllib.request.urlopen(f"{base}/metrics", timeout=30)
        assert off.value.code == 404
    finally:
        server.shutdown()
        server.server_close()
