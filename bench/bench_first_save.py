"""How long the first claim saved after a start waits: the giveaway detector's training used to
run inside it (13-19 s on the embedded default); now no request waits for a model to train.

    python bench/bench_first_save.py                  # the embedded default (SQLite, eager tasks)
    python bench/bench_first_save.py --database-url postgres://fm2:fm2@127.0.0.1:5432/fm2 --redis-url redis://127.0.0.1:6399/7
    python bench/bench_first_save.py --repo /path/to/an/older/checkout   # the same steps on other code

Does what `make run` does on a fresh database (migrate, load the demo, encode its sentences,
train the first verifier when the code has one), then, in a fresh process (a server just
started), signs a player in through the test client and times: taking a write task, the draft
check, the first save, a second task and save. With eager tasks it then waits for the
background thread and says how long the training took there. Throwaway databases are made
beside --database-url and dropped after (the role needs CREATEDB, no superuser: harness.py).
Without --redis-url no Redis is used (the embedded default runs its tasks eagerly, which is
what this bench measures there). The models warm as a started server's do (FM2_WARM_MODELS
is left on): their warm-up is part of what a first save may wait for. Every answer that is
not a success (a task, a draft check, a save) is counted; any makes the bench print them and
exit non-zero. --record PATH appends the times as lines of JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Record, _delete_prefixed, add_service_args, fresh_database, refuse_errors  # noqa: E402

DB_NAME = f"fm2_bench_first_save_{os.getpid()}"


PREFIX = f"fm2bench{os.getpid()}"  # this run's keys in a --redis-url's Redis, deleted after


def _env(repo: Path, database_url: str, redis_url: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(repo), "HF_HUB_OFFLINE": "1", "DATABASE_URL": database_url, "REDIS_URL": redis_url,
           "CHANNEL_PREFIX": PREFIX, "FM2_CACHE_KEY_PREFIX": PREFIX}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


def _manage(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(repo / "manage.py"), *args], cwd=repo, env=env, capture_output=True, text=True)


CHILD = r"""
import json, os, time
import foolgame.asgi  # a server starting: Django set up, the models warming (FM2_WARM_MODELS)
from django.contrib.auth import get_user_model
from django.test import Client
from foolgame.authoring.models import GiveawayModel
from foolgame.pages.models import Sentence

times = {}
user = get_user_model().objects.create_user("bench-writer", password="a long enough passphrase")
client = Client()
client.force_login(user)

statuses = {}

def post(url, data):
    started = time.perf_counter()
    response = client.post(url, data, content_type="application/json")
    statuses[url] = statuses.get(url, []) + [response.status_code]
    return response, (time.perf_counter() - started) * 1000

def write(name):
    task, times[name + " task"] = post("/api/write-tasks", {})
    if name == "first":
        time.sleep(float(os.environ["BENCH_THINK_SECONDS"]))  # the writer reads the page and types
    assert task.status_code == 201, task.content
    task = task.json()
    sentences = list(Sentence.objects.filter(page_id=task["page"], retired=False).order_by("position")[:8])
    sentence = sentences[2]  # the gold; the claim shares no word with the page but its title, so the gold is no top hit
    # A plain sentence (a template of page words would now be refused as not fluent).
    text = f"{task['page_title']} was described by a later account as a subject of lasting public interest."
    check, times[name + " draft check"] = post("/api/claims/check", {"task": task["id"], "text": text, "gold_sentence_ids": [sentence.pk]})
    saved, times[name + " save"] = post("/api/claims", {"task": task["id"], "text": text, "gold_sentence_ids": [sentence.pk]})
    return check.json(), saved.status_code, saved.json()

detectors_before = GiveawayModel.objects.count()
check, status, body = write("first")
detectors_at_response = GiveawayModel.objects.count()
check2, status2, body2 = write("second")
background = None
try:
    from foolgame.core import events
    if hasattr(events, "background_idle"):
        started = time.perf_counter()
        events.background_idle(timeout=600)
        background = (time.perf_counter() - started) * 1000
except Exception:
    pass
