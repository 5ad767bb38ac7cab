"""Capacity for sizing (docs/operations.md, "Sizing"): the socket load of solo rounds against
one web host and against two, behind the balancer of deploy/cluster (network namespaces on one
machine, root), every figure read through the balancer's address as players reach it.

--sockets players hold a socket each on a started round; turns to vote come as a Poisson stream
at the offered rate, each to a socket picked at random among those waiting, which votes, then
opens the next round's socket and starts it, as a player plays round after round: so each vote also
carries a connect and a start. (A player may hold 3 open rounds: the rounds are dealt 3 to a
player, to as many players as the steps need.) The offered vote rate steps up (--rates, each for --seconds); a step counts
while its vote-ack p99 (vote frame sent to result frame received) stays at or under --p99-ms.
Printed, per case (one web host: web2 stopped; two web hosts):
- sockets held (the players' sockets open at once);
- votes/s: the highest rate achieved with vote-ack p99 <= --p99-ms, and the step's p50/p99;
- CPU per vote per host: each web host's CPU seconds over the step / the votes it served
  (a host's share of the votes is its share of the sockets, as the balancer spread them);
- what was busy: each process's share of one core during the top step (web hosts, HAProxy,
  PostgreSQL, Redis, the worker host, the clients: this process) and the whole machine's.

    sudo .venv/bin/python bench/bench_capacity.py                     # starts and stops a cluster
    sudo .venv/bin/python bench/bench_capacity.py --sockets 200 --rates 2,5,10,20,40 --seconds 8
    sudo .venv/bin/python bench/bench_capacity.py --cluster-dir /var/tmp/fm2-cluster   # one already up
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import REPO, Record, cpu_seconds, machine_jiffies, pct, refuse_errors, tree_cpu_seconds  # noqa: E402

BALANCER = "198.18.0.2"
CLUSTER = REPO / "deploy" / "cluster"

# Run on the worker host (an operator's shell): PLAYERS players with a session each and ROUNDS
# (at most 3: a player's open rounds) solo rounds dealt to each, printed as JSON.
SETUP = r"""
import json
from importlib import import_module
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from foolgame.voting.services import round_create
SessionStore = import_module(settings.SESSION_ENGINE).SessionStore
out = []
for i in range(PLAYERS):
    user = get_user_model().objects.create_user(f"{TAG}p{i}")
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    rounds = []
    for _ in range(ROUNDS):
        round_ = round_create(player=user)
        rounds.append([round_.pk, round_.false_index])
    out.append({"session": session.session_key, "rounds": rounds})
print(json.dumps(out))
"""


def cluster(state: Path, *args: str, timeout: float = 900) -> None:
    done = subprocess.run([str(CLUSTER), *args], env={**os.environ, "FM2_CLUSTER_DIR": str(state)}, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        sys.exit(f"deploy/cluster {' '.join(args)} failed:\n{done.stdout}{done.stderr}")


def manage(state: Path, code: str) -> str:
    work_env = [line for line in (state / "fm2-work.env").read_text().splitlines() if line]
    done = subprocess.run(["ip", "netns", "exec", "fm2-work", "env", "-i", *work_env, str(REPO / ".venv" / "bin" / "python"), "manage.py",
                           "shell", "-c", code], cwd=REPO, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        sys.exit(f"setup failed:\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1]


def pid_of(state: Path, role: str) -> int | None:
    try:
        return int((state / f"{role}.pid").read_text())
    except (OSError, ValueError):
        return None


def cpu_of(state: Path) -> dict[str, float]:
    """CPU seconds so far of each role's process tree, and of this process (the clients)."""
    figures = {}
    for role in ("web1", "web2", "haproxy", "postgres", "redis", "worker"):
        pid = pid_of(state, role)
        if pid is not None:
            figures[role] = tree_cpu_seconds(pid)
    figures["clients"] = cpu_seconds(os.getpid())
    return figures


