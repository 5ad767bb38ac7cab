"""Run the benches one after the other, each recording its figures, then write the docs' table.

    python bench/run_all.py [--slow] [--database-url URL] [--redis-url URL] [--only a,b] [--runs N]

What ``make bench`` (and ``make bench SLOW=1``) runs. Every bench gets ``FM2_BENCH_RECORD``
(a fresh file for this run, under a temporary folder) and, when it takes them (its ``--help``
names them), ``--database-url`` and ``--redis-url``. Before each bench the machine's load
average is read and its CPU calibration measured, after it its exit status and time: those are the run's lines in the same
file, which ``bench/table.py`` merges into ``bench/records.jsonl`` and renders as
``docs/performance.md``. Exits non-zero when any bench failed (after writing the table, where
it shows as failed).

A bench runs as many times as its entry in ``BENCHES`` says (the socket and REST benches
three: issue 42's targets are on the median of three runs), or ``--runs N`` times, each run
recording to a file of its own; ``table.combine`` then makes them one run's lines (each
figure the median of the runs that passed, with their spread) before they go into the file
``bench/table.py`` reads.
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
from table import combine, read_lines  # noqa: E402


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

# (bench, arguments, which set, runs): "fast" runs always, "slow" only with --slow, "fast-only"
# is the small stand-in of a slow bench that --slow replaces with its full size; runs is how
# many times it runs (its figures the median), unless --runs says.
BENCHES: list[tuple[str, list[str], str, int]] = [
    ("bench_hints_http", [], "fast", 1),
    ("bench_retrieval_latency", [], "fast", 1),
    ("bench_retrieval_encoding", ["--fm2", FM2, "--limit", "1000"], "fast-only", 1),
    ("bench_retrieval_encoding", ["--fm2", FM2], "slow", 1),
    ("bench_word_salad", ["--fm2", FM2], "fast", 1),
    ("bench_templates", ["--fm2", FM2], "fast", 1),
    ("bench_authoring_giveaway", ["--fm2", FM2], "fast", 1),
    ("bench_scoring_report", [FM2], "fast", 1),
    ("bench_ratings_sim", [], "fast", 1),
    ("bench_validation_sim", [], "fast", 1),
    ("bench_integrity", [], "fast", 1),
    ("bench_reidentify", [], "fast", 1),
    ("bench_ws_flood", [], "fast", 1),
    ("bench_first_save", [], "fast", 1),
    ("bench_rounds_ws", [], "fast", 3),
    ("bench_rooms_ws", [], "fast", 3),
    ("bench_deal", ["--sizes", "1000,20000"], "fast-only", 1),
    ("bench_deal", [], "slow", 1),
    ("bench_export", [], "slow", 1),
    ("bench_rest_pool", [], "slow", 3),
    ("bench_verifier", ["--fm2", FM2], "slow", 1),
    ("bench_abuse", [], "slow", 1),
    ("bench_strategies", [], "slow", 1),
    ("bench_study", ["--participants", "12", "--claims-file", "fixtures/fm2-dev-sample.jsonl"], "fast-only", 1),
    ("bench_study", [], "slow", 1),
    ("bench_fluency", ["--fm2", FM2], "slow", 1),
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
    parser.add_argument("--runs", type=int, default=None,
                        help="run every bench this many times, its figures the median (default: each bench's own count, "
                             "3 for the socket and REST benches, 1 for the others)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds a bench run may take before it counts as failed")
    parser.add_argument("--store", type=Path, default=REPO / "bench" / "records.jsonl")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "performance.md")
    args = parser.parse_args()
    if args.runs is not None and args.runs < 1:
        parser.error("--runs takes a count of 1 or more")
    only = {name for name in args.only.split(",") if name}

    run_id = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    folder = Path(tempfile.mkdtemp(prefix="fm2-bench-run-"))
    records = folder / "records.jsonl"  # every bench's lines, its runs combined: what table.py reads
    help_cache: dict[Path, str] = {}
    failed: list[str] = []
    began = time.monotonic()
    for entry, (name, bench_args, which, repeat) in enumerate(BENCHES):
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
        runs = args.runs or repeat
        shown = shown_command(name, bench_args, urls)
        lines_by_run = []
        for index in range(runs):
            print(f"== {shown}" + (f"  (run {index + 1} of {runs})" if runs > 1 else ""), flush=True)
            own = folder / f"{entry:02d}-{name}-{index + 1}.jsonl"  # this run's figures and its line, nothing else
            lines_by_run.append(run_once(name, command, shown, own, run_id, args.timeout))
        combined = combine(lines_by_run)
        if any(line["run"].get("exit") != 0 for line in combined if "run" in line):
            failed.append(name)
        for line in combined:
            _write(records, line)

    subprocess.run([sys.executable, str(REPO / "bench" / "table.py"), "--new", str(records), "--store", str(args.store), "--out", str(args.out)],
                   cwd=REPO, check=True)
    print(f"== {len(failed)} failed{': ' + ', '.join(failed) if failed else ''}; {time.monotonic() - began:.0f} s in all; "
          f"records {records} (each run's beside it)")
    return 1 if failed else 0


def run_once(name: str, command: list[str], shown: str, own: Path, run_id: str, timeout: float) -> list[dict]:
    """Run the bench once, recording to ``own``, then add its line (exit, time, the machine
    just before); the lines of that run."""
    calibration_ms.cache_clear()  # this process's first would be hours old by the last bench
    before = machine()  # its load average and CPU calibration are the machine's just before this run
    started = time.monotonic()
    try:
        code: int | str = subprocess.run(command, cwd=REPO, env={**os.environ, "FM2_BENCH_RECORD": str(own), "PYTHONPATH": str(REPO)},
                                         timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        code = "timeout"
    seconds = round(time.monotonic() - started, 1)
    if code != 0:
        print(f"== {name} failed ({code})", flush=True)
    _write(own, {"bench": name, "run": {"id": run_id, "exit": code, "seconds": seconds, "skipped": False, "command": shown},
                 "machine": before})
    return read_lines(own)


def _write(path: Path, line: dict) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
