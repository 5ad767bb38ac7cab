"""One cluster of deploy/cluster (network namespaces on one machine) for every test under
tests/cluster/, started once and driven through the balancer's address only. It runs with
FM2_CLUSTER=1 (one cluster per machine at a time), as root with ``ip netns``; the tests skip
with the reason elsewhere."""

from __future__ import annotations

import http.cookiejar
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BALANCER = "http://198.18.0.2"
WEB_HOSTS = {"web1": "http://198.18.0.11:8000", "web2": "http://198.18.0.12:8000"}

# What the tests change in every fm2 process of the cluster (deploy/cluster's
# FM2_CLUSTER_EXTRA_ENV): an export whose worker died is taken over after 15 s without a
# heartbeat rather than 5 minutes, and each export stage reports slowly enough for a test to
# kill its worker mid-run.
EXTRA_ENV = "FM2_EXPORT_STALE_SECONDS=15\nFM2_TEST_EXPORT_PROGRESS_DELAY=0.3\nFM2_FLUENCY_AUTO_TRAIN=false"


def _why_not() -> str | None:
    if not os.environ.get("FM2_CLUSTER"):
        return "the cluster (about 8 minutes, a machine's namespaces) runs with FM2_CLUSTER=1"
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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _why_not()
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.slow)
            if reason is not None:
                item.add_marker(pytest.mark.skip(reason=reason))


def status_of(url: str, timeout: float = 10) -> tuple[int, bytes]:
    """The status and body of a GET (0 when nothing answers), with the public host name (as the
    balancer's checks send it to a web host)."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers={"Host": BALANCER.removeprefix("http://")}), timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except (urllib.error.URLError, OSError):
        return 0, b""


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


@dataclass
class Cluster:
    state: Path

    def env(self) -> dict[str, str]:
        return {**os.environ, "FM2_CLUSTER_DIR": str(self.state), "FM2_CLUSTER_EXTRA_ENV": EXTRA_ENV}

    def do(self, *args: str, timeout: float = 300) -> None:
        """deploy/cluster kill|stop|start ...: what an operator (or a power cut) does to a host."""
        done = subprocess.run([str(REPO / "deploy" / "cluster"), *args], env=self.env(), capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, done.stdout + done.stderr

    def manage(self, *args: str, timeout: float = 300) -> str:
        """A manage.py command on the worker host (an operator's shell there); its stdout."""
        work_env = dict(line.split("=", 1) for line in (self.state / "fm2-work.env").read_text().splitlines() if line)
        done = subprocess.run(["ip", "netns", "exec", "fm2-work", "env", "-i", *[f"{k}={v}" for k, v in work_env.items()],
                               str(REPO / ".venv" / "bin" / "python"), "manage.py", *args],
                              cwd=REPO, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def balancer_log(self) -> str:
        return (self.state / "haproxy.log").read_text(errors="replace")

    def wait_routed(self, host: str, ups_before: int, timeout: float = 180) -> None:
        """Until the balancer has put a web host back in rotation (its checks passed again)."""
        deadline = time.monotonic() + timeout
        while self.balancer_log().count(f"fm2_web/{host} is UP") <= ups_before:
            assert time.monotonic() < deadline, f"the balancer did not route to {host} again"
            time.sleep(0.5)

    def ups(self, host: str) -> int:
        return self.balancer_log().count(f"fm2_web/{host} is UP")

    def downs(self, host: str) -> int:
        return self.balancer_log().count(f"fm2_web/{host} is DOWN")


@pytest.fixture(scope="session")
def cluster():
    if _why_not() is not None:
        pytest.skip(_why_not() or "")
    # Outside pytest's private temporary folders: PostgreSQL runs as its own user there. A
    # FM2_CLUSTER_DIR given (CI's) is kept afterwards, with the hosts' logs.
    given = os.environ.get("FM2_CLUSTER_DIR")
    state = Path(given) if given else Path(tempfile.mkdtemp(prefix="fm2-cluster-", dir="/var/tmp"))
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o755)
    handle = Cluster(state)
    subprocess.run([str(REPO / "deploy" / "cluster"), "down"], env=handle.env(), capture_output=True, timeout=120)
    up = subprocess.run([str(REPO / "deploy" / "cluster"), "up"], env=handle.env(), capture_output=True, text=True, timeout=900)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        yield handle
    finally:
        subprocess.run([str(REPO / "deploy" / "cluster"), "down"], env=handle.env(), capture_output=True, timeout=120)
        if not given:
            shutil.rmtree(state, ignore_errors=True)
