"""Run the benches one after the other, each recording its figures, then write the docs' table.

    python bench/run_all.py [--slow] [--database-url URL] [--redis-url URL] [--only a,b]

What ``make bench`` (and ``make bench SLOW=1``) runs. Every bench gets ``FM2_BENCH_RECORD``
(a fresh file for this run, under a temporary folder) and, when it takes them (its ``--help``
names them), ``--database-url`` and ``--redis-url``. Before each bench the machine's load
average is read and its CPU calibration measured, after it its exit status and time: those are the run's lines in the same
file, which ``bench/table.py`` merges into ``bench/records.jsonl`` and renders as
``docs/performance.md``. Exits non-zero when any bench failed (after writing the table, where
it shows as failed).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import REPO, calibration_ms, machine  # noqa: E402


def fm2_dev() -> str:
    """The FM2 dev split: FM2_DEV_JSONL, else ``shared/data/fm2/dev.jsonl`` beside the
    repository or a folder above it (a worktree sits a level deeper than the checkout)."""
    if os.environ.get("FM2_DEV_JSONL"):
        return os.environ["FM2_DEV_JSONL"]
    for folder in REPO.parents:
        candidate = folder / "shared" / "data" / "fm2" / "dev.jsonl"
        if candidate.is_file():
            return str(candidate)
    return str(REPO.parent / "shared" / "data" / "fm2" / "dev.jsonl")


FM2 = fm2_dev()

# (bench, arguments, which set): "fast" runs always, "slow" only with --slow, "fast-only" is
# the small stand-in of a slow bench that --slow replaces with its full size.
BENCHES: list[tuple[str, list[str], str]] = [
    ("bench_hints_http", [], "fast"),
    ("bench_retrieval_latency", [], "fast"),
    ("bench_retrieval_encoding", ["--fm2", FM2, "--limit", "1000"], "fast-only"),
    ("bench_retrieval_encoding", ["--fm2", FM2], "slow"),
    ("bench_word_salad", ["--fm2", FM2], "fast"),
    ("bench_templates", ["--fm2", FM2], "fast"),
    ("bench_authoring_giveaway", ["--fm2", FM2], "fast"),
    ("bench_scoring_report", [FM2], "fast"),
    ("bench_ratings_sim", [], "fast"),
    ("bench_validation_sim", [], "fast"),
    ("bench_integrity", [], "fast"),
    ("bench_reidentify", [], "fast"),
    ("bench_ws_flood", [], "fast"),
    ("bench_first_save", [], "fast"),
    ("bench_rounds_ws", [], "fast"),
    ("bench_rooms_ws", [], "fast"),
    ("bench_deal", ["--sizes", "1000,20000"], "fast-only"),
    ("bench_deal", [], "slow"),
    ("bench_export", [], "slow"),
    ("bench_rest_pool", [], "slow"),
    ("bench_verifier", ["--fm2", FM2], "slow"),
    ("bench_abuse", [], "slow"),
    ("bench_strategies", [], "slow"),
    ("bench_study", ["--participants", "12", "--claims-file", "fixtures/fm2-dev-sample.jsonl"], "fast-only"),
    ("bench_study", [], "slow"),
    ("bench_fluency", ["--fm2", FM2], "slow"),
]


def takes(script: Path, option: str, cache: dict[Path, str]) -> bool:
    """Does the bench's ``--help`` name ``option``?"""
    if script not in cache:
        shown = subprocess.run([sys.executable, str(script), "--help"], cwd=REPO, capture_output=True, text=True, timeout=120)
        cache[script] = shown.stdout + shown.stderr
    return option in cache[script]


def shown_command(name: str, args: list[str], urls: dict[str, str]) -> str:
    """The command as the docs show it: repository-relative paths, the URLs by their make variable."""
    words = [f"bench/{name}.py", *args]
    for option, variable in (("--database-url", "BENCH_DATABASE_URL"), ("--redis-url", "BENCH_REDIS_URL")):
        if option in urls:
            words += [option, f"${variable}"]
    text = " ".join(shlex.quote(w) if not w.startswith("$") else w for w in words)
    return "python " + text.replace(FM2, "../shared/data/fm2/dev.jsonl")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--slow", action="store_true", help="the slow benches too, at full size")
    parser.add_argument("--database-url", default="", help="passed to every bench that takes it")
    parser.add_argument("--redis-url", default="", help="passed to every bench that takes it")
    parser.add_argument("--only", default="", help="comma-separated bench names (e.g. bench_hints_http)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds a bench may run before it counts as failed")
    parser.add_argument("--store", type=Path, default=REPO / "bench" / "records.jsonl")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "performance.md")
    args = parser.parse_args()
    only = {name for name in args.only.split(",") if name}

    run_id = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    records = Path(tempfile.mkdtemp(prefix="fm2-bench-run-")) / "records.jsonl"
    help_cache: dict[Path, str] = {}
    failed: list[str] = []
    began = time.monotonic()
    for name, bench_args, which in BENCHES:
        if only and name not in only:
            continue
        if (which == "fast-only" and args.slow) or (which == "slow" and not args.slow):
            if which == "slow":
                _write(records, {"bench": name, "run": {"id": run_id, "skipped": True, "command": shown_command(name, bench_args, {})},
                                 "machine": machine()})
            continue
        script = REPO / "bench" / f"{name}.py"
        urls = {option: value for option, value in (("--database-url", args.database_url), ("--redis-url", args.redis_url))
                if value and takes(script, option, help_cache)}
        command = [sys.executable, str(script), *bench_args, *[w for pair in urls.items() for w in pair]]
        calibration_ms.cache_clear()  # this process's first would be hours old by the last bench
        before = machine()  # its load average and CPU calibration are the machine's just before this bench
        print(f"== {shown_command(name, bench_args, urls)}", flush=True)
        started = time.monotonic()
        try:
            code = subprocess.run(command, cwd=REPO, env={**os.environ, "FM2_BENCH_RECORD": str(records), "PYTHONPATH": str(REPO)},
                                  timeout=args.timeout).returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
        seconds = round(time.monotonic() - started, 1)
        if code != 0:
            failed.append(name)
            print(f"== {name} failed ({code})", flush=True)
        _write(records, {"bench": name, "run": {"id": run_id, "exit": code, "seconds": seconds, "skipped": False,
                                                "command": shown_command(name, bench_args, urls)}, "machine": before})

    subprocess.run([sys.executable, str(REPO / "bench" / "table.py"), "--new", str(records), "--store", str(args.store), "--out", str(args.out)],
                   cwd=REPO, check=True)
    print(f"== {len(failed)} failed{': ' + ', '.join(failed) if failed else ''}; {time.monotonic() - began:.0f} s in all; records {records}")
    return 1 if failed else 0


def _write(path: Path, line: dict) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
