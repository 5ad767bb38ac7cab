"""bench/table.py: the docs' performance page rendered from the benches' records."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location("bench_table", Path(__file__).resolve().parents[2] / "bench" / "table.py")
table = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(table)

OLD, NEW = "2026-01-01 10:00:00 UTC", "2026-02-01 10:00:00 UTC"


def machine(date: str, commit: str, load: float = 0.5) -> dict:
    return {"cores": 2, "cpu": "Test CPU", "load": [load, load, load], "commit": commit, "date": date[:16] + " UTC", "calibration_ms": 68.2}


def figure(bench: str, case: str, name: str, value: float, unit: str, *, date: str, commit: str, target: str | None = None,
           ok: bool | None = None, floor: float | None = None) -> dict:
    return {"bench": bench, "case": case, "figure": name, "value": value, "unit": unit, "floor": floor,
            "ratio": round(value / floor, 2) if floor else None, "target": target, "ok": ok, "machine": machine(date, commit)}


def run(bench: str, run_id: str, commit: str, *, exit: int = 0, skipped: bool = False) -> dict:
    return {"bench": bench, "run": {"id": run_id, "exit": exit, "seconds": 12.0, "skipped": skipped, "command": f"python bench/{bench}.py"},
            "machine": machine(run_id, commit, load=1.25)}


def rows(page: str, bench: str) -> list[str]:
    """The bench's rows in the table of figures (not in the list of benches below it)."""
    figures = page.split("## Benches", 1)[0]
    return [line for line in figures.splitlines() if line.startswith(f"| {bench} |")]


def test_a_target_held_and_a_target_missed_are_marked_and_the_cpu_fills_its_case():
    new = [
        run("bench_hints_http", NEW, "bbb2222"),
        figure("bench_hints_http", "20 authors", "latency p95", 14.0, "ms", date=NEW, commit="bbb2222", target="p95 <= 30 ms", ok=True),
        figure("bench_hints_http", "20 authors", "latency p99", 45.0, "ms", date=NEW, commit="bbb2222", target="p99 <= 40 ms", ok=False,
               floor=15.0),
        figure("bench_hints_http", "20 authors", "CPU per hint request", 6.8, "ms CPU/request", date=NEW, commit="bbb2222"),
    ]
    page = table.render(table.merge([], new))
    p95, p99 = rows(page, "bench_hints_http")
    assert "| 14 ms |" in p95 and "| p95 <= 30 ms | ✓ |" in p95
    assert "| 45 ms | 15 ms | 3 |" in p99 and "| p99 <= 40 ms | ✗ |" in p99
    assert "6.8 ms CPU/request" in p95 and "6.8 ms CPU/request" in p99  # the column, not a row of its own
    assert "†" not in p95
    assert f"Latest run: {NEW} (bench_hints_http; commit `bbb2222`, 2 cores, Test CPU)" in page
    assert "| 1.25 / 1.25 / 1.25 | 68.2 ms |" in page  # the load before the bench, and its CPU calibration


def test_a_figure_not_measured_again_keeps_its_own_date_and_commit_and_is_marked():
    stored = table.merge([], [run("bench_deal", OLD, "aaa1111"),
                              figure("bench_deal", "100k claims", "deal p99", 15.9, "ms", date=OLD, commit="aaa1111",
                                     target="p99 <= 20 ms", ok=True)])
    page = table.render(table.merge(stored, [run("bench_deal", NEW, "bbb2222", skipped=True), run("bench_hints_http", NEW, "bbb2222")]))
    (deal,) = rows(page, "bench_deal")
    assert "15.9 ms" in deal and "2026-01-01 10:00 UTC, `aaa1111` †" in deal
    assert f"Latest run: {NEW}" in page


def test_a_newer_figure_replaces_the_stored_one_by_bench_case_and_figure():
    stored = table.merge([], [run("bench_word_salad", OLD, "aaa1111"),
                              figure("bench_word_salad", "dev", "real claims refused", 0.5, "%", date=OLD, commit="aaa1111")])
    merged = table.merge(stored, [run("bench_word_salad", NEW, "bbb2222"),
                                  figure("bench_word_salad", "dev", "real claims refused", 0.7, "%", date=NEW, commit="bbb2222")])
    page = table.render(merged)
    (row,) = rows(page, "bench_word_salad")
    assert "0.7 %" in row and "0.5 %" not in row and "†" not in row


