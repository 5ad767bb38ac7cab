"""The cluster of deploy/cluster (network namespaces on one machine), driven through the
balancer's address only: a researcher's export is asked for through the balancer, written by
the worker host into the object store, and every file downloads through the web hosts, each
matching the manifest's sha256. Runs with FM2_CLUSTER=1 (one cluster per machine at a time),
as root with ``ip netns``; skips with the reason elsewhere."""

from __future__ import annotations

import hashlib
import http.cookiejar
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BALANCER = "http://198.18.0.2"


def _why_not() -> str | None:
    if not os.environ.get("FM2_CLUSTER"):
        return "the cluster (about 3.5 minutes, a machine's namespaces) runs with FM2_CLUSTER=1"
    if os.geteuid() != 0:
        return "the cluster needs root (network namespaces)"
    for tool in ("ip", "haproxy", "redis-server"):
        if shutil.which(tool) is None:
            return f"the cluster needs {tool}"
    if not list(Path("/usr/lib/postgresql").glob("*/bin/postgres")):
        return "the cluster needs Debian's postgresql package"
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True)
    if probe.returncode != 0:
        return "ip netns does not work here"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")]


class Browser:
    """A client of the balancer with cookies and the CSRF header, as the site's pages send."""

    def __init__(self) -> None:
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes, dict]:
        token = next((c.value for c in self.jar if c.name == "csrftoken"), "")
        request = urllib.request.Request(BALANCER + path, method=method, data=json.dumps(body or {}).encode() if method == "POST" else None,
                                         headers={"Content-Type": "application/json", "X-CSRFToken": token, "Referer": BALANCER + "/",
                                                  "Origin": BALANCER})
        try:
            with self.opener.open(request, timeout=60) as response:
                return response.status, response.read(), dict(response.headers)
        except urllib.error.HTTPError as error:
            return error.code, error.read(), dict(error.headers)


@pytest.fixture(scope="module")
def cluster():
    # Outside pytest's private temporary folders: PostgreSQL runs as its own user there.
    state = Path(tempfile.mkdtemp(prefix="fm2-cluster-", dir="/var/tmp"))
    state.chmod(0o755)
    env = {**os.environ, "FM2_CLUSTER_DIR": str(state)}
    subprocess.run([str(REPO / "deploy" / "cluster"), "down"], env=env, capture_output=True, timeout=120)
    up = subprocess.run([str(REPO / "deploy" / "cluster"), "up"], env=env, capture_output=True, text=True, timeout=900)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        yield state
    finally:
        subprocess.run([str(REPO / "deploy" / "cluster"), "down"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(state, ignore_errors=True)


def test_an_export_asked_through_the_balancer_is_written_by_the_worker_host_and_downloads_with_its_checksums(cluster: Path) -> None:
    env = {**os.environ, "FM2_CLUSTER_DIR": str(cluster)}
    # A researcher, made on the worker host (an operator's command).
    work_env = dict(line.split("=", 1) for line in (cluster / "fm2-work.env").read_text().splitlines() if line)
    subprocess.run(["ip", "netns", "exec", "fm2-work", "env", "-i", *[f"{k}={v}" for k, v in work_env.items()],
                    str(REPO / ".venv" / "bin" / "python"), "manage.py", "shell", "-c",
                    "from django.contrib.auth import get_user_model; from foolgame.dataset.services import researcher_set;"
                    "get_user_model().objects.create_user('rae', password='a long enough passphrase'); researcher_set(username='rae')"],
                   cwd=REPO, env=env, check=True, capture_output=True, timeout=300)
    browser = Browser()
    assert browser.call("GET", "/api/auth/csrf")[0] == 200
    status, body, _ = browser.call("POST", "/api/auth/login", {"username": "rae", "password": "a long enough passphrase"})
    assert status == 200, body
    status, body, _ = browser.call("POST", "/api/exports", {"seed": 7})
    assert status == 201, body
    export_id = json.loads(body)["id"]
    deadline = time.monotonic() + 600
    while True:
        detail = json.loads(browser.call("GET", f"/api/exports/{export_id}")[1])
        if detail["status"] in ("done", "failed") or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert detail["status"] == "done", detail
    files = {f["name"]: f for f in detail["files"]}

    def download(name: str) -> bytes:
        status, content, _ = browser.call("GET", f"/api/exports/{export_id}/files/{name}")
        assert status == 200, name
        return content

    manifest = json.loads(download("manifest.json"))
    for entry in manifest["files"]:
        content = download(entry["name"])
        assert hashlib.sha256(content).hexdigest() == entry["sha256"], entry["name"]
    assert {entry["name"] for entry in manifest["files"]} == set(files) - {"manifest.json"}
    # No web host's disk holds an export file: they came from the object store.
    for host in ("fm2-web1", "fm2-web2"):
        assert not list((cluster / host).rglob("manifest.json")), host
    # The downloads were served by the web hosts (their JSON access lines, with request ids).
    served = [json.loads(line) for host in ("web1", "web2") for line in (cluster / f"{host}.log").read_text().splitlines()
              if line.startswith("{") and f"/api/exports/{export_id}/files/" in line]
    assert len(served) >= len(files) and all(r["logger"] == "foolgame.access" and r["request_id"] for r in served)
