"""Authoring hints over HTTP: 20 authors typing drafts against one web process.

    python bench/bench_hints_http.py [--authors 20] [--requests 40] [--pause 1.0]
        [--database-url postgres://...] [--redis-url redis://...] [--record PATH]

Each author does what the writing page does: logs in (CSRF + session cookie, like a
browser), takes a write task on a page of the demo (``POST /api/write-tasks {page}``), and
asks for hints for longer and longer drafts of one of that page's claims, one request per
pause in typing (``--pause`` seconds on average, jittered +-50%; a debounced editor asks
about once a second; 0 makes it a closed loop that measures the server saturated). One
keep-alive connection per author. Hints need the open write task: without it every answer
is a 403 ``hints_need_task``.

The server: on the embedded default (no option), one uvicorn process with the flags of
``foolgame/serving.py`` on SQLite in a temporary FM2_DATA_DIR, eager tasks, no Redis. With
``--database-url`` (a throwaway PostgreSQL database beside it, dropped after without
superuser rights) and/or ``--redis-url`` (keys under a prefix of this run, deleted after),
the Procfile's web command with ``--web-concurrency`` processes (default 1: the figure of
one process). No Celery worker is started: a write task and a hint queue no task.

Latency is wall clock from request to parsed JSON, after one warm-up request per author
(which builds the page's BM25 index in the server), once the server is idle (the models it
warms at start are not a hint's cost). The CPU per hint is the web
processes' own CPU time over the measured phase (harness.tree_cpu_seconds) divided by the
hints answered: what a hint costs whatever else the machine is doing. Every answer that
is not a 200 list is counted by status and code; any makes the run print them and exit
non-zero, with no latency. Target: p95 <= 30 ms with 20 authors.

The floor: then every author sends ``--floor-requests`` blank drafts the same way, which
the server answers with ``[]`` after the session, the user and the write-task check, before
any retrieval: the request path a hint cannot do without. Each figure is recorded beside
its floor (the ratio is the hint's cost over it).
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import harness  # noqa: E402
from harness import REPO, Record, free_port, pct, refuse_errors, stop, tree_cpu_seconds, wait_port  # noqa: E402

from foolgame.serving import uvicorn_flags  # noqa: E402

PASSWORD = "bench-password-7431"
TARGET_P95_MS = 30.0

SETUP = """
import json
from django.contrib.auth import get_user_model
from foolgame.claims.models import Claim
from foolgame.pages.models import Page
users = get_user_model()
for n in range(AUTHORS):
    user, _ = users.objects.get_or_create(username=f"author{n}")
    user.set_password(PASSWORD)
    user.save()
pages = []
for page in Page.objects.order_by("id"):
    claim = Claim.objects.filter(page=page).order_by("id").first()
    if claim:
        pages.append({"id": page.pk, "claim": claim.text})
print(json.dumps(pages))
"""


def procfile_web_args(port: int, workers: int) -> list[str]:
    """The Procfile's web command on a loopback port with ``workers`` processes."""
    line = next(row for row in (REPO / "Procfile").read_text().splitlines() if row.startswith("web:"))
    command = line.split(":", 1)[1].strip()
    command = re.sub(r"\$\{PORT:-\d+\}", str(port), command)
    command = re.sub(r"\$\{WEB_CONCURRENCY:-\d+\}", str(workers), command)
    command = re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: m.group(2), command)
    args = command.split()
    assert args[0] == "uvicorn", args
    return [sys.executable, "-m", "uvicorn", *[a if a != "0.0.0.0" else "127.0.0.1" for a in args[1:]],
            "--log-level", "warning", "--no-access-log"]