def test_a_failed_bench_shows_as_failed_and_one_without_records_says_so():
    page = table.render(table.merge([], [run("bench_rooms_ws", NEW, "bbb2222", exit=1), run("bench_ws_flood", NEW, "bbb2222")]))
    (rooms,) = rows(page, "bench_rooms_ws")
    assert "**failed (exit 1)**" in rooms and "✗" in rooms
    assert "no record" in rows(page, "bench_ws_flood")[0]
    assert "failed (exit 1)" in page.split("## Benches", 1)[1]


def test_main_writes_the_store_and_the_page(tmp_path):
    new = tmp_path / "run.jsonl"
    new.write_text(json.dumps(run("bench_integrity", NEW, "bbb2222")) + "\n"
                   + json.dumps(figure("bench_integrity", "seed 0", "honest held", 0, "per 1,000", date=NEW, commit="bbb2222",
                                       target="<= 1 per 1,000", ok=True)) + "\n")
    store, out = tmp_path / "records.jsonl", tmp_path / "performance.md"
    assert table.main(["--new", str(new), "--store", str(store), "--out", str(out)]) == 0
    assert len(store.read_text().splitlines()) == 2
    assert "| bench_integrity | seed 0 | honest held | 0 per 1,000 |" in out.read_text()


def test_a_figure_carried_over_from_the_prose_goes_once_its_bench_records_its_own():
    legacy = {**figure("bench_export", "100k claims", "time", 60.2, "s", date=OLD, commit="ce98252", target="<= 60 s", ok=False),
              "legacy": True}
    kept = table.render(table.merge([], [legacy]))
    assert "60.2 s" in rows(kept, "bench_export")[0] and "`ce98252` ‡" in rows(kept, "bench_export")[0]
    replaced = table.merge(table.merge([], [legacy]), [
        run("bench_export", NEW, "bbb2222"),
        figure("bench_export", "100,000 claims, 300,000 votes", "export time", 48.0, "s", date=NEW, commit="bbb2222")])
    (row,) = rows(table.render(replaced), "bench_export")
    assert "48 s" in row and "‡" not in row


def test_a_run_of_one_bench_marks_only_that_bench_s_cases_it_did_not_measure():
    first = table.merge([], [
        run("bench_hints_http", OLD, "aaa1111"), run("bench_word_salad", OLD, "aaa1111"),
        figure("bench_hints_http", "20 authors, sqlite", "latency p95", 14.0, "ms", date=OLD, commit="aaa1111"),
        figure("bench_word_salad", "dev", "real claims refused", 0.5, "%", date=OLD, commit="aaa1111")])
    page = table.render(table.merge(first, [
        run("bench_hints_http", NEW, "bbb2222"),
        figure("bench_hints_http", "20 authors, postgresql + Redis", "latency p95", 20.0, "ms", date=NEW, commit="bbb2222")]))
    sqlite, postgresql = rows(page, "bench_hints_http")  # in the order recorded
    assert "†" not in postgresql and "`aaa1111` †" in sqlite
    assert "†" not in rows(page, "bench_word_salad")[0]


def test_a_figure_beside_two_floors_shows_each_floor_and_each_ratio_by_name():
    line = figure("bench_rounds_ws", "1000 rounds postgresql", "vote_ack_ms_p99", 16.0, "ms", date=NEW, commit="bbb2222",
                  target="<= 4x committing floor", ok=True, floor=4.0)
    line.update(floors={"committing": 4.0, "no-database": 0.8}, ratios={"committing": 4.0, "no-database": 20.0})
    (row,) = rows(table.render(table.merge([], [run("bench_rounds_ws", NEW, "bbb2222"), line])), "bench_rounds_ws")
    assert "| 16 ms | 4 ms (committing); 0.8 ms (no-database) | 4 (committing); 20 (no-database) |" in row
    assert "| <= 4x committing floor | ✓ |" in row


