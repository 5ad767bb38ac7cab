"""Benchmark: export 100k synthetic claims and 300k votes; target <= 60 s and <= 300 MB peak RSS.

Builds a throwaway database (SQLite in a temporary folder, or a PostgreSQL database made
beside --database-url and dropped after, without superuser rights: ``bench/harness.py``)
with bulk_create in one subprocess, then times ``manage.py export_dataset`` in another and
reads that process's own peak RSS and CPU time (``os.wait4``), so the figures are the
export's alone. The export uses no Redis (it reads the database and writes files), so the
bench takes no --redis-url.

Printed: the export's wall time, CPU seconds (user + system; on PostgreSQL also its
database backends' CPU, polled from /proc) and peak RSS, with the load
average before and after; recorded with --record (``harness.Record``). Exits non-zero, with
no figure, when the build or the export fails.

    python bench/bench_export.py [--claims 100000] [--votes 300000]
    python bench/bench_export.py --database-url postgres://fm2:fm2@127.0.0.1:5432/fm2_NAME
    python bench/bench_export.py --keep /tmp/export-100k   # build once, keep; the same
                                                             # command again re-runs the export only
    python bench/bench_export.py --keep /tmp/export-100k --drop-kept   # drop what --keep kept

Figures (100k claims, 300k votes; 2 cores shared with other sessions, load 3 to 4 on
25 November evening; the CPU seconds are the figure to compare, the wall time moves with
the load: 81 s before and 106 s after at load 7 to 9):

                        wall      CPU (+ database)   peak RSS
    before  sqlite      35.9 s    32.0 s              360 MB
            postgresql  44.3 s    28.5 s (+ 6.7 s)    350 MB
    after   sqlite      42.3 s    31.9 s              272 MB
            postgresql  47.7 s    29.0 s (+ 7.7 s)    263 MB
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import harness  # noqa: E402

TIME_TARGET_S = 60
RSS_TARGET_MB = 300

POPULATE = r"""
import os, random, sys
from datetime import timedelta
import django
os.environ["DJANGO_SETTINGS_MODULE"] = "foolgame.settings"
django.setup()
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone
from django.contrib.auth import get_user_model
from foolgame.claims.models import Claim, ClaimGold
from foolgame.pages.models import Category, Page, Sentence
from foolgame.voting.models import ClueReveal, Round, Vote

claims_n, votes_n = int(sys.argv[1]), int(sys.argv[2])
call_command("migrate", verbosity=0)
rng = random.Random(0)
words = [f"w{i}" for i in range(3000)] + "the a of in was by his her on for never only first city king war film".split()
def sentence(n):
    return " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."
