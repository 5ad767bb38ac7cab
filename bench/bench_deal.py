"""Benchmark: how long dealing a round (``round_create``) takes as the corpus and history grow.

For each size N, a throwaway database (SQLite in a temporary folder, or a PostgreSQL
database made beside --database-url and dropped after) gets N claims on N/10 pages in 8
categories (labels alternate, so every page has both; each claim has its quality row, 1%
out of play), 2,000 players, and 3 x N voted rounds with their votes and dealt rows,
written with bulk_create. Then every rating is refitted (``ratings_refit``, Rasch, as
``refit_ratings`` does; its time is printed) and ``round_create`` is timed for --deals fresh
players (no history), --deals players with history (about 3 x N x 2 / 2,000 claims dealt
each) on the least-voted deal, and --deals other players with history on the level deal
(``FM2_DEAL_LEVEL_SHARE`` 1: the claims nearest their rating).
Printed per size and group: p50, p99 and max in ms (200 deals a group by default, so the
p99 is the 198th of 200, not the max; five untimed deals first warm the process), the CPU the bench process spent per deal
(``time.process_time`` around the timed deals) and, on PostgreSQL, the CPU its
database backend spent per deal (read from /proc: the server runs on this machine), and for every size after the first the ratio of its p99 to the first
size's, per group, against the target p99 <= 1.5x the 1k figure. Recorded with --record
(``harness.Record``). The deal uses no Redis (round_create reads and writes the database
only), so the bench takes no --redis-url. A size whose run fails prints no figure and the
bench exits non-zero.

    python bench/bench_deal.py                       # SQLite, 1k, 20k and 100k claims
    python bench/bench_deal.py --sizes 1000,20000 --deals 50 --record out.jsonl
    python bench/bench_deal.py --database-url postgres://fm2:fm2@127.0.0.1:5433/fm2

Each size runs in its own process (settings are read once per process).

Figures on the 2-core bench machine (ms, 40 deals a group unless said; p50 / p99):

    before (aggregate over the pool; no quality rows yet in the bench; the 100k runs shared
    the machine with another bench)
                        fresh             history
    sqlite      1k      11.1 / 17.8       11.1 / 13.8
    sqlite     20k     280   / 451       292   / 481
    sqlite    100k    4381   / 8140     2776   / 4828
    postgresql  1k      13.4 / 17.0       13.0 / 26.2
    postgresql 20k     165   / 342       171   / 346
    postgresql 100k   2227   / 5034     1932   / 4788

    after (vote counter, bounded window)
    sqlite      1k       6.3 / 8.6         6.2 / 13.1
    sqlite     20k       5.7 / 8.1         6.0 / 15.6
    sqlite    100k       6.3 / 17.2        6.2 / 15.5    (100 deals: 6.5 / 16.0, 6.4 / 7.4)
    postgresql  1k      13.5 / 17.5       14.0 / 15.8
    postgresql 20k      13.9 / 21.0       13.2 / 14.8
    postgresql 100k     13.0 / 43.1       13.5 / 16.0    (100 deals: 12.4 / 15.9, 12.7 / 14.4)

    with ratings (a Rasch refit first; the level deal for rated veterans; the deal's key-share
    locks; 100 deals a group, quiet machine, 24 November)
                        fresh             history           level          refit
    sqlite      1k       7.9 / 10.2        7.9 / 13.8        7.9 / 8.8      0.1 s
    sqlite     20k       7.1 / 10.4        7.5 / 14.1        6.9 / 8.5      1.0 s
    sqlite    100k       7.2 / 14.8        7.2 / 8.4         7.0 / 15.9     4.5 s
    postgresql  1k      15.6 / 20.7       15.5 / 19.6       15.7 / 21.2     0.1 s
    postgresql 20k      15.3 / 70.8       15.7 / 20.4       14.3 / 16.7     1.4 s  (40 deals)
    postgresql 100k     14.3 / 19.5       14.8 / 18.5       16.8 / 19.1     7.4 s

    on bench/harness.py (200 deals a group after 5 untimed; CPU ms a deal: the bench
    process, + the PostgreSQL backend's; a loaded machine, 25 November: load 5 to 10 on
    2 cores, so the latencies are mostly the load's, the CPU is the comparable figure)
                        fresh                   history                 level
    postgresql  1k      63.8 / 152.6  12.6+6.9  53.6 / 130.9  11.3+6.2  43.1 / 143.4  11.1+6.2
    postgresql 20k      54.7 / 152.0   9.8+7.8  29.0 /  57.9   9.1+7.8  24.2 /  92.7   8.5+7.6
    postgresql 100k     20.6 /  29.7   7.9+5.4  21.2 /  34.3   8.3+5.8  24.2 /  45.4   8.0+6.0
      100k p99 / 1k p99   0.19x                   0.26x                   0.32x   (target <= 1.5x)
    sqlite      1k       9.8 /  53.5   7.8      15.4 /  62.3   7.9      33.2 / 188.7   9.4
    sqlite    100k      56.8 / 255.7  10.1      54.5 / 305.1  11.1      52.6 /  86.4  10.4
      100k p99 / 1k p99   4.78x                   4.90x                   0.46x   (load 5 at 1k, 6.5-10.6 at 100k)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import harness  # noqa: E402

RUN = r"""
import json, os, random, statistics, sys, time
from datetime import timedelta
import django
os.environ["DJANGO_SETTINGS_MODULE"] = "foolgame.settings"
django.setup()
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone
from django.contrib.auth import get_user_model
from foolgame.claims.models import Claim
from foolgame.moderation.models import ClaimQuality
from foolgame.pages.models import Category, Page
from foolgame.voting.models import Round, SeenClaim, Vote
from foolgame.voting import services

