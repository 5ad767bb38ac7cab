"""N concurrent WebSocket rounds against one ASGI server process with the Redis channel layer,
each figure beside its floors: the same clients against bare Channels consumers (bench/floor.py)
that answer the same frames, of the same sizes, at the same rate; the committing floor commits
one row per vote in the same database, through the same pool, before it answers (as the game
answers a vote only once it is committed), the no-database floor commits nothing.

The server is uvicorn, one process, with the Procfile's flags (``foolgame.serving``), on a
fresh SQLite database or a throwaway PostgreSQL one beside --database-url, and a Redis
(--redis-url, or a redis-server started here); a Celery worker on the same Redis takes the
tasks the rounds enqueue (expiry, ratings, quality flags), as in the Procfile. The server runs
with FM2_WARM_MODELS=0: the retrieval encoder's warm-up (about 1 GB of RSS and a minute of
CPU) is no part of a round's path (bench_first_save.py measures it). The clients run in this
process.

Each size runs three times, back to back: a few whole rounds on the game to read the size of
each frame it sends (``state``, ``tick``, ``result``); the floors (``bench.floor:application``,
the same uvicorn flags, channel layer and Redis; its ticks sent by each socket's own timer, as
the game's round socket sends them, or through the round's group with --floor-ticks group):
the committing one, then the no-database one (--floor picks one, --no-floor none); then the
game. After the committing floor's run its rows are counted in the database: one per vote it
answered, or the bench stops (exit non-zero). Each warms up on --warmup whole
rounds first. Players arrive at --arrival-rate a second, connect and start their rounds (the
ramp); once all N rounds are open, each listens to the ticks for --seconds more, then votes at
a random moment of the next --vote-window seconds. Printed, per N, the game beside each floor
and its ratio to each (game / committing floor, game / no-database floor); the targets on a
ratio are on the ratio to the committing floor:
- tick lateness p50/p99: how long after its one-second slot a tick arrives, the slot fixed by
  the connection's first tick; tick delivery p50/p99: from the moment the server computed the
  tick to its arrival. Measured while all N rounds are open, votes arriving meanwhile. The
  ramp's own figures are printed apart (ramp_*).
- vote acknowledgement p50/p99: vote frame sent to result frame received.
- start acknowledgement p50/p99 and ramp_s (how long all N took to open).
- memory per connection: peak RSS over the idle RSS (read after the warm-up), / N.
- CPU: the server's, the worker's, Redis' (when started here) and the clients' percent of one
  core, how busy the whole machine was; and the server's own CPU time per unit of work: per
  1,000 ticks (while only ticks flow), per connect and start (the ramp, less its ticks), per
  vote (the vote phase, less its ticks), per 1,000 rounds (the whole run); the worker's per
  round.
- the frames received, by type, and their sizes: what the floor was asked to match.
Every error frame (by code) and failed connection is counted; any makes the bench print them
and exit non-zero instead of printing latencies made of errors. --record PATH appends each
figure as a line of JSON (bench/harness.py's Record).

    python bench/bench_rounds_ws.py --rounds 500,1000 --seconds 10 --vote-window 30
    python bench/bench_rounds_ws.py --rounds 1000 --database-url postgres://fm2:fm2@127.0.0.1:5432/fm2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402, F401 - free_port .. wait_port: other benches import them from here
    REPO,
    Record,
    add_service_args,
    cpu_seconds,
    free_port,
    fresh_database,
    machine_jiffies,
    pct,
    ratio,
    refuse_errors,
    rss_kib,
    services,
    stop,
    tree_cpu_seconds,
    wait_port,
)

import floor_rows  # noqa: E402

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

GAME_APP = "foolgame.asgi:application"
FLOOR_APP = "bench.floor:application"


def new_results(expected: int) -> dict:
    return {"expected": expected, "connected": 0, "voted": 0, "start_ack": [], "ack": [], "delivery": [], "lateness": [],
            "ramp_delivery": [], "ramp_lateness": [], "tick_at": [], "errors": Counter(), "frames": Counter(),
            "sizes": defaultdict(list)}


async def receive(ws, results: dict, timeout: float) -> dict:
    """The next frame; every frame is counted by type with its size, every error by code."""
    text = await asyncio.wait_for(ws.recv(), timeout=timeout)
    frame = json.loads(text)
    results["frames"][frame["type"]] += 1
    if len(results["sizes"][frame["type"]]) < 2000:
        results["sizes"][frame["type"]].append(len(text.encode()))
    if frame["type"] == "error":
        results["errors"][frame.get("code", "?")] += 1
    return frame


async def play(port: int, info: dict, seconds: float, vote_window: float, results: dict, origin: str, everyone: asyncio.Event,
               vote_claim: int | None) -> None:
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
            frame = await receive(ws, results, 60)
            if frame["type"] == "state":
                deadline = datetime.fromisoformat(frame["started_at"]).timestamp() + 180
            elif frame["type"] == "error":
                return
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
                frame = await receive(ws, results, left)
            except asyncio.TimeoutError:
                continue
            now_wall, now_mono = time.time(), time.monotonic()
            if frame["type"] != "tick":
                continue
            results["tick_at"].append(now_mono)
            phase = "" if vote_at is not None else "ramp_"
            results[phase + "delivery"].append(max(0.0, now_wall - (deadline - frame["remaining"])))
            if first_tick is None:
                first_tick = now_mono
            else:
                k += 1
                results[phase + "lateness"].append(max(0.0, now_mono - (first_tick + k)))
        sent = time.monotonic()
        await ws.send(json.dumps({"type": "vote", "false_claim": info["false"] if vote_claim is None else vote_claim}))
        while True:
            frame = await receive(ws, results, 60)
            if frame["type"] in ("result", "error"):
                break
        if frame["type"] == "result":
            results["ack"].append(time.monotonic() - sent)
            results["voted"] += 1


async def run_clients(port: int, infos: list[dict], seconds: float, vote_window: float, arrival_rate: float, origin: str,
                      vote_claim: int | None = None) -> dict:
    results = new_results(len(infos))
    everyone = asyncio.Event()
    results["arrivals_from"] = time.monotonic()
    tasks = []
    for info in infos:  # open connections at a steady pace, as players arrive
        tasks.append(asyncio.create_task(play(port, info, seconds, vote_window, results, origin, everyone, vote_claim)))
        await asyncio.sleep(1 / arrival_rate)
    done = await asyncio.gather(*tasks, return_exceptions=True)
    results["ended_at"] = time.monotonic()
    failed = [d for d in done if isinstance(d, BaseException)]
    results["failures"] = [repr(d) for d in failed][:3]
    for failure in failed:
        results["errors"][f"failed connection ({type(failure).__name__})"] += 1
    return results


def frame_sizes(results: dict) -> dict[str, int]:
    """The median size in bytes of each frame type the clients received."""
    return {kind: int(statistics.median(sizes)) for kind, sizes in results["sizes"].items() if sizes}


class CpuSampler:
    """The server's own CPU time, read every 0.2 s, to split a run's CPU into its phases."""

    def __init__(self, pid: int) -> None:
        self.pid, self.samples = pid, []

    def sample(self) -> None:
        self.samples.append((time.monotonic(), cpu_seconds(self.pid)))

    def at(self, moment: float) -> float:
        """CPU seconds at ``moment``, interpolated between the samples around it."""
        before = [s for s in self.samples if s[0] <= moment] or self.samples[:1]
        after = [s for s in self.samples if s[0] >= moment] or self.samples[-1:]
        (t0, c0), (t1, c1) = before[-1], after[0]
        return c0 if t1 <= t0 else c0 + (c1 - c0) * (moment - t0) / (t1 - t0)

    def between(self, start: float, end: float) -> float:
        return max(0.0, self.at(end) - self.at(start))


def ms(values: list[float], q: float) -> float:
    return round(1000 * pct(values, q), 1)


def start_servers(kind: str, env: dict, flags: list[str]) -> tuple[subprocess.Popen, subprocess.Popen | None, int]:
    """uvicorn serving the floor or the game on a free port, with the given flags, and for the
    game a Celery worker on the same Redis, as the Procfile runs them: (server, worker, port)."""
    web_port = free_port()
    app = FLOOR_APP if kind.startswith("floor") else GAME_APP
    server = subprocess.Popen([sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(web_port), "--log-level", "warning", *flags],
                              cwd=REPO, env=env)
    worker = None
    if not kind.startswith("floor"):
        worker_env = {**env, "DB_POOL_MIN_SIZE": "0", "DB_POOL_MAX_SIZE": "2"}  # the Procfile's worker line
        worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "foolgame", "worker", "--concurrency", "1", "--loglevel", "WARNING"],
                                  cwd=REPO, env=worker_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return server, worker, web_port


class Usage:
    """The CPU the server, the worker, Redis (when this bench started it), the clients (this
    process) and the whole machine spent between ``__init__`` and ``end``."""

    def __init__(self, server: subprocess.Popen, worker: subprocess.Popen | None, redis_pid: int | None) -> None:
        self.watched = [("server", server.pid)] + ([("worker", worker.pid)] if worker else []) + ([("redis", redis_pid)] if redis_pid else [])
        self.cpu_before = {name: tree_cpu_seconds(pid) for name, pid in self.watched}
        self.client_before = resource.getrusage(resource.RUSAGE_SELF)
        self.machine_before = machine_jiffies()

    def end(self) -> None:
        """Read the CPU spent so far: ``spent`` (seconds by process) and what ``percent`` needs."""
        self.spent = {name: tree_cpu_seconds(pid) - self.cpu_before[name] for name, pid in self.watched}
        self.client_after = resource.getrusage(resource.RUSAGE_SELF)
        self.machine_after = machine_jiffies()

    def percent(self, wall: float) -> dict[str, float]:
        """Each process's CPU as a percent of one core over ``wall`` seconds, the clients' too,
        and ``machine_busy``: everything on the machine (PostgreSQL's backends included) as a
        share of all its cores."""
        cpu = {name: round(100 * seconds / wall, 1) for name, seconds in self.spent.items()}
        busy, total = (after - before for after, before in zip(self.machine_after, self.machine_before))
        cpu["machine_busy"] = round(100 * busy / max(1, total), 1)
        before, after = self.client_before, self.client_after
        cpu["clients"] = round(100 * (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / wall, 1)
        return cpu


def cpu_unit(name: str) -> str:
    """The unit of ``Usage.percent``'s figure ``name``."""
    return "% of all cores" if name == "machine_busy" else "% of one core"


FLOORS = {"floor_commit": "committing floor", "floor_bare": "no-database floor"}  # kind: what it is called


def floor_kinds(choice: str) -> list[str]:
    """The floors a run measures (--floor), the committing one first."""
    return {"both": ["floor_commit", "floor_bare"], "commit": ["floor_commit"], "bare": ["floor_bare"], "none": []}[choice]


def floor_table(env: dict, action: str) -> dict[str, int]:
    """Make the committing floor's table (``create``) or read it (``count``): its rows by kind,
    through the project's settings in the bench's environment."""
    done = subprocess.run([sys.executable, "-m", "bench.floor_rows", action, "bench_floor_vote"], cwd=REPO, env=env, check=True,
                          stdout=subprocess.PIPE, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_case(kind: str, n: int, svc, env: dict, warm: list[dict], infos: list[dict], args: argparse.Namespace, sizes: dict | None) -> dict:
    """One server (the game, or a floor), warmed up, then the N rounds measured. The
    committing floor's rows are counted after: one per vote answered, or the bench stops."""
    flags = uvicorn_flags()  # the Procfile's, with this run's deflate choice
    flags[flags.index("--ws-per-message-deflate") + 1] = str(args.deflate).lower()
    env = {**env, "FM2_FLOOR": json.dumps({"sizes": sizes or {}, "commit": kind == "floor_commit"}), "FM2_FLOOR_TICKS": args.floor_ticks}
    rows_before = floor_table(env, "create") if kind == "floor_commit" else {}
    server, worker, web_port = start_servers(kind, env, flags)
    try:
        wait_port(web_port)
        origin = f"http://127.0.0.1:{web_port}"
        # Warm up: a few whole rounds load the code paths, connections and caches a first
        # vote needs, so the idle figure is the server's, not its imports'.
        warmed = asyncio.run(run_clients(web_port, warm, 2, 1, 50, origin, None if kind == "probe" else args.vote_claim))
        if kind == "probe":
            return warmed
        time.sleep(2)
        baseline = rss_kib(server.pid)
        usage = Usage(server, worker, svc.redis_pid)
        sampler = CpuSampler(server.pid)
        sampler.sample()
        started = time.monotonic()
        loop_result: dict = {}

        async def runner() -> None:
            measure = asyncio.create_task(run_clients(web_port, infos, args.seconds, args.vote_window, args.arrival_rate, origin, args.vote_claim))
            peak = 0
            while not measure.done():
                peak = max(peak, rss_kib(server.pid))
                sampler.sample()
                await asyncio.sleep(0.2)
            loop_result.update(await measure, peak=peak)

        asyncio.run(runner())
        sampler.sample()
        wall = time.monotonic() - started
        usage.end()
    finally:
        stop(server, worker)
    errors = loop_result.get("errors", Counter()) + warmed["errors"]
    result = loop_result
    rows = None
    if kind == "floor_commit":
        counted = floor_table(env, "count")
        committed = {k: counted.get(k, 0) - rows_before.get(k, 0) for k in counted}
        rows = floor_rows.check(f"committing floor ({svc.database})", committed, {"vote": warmed["voted"] + result["voted"]})
    spent = usage.spent
    cpu = usage.percent(wall)
    cost = {}
    if "all_open_at" in result:
        # The phases: the ramp (connects, starts, their ticks), only ticks (every round open,
        # no vote yet: the first client to see everyone open votes `seconds` later), the votes.
        open_at, ended = result["all_open_at"], result["ended_at"]
        listen = (open_at + 0.5, open_at + args.seconds)
        ticks_in = lambda a, b: sum(1 for t in result["tick_at"] if a <= t < b)  # noqa: E731
        tick_s = sampler.between(*listen) / max(1, ticks_in(*listen))
        ramp_s = sampler.between(result["arrivals_from"], open_at) - tick_s * ticks_in(result["arrivals_from"], open_at)
        vote_s = sampler.between(open_at + args.seconds, ended) - tick_s * ticks_in(open_at + args.seconds, ended)
        cost = {
            "cpu_ms_per_1000_ticks": round(1e6 * tick_s, 1),
            "cpu_ms_per_start": round(1000 * ramp_s / max(1, result["connected"]), 2),
            "cpu_ms_per_vote": round(1000 * vote_s / max(1, result["voted"]), 2),
            "cpu_ms_per_1000_rounds": round(1e6 * spent["server"] / max(1, n)),
            "ticks_in_cost": ticks_in(*listen),
        }
        if "worker" in spent:
            cost["worker_cpu_ms_per_round"] = round(1000 * spent["worker"] / max(1, n), 2)
    return {
        "kind": kind,
        "connected": result["connected"],
        "voted": result["voted"],
        "errors": dict(errors),
        "tick_lateness_ms_p50": ms(result["lateness"], 50),
        "tick_lateness_ms_p99": ms(result["lateness"], 99),
        "tick_delivery_ms_p50": ms(result["delivery"], 50),
        "tick_delivery_ms_p99": ms(result["delivery"], 99),
        "vote_ack_ms_p50": ms(result["ack"], 50),
        "vote_ack_ms_p99": ms(result["ack"], 99),
        "ticks_measured": len(result["lateness"]),
        "ramp_tick_lateness_ms_p99": ms(result["ramp_lateness"], 99),
        "ramp_tick_delivery_ms_p99": ms(result["ramp_delivery"], 99),
        "ramp_s": round(result["all_open_at"] - result["arrivals_from"], 1) if "all_open_at" in result else None,
        "start_ack_ms_p50": ms(result["start_ack"], 50),
        "start_ack_ms_p99": ms(result["start_ack"], 99),
        "server_rss_mib_idle": round(baseline / 1024, 1),
        "server_rss_mib_peak": round(result["peak"] / 1024, 1),
        "kib_per_connection": round((result["peak"] - baseline) / max(1, result["connected"]), 1),
        "cpu_percent": cpu,
        "server_cpu_s": round(spent["server"], 2),
        **cost,
        "frames": dict(result["frames"]),
        "frame_bytes": frame_sizes(result),
        "wall_s": round(wall, 1),
        "failures": result["failures"],
        **({"rows": rows} if rows else {}),
    }


# figure, its unit, the target on its ratio to the committing floor (None: printed, no target);
# issue 42's targets, each run on PostgreSQL + Redis with the defaults
COMPARED = [
    ("vote_ack_ms_p50", "ms", 3.0),
    ("vote_ack_ms_p99", "ms", 4.0),
    ("cpu_ms_per_vote", "ms", 2.0),
    ("tick_lateness_ms_p99", "ms", 2.0),
    ("start_ack_ms_p99", "ms", None),
    ("tick_lateness_ms_p50", "ms", None),
    ("tick_delivery_ms_p99", "ms", None),
    ("start_ack_ms_p50", "ms", None),
    ("kib_per_connection", "KiB", None),
    ("cpu_ms_per_1000_ticks", "ms", None),
    ("cpu_ms_per_start", "ms", None),
    ("cpu_ms_per_1000_rounds", "ms", None),
    ("worker_cpu_ms_per_round", "ms", None),
]
ABSOLUTE = {"tick_lateness_ms_p99": 100, "vote_ack_ms_p99": 100, "kib_per_connection": 100}  # targets at 1,000 rounds
# a figure that also holds when under this, whatever its ratio (a tick a few ms late is noise)
ENOUGH = {"tick_lateness_ms_p99": 5.0}


def report(record: Record, case: str, game: dict, floors: dict[str, dict], compared: list, absolute: dict,
           enough: dict | None = None) -> dict:
    """Print each figure beside each floor (``floors``: kind -> its figures, the committing
    floor's kind ``floor_commit``) and the game's ratio to each, record it; the ratios, by
    floor kind. A target on a ratio is judged against the committing floor only (the honest
    one: a vote is answered once committed); ``enough`` holds a figure under a value whatever
    its ratio."""
    enough = enough or {}
    measured = [kind for kind in FLOORS if floors.get(kind)]
    judged = "floor_commit" if "floor_commit" in measured else None
    ratios: dict[str, dict] = {kind: {} for kind in measured}
    names = {"floor_commit": "committing", "floor_bare": "no-database"}
    head = "".join(f" {names[kind]:>12}" for kind in measured) + f" {'game':>10}" + "".join(f" {'/' + names[kind]:>13}" for kind in measured)
    print(f"\n{case}: {'figure':<28}{head}  target")
    for name, unit, limit in compared:
        value = game.get(name)
        if value is None:
            continue
        bases = {kind: floors[kind].get(name) for kind in measured}
        for kind, base in bases.items():
            ratios[kind][name] = ratio(value, base) if base is not None else None
        targets, ok = [], []
        if limit is not None and judged:
            r = ratios[judged][name]
            if name in enough:
                targets.append(f"<= {limit:g}x committing floor or <= {enough[name]:g} {unit}")
                ok.append((r is not None and r <= limit) or value <= enough[name])
            else:
                targets.append(f"<= {limit:g}x committing floor")
                ok.append(r is not None and r <= limit)
        if name in absolute:
            targets.append(f"<= {absolute[name]} {unit}")
            ok.append(value <= absolute[name])
        verdict = ("" if not ok else " ok" if all(ok) else " MISSED")
        cells = "".join(f" {'' if bases[kind] is None else bases[kind]:>12}" for kind in measured)
        cells += f" {value:>10}" + "".join(f" {'' if ratios[kind][name] is None else str(ratios[kind][name]) + 'x':>13}" for kind in measured)
        print(f"{' ' * len(case)}  {name:<28}{cells}  {', '.join(targets)}{verdict}")
        record.add(case, name, value, unit, floor=bases.get(judged or (measured[0] if measured else "")),
                   floors={names[kind]: bases[kind] for kind in measured}, target=", ".join(targets) or None, ok=all(ok) if ok else None)
    return ratios


def record_cpu(record: Record, case: str, game: dict, floors: dict[str, dict]) -> None:
    """The processes' CPU percents, the game's beside the floors' (a floor has no worker)."""
    names = {"floor_commit": "committing", "floor_bare": "no-database"}
    measured = [kind for kind in FLOORS if floors.get(kind)]
    for name, value in game["cpu_percent"].items():
        bases = {names[kind]: floors[kind]["cpu_percent"].get(name) for kind in measured}
        primary = bases.get("committing", bases.get("no-database"))
        record.add(case, f"cpu_percent_{name}", value, cpu_unit(name), floor=primary, floors={k: v for k, v in bases.items() if v is not None})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", default="500,1000")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long each round listens to ticks before voting")
    parser.add_argument("--vote-window", type=float, default=30.0, help="votes fall at random in this many seconds after listening")
    parser.add_argument("--arrival-rate", type=float, default=100.0, help="new connections a second")
    parser.add_argument("--warmup", type=int, default=20, help="rounds played whole before the idle memory is read")
    parser.add_argument("--deflate", action="store_true",
                        help="turn on per-message deflate (the Procfile turns it off: frames of 50 bytes gain nothing, and each connection's zlib state costs memory)")
    parser.add_argument("--floor", choices=("both", "commit", "bare"), default="both",
                        help="the floors measured beside the game: the committing one (one row per vote, committed before the answer, "
                             "in the bench's database) and the no-database one (default both), or one of them")
    parser.add_argument("--no-floor", action="store_true", help="measure the game only, without the floors")
    parser.add_argument("--floor-ticks", choices=("local", "group"), default="local",
                        help="the floor's ticks: by each socket's own timer, as the game's round socket sends them (default), or through the round's group (group_send: one Redis trip per tick)")
    parser.add_argument("--vote-claim", type=int, default=None, help="vote on this claim index instead of the false one (2: a run the server refuses)")
    add_service_args(parser)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    record = Record("bench_rounds_ws", args.record)
    print(f"machine: {record.machine}")
    for n in [int(x) for x in args.rounds.split(",")]:
        with services(args, f"ws{n}") as svc:
            env = svc.env(CELERY_TASK_ALWAYS_EAGER="0", FM2_WARM_MODELS="0")
            manage = [sys.executable, "manage.py"]
            subprocess.run(manage + ["migrate", "--no-input", "-v0"], cwd=REPO, env=env, check=True)
            subprocess.run(manage + ["load_demo"], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
            if args.no_floor:
                args.floor = "none"
            probes = args.warmup if floor_kinds(args.floor) else 0
            total = n + args.warmup + probes
            setup = subprocess.run(manage + ["shell", "-c", SETUP.replace("sys.argv[-1]", repr(str(total)))], cwd=REPO, env=env,
                                   check=True, capture_output=True, text=True)
            infos = json.loads(setup.stdout.strip().splitlines()[-1])
            probe, warm, infos = infos[:probes], infos[probes : probes + args.warmup], infos[probes + args.warmup :]
            case = f"{n} rounds {svc.database}"
            floors: dict[str, dict] = {}
            if probes:
                # The game's frame sizes, from whole rounds on it; the floors play the same
                # rounds as the game after them (the committing floor writes its own table only).
                probed = run_case("probe", n, svc, env, probe, [], args, None)
                refuse_errors(probed["errors"], f"answers on the game while reading its frame sizes ({case})")
                sizes = frame_sizes(probed)
                for kind in floor_kinds(args.floor):
                    floors[kind] = run_case(kind, n, svc, env, warm, infos, args, sizes)
                    refuse_errors(floors[kind]["errors"], f"answers from the {FLOORS[kind]} ({case})")
                    if "rows" in floors[kind]:
                        print(floors[kind]["rows"], flush=True)
            game = run_case("game", n, svc, env, warm, infos, args, None)
            figure = {"rounds": n, "database": svc.database, "arrival_per_s": args.arrival_rate, "deflate": args.deflate,
                      "votes_per_s": round(n / args.vote_window, 1), "floor_ticks": args.floor_ticks if floors else None,
                      "load_average": [round(x, 2) for x in os.getloadavg()], **game}
            refuse_errors(game["errors"], f"answers from the game ({case})")
            if "floor_commit" in floors:
                print(f"the committing floor commits in {svc.database}" + (" (not PostgreSQL: its figures are SQLite's)" if svc.database == "sqlite" else ""))
            ratios = report(record, case, game, floors, COMPARED, ABSOLUTE, ENOUGH)
            print(json.dumps({**figure, "floors": floors, "ratios": ratios}), flush=True)
            record_cpu(record, case, game, floors)
    print("targets (issue 42, against the committing floor): vote ack p50 <= 3x and p99 <= 4x, server CPU per vote <= 2x, "
          "tick lateness p99 <= 2x or <= 5 ms; at 1,000 rounds tick lateness p99 <= 100 ms, vote ack p99 <= 100 ms, "
          "<= 100 KiB per connection")


if __name__ == "__main__":
    main()