print(json.dumps({
    "times_ms": times, "first_status": status, "second_status": status2,
    "first_codes": [w.get("code") for w in (body.get("warnings") or [])] if status == 201 else body, "check": check,
    "detectors_before": detectors_before, "detectors_at_first_response": detectors_at_response,
    "detectors_after": GiveawayModel.objects.count(), "background_ms_after_second_save": background,
    "verdict": body.get("verdict") if status == 201 else None, "statuses": statuses,
}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to measure (default: this one)")
    parser.add_argument("--think", type=float, default=10.0, help="seconds between taking the first task and checking and saving it (a writer reading and typing; default 10)")
    parser.add_argument("--fm2", type=Path, default=None, help="import this FM2 file (e.g. ../shared/data/fm2/dev.jsonl) after the demo: the issue's 'after an import'")
    add_service_args(parser)
    args = parser.parse_args()
    args.redis_url = args.redis_url or ""  # none: the embedded default, eager tasks (no worker is started: a task sent to a Redis waits)
    record = Record("bench_first_save", args.record)
    folder = tempfile.mkdtemp(prefix="fm2-first-save-")
    url, drop = fresh_database(args.database_url, DB_NAME)
    url = url or f"sqlite:///{folder}/fm2.sqlite3"
    env = _env(args.repo, url, args.redis_url)
    try:
        steps = [("migrate", ("migrate", "--no-input")), ("load_demo", ("load_demo",))]
        if args.fm2:
            steps.append(("import_fm2", ("import_fm2", str(args.fm2.resolve()), "--split", "dev", "--no-progress")))
        steps.append(("build_indexes", ("build_indexes", "--all")))
        if (args.repo / "foolgame" / "verifier").is_dir():
            steps.append(("verifier train", ("verifier", "train", "--if-due", "--no-progress")))
        for name, command in steps:
            started = time.perf_counter()
            done = _manage(args.repo, env, *command)
            if done.returncode != 0:
                sys.exit(f"{name} failed:\n{done.stderr[-2000:]}")
            print(f"{name}: {time.perf_counter() - started:.1f} s")
        child = subprocess.run([sys.executable, "-c", CHILD], cwd=args.repo, env={**env, "DJANGO_SETTINGS_MODULE": "foolgame.settings", "BENCH_THINK_SECONDS": str(args.think)}, capture_output=True, text=True)
        if child.returncode != 0:
            sys.exit(f"the timed process failed:\n{child.stderr[-3000:]}")
        result = json.loads(child.stdout.strip().splitlines()[-1])
    finally:
        drop()
        shutil.rmtree(folder, ignore_errors=True)
        if args.redis_url:
            _delete_prefixed(args.redis_url, PREFIX)
    where = "PostgreSQL + Redis" if args.database_url and args.redis_url else ("PostgreSQL" if args.database_url else "the embedded default (SQLite, eager tasks)")
    print(f"\nfirst save after a start, on {where}, code at {args.repo} ({args.think:g} s between the first task and its draft check):")
    for name, ms in result["times_ms"].items():
        print(f"  {name:<20} {ms:8.0f} ms")
    print(f"  saves: {result['first_status']}, {result['second_status']}; detectors before / at the first answer / after: "
          f"{result['detectors_before']} / {result['detectors_at_first_response']} / {result['detectors_after']}")
    if result["background_ms_after_second_save"] is not None:
        print(f"  background thread busy for another {result['background_ms_after_second_save']:.0f} ms after the second save")
    if result["first_status"] != 201:
        print(f"  the first save was refused: {result['first_codes']}")
    if result.get("verdict"):
        print(f"  the model's verdict on the first claim: {result['verdict']}")
    case = f"{'postgresql' if args.database_url else 'sqlite'}{' + redis' if args.redis_url else ''}"
    for name, ms in result["times_ms"].items():
        record.add(case, name, round(ms, 1), "ms")
    refuse_errors([f"{url} {status}" for url, codes in result["statuses"].items() for status in codes if status >= 400], "answers")


if __name__ == "__main__":
    main()