claims_n, deals = int(sys.argv[1]), int(sys.argv[2])
call_command("migrate", verbosity=0)
rng = random.Random(0)
User = get_user_model()
began = time.perf_counter()
with transaction.atomic():
    users = User.objects.bulk_create([User(username=f"bench{i}") for i in range(2000)], batch_size=5000)
    categories = Category.objects.bulk_create(
        [Category(name=n, slug=n.lower().replace(" ", "-")) for n in
         ["History", "Popular Culture", "Sports", "Literature", "Music", "Geography", "Science", "Technology"]])
    pages = Page.objects.bulk_create(
        [Page(title=f"Bench page {i}", category=categories[i % 8], source="text") for i in range(claims_n // 10)], batch_size=5000)
    claims = Claim.objects.bulk_create(
        [Claim(page=pages[i // 10], text=f"Bench claim {i}", label="SUPPORTS" if i % 2 else "REFUTES", author=users[i % 2000])
         for i in range(claims_n)], batch_size=5000)
    start = timezone.now() - timedelta(days=1)
    seen, pairs = set(), []
    while len(pairs) < 3 * claims_n:
        player = users[len(pairs) % 2000]
        page = rng.randrange(claims_n // 10)
        a, b = page * 10 + 2 * rng.randrange(5), page * 10 + 2 * rng.randrange(5) + 1
        if (player.pk, a) in seen or (player.pk, b) in seen or claims[a].author_id == player.pk or claims[b].author_id == player.pk:
            continue
        seen.update({(player.pk, a), (player.pk, b)})
        pairs.append((player, claims[a], claims[b]))
    rounds = Round.objects.bulk_create(
        [Round(player=p, left_claim=f, right_claim=t, state="voted", false_claim_index=0, started_at=start,
               deadline=start + timedelta(seconds=180), ended_at=start + timedelta(seconds=60)) for p, f, t in pairs], batch_size=5000)
    Vote.objects.bulk_create([Vote(round=r, false_claim_index=0, correct=bool(i % 5), points=60, remaining=60.0, created=start)
                              for i, r in enumerate(rounds)], batch_size=5000)
    SeenClaim.objects.bulk_create([SeenClaim(player_id=r.player_id, claim_id=c, round=r)
                                   for r in rounds for c in (r.left_claim_id, r.right_claim_id)], batch_size=5000)
    # Every claim has its quality row, as after the hourly refresh; 1% are out of play.
    ClaimQuality.objects.bulk_create([ClaimQuality(claim=c, score=0.8, interval_low=0.5, interval_high=0.9, prior_a=4, prior_b=1,
                                                   hidden_until_review=i % 100 == 7, out_of_play=i % 100 == 7)
                                      for i, c in enumerate(claims)], batch_size=5000)
# Counters kept on the claim rows (issue 14) are filled as the migration fills them.
try:
    from foolgame.voting.counters import claim_counters_backfill
except ImportError:
    pass
else:
    claim_counters_backfill()
built = time.perf_counter() - began
# Ratings (issue 14): a Rasch refit over every vote, as the refit_ratings command runs it.
refit_s = None
try:
    from foolgame.voting.ratings import ratings_refit
except ImportError:
    pass
else:
    t = time.perf_counter()
    ratings_refit(method="rasch")
    refit_s = time.perf_counter() - t
from django.db import connection
if connection.vendor == "postgresql":
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")

from django.db import connection
backend_pid = None
if connection.vendor == "postgresql":
    with connection.cursor() as cursor:  # the one connection this process keeps open throughout
        cursor.execute("SELECT pg_backend_pid()")
        backend_pid = cursor.fetchone()[0]

def backend_cpu():
    # The PostgreSQL backend's own CPU (utime + stime from /proc): the database's share of a deal.
    if backend_pid is None:
        return 0.0
    fields = open(f"/proc/{backend_pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

cpu, db_cpu = {}, {}
def timed(players, group):
    out = []
    players = list(players)
    began, db_began = time.process_time(), backend_cpu()
    for player in players:
        t = time.perf_counter()
        services.round_create(player=player)
        out.append((time.perf_counter() - t) * 1000)
    cpu[group] = (time.process_time() - began) * 1000 / len(players)
    db_cpu[group] = (backend_cpu() - db_began) * 1000 / len(players) if backend_pid else None
    if backend_pid is not None:
        assert connection.connection is not None and connection.connection.info.backend_pid == backend_pid, "the connection changed"
    return out

from django.conf import settings
levels = getattr(settings, "FM2_RATINGS", None)
sample = rng.sample(users, 2 * deals)
if levels is not None:
    levels["DEAL_LEVEL_SHARE"] = 0.0  # fresh and history: the least-voted deal
# A few deals first, untimed: the first deals of a process pay for its imports and caches,
# which would make the small size's p99 (the ratios' floor) a cold-start figure.
for warm in User.objects.bulk_create([User(username=f"warm{i}") for i in range(5)]):
    services.round_create(player=warm)
fresh = timed(User.objects.bulk_create([User(username=f"fresh{i}") for i in range(deals)]), "fresh")
veterans = timed(sample[:deals], "history")
level = None
if levels is not None:
    levels["DEAL_LEVEL_SHARE"] = 1.0  # every deal of a rated player looks near their level
    level = timed(sample[deals:], "level")
def figures(ms, group):
    ms = sorted(ms)
    return {"p50": statistics.median(ms), "p99": ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))], "max": ms[-1], "cpu_ms": cpu[group], "db_cpu_ms": db_cpu[group]}
print(json.dumps({"built_s": built, "refit_s": refit_s, "rounds": Round.objects.count(), "fresh": figures(fresh, "fresh"), "history": figures(veterans, "history"),
                  "level": figures(level, "level") if level else None, "seen_per_veteran": SeenClaim.objects.filter(player=users[0]).count()}))
"""


GROUPS = ("fresh", "history", "level")
RATIO_TARGET = 1.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,20000,100000", help="claims per database, comma-separated; the first is the floor of the ratios")
    parser.add_argument("--deals", type=int, default=200, help="deals timed per group (fresh players, players with history, level deals)")
    harness.add_service_args(parser, redis=False)
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    record = harness.Record("bench_deal", args.record)
    floor: dict[str, float] = {}
    for n in sizes:
        with harness.services(args, f"deal_{n}", redis=False) as env_services:
            began = time.perf_counter()
            load = os.getloadavg()[0]
            done = subprocess.run([sys.executable, "-c", RUN, str(n), str(args.deals)], cwd=REPO,
                                  env=env_services.env(CONN_MAX_AGE="0"), capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"the {n}-claim run failed; no figure is printed from it:\n{done.stderr[-3000:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            engine = env_services.database
        refit = f", rasch refit {result['refit_s']:.1f} s" if result.get("refit_s") is not None else ""
        print(f"{engine} {n:>7} claims, {result['rounds']:>7} voted rounds (built in {result['built_s']:.0f} s{refit}, "
              f"run {time.perf_counter() - began:.0f} s; {result['seen_per_veteran']} claims dealt to a veteran; "
              f"load {load:.2f} before, {os.getloadavg()[0]:.2f} after)")
        case = f"{engine} {n} claims"
        for group in GROUPS:
            f = result.get(group)
            if f is None:
                continue
            line = (f"    {group:<8} {args.deals} deals: p50 {f['p50']:7.1f} ms  p99 {f['p99']:7.1f} ms  max {f['max']:7.1f} ms  "
                    f"CPU {f['cpu_ms']:5.1f} ms a deal" + (f" (+ database {f['db_cpu_ms']:4.1f} ms)" if f.get("db_cpu_ms") is not None else ""))
            record.add(f"{case} {group}", "p50", round(f["p50"], 2), "ms")
            record.add(f"{case} {group}", "CPU per deal", round(f["cpu_ms"], 2), "ms")
            if f.get("db_cpu_ms") is not None:
                record.add(f"{case} {group}", "database CPU per deal", round(f["db_cpu_ms"], 2), "ms")
            if group not in floor:
                floor[group] = f["p99"]
                record.add(f"{case} {group}", "p99", round(f["p99"], 2), "ms")
            else:
                ratio = f["p99"] / floor[group]
                ok = ratio <= RATIO_TARGET
                line += f"  p99 {ratio:.2f}x {sizes[0]}'s (target <= {RATIO_TARGET}x: {'OK' if ok else 'OVER'})"
                record.add(f"{case} {group}", "p99", round(f["p99"], 2), "ms", floor=round(floor[group], 2),
                           target=f"<= {RATIO_TARGET}x {sizes[0] // 1000}k", ok=ok)
            print(line)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