def socket_figure(value: float, committing: float, bare: float, *, target: str = "<= 4x committing floor", ok: bool = True) -> dict:
    line = figure("bench_rounds_ws", "1000 rounds postgresql", "vote_ack_ms_p99", value, "ms", date=NEW, commit="bbb2222",
                  target=target, ok=ok, floor=committing)
    line.update(floors={"committing": committing, "no-database": bare},
                ratios={"committing": round(value / committing, 2), "no-database": round(value / bare, 2)})
    return line


def test_three_runs_give_the_median_value_the_median_floor_and_the_median_of_the_runs_ratios():
    runs = [[socket_figure(30.4, 10.0, 2.0), run("bench_rounds_ws", NEW, "bbb2222")],
            [socket_figure(33.0, 8.0, 2.5), run("bench_rounds_ws", NEW, "bbb2222")],
            [socket_figure(31.1, 12.0, 3.0), run("bench_rounds_ws", NEW, "bbb2222")]]
    (line, ran) = table.combine(runs)
    assert line["value"] == 31.1 and line["runs"] == [30.4, 33.0, 31.1]
    assert line["floor"] == 10.0 and line["floors"] == {"committing": 10.0, "no-database": 2.5}
    # the runs' ratios 3.04, 4.12, 2.59: their median, not 31.1 / 10.0
    assert line["ratio"] == 3.04 and line["ratios"] == {"committing": 3.04, "no-database": 13.2}  # 15.2, 13.2, 10.37
    assert "runs_failed" not in line and line["ok"] is True
    assert ran["run"]["exit"] == 0 and ran["run"]["seconds"] == 36.0 and len(ran["run"]["runs"]) == 3
    page = table.render(table.merge([], [line, ran]))
    (row,) = rows(page, "bench_rounds_ws")
    assert "| 31.1 ms (30.4–33, 3 runs) | 10 ms (committing); 2.5 ms (no-database) | 3.04 (committing); 13.2 (no-database) |" in row
    assert "| ok (3 runs) | 12 + 12 + 12 | 1.25 / 1.25 / 1.25; 1.25 / 1.25 / 1.25; 1.25 / 1.25 / 1.25 | 68.2 ms; 68.2 ms; 68.2 ms |" in page


def test_the_target_is_judged_again_on_the_medians_not_taken_from_the_runs():
    # One run of three missed 4x: the median ratio (3.95) holds all the same ...
    held = [[socket_figure(value, 1.0, 1.0, ok=value <= 4)] for value in (4.5, 3.9, 3.95)]
    (line,) = table.combine(held)
    assert line["ratio"] == 3.95 and line["ok"] is True
    # ... and one run that held does not make a median of 4.1 hold.
    missed = [[socket_figure(value, 1.0, 1.0, ok=value <= 4)] for value in (4.5, 3.9, 4.1)]
    (line,) = table.combine(missed)
    assert line["ratio"] == 4.1 and line["ok"] is False
    # ... and "or <= 5 ms" holds on the median value whatever the ratio.
    enough = [[socket_figure(value, 1.0, 1.0, target="<= 2x committing floor or <= 5 ms", ok=False)] for value in (4.0, 4.5, 6.0)]
    (line,) = table.combine(enough)
    assert line["ok"] is True


def test_a_target_not_read_holds_only_when_every_run_said_it_held():
    def deal(value: float, ok: bool) -> list[dict]:
        return [figure("bench_deal", "20000 claims", "p99", value, "ms", date=NEW, commit="bbb2222", target="<= 1.5x 1k", ok=ok,
                       floor=10.0)]
    (line,) = table.combine([deal(12.0, True), deal(16.0, False), deal(13.0, True)])
    assert line["value"] == 13.0 and line["ok"] is False
    (line,) = table.combine([deal(12.0, True), deal(13.0, True)])
    assert line["value"] == 12.5 and line["ok"] is True  # two runs: the mean of the middle two


