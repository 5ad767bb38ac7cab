"""N concurrent WebSocket rounds against one ASGI server process with the Redis channel layer.

The server (uvicorn, one process, run as the Procfile runs it) has its own Redis (a
redis-server started here on a free loopback port) and a fresh SQLite database, or a
throwaway PostgreSQL database beside --database-url / DATABASE_URL. A Celery worker on the
same Redis takes the tasks the rounds enqueue (expiry, quality flags), as in the Procfile.
The clients run in this process.

Players arrive at --arrival-rate a second, connect and start their rounds (the ramp); once
all N rounds are open, each listens to the ticks for --seconds more, then votes at a random
moment of the next --vote-window seconds. Printed, per N:
- tick lateness p50/p99: how long after its one-second slot a tick arrives, the slot fixed by
  the connection's first tick; tick delivery p50/p99: from the moment the server computed the
  tick to its arrival. Measured while all N rounds are open, votes arriving meanwhile: the
  figures of N concurrent rounds. The ramp's own figures are printed apart (ramp_*).
- vote acknowledgement p50/p99: vote frame sent to result frame received.
- start acknowledgement p50/p99 and ramp_s (how long all N took to open): what arriving
  players wait for, and whether the server keeps up with the arrival rate.
- memory per connection: peak RSS over the idle RSS (read after --warmup whole rounds), / N.
- CPU use of the server, the worker, Redis and the clients (percent of one core), and how
  busy the whole machine was (percent of all its cores).

    python bench/bench_rounds_ws.py --rounds 500,1000 --seconds 10 --vote-window 30
    python bench/bench_rounds_ws.py --rounds 1000 --database-url postgres://fm2:fm2@127.0.0.1:5432/fm2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from foolgame.serving import uvicorn_flags  # noqa: E402

SETUP = r"""
import json, sys
from django.contrib.auth import get_user_model
from importlib import import_module
from django.conf import settings
# The configured engine (cached_db), as a login writes it: the session is in the cache too.
SessionStore = import_module(settings.SESSION_ENGINE).SessionStore
from django.contrib.auth import SESSION_KEY, BACKEND_SESSION_KEY, HASH_SESSION_KEY
from foolgame.voting.services import round_create
n = int(sys.argv[-1])
User = get_user_model()
out = []
for i in range(n):
    user, _ = User.objects.get_or_create(username=f"bench{i}")
    round_ = round_create(player=user)
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    out.append({"round": round_.pk, "session": session.session_key, "false": round_.false_index})
print(json.dumps(out))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_port(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int) -> float:
    """``cpu_seconds`` of the process and every live process below it (a Celery worker's
    pool children do its work)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            total += cpu_seconds(current)
        except OSError:
            continue
        todo += children.get(current, [])
    return total


def machine_jiffies() -> tuple[int, int]:
    """(busy, total) CPU time of the whole machine so far, all cores, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle and iowait
    return sum(values) - idle, sum(values)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


async def play(port: int, info: dict, seconds: float, vote_window: float, results: dict, origin: str, everyone: asyncio.Event) -> None:
    """One player: connect, start, listen to the ticks until every round is open, then for
    ``seconds`` and a random part of ``vote_window`` more, then vote. Ticks that arrive while
    players are still arriving count as the ramp's; the rest as those of N concurrent rounds,
    votes included."""
    from websockets.asyncio.client import connect

    headers = {"Cookie": f"sessionid={info['session']}", "Origin": origin}
    async with connect(f"ws://127.0.0.1:{port}/ws/rounds/{info['round']}/", additional_headers=headers, open_timeout=60, max_queue=None) as ws:
        sent = time.monotonic()
        await ws.send(json.dumps({"type": "start"}))
        deadline = None
        while deadline is None:
            frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=60))
            if frame["type"] == "state":
                deadline = datetime.fromisoformat(frame["started_at"]).timestamp() + 180
        results["start_ack"].append(time.monotonic() - sent)
        results["connected"] += 1
        if results["connected"] == results["expected"]:
            everyone.set()
            results["all_open_at"] = time.monotonic()
        first_tick = None
        k = 0
        vote_at = None
        while True:
            if vote_at is None and everyone.is_set():
                vote_at = time.monotonic() + seconds + random.random() * vote_window
            left = 0.5 if vote_at is None else vote_at - time.monotonic()
            if left <= 0:
                break
            try:
                frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=left))
            except asyncio.TimeoutError:
                continue
            now_wall, now_mono = time.time(), time.monotonic()
            if frame["type"] != "tick":
                continue
            phase = "" if vote_at is not None else "ramp_"
            results[phase + "delivery"].append(max(0.0, now_wall - (deadline - frame["remaining"])))
            if first_tick is None:
                first_tick = now_mono
            else:
                k += 1
                results[phase + "lateness"].append(max(0.0, now_mono - (first_tick + k)))
        sent = time.monotonic()
        await ws.send(json.dumps({"type": "vote", "false_claim": info["false"]}))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=60))
            if frame["type"] in ("result", "error"):
                break
        results["ack"].append(time.monotonic() - sent)
        results["voted" if frame["type"] == "result" else "errors"] += 1
        if frame["type"] == "error":
            results.setdefault("error_codes", []).append(frame.get("code"))


