"""The docs' performance page from the benches' records: one table, no prose.

    python bench/table.py --new RUN.jsonl [--store bench/records.jsonl] [--out docs/performance.md]

``RUN.jsonl`` is what one ``make bench`` wrote: the figures each bench recorded through
``harness.Record`` and one line per bench from ``bench/run_all.py`` (``"run": {command,
exit, seconds, skipped}``). They are merged into ``--store``, the committed history: a
figure is keyed by bench, case and figure, and a new one replaces the old; a figure this
run did not measure (a slow bench skipped, a bench that failed, a case another run measured)
keeps its own date, commit and machine and is marked as not from its bench's latest run. A
bench's latest run is its last line from run_all (a skip included, which keeps the last real
run's time beside it). The page is rendered from the store.

A figure marked ``"legacy": true`` was carried over from the prose page this table replaced
(measured before records existed; its commit is the page's): it is shown with ‡ until its
bench records a figure of its own, and then dropped.

A figure whose unit names CPU (``"ms CPU/request"``) is the case's CPU cost per unit: it
fills the "CPU per unit" column of its case's rows, and is a row of its own only when it has
a floor or a target.

A figure measured beside more than one floor (``"floors"``: name -> value, ``"ratios"``: name
-> ratio; the socket benches' committing and no-database floors) shows each floor in the floor
column and each ratio in the ratio column, named; its target is judged against ``"floor"``.

A bench run more than once (``run_all.py --runs N``; the socket and REST benches three times
by default) is recorded once per run and ``combine`` makes its lines one run's: for each
figure the value is the median of the runs' values, the floor (and each named floor) the
median of the runs' floors, and the ratio (and each named ratio) the median of the runs'
ratios, not median value / median floor: a run's ratio compares a game and a floor measured
minutes apart under the same load, and the median of those pairs is a ratio some run gave,
where two medians taken apart can pair a fast run's game with a slow run's floor. The target
is judged again on the medians (``target_holds`` reads the forms the benches write; a target
it cannot read holds when every run said it held). The line keeps the runs' values
(``"runs"``), shown as a range beside the median. A run that failed (non-zero exit) is left
out, its figures with it, and counted (``"runs_failed"``); the bench's line from run_all
keeps each run's exit, time, load and calibration (``"run": {"runs": [...]}``).
"""

from __future__ import annotations

import argparse
import json
import operator
import re
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
STORE = REPO / "bench" / "records.jsonl"
OUT = REPO / "docs" / "performance.md"

HEAD = """# Performance and measured figures

Written by `make bench` (`bench/run_all.py` runs each bench with `--record`, then `bench/table.py`
renders this page from `bench/records.jsonl`); `make bench SLOW=1` adds the slow ones (100k-claim
deal and export, the 60 s REST run, the verifier's cross-validation). `make bench
BENCH_DATABASE_URL=postgres://... BENCH_REDIS_URL=redis://...` passes `--database-url` and
`--redis-url` to every bench that uses a database or Redis (default: SQLite and a redis-server of
its own). Latencies move with the machine's load (shown per bench below); CPU per unit moves
least. Each run also times a fixed pure-Python loop before it starts (the "CPU calibration"
column below, best of three passes): figures from runs whose calibration differs are not
comparable, whatever their load (this machine has measured 3x slower on some days). † = not
measured in its bench's latest run (skipped, failed, or a case that run did not have): the row
keeps the date and commit it was measured at.
‡ = carried over from the prose page this table replaced (no record of that run: no machine,
no load); it goes when its bench records its own figures.

The socket and REST benches' figures (`bench_rounds_ws`, `bench_rooms_ws`, `bench_rest_pool`)
are the median of three runs (`make bench RUNS=1` runs each once; `RUNS=N` runs every bench N
times), and the spread is shown: the value column gives the median, then the runs' range and
how many runs it is of (a run that failed is left out, and counted). The floor is the median of
the runs' floors and the ratio the median of the runs' ratios (not median value / median
floor: each run's ratio pairs a game and a floor measured minutes apart under the same load);
the target is judged again on those medians.

The socket benches' floor is a bare Channels consumer served like the game (same uvicorn
flags, channel layer and Redis) that answers the game's frames at the game's sizes. The
committing floor (their default) also commits, before it answers a vote, one row for it in
the same database through the same pool and `database_sync_to_async`, and one more for a
room's question end before its answer is broadcast; the no-database floor commits nothing. The
committing one is the honest floor: the game answers a vote only once its transaction has
committed, so a floor that skips the commit counts the commit's fsync and the pool as the
game's overhead. Both are shown with the game's ratio to each (named in the floor and ratio
columns); targets are judged against the committing floor. The committing floor's rows are
counted after each run, and the bench fails unless there is one per answer. On SQLite it commits in
SQLite. `bench_rest_pool`'s floor is a bare Django view under the same uvicorn line, settings,
session middleware and pool that reads one row and commits one per request.
"""


