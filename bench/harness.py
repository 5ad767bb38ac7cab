"""What every benchmark under ``bench/`` shares: the services it runs on, the machine it ran
on, the process CPU it measured, and the record ``make bench`` turns into the docs' table.

- ``add_service_args``: ``--database-url`` (PostgreSQL; a throwaway database is made beside
  it, and dropped after, by a role with CREATEDB only: no superuser, no ``pg_signal_backend``)
  and ``--redis-url`` (a Redis to use; without one the bench starts its own redis-server on a
  free loopback port and stops it after). Without ``--database-url`` the bench runs on SQLite
  in a temporary folder.
- ``services``: a context manager that yields the URLs the bench's processes get.
- ``cpu_seconds`` / ``tree_cpu_seconds``: a process's own CPU time from ``/proc``; the
  figure that moves little between machines (a latency moves with the machine's load).
- ``Record``: one line of JSON per figure, appended to ``--record PATH`` (or the file named
  by ``FM2_BENCH_RECORD``) with the machine, its load before the run, its CPU calibration
  (``calibration_ms``: a fixed pure-Python loop's time) and the commit; ``bench/table.py``
  writes the docs' table from those lines.
- ``refuse_errors``: a latency made of error answers is not a latency; a bench counts its
  errors, prints them and exits non-zero on any.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

REPO = Path(__file__).resolve().parents[1]

# --- arguments and services ------------------------------------------------------------


def add_service_args(parser: argparse.ArgumentParser, *, database: bool = True, redis: bool = True) -> None:
    """The options every bench that touches a database or Redis takes, and ``--record``."""
    if database:
        parser.add_argument("--database-url", default=None,
                            help="PostgreSQL to run on: a throwaway database is made beside the one named (its role needs CREATEDB) "
                                 "and dropped after; default SQLite in a temporary folder")
    if redis:
        parser.add_argument("--redis-url", default=None,
                            help="a Redis to use (the bench writes under a key prefix of its own and deletes it after); "
                                 "default: start a redis-server of its own on a free port")
    parser.add_argument("--record", type=Path, default=os.environ.get("FM2_BENCH_RECORD") or None,
                        help="append each figure as a line of JSON to this file (make bench's table reads it)")


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


def fresh_database(url: str | None, name: str) -> tuple[str | None, Any]:
    """A throwaway PostgreSQL database beside the one ``url`` names (its role needs CREATEDB);
    returns the new URL and a function that drops it. None: SQLite (the caller's folder).

    The drop needs no superuser and no ``pg_signal_backend``: the database's own sessions are
    the bench role's, which a role may always end itself (``pg_terminate_backend`` on its own
    backends), then ``DROP DATABASE`` runs without ``WITH (FORCE)``; it is tried again for a
    few seconds while a server that was just stopped lets go of its connections."""
    if not url:
        return None, lambda: None
    import psycopg

    parts = urlsplit(url)
    admin = urlunsplit(parts._replace(path="/postgres"))

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as connection:
            for attempt in range(30):
                connection.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid() "
                    "AND usename = current_user", [name])
                try:
                    connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
                    return
                except psycopg.errors.ObjectInUse:
                    time.sleep(0.5)
            print(f"could not drop the bench database {name}: still in use", file=sys.stderr)

    drop()  # a run that crashed before its drop left it behind
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}")), drop


@dataclass
class Services:
    """The URLs a bench's processes get, and its temporary folder (FM2_DATA_DIR)."""

    data_dir: Path
    database_url: str | None  # None: SQLite in data_dir
    redis_url: str | None
    redis_pid: int | None = None  # the redis-server this bench started, if it did
    prefix: str = ""

    @property
    def database(self) -> str:
        return "postgresql" if self.database_url else "sqlite"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment for the game's processes (server, worker, manage.py): the bench's
        database and Redis, its own key prefixes, no DEBUG (no SQL kept per query)."""
        env = {**os.environ, "FM2_DATA_DIR": str(self.data_dir), "HF_HUB_OFFLINE": "1", "FM2_BUILD_INDEXES_ON_IMPORT": "0",
               "LOG_LEVEL": "WARNING", "DEBUG": "0", "PYTHONPATH": str(REPO)}
        for name in ("DATABASE_URL", "REDIS_URL"):
            env.pop(name, None)
        if self.database_url:
            env["DATABASE_URL"] = self.database_url
        if self.redis_url:
            env["REDIS_URL"] = self.redis_url
            env["CHANNEL_PREFIX"] = self.prefix
            env["FM2_CACHE_KEY_PREFIX"] = self.prefix
            env["FM2_BROKER_KEY_PREFIX"] = f"{self.prefix}:"
        return {**env, **extra}


@contextlib.contextmanager
def services(args: argparse.Namespace, name: str, *, redis: bool = True) -> Iterator[Services]:
    """A temporary folder, a throwaway PostgreSQL database when ``--database-url`` was given,
    and a Redis: ``--redis-url``'s, whose keys under this run's prefix are deleted after, or
    a redis-server started here and stopped after. Everything is cleaned up on the way out,
    the database dropped without superuser rights."""
    data_dir = Path(tempfile.mkdtemp(prefix=f"fm2-bench-{name}-"))
    prefix = f"fm2bench{os.getpid()}"
    server = None
    database_url, drop = fresh_database(getattr(args, "database_url", None), f"fm2_bench_{name}_{os.getpid()}")
    try:
        redis_url = getattr(args, "redis_url", None) if redis else None
        if redis and not redis_url:
            if not shutil.which("redis-server"):
                sys.exit("redis-server is not installed (apt-get install redis-server), or pass --redis-url")
            port = free_port()
            server = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
            wait_port(port)
            redis_url = f"redis://127.0.0.1:{port}/0"
        yield Services(data_dir, database_url, redis_url, server.pid if server else None, prefix)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=15)
        elif redis and getattr(args, "redis_url", None):
            _delete_prefixed(args.redis_url, prefix)
        drop()
        shutil.rmtree(data_dir, ignore_errors=True)


def _delete_prefixed(url: str, prefix: str) -> None:
    """Delete this run's keys from a Redis the bench did not start (and nothing else)."""
    try:
        import redis as redis_py
    except ImportError:
        return
    client = redis_py.Redis.from_url(url)
    batch: list[bytes] = []
    for key in client.scan_iter(match=f"*{prefix}*", count=1000):
        batch.append(key)
        if len(batch) >= 1000:
            client.delete(*batch)
            batch.clear()
    if batch:
        client.delete(*batch)