async def run_clients(port: int, infos: list[dict], seconds: float, vote_window: float, arrival_rate: float, origin: str) -> dict:
    results: dict = {"expected": len(infos), "connected": 0, "voted": 0, "errors": 0, "start_ack": [], "ack": [],
                     "delivery": [], "lateness": [], "ramp_delivery": [], "ramp_lateness": []}
    everyone = asyncio.Event()
    results["arrivals_from"] = time.monotonic()
    tasks = []
    for info in infos:  # open connections at a steady pace, as players arrive
        tasks.append(asyncio.create_task(play(port, info, seconds, vote_window, results, origin, everyone)))
        await asyncio.sleep(1 / arrival_rate)
    done = await asyncio.gather(*tasks, return_exceptions=True)
    results["failures"] = [repr(d) for d in done if isinstance(d, BaseException)][:3]
    return results


def fresh_database(url: str | None, name: str) -> tuple[str | None, object]:
    """A throwaway PostgreSQL database beside the one ``url`` names (its role needs CREATEDB);
    returns the new URL and a function that drops it. None: SQLite in the work folder."""
    if not url:
        return None, lambda: None
    import psycopg
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return urlunsplit(parts._replace(path=f"/{name}")), drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", default="500,1000")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long each round listens to ticks before voting")
    parser.add_argument("--vote-window", type=float, default=30.0, help="votes fall at random in this many seconds after listening")
    parser.add_argument("--arrival-rate", type=float, default=100.0, help="new connections a second")
    parser.add_argument("--warmup", type=int, default=20, help="rounds played whole before the idle memory is read")
    parser.add_argument("--deflate", action="store_true",
                        help="turn on per-message deflate (the Procfile turns it off: frames of 50 bytes gain nothing, and each connection's zlib state costs memory)")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"),
                        help="PostgreSQL to run on (a throwaway database is made beside it); default SQLite")
    args = parser.parse_args()
    if not shutil.which("redis-server"):
        sys.exit("redis-server is not installed (apt-get install redis-server)")
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    for n in [int(x) for x in args.rounds.split(",")]:
        workdir = Path(tempfile.mkdtemp(prefix="fm2-bench-ws-"))
        redis_port, web_port = free_port(), free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
        database_url, drop_database = fresh_database(args.database_url, f"fm2_bench_ws_{os.getpid()}")
        env = {**os.environ, "FM2_DATA_DIR": str(workdir), "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
               "CELERY_TASK_ALWAYS_EAGER": "0", "HF_HUB_OFFLINE": "1", "FM2_BUILD_INDEXES_ON_IMPORT": "0", "LOG_LEVEL": "WARNING",
               "DEBUG": "0"}  # as in production: no SQL kept per query
        env.pop("DATABASE_URL", None)
        if database_url:
            env["DATABASE_URL"] = database_url
        server = worker = None
        try:
            wait_port(redis_port)
            manage = [sys.executable, "manage.py"]
            subprocess.run(manage + ["migrate", "--no-input", "-v0"], cwd=REPO, env=env, check=True)
            subprocess.run(manage + ["load_demo"], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
            total = n + args.warmup
            setup = subprocess.run(manage + ["shell", "-c", SETUP.replace("sys.argv[-1]", repr(str(total)))], cwd=REPO, env=env,
                                   check=True, capture_output=True, text=True)
            infos = json.loads(setup.stdout.strip().splitlines()[-1])
            warm, infos = infos[: args.warmup], infos[args.warmup :]
            flags = uvicorn_flags()  # the Procfile's, with this run's deflate choice
            flags[flags.index("--ws-per-message-deflate") + 1] = str(args.deflate).lower()
            server = subprocess.Popen([sys.executable, "-m", "uvicorn", "foolgame.asgi:application", "--host", "127.0.0.1",
                                       "--port", str(web_port), "--log-level", "warning", *flags],
                                      cwd=REPO, env=env)
            worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "foolgame", "worker", "--concurrency", "1", "--loglevel", "WARNING"],
                                      cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_port(web_port)
            origin = f"http://127.0.0.1:{web_port}"
            # Warm up: a few whole rounds load the code paths, connections and caches a first
            # vote needs, so the idle figure is the server's, not its imports'.
            asyncio.run(run_clients(web_port, warm, 2, 1, 50, origin))
            time.sleep(2)
            baseline = rss_kib(server.pid)
            cpu_before = {name: tree_cpu_seconds(p.pid) for name, p in (("server", server), ("worker", worker), ("redis", redis))}
            client_before = resource.getrusage(resource.RUSAGE_SELF)
            machine_before = machine_jiffies()
            started = time.monotonic()
            loop_result: dict = {}

            async def runner() -> None:
                measure = asyncio.create_task(run_clients(web_port, infos, args.seconds, args.vote_window, args.arrival_rate, origin))
                peak = 0
                while not measure.done():
                    peak = max(peak, rss_kib(server.pid))
                    await asyncio.sleep(0.5)
                loop_result.update(await measure, peak=peak)

            asyncio.run(runner())
            wall = time.monotonic() - started
            client_after = resource.getrusage(resource.RUSAGE_SELF)
            machine_after = machine_jiffies()
            cpu = {name: round(100 * (tree_cpu_seconds(p.pid) - cpu_before[name]) / wall, 1)
                   for name, p in (("server", server), ("worker", worker), ("redis", redis))}
            # Everything on the machine (PostgreSQL's backends included), as a share of all cores.
            cpu["machine_busy"] = round(100 * (machine_after[0] - machine_before[0]) / max(1, machine_after[1] - machine_before[1]), 1)
            cpu["clients"] = round(100 * (client_after.ru_utime + client_after.ru_stime - client_before.ru_utime - client_before.ru_stime) / wall, 1)
            figure = {
                "rounds": n,
                "database": "postgresql" if database_url else "sqlite",
                "arrival_per_s": args.arrival_rate,
                "deflate": args.deflate,
                "votes_per_s": round(n / args.vote_window, 1),
                "connected": loop_result["connected"],
                "error_codes": sorted(set(loop_result.get("error_codes", []))),
                "voted": loop_result["voted"],
                "errors": loop_result["errors"],
                "tick_lateness_ms_p50": round(1000 * pct(loop_result["lateness"], 50), 1),
                "tick_lateness_ms_p99": round(1000 * pct(loop_result["lateness"], 99), 1),
                "tick_delivery_ms_p50": round(1000 * pct(loop_result["delivery"], 50), 1),
                "tick_delivery_ms_p99": round(1000 * pct(loop_result["delivery"], 99), 1),
                "vote_ack_ms_p50": round(1000 * pct(loop_result["ack"], 50), 1),
                "vote_ack_ms_p99": round(1000 * pct(loop_result["ack"], 99), 1),
                "ticks_measured": len(loop_result["lateness"]),
                "ramp_tick_lateness_ms_p99": round(1000 * pct(loop_result["ramp_lateness"], 99), 1),
                "ramp_tick_delivery_ms_p99": round(1000 * pct(loop_result["ramp_delivery"], 99), 1),
                "ramp_s": round(loop_result["all_open_at"] - loop_result["arrivals_from"], 1) if "all_open_at" in loop_result else None,
                "start_ack_ms_p50": round(1000 * pct(loop_result["start_ack"], 50), 1),
                "start_ack_ms_p99": round(1000 * pct(loop_result["start_ack"], 99), 1),
                "server_rss_mib_idle": round(baseline / 1024, 1),
                "server_rss_mib_peak": round(loop_result["peak"] / 1024, 1),
                "kib_per_connection": round((loop_result["peak"] - baseline) / max(1, loop_result["connected"]), 1),
                "cpu_percent": cpu,
                "cores": os.cpu_count(),
                "wall_s": round(wall, 1),
                "failures": loop_result["failures"],
            }
            print(json.dumps(figure), flush=True)
        finally:
            for process in (server, worker, redis):
                if process is not None:
                    process.terminate()
                    try:
                        process.wait(timeout=15)
                    except subprocess.TimeoutExpired:
                        process.kill()
                        process.wait()
            drop_database()
            shutil.rmtree(workdir, ignore_errors=True)
    targets = "targets at 1,000 rounds: tick lateness p99 <= 100 ms, vote ack p99 <= 100 ms, <= 100 KiB per connection"
    print(targets)


if __name__ == "__main__":
    main()