def read_lines(path: Path | None) -> list[dict[str, Any]]:
    if path is None or not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def is_run(line: dict[str, Any]) -> bool:
    return "run" in line


def figure_key(line: dict[str, Any]) -> tuple[str, str, str]:
    return line["bench"], line.get("case") or "", line["figure"]


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def median(values: Iterable[Any]) -> float | int | None:
    """The median of the numbers among ``values`` (None and NaN left out); None when none is."""
    numbers = [value for value in values if is_number(value)]
    if not numbers:
        return None
    middle = statistics.median(numbers)
    return round(middle, 6) if isinstance(middle, float) else middle


COMPARE = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}
# "<= 4x committing floor", ">= 0.5x floor": on a ratio; "<= 100 ms", "<= 1 per 1,000": on the value.
BOUND = re.compile(r"(?P<sign><=|>=|<|>)\s*(?P<limit>\d+(?:\.\d+)?)(?:x(?:\s+(?P<floor>[\w-]+))?\s+floor|\s*(?P<unit>.*))")


def bound_holds(bound: str, line: dict[str, Any]) -> bool | None:
    """Does the line meet one bound of its target? None: not a bound read here."""
    match = BOUND.fullmatch(bound.strip())
    if match is None:
        return None
    compare, limit = COMPARE[match["sign"]], float(match["limit"])
    if match["unit"] is None:
        ratios, name = line.get("ratios") or {}, match["floor"]
        if name is not None and ratios:
            if name not in ratios:
                return None
            measured = ratios[name]
        else:  # one floor: the line's, the one its target is judged against
            measured = line.get("ratio")
    else:
        if match["unit"].strip() not in ("", line.get("unit") or ""):
            return None  # "<= 1.5x 1k", a limit in a unit the value is not in
        measured = line.get("value")
        if measured is not None and not isinstance(measured, (int, float)):
            return None  # an outcome ("held"), not a number
    return measured is not None and compare(measured, limit)


def target_holds(line: dict[str, Any]) -> bool | None:
    """The line's target judged on its value and ratios, as the benches write targets: bounds
    joined by ", " must all hold, by " or " one of them. None: no target, or one in a form not
    read here ("p95 <= 30 ms", "held", "<= 1.5x 1k")."""
    target = line.get("target")
    if not isinstance(target, str) or not target.strip():
        return None
    verdicts = []
    for clause in target.split(", "):
        alternatives = [bound_holds(bound, line) for bound in clause.split(" or ")]
        if None in alternatives:
            return None
        verdicts.append(any(alternatives))
    return all(verdicts)


def all_held(verdicts: Iterable[bool | None]) -> bool | None:
    """The runs' own verdicts together: False when one missed, None when one had none."""
    verdicts = list(verdicts)
    if False in verdicts:
        return False
    return None if not verdicts or None in verdicts else True


