"""N concurrent WebSocket rounds against one ASGI server process with the Redis channel layer.

The server (uvicorn, one process) runs in a subprocess with its own Redis (a redis-server
started here on a free loopback port) and a fresh SQLite database, or DATABASE_URL when set.
The clients run in this process. Printed, per N: tick lateness p50/p99 (how long after its
one-second slot a tick arrives, the slot being fixed by the first tick of the connection),
tick delivery p50/p99 (from the moment the server computed the tick to its arrival),
vote acknowledgement p50/p99 (frame sent to result received), and the server's memory per
connection (RSS growth / N). Players arrive at --arrival-rate connections a second, listen to
ticks for --seconds, then vote at a random moment of the next --vote-window seconds, as
players of 180-second rounds do. A Celery worker on the same Redis takes the tasks a vote
enqueues (quality flags), as in the Procfile.

    python bench/bench_rounds_ws.py --rounds 500,1000 --seconds 10 --vote-window 30
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

SETUP = r"""
import json, sys
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
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


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


async def play(port: int, info: dict, seconds: float, vote_window: float, results: dict, origin: str) -> None:
    from websockets.asyncio.client import connect

    headers = {"Cookie": f"sessionid={info['session']}", "Origin": origin}
    async with connect(f"ws://127.0.0.1:{port}/ws/rounds/{info['round']}/", additional_headers=headers, open_timeout=60, max_queue=None) as ws:
        results["connected"] += 1
        await ws.send(json.dumps({"type": "start"}))
        deadline = None
        first_tick = None
        k = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=max(0.05, end - time.monotonic())))
            except asyncio.TimeoutError:
                break
            now_wall, now_mono = time.time(), time.monotonic()
            if frame["type"] == "state":
                deadline = datetime.fromisoformat(frame["started_at"]).timestamp() + 180
            elif frame["type"] == "tick" and deadline is not None:
                results["delivery"].append(max(0.0, now_wall - (deadline - frame["remaining"])))
                if first_tick is None:
                    first_tick = now_mono
                else:
                    k += 1
                    results["lateness"].append(max(0.0, now_mono - (first_tick + k)))
        await asyncio.sleep(random.random() * vote_window)
        sent = time.monotonic()
        await ws.send(json.dumps({"type": "vote", "false_claim": info["false"]}))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=30))
            if frame["type"] in ("result", "error"):
                break
        results["ack"].append(time.monotonic() - sent)
        results["voted" if frame["type"] == "result" else "errors"] += 1


async def run_clients(port: int, infos: list[dict], seconds: float, vote_window: float, arrival_rate: float, origin: str) -> dict:
    results: dict = {"connected": 0, "voted": 0, "errors": 0, "delivery": [], "lateness": [], "ack": []}
    tasks = []
    for info in infos:  # open connections at a steady pace, as players arrive
        tasks.append(asyncio.create_task(play(port, info, seconds, vote_window, results, origin)))
        await asyncio.sleep(1 / arrival_rate)
    done = await asyncio.gather(*tasks, return_exceptions=True)
    results["failures"] = [repr(d) for d in done if isinstance(d, BaseException)][:3]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", default="500,1000")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long each round listens to ticks before voting")
    parser.add_argument("--vote-window", type=float, default=30.0, help="votes fall at random in this many seconds after listening")
    parser.add_argument("--arrival-rate", type=float, default=100.0, help="new connections a second")
    args = parser.parse_args()
    if not shutil.which("redis-server"):
        sys.exit("redis-server is not installed (apt-get install redis-server)")
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    figures = []
    for n in [int(x) for x in args.rounds.split(",")]:
        workdir = Path(tempfile.mkdtemp(prefix="fm2-bench-ws-"))
        redis_port, web_port = free_port(), free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
        env = {**os.environ, "FM2_DATA_DIR": str(workdir), "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
               "CELERY_TASK_ALWAYS_EAGER": "0", "HF_HUB_OFFLINE": "1", "FM2_BUILD_INDEXES_ON_IMPORT": "0", "LOG_LEVEL": "WARNING"}
        server = worker = None
        try:
            wait_port(redis_port)
            manage = [sys.executable, "manage.py"]
            subprocess.run(manage + ["migrate", "--no-input", "-v0"], cwd=REPO, env=env, check=True)
            subprocess.run(manage + ["load_demo"], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
            setup = subprocess.run(manage + ["shell", "-c", SETUP.replace("sys.argv[-1]", repr(str(n)))], cwd=REPO, env=env, check=True, capture_output=True, text=True)
            infos = json.loads(setup.stdout.strip().splitlines()[-1])
            server = subprocess.Popen([sys.executable, "-m", "uvicorn", "foolgame.asgi:application", "--host", "127.0.0.1",
                                       "--port", str(web_port), "--lifespan", "off", "--log-level", "warning", "--ws", "websockets-sansio"],
                                      cwd=REPO, env=env)
            worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "foolgame", "worker", "--concurrency", "1", "--loglevel", "WARNING"],
                                      cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_port(web_port)
            time.sleep(1)
            baseline = rss_kib(server.pid)
            started = time.monotonic()
            loop_result: dict = {}

            async def runner() -> None:
                measure = asyncio.create_task(
                    run_clients(web_port, infos, args.seconds, args.vote_window, args.arrival_rate, f"http://127.0.0.1:{web_port}")
                )
                peak = 0
                while not measure.done():
                    peak = max(peak, rss_kib(server.pid))
                    await asyncio.sleep(0.5)
                loop_result.update(await measure, peak=peak)

            asyncio.run(runner())
            figure = {
                "rounds": n,
                "arrival_per_s": args.arrival_rate,
                "votes_per_s": round(n / args.vote_window, 1),
                "connected": loop_result["connected"],
                "voted": loop_result["voted"],
                "errors": loop_result["errors"],
                "tick_lateness_ms_p50": round(1000 * pct(loop_result["lateness"], 50), 1),
                "tick_lateness_ms_p99": round(1000 * pct(loop_result["lateness"], 99), 1),
                "tick_delivery_ms_p50": round(1000 * pct(loop_result["delivery"], 50), 1),
                "tick_delivery_ms_p99": round(1000 * pct(loop_result["delivery"], 99), 1),
                "vote_ack_ms_p50": round(1000 * pct(loop_result["ack"], 50), 1),
                "vote_ack_ms_p99": round(1000 * pct(loop_result["ack"], 99), 1),
                "ticks_measured": len(loop_result["lateness"]),
                "server_rss_mib_idle": round(baseline / 1024, 1),
                "server_rss_mib_peak": round(loop_result["peak"] / 1024, 1),
                "kib_per_connection": round((loop_result["peak"] - baseline) / max(1, loop_result["connected"]), 1),
                "wall_s": round(time.monotonic() - started, 1),
                "failures": loop_result["failures"],
            }
            figures.append(figure)
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
            shutil.rmtree(workdir, ignore_errors=True)
    targets = "targets at 1,000 rounds: tick lateness p99 <= 100 ms, vote ack p99 <= 100 ms, <= 100 KiB per connection"
    print(targets)


if __name__ == "__main__":
    main()
