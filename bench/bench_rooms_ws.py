"""Live rooms against one ASGI server process with the Redis channel layer: R rooms of P
players (R x P sockets), each room playing Q questions.

Set up as ``bench_rounds_ws.py`` (whose helpers it uses): uvicorn run as the Procfile runs it,
its own redis-server, a Celery worker, a fresh SQLite database or a throwaway PostgreSQL one
beside --database-url; the clients run in this process. Players connect at --arrival-rate a
second; once every socket is open, each room's host starts its first question at a random
moment of the next --start-window seconds, every player votes at a random moment of the
--vote-window seconds after the question reached them, and the host starts the next question
one second after the answer. Printed:
- question spread p50/p99: per room and question, the time between the first and the last of
  its players receiving the question (the target: all within 100 ms of each other, p99);
  question delay p50/p99: from the host's start frame to each player's question frame.
- vote ack p50/p99: vote frame sent to its ``voted`` frame received (target p99 <= 100 ms).
- scoreboard p50/p99: from the room's last vote sent to each of its players receiving the
  answer and scoreboard (target p99 <= 200 ms).
- client loop lag p50/p99: how late the clients' own event loop woke from a 10 ms sleep, the
  share of the figures above that is the clients' delay in reading a frame.
- CPU use of the server, the worker, Redis and the clients, and how busy the whole machine was.

    python bench/bench_rooms_ws.py --rooms 50 --players 20 --questions 3
    python bench/bench_rooms_ws.py --database-url postgres://fm2:fm2@127.0.0.1:5433/fm2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.bench_rounds_ws import fresh_database, free_port, machine_jiffies, pct, rss_kib, tree_cpu_seconds, wait_port  # noqa: E402
from foolgame.serving import uvicorn_flags  # noqa: E402

SETUP = r"""
import json, sys
from importlib import import_module
from django.conf import settings
from django.contrib.auth import get_user_model, SESSION_KEY, BACKEND_SESSION_KEY, HASH_SESSION_KEY
from foolgame.rooms.services import room_create, room_join
SessionStore = import_module(settings.SESSION_ENGINE).SessionStore
rooms, players, questions, seconds = (int(x) for x in sys.argv[-1].split(","))
User = get_user_model()
out = []
for r in range(rooms):
    members = []
    room = None
    for p in range(players):
        user, _ = User.objects.get_or_create(username=f"room{r}-p{p}")
        if room is None:
            room = room_create(host=user, questions=questions, seconds=seconds)
        else:
            room_join(code=room.code, player=user)
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        members.append(session.session_key)
    out.append({"code": room.code, "sessions": members})
print(json.dumps(out))
"""


class Room:
    """What one room's clients saw, per question number."""

    def __init__(self, code: str, size: int):
        self.code, self.size = code, size
        self.started: dict[int, float] = {}  # the host's start frame sent
        self.arrivals: dict[int, list[float]] = defaultdict(list)
        self.votes: dict[int, list[float]] = defaultdict(list)
        self.answers: dict[int, list[float]] = defaultdict(list)
        self.next_start = asyncio.Event()


async def member(port: int, origin: str, room: Room, session: str, host: bool, args: argparse.Namespace, results: dict, everyone: asyncio.Event) -> None:
    from websockets.asyncio.client import connect

    headers = {"Cookie": f"sessionid={session}", "Origin": origin}
    async with connect(f"ws://127.0.0.1:{port}/ws/rooms/{room.code}/", additional_headers=headers, open_timeout=120, max_queue=None) as ws:
        while json.loads(await asyncio.wait_for(ws.recv(), timeout=120))["type"] != "room":
            pass
        results["connected"] += 1
        if results["connected"] == results["expected"]:
            everyone.set()
        await everyone.wait()
        number = 0
        pending: set[asyncio.Task] = set()

        async def start() -> None:
            await asyncio.sleep(random.random() * args.start_window if number == 0 else 1.0)
            room.started[number + 1] = time.monotonic()
            await ws.send(json.dumps({"type": "start"}))

        async def vote(n: int) -> None:
            await asyncio.sleep(0.5 + random.random() * args.vote_window)
            sent = time.monotonic()
            room.votes[n].append(sent)
            voted_at[n] = sent
            await ws.send(json.dumps({"type": "vote", "false_claim": random.randint(0, 1)}))

        voted_at: dict[int, float] = {}
        if host:
            pending.add(asyncio.create_task(start()))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=args.seconds + args.vote_window + 60))
            now = time.monotonic()
            kind = frame["type"]
            if kind == "question":
                number = frame["number"]
                room.arrivals[number].append(now)
                pending.add(asyncio.create_task(vote(number)))
            elif kind == "voted":
                results["ack"].append(now - voted_at[number])
                results["ack_at"].append(now)
            elif kind == "answer":
                room.answers[frame["number"]].append(now)
                if host and not frame["over"]:
                    pending.add(asyncio.create_task(start()))
            elif kind == "ended":
                results["ended"] += 1
                return
            elif kind == "error":
                results["errors"].append(frame["code"])


