"""The cluster of deploy/cluster (tests/cluster/conftest.py), driven through the balancer's
address only: a researcher's export is asked for through the balancer, the worker host dies
(kill -9 of every process on it) while writing it and is started again, and the export still
finishes in the object store, every file downloading through the web hosts and matching the
manifest's sha256. And no host reads another's data folder."""

from __future__ import annotations

import hashlib
import json
import secrets
import subprocess
import time

from tests.cluster.conftest import Browser, Cluster, status_of


def test_an_export_survives_its_worker_host_dying_and_downloads_through_the_balancer_with_its_checksums(cluster: Cluster) -> None:
    # A researcher, made on the worker host (an operator's command).
    name = "rae" + secrets.token_hex(3)  # a name of its own, should the cluster be reused
    cluster.manage("shell", "-c",
                   "from django.contrib.auth import get_user_model; from foolgame.dataset.services import researcher_set;"
                   f"get_user_model().objects.create_user('{name}', password='a long enough passphrase'); researcher_set(username='{name}')")
    browser = Browser()
    assert browser.call("GET", "/api/auth/csrf")[0] == 200
    status, body, _ = browser.call("POST", "/api/auth/login", {"username": name, "password": "a long enough passphrase"})
    assert status == 200, body
    status, body, _ = browser.call("POST", "/api/exports", {"seed": 7})
    assert status == 201, body
    export_id = json.loads(body)["id"]
    # The worker host loses power while the export runs (its worker, trainer and beat at once),
    # and comes back: the export's message was never acknowledged (acks_late), and the reaper
    # takes over the export once its heartbeat is FM2_EXPORT_STALE_SECONDS old.
    deadline = time.monotonic() + 300
    while (detail := json.loads(browser.call("GET", f"/api/exports/{export_id}")[1]))["status"] != "running":
        assert detail["status"] == "pending" and time.monotonic() < deadline, detail
        time.sleep(0.5)
    cluster.do("kill", "fm2-work")
    assert json.loads(browser.call("GET", f"/api/exports/{export_id}")[1])["status"] == "running"
    cluster.do("start", "fm2-work")
    deadline = time.monotonic() + 600
    while True:
        detail = json.loads(browser.call("GET", f"/api/exports/{export_id}")[1])
        if detail["status"] in ("done", "failed") or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert detail["status"] == "done", detail
    # The restarted worker's run of it is in its task durations, scraped from the monitoring
    # network on the worker host's own exporter (FM2_WORKER_METRICS_PORT).
    status, figures = status_of("http://198.18.0.13:9101/metrics")
    assert status == 200
    runs = [line for line in figures.decode().splitlines() if line.startswith("fm2_celery_task_seconds_count{")
            and 'task="foolgame.dataset.tasks.run_export"' in line and 'outcome="success"' in line]
    assert runs and float(runs[0].rsplit(" ", 1)[1]) >= 1, figures[-2000:]
    files = {f["name"]: f for f in detail["files"]}

    def download(name: str) -> bytes:
        status, content, _ = browser.call("GET", f"/api/exports/{export_id}/files/{name}")
        assert status == 200, name
        return content

    manifest = json.loads(download("manifest.json"))
    for entry in manifest["files"]:
        content = download(entry["name"])
        assert hashlib.sha256(content).hexdigest() == entry["sha256"], entry["name"]
    assert {entry["name"] for entry in manifest["files"]} == set(files) - {"manifest.json", "SHA256SUMS"}
    sums = dict(reversed(line.split(maxsplit=1)) for line in download("SHA256SUMS").decode().splitlines() if line)
    assert sums == {entry["name"]: entry["sha256"] for entry in manifest["files"]} | {"manifest.json": hashlib.sha256(download("manifest.json")).hexdigest()}
    # No web host's disk holds an export file: they came from the object store.
    for host in ("fm2-web1", "fm2-web2"):
        assert not list((cluster.state / host).rglob("manifest.json")), host
    # The downloads were served by the web hosts (their JSON access lines, with request ids).
    served = [json.loads(line) for host in ("web1", "web2") for line in (cluster.state / f"{host}.log").read_text().splitlines()
              if line.startswith("{") and f"/api/exports/{export_id}/files/" in line]
    assert len(served) >= len(files) and all(r["logger"] == "foolgame.access" and r["request_id"] for r in served)


def test_each_host_reads_only_its_own_data_folder(cluster: Cluster) -> None:
    """What the worker host and the data host wrote (beat's schedule, PostgreSQL's files) is on
    the machine's disk, but a web host's processes see an empty folder in its place, and the
    worker host sees none of the web hosts' files: every host has a mount namespace of its own."""
    def listing(role: str, host: str) -> set[str]:
        pid = (cluster.state / f"{role}.pid").read_text().strip()
        done = subprocess.run(["nsenter", "-t", pid, "-m", "ls", "-A", str(cluster.state / host)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return set(done.stdout.split())

    assert list((cluster.state / "fm2-work").glob("celerybeat-schedule*"))
    assert (cluster.state / "fm2-data" / "pg").is_dir()
    for web in ("web1", "web2"):
        assert listing(web, "fm2-work") == set() and listing(web, "fm2-data") == set()
        assert listing(web, f"fm2-{web}") >= {f"prometheus-{web}"}  # its own folder, as it is
    assert listing("worker", "fm2-web1") == set() and listing("worker", "fm2-work") >= {"prometheus-worker"}