User = get_user_model()
with transaction.atomic():
    users = User.objects.bulk_create([User(username=f"bench{i}", email=f"bench{i}@example.org") for i in range(2000)])
    category = Category.objects.create(name="History", slug="history")
    pages = Page.objects.bulk_create([Page(title=f"Bench page {i}", category=category, source="text") for i in range(claims_n // 10)], batch_size=5000)
    sentences = Sentence.objects.bulk_create(
        [Sentence(page=pages[i // 10], position=i % 10, section_header="Facts", text=sentence(20)) for i in range(claims_n)], batch_size=5000)
    claims = []
    for i in range(claims_n):
        page = pages[i // 10]
        s = sentences[i]
        release = "dev" if (i // 10) % 20 == 0 else ""
        claims.append(Claim(page=page, text=sentence(rng.randint(8, 20)), label="SUPPORTS" if i % 2 else "REFUTES",
                            author=users[i % len(users)], external_id=f"R{i:08d}" if release else None, release_split=release,
                            clues=[{"sentence_id": s.pk, "text": s.text, "section_header": "Facts"}]))
    claims = Claim.objects.bulk_create(claims, batch_size=5000)
    ClaimGold.objects.bulk_create([ClaimGold(claim=c, sentence=sentences[i], position=0) for i, c in enumerate(claims)], batch_size=5000)
    start = timezone.now() - timedelta(days=1)
    rounds = []
    for r in range(votes_n):
        pair = rng.randrange(claims_n // 2) * 2  # claims 2k (REFUTES) and 2k+1 (SUPPORTS) share a page
        rounds.append(Round(player=users[r % len(users)], left_claim=claims[pair + 1], right_claim=claims[pair], state="voted",
                            started_at=start, deadline=start + timedelta(seconds=180), ended_at=start + timedelta(seconds=60)))
    rounds = Round.objects.bulk_create(rounds, batch_size=5000)
    Vote.objects.bulk_create([Vote(round=r, false_claim_index=1, correct=bool(i % 5), points=60, remaining=60.0, created=start)
                              for i, r in enumerate(rounds)], batch_size=5000)
    ClueReveal.objects.bulk_create([ClueReveal(round=r, claim_index=i % 2, position=0, revealed_at=start)
                                    for i, r in enumerate(rounds) if i % 3 == 0], batch_size=5000)
from django.db import connection
if connection.vendor == "postgresql":
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
print(Claim.objects.count(), Vote.objects.count())
"""

KEPT = "populated.json"


def _kept_name(folder: Path) -> str:
    """The PostgreSQL database --keep FOLDER keeps (one per folder name)."""
    return "fm2_bench_export_keep_" + re.sub(r"[^a-z0-9]+", "_", folder.name.lower()).strip("_")[:30]


def _prepare(args: argparse.Namespace) -> tuple[harness.Services, object, bool]:
    """The services the export runs on, what to do after, and whether the data is there
    already (a --keep folder whose build matches these sizes and this database)."""
    if args.keep is None:
        data_dir = Path(tempfile.mkdtemp(prefix="fm2-bench-export-"))
        url, drop = harness.fresh_database(args.database_url, f"fm2_bench_export_{os.getpid()}")

        def cleanup() -> None:
            drop()
            shutil.rmtree(data_dir, ignore_errors=True)

        return harness.Services(data_dir, url, None), cleanup, False
    folder = args.keep.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {"claims": args.claims, "votes": args.votes, "database": "postgresql" if args.database_url else "sqlite"}
    marker = folder / KEPT
    if marker.exists():
        kept = json.loads(marker.read_text())
        if {k: kept.get(k) for k in wanted} == wanted:
            return harness.Services(folder, kept.get("database_url"), None), lambda: None, True
        sys.exit(f"{folder} holds a build of {kept}, not {wanted}: pass another folder, or --drop-kept first")
    url, _ = harness.fresh_database(args.database_url, _kept_name(folder))
    for stale in folder.glob("*.sqlite3*"):
        stale.unlink()
    return harness.Services(folder, url, None), lambda: None, False


class DatabaseCpu:
    """On PostgreSQL (on this machine), the CPU the export's database backends spend: their
    pids from ``pg_stat_activity`` and their CPU from /proc, polled while the export runs (a
    backend's last reading before it exits counts). The export's own CPU leaves that out."""

    def __init__(self, url: str | None) -> None:
        self.url, self.seen, self.stop = url, {}, threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True) if url else None

    def __enter__(self) -> "DatabaseCpu":
        if self.thread:
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread:
            self.thread.join()

    def _poll(self) -> None:
        import psycopg

        name = urlsplit(self.url).path.lstrip("/")
        with psycopg.connect(self.url, autocommit=True) as connection:
            while not self.stop.wait(0.2):
                pids = [row[0] for row in connection.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [name])]
                for pid in pids:
                    try:
                        self.seen[pid] = harness.cpu_seconds(pid)
                    except OSError:
                        continue

    @property
    def seconds(self) -> float | None:
        return sum(self.seen.values()) if self.url else None


def _drop_kept(args: argparse.Namespace) -> None:
    folder = args.keep.resolve()
    if args.database_url:
        _, drop = harness.fresh_database(args.database_url, _kept_name(folder))  # makes it afresh, then:
        drop()
    shutil.rmtree(folder, ignore_errors=True)
    print(f"dropped {folder}" + (f" and database {_kept_name(folder)}" if args.database_url else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", type=int, default=100_000)
    parser.add_argument("--votes", type=int, default=300_000)
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="build into DIR (and, on PostgreSQL, a database named after it) and keep them; run again with the "
                             "same --keep to time the export again without building")
    parser.add_argument("--drop-kept", action="store_true", help="with --keep: drop the kept folder and database, and stop")
    parser.add_argument("--profile", type=Path, metavar="FILE",
                        help="run the export under py-spy (GIL samples, raw format) into FILE, and print no figure (they would be py-spy's)")
    harness.add_service_args(parser, redis=False)
    args = parser.parse_args()
    if args.drop_kept:
        if args.keep is None:
            sys.exit("--drop-kept needs --keep DIR")
        _drop_kept(args)
        return
    record = harness.Record("bench_export", args.record)
    services, cleanup, built = _prepare(args)
    try:
        env = services.env()
        if not built:
            began = time.perf_counter()
            made = subprocess.run([sys.executable, "-c", POPULATE, str(args.claims), str(args.votes)], cwd=REPO, env=env,
                                  capture_output=True, text=True)
            if made.returncode != 0:
                sys.exit(f"building the data failed:\n{made.stderr[-3000:]}")
            counts = made.stdout.split()
            print(f"{services.database}: synthetic data {counts[0]} claims, {counts[1]} votes in {time.perf_counter() - began:.1f} s")
            if args.keep is not None:
                (services.data_dir / KEPT).write_text(json.dumps(
                    {"claims": args.claims, "votes": args.votes, "database": services.database, "database_url": services.database_url}))
        else:
            print(f"{services.database}: reusing the build in {services.data_dir}")
        out = services.data_dir / "out"
        shutil.rmtree(out, ignore_errors=True)
        command = [sys.executable, "manage.py", "export_dataset", str(out), "-v", "0"]
        if args.profile:
            spy = Path(sys.executable).with_name("py-spy")
            command = [str(spy), "record", "--gil", "-r", "100", "-f", "raw", "-o", str(args.profile.resolve()), "--", *command]
        load_before = os.getloadavg()
        began = time.perf_counter()
        with (services.data_dir / "export.out").open("w") as stdout, (services.data_dir / "export.err").open("w") as stderr, \
                DatabaseCpu(services.database_url) as database_cpu:
            child = subprocess.Popen(command, cwd=REPO, env=env, stdout=stdout, stderr=stderr)
            _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - began
        load_after = os.getloadavg()
        if status != 0:
            error = (services.data_dir / "export.err").read_text()[-3000:]
            sys.exit(f"export failed (wait status {status}); no figure is printed from a failed run:\n{error}")
        if args.profile:
            # wait4 measured py-spy, not the export: no figure from a profiled run.
            print(f"profile written to {args.profile} (raw py-spy samples holding the GIL); no figure is printed from a profiled run")
            return
        cpu = usage.ru_utime + usage.ru_stime
        peak_mb = usage.ru_maxrss / 1024  # kilobytes on Linux
        size_mb = sum(p.stat().st_size for p in out.iterdir()) / 1e6
        print((services.data_dir / "export.out").read_text().strip())
        ok_time, ok_rss = seconds <= TIME_TARGET_S, peak_mb <= RSS_TARGET_MB
        print(f"export ({services.database}, {args.claims} claims, {args.votes} votes): {seconds:.1f} s, CPU {cpu:.1f} s "
              f"(user {usage.ru_utime:.1f}, system {usage.ru_stime:.1f})"
              + (f" + database {database_cpu.seconds:.1f} s" if database_cpu.seconds is not None else "")
              + f", peak RSS {peak_mb:.0f} MB, {size_mb:.0f} MB written; "
              f"load {load_before[0]:.2f} before, {load_after[0]:.2f} after (2-core machine)\n"
              f"targets: <= {TIME_TARGET_S} s {'OK' if ok_time else 'OVER'}, <= {RSS_TARGET_MB} MB {'OK' if ok_rss else 'OVER'}")
        case = f"{services.database} {args.claims} claims {args.votes} votes"
        record.add(case, "time", round(seconds, 1), "s", target=f"<= {TIME_TARGET_S} s", ok=ok_time)
        record.add(case, "peak RSS", round(peak_mb), "MB", target=f"<= {RSS_TARGET_MB} MB", ok=ok_rss)
        record.add(case, "CPU", round(cpu, 1), "s")
        if database_cpu.seconds is not None:
            record.add(case, "database CPU", round(database_cpu.seconds, 1), "s")
        if args.keep is not None:
            print("kept: run the same command again to time the export only; --drop-kept to drop it")
    finally:
        cleanup()  # type: ignore[operator]


if __name__ == "__main__":
    main()