async def loop_lag(samples: list[float], stop: asyncio.Event) -> None:
    """How late this process's event loop wakes from a 10 ms sleep: the part of every figure
    that is the clients' own delay in reading a frame, not the server's."""
    while not stop.is_set():
        asked = time.monotonic()
        await asyncio.sleep(0.01)
        samples.append(time.monotonic() - asked - 0.01)


async def run_clients(port: int, origin: str, rooms: list[dict], args: argparse.Namespace) -> tuple[dict, list[Room]]:
    results: dict = {"expected": sum(len(r["sessions"]) for r in rooms), "connected": 0, "ended": 0, "ack": [], "ack_at": [], "errors": [], "lag": []}
    everyone = asyncio.Event()
    stop_lag = asyncio.Event()
    lag = asyncio.create_task(loop_lag(results["lag"], stop_lag))
    played = [Room(r["code"], len(r["sessions"])) for r in rooms]
    tasks = []
    order = [(room, session, i == 0) for room, info in zip(played, rooms) for i, session in enumerate(info["sessions"])]
    random.shuffle(order)  # players of all rooms arrive mixed, as they would
    for room, session, host in order:
        tasks.append(asyncio.create_task(member(port, origin, room, session, host, args, results, everyone)))
        await asyncio.sleep(1 / args.arrival_rate)
    done = await asyncio.gather(*tasks, return_exceptions=True)
    stop_lag.set()
    await lag
    results["failures"] = [repr(d) for d in done if isinstance(d, BaseException)][:3]
    return results, played


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, default=50)
    parser.add_argument("--players", type=int, default=20)
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=60, help="each question's clock")
    parser.add_argument("--start-window", type=float, default=5.0, help="hosts start their first question at random in this window")
    parser.add_argument("--vote-window", type=float, default=30.0,
                        help="each player votes at random in this window after the question (50 x 20 players over 30 s: 33 votes a second, as bench_rounds_ws)")
    parser.add_argument("--arrival-rate", type=float, default=100.0, help="new connections a second")
    parser.add_argument("--dump", type=Path, help="write every sample (acks with their moment, questions' starts and answers) to this JSON file")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"), help="PostgreSQL (a throwaway database is made beside it); default SQLite")
    args = parser.parse_args()
    if not shutil.which("redis-server"):
        sys.exit("redis-server is not installed (apt-get install redis-server)")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    workdir = Path(tempfile.mkdtemp(prefix="fm2-bench-rooms-"))
    redis_port, web_port = free_port(), free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    database_url, drop_database = fresh_database(args.database_url, f"fm2_bench_rooms_{os.getpid()}")
    env = {**os.environ, "FM2_DATA_DIR": str(workdir), "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0", "CELERY_TASK_ALWAYS_EAGER": "0",
           "HF_HUB_OFFLINE": "1", "FM2_BUILD_INDEXES_ON_IMPORT": "0", "LOG_LEVEL": "WARNING", "DEBUG": "0"}
    env.pop("DATABASE_URL", None)
    if database_url:
        env["DATABASE_URL"] = database_url
    server = worker = None
    try:
        wait_port(redis_port)
        manage = [sys.executable, "manage.py"]
        subprocess.run(manage + ["migrate", "--no-input", "-v0"], cwd=REPO, env=env, check=True)
        subprocess.run(manage + ["load_demo"], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
        spec = f"{args.rooms},{args.players},{args.questions},{args.seconds}"
        setup = subprocess.run(manage + ["shell", "-c", SETUP.replace("sys.argv[-1]", repr(spec))], cwd=REPO, env=env, check=True, capture_output=True, text=True)
        rooms = json.loads(setup.stdout.strip().splitlines()[-1])
        server = subprocess.Popen([sys.executable, "-m", "uvicorn", "foolgame.asgi:application", "--host", "127.0.0.1", "--port", str(web_port),
                                   "--log-level", "warning", *uvicorn_flags()], cwd=REPO, env=env)
        worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "foolgame", "worker", "--concurrency", "1", "--loglevel", "WARNING"],
                                  cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(web_port)
        processes = (("server", server), ("worker", worker), ("redis", redis))
        cpu_before = {name: tree_cpu_seconds(p.pid) for name, p in processes}
        client_before = resource.getrusage(resource.RUSAGE_SELF)
        machine_before = machine_jiffies()
        started = time.monotonic()
        results, played = asyncio.run(run_clients(web_port, f"http://127.0.0.1:{web_port}", rooms, args))
        wall = time.monotonic() - started
        client_after = resource.getrusage(resource.RUSAGE_SELF)
        machine_after = machine_jiffies()
        cpu = {name: round(100 * (tree_cpu_seconds(p.pid) - cpu_before[name]) / wall, 1) for name, p in processes}
        cpu["machine_busy"] = round(100 * (machine_after[0] - machine_before[0]) / max(1, machine_after[1] - machine_before[1]), 1)
        cpu["clients"] = round(100 * (client_after.ru_utime + client_after.ru_stime - client_before.ru_utime - client_before.ru_stime) / wall, 1)
        spread, delay, scoreboard, incomplete = [], [], [], 0
        for room in played:
            for number, arrivals in room.arrivals.items():
                if len(arrivals) < room.size or len(room.answers[number]) < room.size:
                    incomplete += 1
                spread.append(max(arrivals) - min(arrivals))
                delay += [a - room.started[number] for a in arrivals if number in room.started]
                if room.votes[number]:
                    last_vote = max(room.votes[number])
                    scoreboard += [a - last_vote for a in room.answers[number]]
        ms = lambda values, q: round(1000 * pct(values, q), 1)  # noqa: E731
        figure = {
            "rooms": args.rooms,
            "players": args.players,
            "sockets": results["connected"],
            "questions": args.questions,
            "database": "postgresql" if database_url else "sqlite",
            "room_questions_measured": len(spread),
            "incomplete_questions": incomplete,
            "rooms_ended": results["ended"] // max(1, args.players),
            "question_spread_ms_p50": ms(spread, 50),
            "question_spread_ms_p99": ms(spread, 99),
            "question_delay_ms_p50": ms(delay, 50),
            "question_delay_ms_p99": ms(delay, 99),
            "vote_ack_ms_p50": ms(results["ack"], 50),
            "vote_ack_ms_p99": ms(results["ack"], 99),
            "votes": len(results["ack"]),
            "vote_rate_per_s": round(args.rooms * args.players / args.vote_window, 1),
            "scoreboard_ms_p50": ms(scoreboard, 50),
            "scoreboard_ms_p99": ms(scoreboard, 99),
            "client_loop_lag_ms_p50": ms(results["lag"], 50),
            "client_loop_lag_ms_p99": ms(results["lag"], 99),
            "error_codes": sorted(set(results["errors"])),
            "server_rss_mib": round(rss_kib(server.pid) / 1024, 1),
            "cpu_percent": cpu,
            "cores": os.cpu_count(),
            "load_average": os.getloadavg(),
            "wall_s": round(wall, 1),
            "failures": results["failures"],
        }
        print(json.dumps(figure), flush=True)
        if args.dump:
            rooms_seen = [{"started": r.started, "arrivals": r.arrivals, "votes": r.votes, "answers": r.answers} for r in played]
            args.dump.write_text(json.dumps({"t0": started, "ack": results["ack"], "ack_at": results["ack_at"], "rooms": rooms_seen}))
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
    print("targets at 50 rooms of 20 players: question spread p99 <= 100 ms, vote ack p99 <= 100 ms, scoreboard p99 <= 200 ms after the last vote")


if __name__ == "__main__":
    main()