class Load:
    """``sockets`` sockets held, each voting at a random moment and moving on to the next
    round dealt; ``rate`` is the votes a second offered across all of them."""

    def __init__(self, players: list[dict], sockets: int) -> None:
        self.rounds: asyncio.Queue = asyncio.Queue()
        for info in players:
            for round_id, false in info["rounds"]:
                self.rounds.put_nowait((info["session"], round_id, false))
        self.sockets = sockets
        self.rate = 1.0
        self.waiting: list[asyncio.Future] = []  # sockets on a started round, waiting for their turn to vote
        self.acks: list[float] = []
        self.errors: Counter = Counter()
        self.held = 0
        self.peak_held = 0
        self.stopping = False
        self.exhausted = 0

    async def votes(self) -> None:
        """Hands out the turns to vote: a Poisson stream at ``rate`` a second, each turn to a
        socket chosen at random among those waiting (so a new rate applies at once)."""
        while not self.stopping:
            await asyncio.sleep(random.expovariate(self.rate))
            if self.waiting:
                turn = self.waiting.pop(random.randrange(len(self.waiting)))
                if not turn.done():
                    turn.set_result(None)

    async def player(self) -> None:
        from websockets.asyncio.client import connect

        while not self.stopping:
            if self.rounds.empty():
                self.exhausted += 1
                return
            session, round_id, false = self.rounds.get_nowait()
            headers = {"Cookie": f"sessionid={session}", "Origin": f"http://{BALANCER}"}
            try:
                async with connect(f"ws://{BALANCER}/ws/rounds/{round_id}/", additional_headers=headers, open_timeout=60, max_queue=None) as ws:
                    await ws.send(json.dumps({"type": "start"}))
                    while json.loads(await asyncio.wait_for(ws.recv(), 60))["type"] != "state":
                        pass
                    self.held += 1
                    self.peak_held = max(self.peak_held, self.held)
                    try:
                        turn = asyncio.get_running_loop().create_future()
                        self.waiting.append(turn)
                        await turn
                        if self.stopping:
                            return
                        sent = time.monotonic()
                        await ws.send(json.dumps({"type": "vote", "false_claim": false}))
                        while True:
                            frame = json.loads(await asyncio.wait_for(ws.recv(), 60))
                            if frame["type"] == "result":
                                self.acks.append(time.monotonic() - sent)
                                break
                            if frame["type"] == "error":
                                self.errors[frame.get("code", "?")] += 1
                                break
                    finally:
                        self.held -= 1
            except Exception as error:  # noqa: BLE001 - every failure is counted and refused below
                self.errors[f"failed connection ({type(error).__name__})"] += 1


