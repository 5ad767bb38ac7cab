"""REST clients against the web processes on PostgreSQL: what the connection pool holds.

    python bench/bench_rest_pool.py --database-url postgres://fm2:fm2@127.0.0.1:5433/fm2 \
        [--clients 50] [--seconds 60] [--workers 2] [--no-pool]

Runs the web processes exactly as the Procfile's ``web`` line does (uvicorn ``--workers``),
a Celery worker as its ``worker`` line does and a Redis of its own, on a throwaway database
made beside ``--database-url`` (its role needs CREATEDB; use a PostgreSQL cluster of your
own: the bench may exhaust its ``max_connections``, which is the point of ``--no-pool``).
Each client is a logged-in player on a keep-alive connection who loops, without pause, over
a realistic mix: ``/api/me``, ``/api/pages``, ``/api/pages/<id>``, the leaderboard, and a
whole round over REST (deal, start, vote). Prints requests done, statuses, p50/p95/p99
latency, the web processes' CPU per request, the peak and steady count of the server's
connections in ``pg_stat_activity`` (sampled every 50 ms; steady is the median over the second
half), the pool size, then a JSON object.

The REST floor first (unless --no-floor): the same clients, for the same time, against a bare
Django view (``bench/rest_floor.py``) served by the same uvicorn line with the same settings,
session middleware, database and pool, that reads one row and commits one row per request.
After its run its rows are counted in the database, one per request it answered, or the bench
stops (exit non-zero). Then the game, and each figure beside the floor's with the ratio
(game / floor); the targets (issue 42): throughput at least half the floor's, p99 at most 3x.

``--no-pool`` runs the configuration before issue 12: ``DB_POOL=false`` and
``CONN_MAX_AGE=60`` (persistent connections, one per request thread under ASGI).

The web processes run with FM2_WARM_MODELS=0, as the socket benches' do: no request of the
mix uses the retrieval encoder, whose warm-up in a fresh data folder (an ONNX export in each web
process, a minute of CPU) would be measured as the game's.

Redis: --redis-url, or a redis-server started here (bench/harness.py). The throwaway database
is dropped without superuser rights. Every answer of 400 or more and every request that got no
answer is counted: the connection figures are printed, then the counts, and the bench exits
non-zero without printing latencies made of errors (``--no-pool`` exhausting the server's
connections shows that way). --record PATH appends the figures as lines of JSON.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_hints_http import PASSWORD, SETUP, Author  # noqa: E402
from harness import REPO, Record, add_service_args, free_port, pct, ratio, refuse_errors, services, tree_cpu_seconds, wait_port  # noqa: E402
from harness import stop as stop_processes  # noqa: E402

import floor_rows  # noqa: E402


class Player(Author):
    """A browser: keep-alive connection, session and CSRF cookies; any body (a 500 is HTML).

    Like a browser, it sends a request again on a new connection when a kept-alive one
    turns out closed before any byte of the answer came (uvicorn closes a connection idle
    for 5 s, e.g. while the other players log in): counted as a reconnect, not an error."""

    reconnects = 0

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, object]:
        reused = self.connection.sock is not None
        try:
            try:
                return super().request(method, path, body)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                if not reused:
                    raise
                self.connection.close()
                self.reconnects += 1
                return super().request(method, path, body)
        except ValueError:  # not JSON: an error page
            return 500, None


def procfile(role: str) -> str:
    for line in (REPO / "Procfile").read_text().splitlines():
        if line.startswith(f"{role}:"):
            return line.split(":", 1)[1].strip()
    raise LookupError(role)


GAME_APP, FLOOR_APP = "foolgame.asgi:application", "bench.rest_floor:application"


def start(role: str, env: dict[str, str], app: str = GAME_APP) -> subprocess.Popen:
    """The Procfile's line for ``role``, on loopback; the web line serving ``app``."""
    command = procfile(role).replace("--host 0.0.0.0", "--host 127.0.0.1").replace("--loglevel INFO", "--loglevel WARNING")
    if app != GAME_APP:
        command = command.replace(GAME_APP, app, 1)
    for tool in ("uvicorn", "celery"):
        command = command.replace(f"{tool} ", f"{shlex.quote(sys.executable)} -m {tool} ", 1)
    return subprocess.Popen(["bash", "-c", f"exec env {command}"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, start_new_session=True)


LOGINS_AT_ONCE = threading.Semaphore(4)  # PBKDF2 costs ~0.1-0.5 s of CPU: log in before the clock starts


def play(port: int, number: int, pages: list[int], start: threading.Barrier, clock: dict, latencies: list[float], statuses: Counter,
         failures: list[str], reconnects: dict[int, int]) -> None:
    player = Player(port)
    try:
        with LOGINS_AT_ONCE:
            status, body = player.login(f"author{number}")
        if status != 200:
            raise RuntimeError(f"login failed: {status} {body}")
    except Exception as error:  # noqa: BLE001 - a refused login is a figure too
        failures.append(f"login: {error!r}")
        start.abort()
        return
    try:
        start.wait()
    except threading.BrokenBarrierError:
        return
    until = clock["until"]

    def call(method: str, path: str, body: dict | None = None) -> tuple[int, object]:
        sent = time.monotonic()
        try:
            status, payload = player.request(method, path, body)
        except Exception as error:  # noqa: BLE001 - a timeout or a dropped connection
            statuses[type(error).__name__] += 1
            player.connection.close()
            return 0, None
        latencies.append(time.monotonic() - sent)
        statuses[status] += 1
        return status, payload

    rng = random.Random(number)
    while time.monotonic() < until:
        pick = rng.random()
        if pick < 0.3:
            call("GET", "/api/me")
        elif pick < 0.5:
            call("GET", "/api/pages")
        elif pick < 0.7:
            call("GET", f"/api/pages/{rng.choice(pages)}")
        elif pick < 0.8:
            call("GET", "/api/leaderboard")
        else:
            status, dealt = call("POST", "/api/rounds", {})
            if status == 201 and isinstance(dealt, dict):
                if call("POST", f"/api/rounds/{dealt['id']}/start", {})[0] == 200:
                    call("POST", f"/api/rounds/{dealt['id']}/vote", {"false_claim": rng.randint(0, 1)})
    reconnects[number] = player.reconnects


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2, help="web processes (WEB_CONCURRENCY)")
    parser.add_argument("--no-pool", action="store_true", help="before issue 12: DB_POOL=false, CONN_MAX_AGE=60")
    parser.add_argument("--pool-max", type=int, default=int(os.environ.get("DB_POOL_MAX_SIZE", 10)), help="DB_POOL_MAX_SIZE per web process")
    parser.add_argument("--no-floor", action="store_true", help="measure the game only, without the REST floor (bench/rest_floor.py)")
    add_service_args(parser)
    args = parser.parse_args()
    args.database_url = args.database_url or os.environ.get("DATABASE_URL", "")
    if not args.database_url.startswith("postgres"):
        print("bench_rest_pool: skipped, needs PostgreSQL (--database-url or DATABASE_URL)")
        return
    import psycopg

    record = Record("bench_rest_pool", args.record)
    with services(args, "pool") as svc:
        run(args, svc, psycopg, record)