def test_a_failed_run_is_left_out_and_counted():
    runs = [[socket_figure(30.0, 10.0, 2.0), run("bench_rounds_ws", NEW, "bbb2222")],
            [socket_figure(90.0, 10.0, 2.0), run("bench_rounds_ws", NEW, "bbb2222", exit=1)],
            [socket_figure(32.0, 10.0, 2.0), run("bench_rounds_ws", NEW, "bbb2222")]]
    (line, ran) = table.combine(runs)
    assert line["runs"] == [30.0, 32.0] and line["value"] == 31.0 and line["runs_failed"] == 1
    assert ran["run"]["exit"] == 1
    page = table.render(table.merge([], [line, ran]))
    failed, row = rows(page, "bench_rounds_ws")
    assert "**1 of 3 runs failed (exit 1)**" in failed
    assert "| 31 ms (30–32, 2 runs; 1 failed) |" in row


def test_runs_that_agree_show_no_range():
    lines = [[figure("bench_word_salad", "dev", "real claims refused", 0.5, "%", date=NEW, commit="bbb2222")] for _ in range(3)]
    (row,) = rows(table.render(table.merge([], table.combine(lines))), "bench_word_salad")
    assert "| 0.5 % (3 runs, no spread) |" in row


def test_one_run_is_left_as_it_was():
    lines = [socket_figure(30.4, 10.0, 2.0), run("bench_rounds_ws", NEW, "bbb2222")]
    assert table.combine([lines]) == lines
    (row,) = rows(table.render(table.merge([], lines)), "bench_rounds_ws")
    assert "| 30.4 ms |" in row


@pytest.mark.parametrize(("target", "value", "ratio", "ratios", "unit", "holds"), [
    ("<= 3x committing floor", 30.0, 2.9, {"committing": 2.9, "no-database": 9.0}, "ms", True),
    ("<= 3x committing floor", 30.0, 3.1, {"committing": 3.1, "no-database": 9.0}, "ms", False),
    ("<= 3x committing floor", 30.0, 2.9, None, "ms", True),  # one floor: the line's ratio
    ("<= 3x committing floor", 30.0, None, None, "ms", False),  # no floor measured: as the bench judged it
    ("<= 4x committing floor or <= 5 ms", 4.9, 7.0, {"committing": 7.0, "no-database": 9.0}, "ms", True),
    ("<= 4x committing floor or <= 5 ms", 5.1, 7.0, {"committing": 7.0, "no-database": 9.0}, "ms", False),
    ("<= 4x committing floor, <= 100 ms", 120.0, 2.0, {"committing": 2.0, "no-database": 9.0}, "ms", False),
    ("<= 2x floor, <= 100 ms", 90.0, 1.9, None, "ms", True),
    (">= 0.5x floor", 400.0, 0.52, None, "requests/s", True),
    (">= 0.5x floor", 300.0, 0.39, None, "requests/s", False),
    ("<= 3x floor", 30.0, 3.0, None, "ms", True),
    ("<= 100 ms", 100.0, None, None, "ms", True),
    ("<= 100 KiB", 101.5, None, None, "KiB", False),
    ("<= 1 per 1,000", 0.8, None, None, "per 1,000", True),
    ("<= 50", 50, None, None, "rounds", True),
    ("p95 <= 30 ms", 14.0, None, None, "ms", None),  # not read: the runs' verdicts decide
    ("<= 1.5x 1k", 19.6, 1.05, None, "ms", None),
    ("<= 100 KiB", 90.0, None, None, "MB", None),  # a limit in a unit the value is not in
    ("<= 3x no-such floor", 30.0, 2.0, {"committing": 2.0, "no-database": 9.0}, "ms", None),
    ("held", "held", None, None, "", None),
    (None, 1.0, None, None, "ms", None),
])
def test_target_holds_reads_the_benches_targets(target, value, ratio, ratios, unit, holds):
    line = {"target": target, "value": value, "ratio": ratio, "unit": unit, **({"ratios": ratios} if ratios else {})}
    assert table.target_holds(line) is holds