class Author:
    """One browser: a keep-alive connection and the session and CSRF cookies."""

    reconnects = 0  # GETs sent again on a new connection after the server closed an idle one

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, object]:
        """Send and read one request; a GET on a keep-alive connection the server closed while
        it idled (uvicorn's keep-alive timeout, 5 s) is sent again on a new one, as a browser does."""
        try:
            return self._request(method, path, body)
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            if method != "GET":
                raise
            self.connection.close()
            Author.reconnects += 1
            return self._request(method, path, body)

    def login(self, username: str) -> tuple[int, object]:
        """Log in as a browser does (the CSRF cookie first): the login's status and answer."""
        self.request("GET", "/api/auth/csrf")
        return self.request("POST", "/api/auth/login", {"username": username, "password": PASSWORD})

    def _request(self, method: str, path: str, body: dict | None = None) -> tuple[int, object]:
        headers = {"Host": "127.0.0.1", "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
            headers["X-CSRFToken"] = self.cookies.get("csrftoken", "")
            headers["Referer"] = "http://127.0.0.1/"
        self.connection.request(method, path, body=data, headers=headers)
        response = self.connection.getresponse()
        payload = response.read()
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload[:80].decode(errors="replace")
        return response.status, parsed


def error_key(status: int, body: object) -> str:
    """``403 hints_need_task``: the status and the answer's code, to count errors by."""
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return f"{status} {code or type(body).__name__}"


def wait_idle(pid: int, timeout: float = 180) -> None:
    """Wait until the server's processes use under 5% of a core: the encoder and verifier
    it warms on a background thread at start are not a hint's cost."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = tree_cpu_seconds(pid)
        time.sleep(1.0)
        if tree_cpu_seconds(pid) - before < 0.05:
            return


def drafts_of(claim: str, count: int) -> list[str]:
    """What an author has typed at each pause: longer and longer prefixes, then again."""
    words = claim.split()
    prefixes = [" ".join(words[: n + 1]) for n in range(len(words))]
    return [prefixes[i % len(prefixes)] for i in range(count)]


class Phase:
    """One measured stretch: every author sends its drafts; the server's CPU over it."""

    def __init__(self, name: str, authors: int) -> None:
        self.name = name
        self.start, self.end = threading.Barrier(authors + 1), threading.Barrier(authors + 1)
        self.latencies: list[float] = []
        self.seconds = self.cpu = 0.0

    def measure(self, server_pid: int) -> None:
        """In the main thread: let the authors go, and time the server until the last is done."""
        self.start.wait()
        cpu, began = tree_cpu_seconds(server_pid), time.perf_counter()
        self.end.wait()
        self.seconds, self.cpu = time.perf_counter() - began, tree_cpu_seconds(server_pid) - cpu


def run_author(port: int, number: int, page: dict, phases: list[tuple[Phase, list[str]]], pause: float, errors: Counter) -> None:
    """Log in, take a write task on the page, warm up; then each phase's drafts, typed with
    pauses, once every author is ready."""
    rng = random.Random(number)
    author = Author(port)
    base = f"/api/pages/{page['id']}/hints?q="
    try:
        status, body = author.login(f"author{number}")
        if status != 200:
            errors[f"login {error_key(status, body)}"] += 1
        status, body = author.request("POST", "/api/write-tasks", {"page": page["id"]})
        if status != 201 or not isinstance(body, dict) or body.get("page") != page["id"]:
            errors[f"write-task {error_key(status, body)}"] += 1
        status, body = author.request("GET", base + quote(page["claim"]))  # warm-up: builds the page's index
        if status != 200:
            errors[f"warm-up {error_key(status, body)}"] += 1
    except Exception as error:  # counted, never hidden
        errors[f"setup {type(error).__name__}"] += 1
    for phase, drafts in phases:
        phase.start.wait()
        try:
            for draft in drafts:
                if pause:
                    time.sleep(pause * rng.uniform(0.5, 1.5))
                began = time.perf_counter()
                status, body = author.request("GET", base + quote(draft))
                elapsed = (time.perf_counter() - began) * 1000
                if status == 200 and isinstance(body, list):
                    phase.latencies.append(elapsed)
                else:
                    errors[f"{phase.name} {error_key(status, body)}"] += 1
        except Exception as error:
            errors[f"{phase.name} {type(error).__name__}"] += 1
        phase.end.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--authors", type=int, default=20)
    parser.add_argument("--requests", type=int, default=40, help="measured requests per author")
    parser.add_argument("--pause", type=float, default=1.0, help="mean seconds between an author's requests")
    parser.add_argument("--floor-requests", type=int, default=10, help="requests per author with a blank draft, after the hints")
    parser.add_argument("--web-concurrency", type=int, default=1, help="web processes when run as the Procfile (with a database or Redis URL)")
    harness.add_service_args(parser)
    args = parser.parse_args()
    record = Record("bench_hints_http", args.record)
    procfile = bool(args.database_url or args.redis_url)

    with harness.services(args, "hints", redis=bool(args.redis_url)) as svc:
        # Setup commands run their tasks in-process: nothing is left queued in a shared Redis.
        env = svc.env(CELERY_TASK_ALWAYS_EAGER="1")
        manage = [sys.executable, "manage.py"]
        subprocess.run(manage + ["migrate", "--no-input", "-v0"], cwd=REPO, env=env, check=True)
        subprocess.run(manage + ["load_demo"], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
        setup = subprocess.run(
            manage + ["shell", "-c", SETUP.replace("PASSWORD", repr(PASSWORD)).replace("AUTHORS", str(args.authors))],
            cwd=REPO, env=env, check=True, capture_output=True, text=True,
        )
        pages = json.loads(setup.stdout.strip().splitlines()[-1])
        port = free_port()
        command = (procfile_web_args(port, args.web_concurrency) if procfile else
                   [sys.executable, "-m", "uvicorn", "foolgame.asgi:application", "--host", "127.0.0.1", "--port", str(port),
                    "--log-level", "warning", "--no-access-log", *uvicorn_flags()])
        server = subprocess.Popen(command, cwd=REPO, env=svc.env())
        try:
            wait_port(port)
            errors: Counter = Counter()
            hints, floor = Phase("hints", args.authors), Phase("floor", args.authors)
            threads = [
                threading.Thread(target=run_author, args=(
                    port, n, pages[n % len(pages)],
                    [(hints, drafts_of(pages[n % len(pages)]["claim"], args.requests)), (floor, [""] * args.floor_requests)],
                    args.pause, errors))
                for n in range(args.authors)
            ]
            wait_idle(server.pid)
            for thread in threads:
                thread.start()
            for phase in (hints, floor):
                phase.measure(server.pid)
            for thread in threads:
                thread.join()
        finally:
            stop(server)

    refuse_errors(errors, "answers")
    if not hints.latencies or not floor.latencies:
        sys.exit("no request succeeded")
    setting = f"{svc.database}{' + Redis, Procfile web' if procfile else ', one uvicorn process'}"
    results: dict[str, object] = {
        "authors": args.authors, "pause_s": args.pause, "errors": 0, "database": svc.database,
        "redis": bool(args.redis_url), "web_processes": args.web_concurrency if procfile else 1,
    }
    for phase in (hints, floor):
        key = "" if phase is hints else "floor_"
        results.update({
            f"{key}requests": len(phase.latencies),
            f"{key}latency_ms_p50": round(pct(phase.latencies, 50), 2), f"{key}latency_ms_p95": round(pct(phase.latencies, 95), 2),
            f"{key}latency_ms_p99": round(pct(phase.latencies, 99), 2),
            f"{key}requests_per_s": round(len(phase.latencies) / phase.seconds, 1),
            f"{key}cpu_ms_per_request": round(phase.cpu * 1000 / len(phase.latencies), 2),
        })
    print(f"hints over HTTP, {args.authors} authors, pause {args.pause} s, {setting}: "
          f"p50 {results['latency_ms_p50']} ms, p95 {results['latency_ms_p95']} ms, "
          f"p99 {results['latency_ms_p99']} ms, {results['requests_per_s']} requests/s, "
          f"{results['cpu_ms_per_request']} ms CPU per hint, 0 errors")
    if Author.reconnects:
        print(f"{Author.reconnects} GETs were sent again on a new connection (an idle keep-alive connection closed by the server)")
    print(f"floor (a blank draft: the request path and the task check, no retrieval): "
          f"p50 {results['floor_latency_ms_p50']} ms, p95 {results['floor_latency_ms_p95']} ms, "
          f"p99 {results['floor_latency_ms_p99']} ms, {results['floor_cpu_ms_per_request']} ms CPU per request")
    print(json.dumps(results))
    case = f"{args.authors} authors, pause {args.pause} s, {svc.database}{' + Redis' if args.redis_url else ''}"
    p95 = results["latency_ms_p95"]
    record.add(case, "latency p50", results["latency_ms_p50"], "ms", floor=results["floor_latency_ms_p50"])
    record.add(case, "latency p95", p95, "ms", floor=results["floor_latency_ms_p95"],
               target=f"p95 <= {TARGET_P95_MS:g} ms", ok=p95 <= TARGET_P95_MS)
    record.add(case, "latency p99", results["latency_ms_p99"], "ms", floor=results["floor_latency_ms_p99"])
    record.add(case, "throughput", results["requests_per_s"], "requests/s")
    record.add(case, "CPU per hint request", results["cpu_ms_per_request"], "ms CPU/request", floor=results["floor_cpu_ms_per_request"])

if __name__ == "__main__":
    main()