# figure, unit, the target on its ratio to the floor: ("<=", 3.0) at most 3x, (">=", 0.5) at least half
COMPARED = [
    ("requests_per_s", "requests/s", (">=", 0.5)),
    ("latency_ms_p50", "ms", None),
    ("latency_ms_p95", "ms", None),
    ("latency_ms_p99", "ms", ("<=", 3.0)),
    ("web_cpu_ms_per_request", "ms", None),
]


def run(args: argparse.Namespace, svc, psycopg, record: Record) -> None:
    # FM2_WARM_MODELS=0, as the socket benches run: no request of the mix uses the retrieval
    # encoder, and its warm-up (an ONNX export in each web process of a fresh data folder, a
    # minute of CPU) held 42% of the web processes' GIL during the game's measured minute.
    env = svc.env(CELERY_TASK_ALWAYS_EAGER="0", WEB_CONCURRENCY=str(args.workers), DB_POOL_MAX_SIZE=str(args.pool_max), FM2_WARM_MODELS="0")
    if args.no_pool:
        env.update(DB_POOL="false", CONN_MAX_AGE="60")
    else:
        env.update(DB_POOL="true")
    manage = [sys.executable, "manage.py"]
    subprocess.run(manage + ["migrate", "--no-input", "-v0"], cwd=REPO, env=env, check=True)
    subprocess.run(manage + ["load_demo"], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    setup = subprocess.run(manage + ["shell", "-c", SETUP.replace("PASSWORD", repr(PASSWORD)).replace("AUTHORS", str(args.clients))], cwd=REPO, env=env,
                           check=True, capture_output=True, text=True)
    pages = [page["id"] for page in json.loads(setup.stdout.strip().splitlines()[-1])]
    floor = None
    if not args.no_floor:
        floor_env = {**env, "DJANGO_SETTINGS_MODULE": "bench.rest_floor_settings"}
        before = floor_table(floor_env, "create")
        floor = measure("floor", args, svc, psycopg, floor_env, pages)
        refuse_errors(floor["errors"], "answers from the REST floor")
        counted = floor_table(floor_env, "count")
        committed = {"request": sum(counted.values()) - sum(before.values())}
        floor["rows"] = floor_rows.check(f"REST floor ({svc.database})", committed, {"request": floor["requests"]})
        print(floor["rows"], flush=True)
    game = measure("game", args, svc, psycopg, env, pages)
    refuse_errors(game["errors"], "answers from the game")
    print(json.dumps({**game, "floor": floor}), flush=True)
    case = f"{args.clients} clients, {args.workers} web processes, {game['configuration']}, postgresql"
    report(record, case, game, floor)
    for key, unit in (("db_connections_peak", "connections"), ("db_connections_steady", "connections")):
        record.add(case, key, game[key], unit, floor=floor.get(key) if floor else None)
    if "worker_cpu_ms_per_request" in game:
        record.add(case, "worker_cpu_ms_per_request", game["worker_cpu_ms_per_request"], "ms")
    print("targets (issue 42, against the REST floor): requests a second at least half the floor's, latency p99 at most 3x the floor's")


def floor_table(env: dict, action: str) -> dict[str, int]:
    """Make the REST floor's table (``create``) or read it (``count``): its rows by kind."""
    done = subprocess.run([sys.executable, "-m", "bench.floor_rows", action, "bench_floor_request"], cwd=REPO, env=env, check=True,
                          stdout=subprocess.PIPE, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(record: Record, case: str, game: dict, floor: dict | None) -> dict:
    """Print each figure beside the floor's and the ratio (game / floor), record it."""
    ratios = {}
    print(f"\n{case}: {'figure':<24} {'REST floor':>11} {'game':>10} {'game/floor':>11}  target")
    for name, unit, limit in COMPARED:
        value = game.get(name)
        base = floor.get(name) if floor else None
        r = ratio(value, base) if value is not None and base is not None else None
        ratios[name] = r
        target = ok = None
        if limit is not None and floor:
            sign, times = limit
            target = f"{sign} {times:g}x floor"
            ok = r is not None and (r <= times if sign == "<=" else r >= times)
        verdict = "" if ok is None else " ok" if ok else " MISSED"
        print(f"{' ' * len(case)}  {name:<24} {'' if base is None else base:>11} {'' if value is None else value:>10} "
              f"{'' if r is None else f'{r}x':>11}  {target or ''}{verdict}")
        record.add(case, name, value, unit, floor=base, target=target, ok=ok)
    return ratios


def measure(kind: str, args: argparse.Namespace, svc, psycopg, env: dict, pages: list[int]) -> dict:
    """The web processes serving the game (with the Procfile's worker) or the REST floor, the
    clients run for --seconds against them: the figures, errors counted, nothing refused here."""
    web_port = free_port()
    database_url = svc.database_url
    name = database_url.rsplit("/", 1)[1]
    env = {**env, "PORT": str(web_port)}
    processes: list[subprocess.Popen] = []
    try:
        processes.append(start("web", env, FLOOR_APP if kind == "floor" else GAME_APP))
        if kind == "game":
            processes.append(start("worker", env))
        wait_port(web_port)
        samples: list[tuple[float, int]] = []
        stop = threading.Event()

        def watch() -> None:
            with psycopg.connect(database_url, autocommit=True) as conn:
                while not stop.is_set():
                    row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [name]).fetchone()
                    samples.append((time.monotonic(), int(row[0])))
                    stop.wait(0.05)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        latencies: list[float] = []
        statuses: Counter = Counter()
        failures: list[str] = []
        reconnects: dict[int, int] = {}
        clock: dict = {}

        def go() -> None:  # the last client to log in starts the clock (and the CPU count)
            clock["cpu"] = [tree_cpu_seconds(process.pid) for process in processes]
            clock["started"] = time.monotonic()
            clock["until"] = clock["started"] + args.seconds

        start_line = threading.Barrier(args.clients, action=go)
        clients = [threading.Thread(target=play, args=(web_port, n, pages, start_line, clock, latencies, statuses, failures, reconnects))
                   for n in range(args.clients)]
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        started = clock.get("started", time.monotonic())
        wall = time.monotonic() - started
        cpu = [tree_cpu_seconds(process.pid) - before for process, before in zip(processes, clock.get("cpu", [0.0] * len(processes)))]
        stop.set()
        watcher.join()
    finally:
        stop_processes(*reversed(processes), timeout=30)
    counts = [count for _, count in samples]
    second_half = [count for at, count in samples if at >= started + wall / 2] or counts
    with psycopg.connect(database_url, autocommit=True) as conn:
        max_connections = int(conn.execute("SHOW max_connections").fetchone()[0])
    done = sum(n for status, n in statuses.items() if isinstance(status, int))
    errors = {str(status): n for status, n in statuses.items() if not (isinstance(status, int) and status < 400)}
    figure = {
        "kind": kind,
        "configuration": "no pool, CONN_MAX_AGE=60" if args.no_pool else f"pool max {args.pool_max} per process",
        "clients": args.clients,
        "web_processes": args.workers,
        "seconds": round(wall, 1),
        "requests": done,
        "requests_per_s": round(done / wall, 1),
        "statuses": {str(status): n for status, n in sorted(statuses.items(), key=str)},
        "errors": {**errors, **{f"login failed: {f}": 1 for f in failures}},
        "reconnects": sum(reconnects.values()),
        "latency_ms_p50": round(1000 * pct(latencies, 50), 1) if latencies else None,
        "latency_ms_p95": round(1000 * pct(latencies, 95), 1) if latencies else None,
        "latency_ms_p99": round(1000 * pct(latencies, 99), 1) if latencies else None,
        "web_cpu_ms_per_request": round(1000 * cpu[0] / max(1, done), 2),
        "web_cpu_percent": round(100 * cpu[0] / max(wall, 1e-9), 1),
        "db_connections_peak": max(counts, default=0),
        "db_connections_steady": statistics.median(second_half) if second_half else 0,
        # the web processes' pools plus the Celery worker's (Procfile: 2 children x 2)
        "pool_max_total": None if args.no_pool else args.pool_max * args.workers + (2 * 2 if kind == "game" else 0),
        "max_connections": max_connections,
        "failures": failures[:3],
    }
    if kind == "game":
        figure["worker_cpu_ms_per_request"] = round(1000 * cpu[1] / max(1, done), 2)
    what = "REST floor" if kind == "floor" else "game"
    print(f"{what}, {figure['configuration']}: {done} requests in {wall:.0f} s ({figure['requests_per_s']}/s), reconnects {figure['reconnects']}, "
          f"web CPU {figure['web_cpu_ms_per_request']} ms per request, server connections peak {figure['db_connections_peak']} "
          f"steady {figure['db_connections_steady']} (pool allows {figure['pool_max_total']}, max_connections {max_connections})", flush=True)
    if not figure["errors"]:
        print(f"{what}: latency p50/p95/p99 {figure['latency_ms_p50']}/{figure['latency_ms_p95']}/{figure['latency_ms_p99']} ms", flush=True)
    return figure


if __name__ == "__main__":
    main()