def stop(*processes: subprocess.Popen | None, timeout: float = 15) -> None:
    """Terminate each process (None and finished ones are skipped) in order, killing one that
    is still there after ``timeout`` seconds."""
    for process in processes:
        if process is None or process.poll() is not None:
            continue
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --- what a process cost -----------------------------------------------------------------


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


def ratio(value: float, floor: float) -> float | None:
    return round(value / floor, 2) if floor and floor > 0 and value == value else None


# --- the machine and the record -------------------------------------------------------------


# How many integer additions the calibration loop makes: about 70 ms a pass on this machine
# on a good day, three passes.
CALIBRATION_ADDITIONS = 1_000_000


def _calibration_loop(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


@functools.cache
def calibration_ms() -> float:
    """The best of three passes of a fixed pure-Python loop, in ms of wall time: how fast this
    machine ran Python when the run started. The load average says how many others wanted the
    CPU; this says what a core gave (this machine has measured 3x slower on some days at the
    same load), so figures from runs whose calibration differs are not comparable. Wall time,
    not CPU time: a core the host gave to another guest is time the bench lost too. Measured
    once per process (``calibration_ms.cache_clear()`` measures again)."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        _calibration_loop(CALIBRATION_ADDITIONS)
        best = min(best, time.perf_counter() - started)
    return round(best * 1000, 1)


def machine() -> dict[str, Any]:
    """Cores, CPU model, load average now, the commit (``+`` when the tree has changes), and
    the CPU calibration (``calibration_ms``, measured once per process)."""
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    commit = ""
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        commit += "+" if dirty else ""
    return {"cores": os.cpu_count(), "cpu": model, "load": [round(x, 2) for x in os.getloadavg()], "commit": commit,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "calibration_ms": calibration_ms()}


@dataclass
class Record:
    """The figures of one bench run, each a line of JSON in ``path`` (when given):
    ``{"bench", "case", "figure", "value", "unit", "floor", "ratio", "target", "ok", "machine"}``.
    ``target`` is text (``"<= 2x floor"``, ``"<= 100 ms"``); ``ok`` is None when there is none.
    A figure measured beside more than one floor has ``floors`` (name -> the floor's value)
    and ``ratios`` (name -> value / that floor) too; ``floor`` and ``ratio`` are the floor its
    target is judged against."""

    bench: str
    path: Path | None
    machine: dict[str, Any] = field(default_factory=machine)  # read when the run starts: its load is the load before

    def add(self, case: str, figure: str, value: float | None, unit: str, *, floor: float | None = None,
            floors: Mapping[str, float | None] | None = None, target: str | None = None, ok: bool | None = None) -> None:
        line = {"bench": self.bench, "case": case, "figure": figure, "value": value, "unit": unit, "floor": floor,
                "ratio": ratio(value, floor) if value is not None and floor is not None else None, "target": target, "ok": ok,
                "machine": self.machine}
        if floors and len(floors) > 1:
            line["floors"] = dict(floors)
            line["ratios"] = {name: ratio(value, base) if value is not None and base is not None else None for name, base in floors.items()}
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as out:
                out.write(json.dumps(line) + "\n")


def refuse_errors(errors: Mapping[str, int] | Iterable[str], what: str = "answers") -> None:
    """Print the errors a run met and exit non-zero on any: its latencies would be theirs."""
    counted = Counter(errors) if not isinstance(errors, Mapping) else Counter(dict(errors))
    total = sum(counted.values())
    if total:
        listed = ", ".join(f"{code} x{n}" for code, n in counted.most_common(8))
        sys.exit(f"refused: {total} error {what} ({listed}); no latency is printed from a run with errors")