async def run_case(state: Path, players: list[dict], sockets: int, rates: list[float], seconds: float, p99_ms: float, case: str,
                   record: Record) -> dict:
    load = Load(players, sockets)
    load.rate = rates[0]
    tasks = []
    for _ in range(sockets):  # players arrive 50 a second
        tasks.append(asyncio.create_task(load.player()))
        await asyncio.sleep(0.02)
    while load.held < sockets * 0.95 and not load.errors:
        await asyncio.sleep(0.2)
    tasks.append(asyncio.create_task(load.votes()))
    best: dict | None = None
    steps = []
    for rate in rates:
        load.rate = rate
        await asyncio.sleep(2)  # the new rate settles
        first = len(load.acks)
        cpu_before, busy_before, wall_before = cpu_of(state), machine_jiffies(), time.monotonic()
        await asyncio.sleep(seconds)
        cpu_after, busy_after, wall = cpu_of(state), machine_jiffies(), time.monotonic() - wall_before
        acks = load.acks[first:]
        if load.exhausted:
            print(f"  {case}: the dealt rounds ran out at {rate:g}/s")
            break
        step = {"rate": rate, "votes_s": len(acks) / wall, "p50_ms": pct(acks, 50) * 1000, "p99_ms": pct(acks, 99) * 1000,
                "held": load.held, "cpu": {role: (cpu_after[role] - cpu_before.get(role, 0)) / wall for role in cpu_after},
                "machine": (busy_after[0] - busy_before[0]) / max(1, busy_after[1] - busy_before[1]) * (os.cpu_count() or 1),
                "votes": len(acks)}
        steps.append(step)
        cpu = ", ".join(f"{role} {share * 100:.0f}%" for role, share in step["cpu"].items())
        print(f"  {case}: offered {rate:g}/s -> {step['votes_s']:.1f} votes/s, ack p50 {step['p50_ms']:.0f} ms p99 {step['p99_ms']:.0f} ms, "
              f"{step['held']} sockets; CPU of one core: {cpu}; machine {step['machine'] * 100:.0f}% of {os.cpu_count()} cores")
        if step["p99_ms"] <= p99_ms:
            best = step
        else:
            break
    load.stopping = True
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    refuse_errors(load.errors, "socket answers")
    if best is None:
        print(f"  {case}: no step kept vote-ack p99 <= {p99_ms:g} ms")
        return {}
    hosts = [role for role in ("web1", "web2") if best["cpu"].get(role)]
    per_vote = {role: best["cpu"][role] / best["votes_s"] * 1000 for role in hosts}  # CPU ms per vote served by all hosts
    print(f"{case}: sockets held {load.peak_held}; {best['votes_s']:.1f} votes/s at vote-ack p99 {best['p99_ms']:.0f} ms "
          f"(<= {p99_ms:g} ms); CPU per vote: " + ", ".join(f"{role} {ms:.1f} ms" for role, ms in per_vote.items())
          + f" (all web hosts {sum(per_vote.values()):.1f} ms)")
    record.add(case, "sockets held", load.peak_held, "sockets")
    record.add(case, "votes/s at vote-ack p99 <= 100 ms", round(best["votes_s"], 1), "votes/s", target=f"p99 <= {p99_ms:g} ms")
    record.add(case, "vote-ack p99", round(best["p99_ms"], 1), "ms", target=f"<= {p99_ms:g} ms", ok=best["p99_ms"] <= p99_ms)
    for role, ms in per_vote.items():
        record.add(case, f"CPU per vote ({role})", round(ms, 2), "ms")
    return {"held": load.peak_held, "best": best, "per_vote": per_vote, "steps": steps}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sockets", type=int, default=200, help="sockets held at once")
    parser.add_argument("--rates", default="2,5,10,20,40", help="offered votes a second, in steps")
    parser.add_argument("--seconds", type=float, default=8, help="each step's measured seconds")
    parser.add_argument("--p99-ms", type=float, default=100)
    parser.add_argument("--cluster-dir", type=Path, default=None, help="a cluster already up (deploy/cluster up); default: start one and stop it")
    parser.add_argument("--record", type=Path, default=os.environ.get("FM2_BENCH_RECORD") or None)
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench_capacity needs root: it runs deploy/cluster (network namespaces)")
    rates = [float(r) for r in args.rates.split(",")]
    record = Record("bench_capacity", args.record)
    own = args.cluster_dir is None
    state = Path(tempfile.mkdtemp(prefix="fm2-capacity-", dir="/var/tmp")) if own else args.cluster_dir
    state.chmod(0o755)
    try:
        if own:
            started = time.monotonic()
            cluster(state, "up")
            print(f"cluster up in {time.monotonic() - started:.0f} s ({state})")
        results = {}
        for case, hosts in (("one web host", ["web1"]), ("two web hosts", ["web1", "web2"])):
            if hosts == ["web1"]:
                cluster(state, "stop", "web2")
            else:
                cluster(state, "start", "web2")
                deadline = time.monotonic() + 180
                while "fm2_web/web2 is UP" not in (state / "haproxy.log").read_text(errors="replace").rsplit("fm2_web/web2 is DOWN", 1)[-1]:
                    if time.monotonic() > deadline:
                        sys.exit("web2 did not come back into the balancer")
                    time.sleep(0.5)
            tag = f"cap{random.randrange(16 ** 6):06x}"
            started = time.monotonic()
            rounds = int(args.sockets * 1.2 + sum(rate * (args.seconds + 3) for rate in rates))  # every step's votes, and the sockets' last rounds
            count = -(-rounds // 3)
            players = json.loads(manage(state, f"TAG = {tag!r}; PLAYERS = {count}; ROUNDS = 3\n" + SETUP))
            print(f"{case}: {count} players x 3 rounds dealt in {time.monotonic() - started:.0f} s")
            results[case] = asyncio.run(run_case(state, players, args.sockets, rates, args.seconds, args.p99_ms, case, record))
        one, two = results.get("one web host"), results.get("two web hosts")
        if one and two:
            print(f"two hosts / one host: {two['best']['votes_s'] / one['best']['votes_s']:.2f}x the votes/s at p99 <= {args.p99_ms:g} ms")
    finally:
        if own:
            cluster(state, "down")
            subprocess.run(["rm", "-rf", str(state)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
