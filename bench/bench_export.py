"""Benchmark: export 100k synthetic claims and 300k votes; target <= 60 s and <= 300 MB peak RSS.

Builds a throw-away SQLite database (FM2_DATA_DIR in a temporary folder) with bulk_create
in one subprocess, then times ``manage.py export_dataset`` in another and reads that
process's own peak RSS (``os.wait4``), so the figures are the export's alone.

    .venv/bin/python bench/bench_export.py [--claims 100000] [--votes 300000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

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
    pages = Page.objects.bulk_create([Page(title=f"Bench page {i}", category=category, source="text") for i in range(claims_n // 10)])
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
print(Claim.objects.count(), Vote.objects.count())
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--claims", type=int, default=100_000)
    parser.add_argument("--votes", type=int, default=300_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fm2-bench-export-") as tmp:
        env = {**os.environ, "FM2_DATA_DIR": tmp, "PYTHONPATH": str(REPO)}
        began = time.perf_counter()
        made = subprocess.run([sys.executable, "-c", POPULATE, str(args.claims), str(args.votes)], cwd=REPO, env=env,
                              capture_output=True, text=True, check=True)
        print(f"synthetic data: {made.stdout.split()[0]} claims, {made.stdout.split()[1]} votes in {time.perf_counter() - began:.1f} s")
        out = Path(tmp) / "out"
        began = time.perf_counter()
        child = subprocess.Popen([sys.executable, "manage.py", "export_dataset", str(out), "-v", "0"], cwd=REPO, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - began
        output = child.stdout.read() if child.stdout else ""
        if status != 0:
            sys.exit(f"export failed (status {status})")
        peak_mb = usage.ru_maxrss / 1024  # kilobytes on Linux
        size_mb = sum(p.stat().st_size for p in out.iterdir()) / 1e6
        print(output.strip())
        print(f"export: {seconds:.1f} s, peak RSS {peak_mb:.0f} MB, {size_mb:.0f} MB written "
              f"(targets: <= 60 s, <= 300 MB) -> {'OK' if seconds <= 60 and peak_mb <= 300 else 'OVER'}")


if __name__ == "__main__":
    main()