def combine_figure(lines: Sequence[dict[str, Any]], failed: int) -> dict[str, Any]:
    """One figure's lines from the runs that passed, made one (see the module's docstring)."""
    values = [line.get("value") for line in lines]
    if all(value is None or isinstance(value, (int, float)) and not isinstance(value, bool) for value in values):
        value = median(values)
    else:  # an outcome ("held"): the one the runs agree on, or each they gave
        value = "; ".join(dict.fromkeys(str(v) for v in values)) if len(set(map(str, values))) > 1 else values[0]
    combined = {**lines[0], "value": value, "floor": median(line.get("floor") for line in lines),
                "ratio": median(line.get("ratio") for line in lines)}
    for key in ("floors", "ratios"):
        names = list(dict.fromkeys(name for line in lines for name in line.get(key) or {}))
        if names:
            combined[key] = {name: median((line.get(key) or {}).get(name) for line in lines) for name in names}
    held = target_holds(combined)
    combined["ok"] = held if held is not None else all_held(line.get("ok") for line in lines)
    combined["runs"] = values
    if failed:
        combined["runs_failed"] = failed
    return combined


def combine(lines_by_run: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The lines of N runs of the same benches (each run's figures and its line from run_all)
    as the lines of one run: a figure's median over the runs that passed (exit 0), the runs'
    lines from run_all made one that keeps each (its ``exit`` the first failed run's, its
    ``seconds`` their sum). A run with no line from run_all counts as passed. One run: its
    lines unchanged."""
    if len(lines_by_run) == 1:
        return list(lines_by_run[0])
    benches = list(dict.fromkeys(line["bench"] for lines in lines_by_run for line in lines))
    out: list[dict[str, Any]] = []
    for bench in benches:
        runs = [next((line for line in lines if is_run(line) and line["bench"] == bench), None) for lines in lines_by_run]
        present = [line for line in runs if line is not None]
        if present and all(line["run"].get("skipped") for line in present):
            out.append(present[0])
            continue
        passed = [i for i, line in enumerate(runs) if line is None or line["run"].get("exit") == 0]
        failed = len(lines_by_run) - len(passed)
        figures: dict[tuple[str, str, str], dict[int, dict[str, Any]]] = {}
        for i in passed:
            for line in lines_by_run[i]:
                if not is_run(line) and line["bench"] == bench:
                    figures.setdefault(figure_key(line), {})[i] = line  # a figure written twice in one run: its last
        out.extend(combine_figure(list(by_run.values()), failed) for by_run in figures.values())
        if present:
            first = present[0]
            exits = [line["run"].get("exit") for line in present]
            out.append({**first, "run": {
                **first["run"], "exit": next((code for code in exits if code != 0), 0),
                "seconds": round(sum(line["run"].get("seconds") or 0 for line in present), 1),
                "runs": [{"exit": line["run"].get("exit"), "seconds": line["run"].get("seconds"),
                          **{key: (line.get("machine") or {}).get(key) for key in ("date", "load", "calibration_ms")}}
                         for line in present]}})
    return out


def merge(stored: Iterable[dict[str, Any]], new: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The store with this run's lines in: figures by (bench, case, figure), runs by bench.
    Figures of this run carry its run id (``run_id``, from its run lines), so the page can tell
    them from older ones."""
    new = list(new)
    run_ids = {line["run"].get("id") for line in new if is_run(line)} - {None}
    run_id = max(run_ids) if run_ids else None
    figures: dict[tuple[str, str, str], dict[str, Any]] = {}
    runs: dict[str, dict[str, Any]] = {}
    for source, lines in (("stored", stored), ("new", new)):
        for line in lines:
            if is_run(line):
                before = runs.get(line["bench"])
                if line["run"].get("skipped") and before is not None:
                    if before["run"].get("id") == line["run"].get("id"):
                        continue  # its small stand-in ran in this same run
                    last = before["run"].get("last") if before["run"].get("skipped") else before["run"]
                    line = {**line, "run": {**line["run"], "last": last}}
                runs[line["bench"]] = line
            else:
                if source == "new" and run_id is not None:
                    line = {**line, "run_id": run_id}
                figures[figure_key(line)] = line
    recorded = {line["bench"] for line in figures.values() if not line.get("legacy")}
    figures = {key: line for key, line in figures.items() if not (line.get("legacy") and line["bench"] in recorded)}
    # By bench, then in the order the bench wrote them (a replaced figure keeps its place).
    return [runs[name] for name in sorted(runs)] + sorted(figures.values(), key=lambda line: line["bench"])


def number(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if value != value:
            return "nan"
        return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def with_unit(value: Any, unit: str | None, *, none: str = "") -> str:
    text = number(value) or none
    return f"{text} {unit}".strip() if text and unit else text


def value_text(line: dict[str, Any]) -> str:
    """The value, and for a median of several runs their range, how many and how many failed:
    ``31.1 ms (30.4–33, 3 runs)``."""
    text = with_unit(line.get("value"), line.get("unit"), none="none")
    runs = line.get("runs")
    if runs is None:
        return text
    numbers = [value for value in runs if is_number(value)]
    low, high = (number(min(numbers)), number(max(numbers))) if len(numbers) > 1 else ("", "")
    spread = f"{low}–{high}, " if low != high else ""
    same = ", no spread" if low and low == high else ""
    failed = f"; {line['runs_failed']} failed" if line.get("runs_failed") else ""
    return f"{text} ({spread}{len(runs)} run{'' if len(runs) == 1 else 's'}{same}{failed})"


def outcome_text(run: dict[str, Any]) -> str:
    """A run's outcome; of a bench run several times, how many of its runs failed."""
    runs = run.get("runs") or []
    failed = [each for each in runs if each.get("exit") != 0]
    if run.get("exit") == 0:
        return f"ok ({len(runs)} runs)" if runs else "ok"
    if runs:
        return f"{len(failed)} of {len(runs)} runs failed (exit {', '.join(str(each.get('exit')) for each in failed)})"
    return f"failed (exit {run.get('exit')})"


def is_cpu(line: dict[str, Any]) -> bool:
    return "cpu" in (line.get("unit") or "").lower()


def floor_cells(line: dict[str, Any]) -> tuple[str, str]:
    """The floor and ratio columns: one floor, or each of its floors named."""
    floors = line.get("floors") or {}
    if len(floors) < 2:
        return with_unit(line.get("floor"), line.get("unit")), number(line.get("ratio"))
    ratios = line.get("ratios") or {}
    return ("; ".join(f"{with_unit(value, line.get('unit'))} ({name})" for name, value in floors.items() if value is not None),
            "; ".join(f"{number(ratios.get(name))} ({name})" for name, value in floors.items() if ratios.get(name) is not None))


def cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def machine_text(machine: dict[str, Any]) -> str:
    return f"{machine.get('cores', '?')} cores, {machine.get('cpu') or 'unknown CPU'}"


def load_text(machine: dict[str, Any]) -> str:
    return " / ".join(f"{x:.2f}" for x in machine.get("load") or [])


def calibration_text(machine: dict[str, Any]) -> str:
    return with_unit(machine.get("calibration_ms"), "ms")


def runs_texts(run: dict[str, Any], machine: dict[str, Any]) -> tuple[str, str, str]:
    """The seconds, load and CPU calibration cells of a bench's line from run_all: each of its
    runs' (``; ``-separated) when it ran several times."""
    runs = run.get("runs")
    if not runs:
        return number(run.get("seconds")), load_text(machine), calibration_text(machine)
    return (" + ".join(number(each.get("seconds")) for each in runs), "; ".join(load_text(each) for each in runs),
            "; ".join(calibration_text(each) for each in runs))


def render(lines: list[dict[str, Any]]) -> str:
    """The page: a header naming the latest run, the table of figures, the benches' commands."""
    runs = {line["bench"]: line for line in lines if is_run(line)}
    figures = [line for line in lines if not is_run(line)]
    run_ids = [line["run"].get("id") for line in runs.values() if line["run"].get("id")]
    latest = max(run_ids) if run_ids else None
    out = [HEAD]
    if latest:
        by_run: dict[str, list[dict[str, Any]]] = {}
        for line in runs.values():
            by_run.setdefault(line["run"].get("id") or "", []).append(line)
        described = []
        for run_id in sorted(by_run, reverse=True):
            lines = by_run[run_id]
            names = ", ".join(line["bench"] for line in lines) if len(lines) <= 3 else f"{len(lines)} benches"
            machine = lines[0]["machine"]
            described.append(f"{run_id} ({names}; commit `{machine.get('commit', '')}`, {machine_text(machine)})")
        out.append(f"Latest run: {described[0]}." + (f" Earlier: {'; '.join(described[1:])}." if described[1:] else "") + "\n")

    by_bench: dict[str, list[dict[str, Any]]] = {}
    for line in figures:
        by_bench.setdefault(line["bench"], []).append(line)
    out.append("| bench | case | figure | value | floor | ratio | CPU per unit | target | holds | measured |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for bench in sorted(set(by_bench) | set(runs)):
        run = runs.get(bench, {}).get("run", {})
        failed = bool(run) and not run.get("skipped") and run.get("exit") != 0
        if failed:
            out.append(f"| {bench} | | run | **{outcome_text(run)}** | | | | exit 0 | ✗ | {run.get('id', '')} |")
        rows = by_bench.get(bench, [])
        if not rows:
            if not failed:
                out.append(f"| {bench} | | | {'skipped (SLOW=1 runs it)' if run.get('skipped') else 'no record'} | | | | | | |")
            continue
        cpu: dict[str, list[str]] = {}
        for line in rows:
            if is_cpu(line):
                cpu.setdefault(line.get("case") or "", []).append(value_text(line))
        for line in rows:
            if is_cpu(line) and line.get("floor") is None and not line.get("target"):
                continue
            machine = line.get("machine") or {}
            earlier = bool(run) and line.get("run_id") != run.get("id")
            mark = " ‡" if line.get("legacy") else (" †" if earlier else "")
            measured = f"{machine.get('date', '')}, `{machine.get('commit', '')}`{mark}"
            holds = {True: "✓", False: "✗"}.get(line.get("ok"), "")
            case = line.get("case") or ""
            floor, ratio = floor_cells(line)
            out.append("| " + " | ".join(cell(x) for x in (
                bench, case, line["figure"], value_text(line), floor, ratio,
                "; ".join(cpu.get(case, [])), line.get("target") or "", holds, measured)) + " |")

    out.append("\n## Benches\n")
    out.append("Each bench's command as the latest `make bench` ran it (plus `--record`, and the database and "
               "Redis options when given), its outcome, how long it took, the load average (1 / 5 / 15 min) "
               "just before it started and the CPU calibration (a fixed pure-Python loop's time) measured then; "
               "of a bench run several times, each run's.\n")
    out.append("| bench | command | outcome | seconds | load before | CPU calibration | run |")
    out.append("| --- | --- | --- | --- | --- | --- | --- |")
    for bench in sorted(runs):
        run, machine = runs[bench]["run"], runs[bench].get("machine") or {}
        last = run.get("last") or {}
        outcome = outcome_text(run)
        seconds, load, calibration = runs_texts(run, machine)
        if run.get("skipped"):
            outcome = "skipped (SLOW=1)" + (f"; last run {last.get('id')}" if last else "")
            seconds = number(last.get("seconds"))
        out.append("| " + " | ".join(cell(x) for x in (
            bench, f"`{run.get('command', '')}`", outcome, seconds, load, calibration,
            f"{run.get('id', '')}, `{machine.get('commit', '')}`")) + " |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--new", type=Path, help="this run's records (bench/run_all.py's file)")
    parser.add_argument("--store", type=Path, default=STORE, help="the committed records the new ones are merged into")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    lines = merge(read_lines(args.store), read_lines(args.new))
    args.store.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    args.out.write_text(render(lines), encoding="utf-8")
    print(f"{args.out}: {sum(not is_run(line) for line in lines)} figures of {len({line['bench'] for line in lines})} benches")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
