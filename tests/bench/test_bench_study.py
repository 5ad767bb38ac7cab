"""bench/bench_study.py, the study benchmark (issue 41, item 7): its split of the claims, its
own count of a bonus, and a bounded run of 12 participants on the committed sample whose
printed figures must be right (the bonus files agree with the bench's count to the penny, the
arms are balanced, the failers dealt a settled claim are the ones screened out, every
participant got a code, each arm's clue cost is the arm's)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from bench import bench_study

REPO = Path(__file__).resolve().parents[2]


def _row(page: str, label: str, votes: int, correct: int, text: str) -> dict:
    return {"wikipedia_page": page, "label": label, "total_votes": votes, "correct_votes": correct, "text": text}


def test_split_imports_every_settled_claim_and_one_of_each_label_a_page_and_holds_out_only_open_ones():
    rows = [
        _row("Alpha", "SUPPORTS", 5, 5, "a settled true claim"),
        _row("Alpha", "SUPPORTS", 2, 1, "an open true claim"),
        _row("Alpha", "REFUTES", 1, 1, "the first open false claim"),
        _row("Alpha", "REFUTES", 6, 3, "a second open false claim (6 voters, half agreeing)"),
        _row("Beta", "REFUTES", 10, 9, "a settled false claim"),
        _row("Beta", "REFUTES", 10, 8, "another settled false claim (80% agree)"),
    ]
    imported, held = bench_study.split_claims(rows)
    texts = {row["text"] for row in imported}
    assert {"a settled true claim", "a settled false claim", "another settled false claim (80% agree)"} <= texts
    # Alpha has no settled false claim: its first open one is imported, so rounds can be dealt on it.
    assert "the first open false claim" in texts
    assert {key: [row["text"] for row in claims] for key, claims in held.items()} == {
        ("Alpha", "SUPPORTS"): ["an open true claim"],
        ("Alpha", "REFUTES"): ["a second open false claim (6 voters, half agreeing)"],
    }
    assert len(imported) + sum(len(claims) for claims in held.values()) == len(rows)


def test_the_bench_counts_a_bonus_by_the_study_rules_with_its_cap():
    bot = bench_study.Bot(0, "prolific", "P0", False, random.Random(0))
    bot.right_votes, bot.right_checks = 1, 1
    assert bench_study.bonus_of(bot, verified=set()) == Decimal("0.15")
    bot.fooling_claim_ids = [7]
    assert bench_study.bonus_of(bot, verified=set()) == Decimal("0.15")  # fooled the model, but nobody confirmed it
    assert bench_study.bonus_of(bot, verified={7}) == Decimal(bench_study.BONUS["cap"])  # 0.65, capped at 0.30


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("redis-server"), reason="the bench starts a redis-server of its own")
def test_a_run_of_12_participants_prints_figures_that_hold(tmp_path):
    run = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_study.py"), "--participants", "12", "--parallel", "3",
         "--claims-file", str(REPO / "fixtures" / "fm2-dev-sample.jsonl"), "--fail-every", "4"],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=1500,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    assert figures["problems"] == []
    assert figures["arms"] == {"A": 6, "B": 6}  # three whole blocks of four
    assert figures["bonus_file_total"] == figures["bonus_counted_total"] and figures["bonus_differing"] == 0
    assert Decimal(figures["bonus_file_total"]) > 0 and figures["right_votes"] > 0
    assert figures["screened_out"] == figures["failers_dealt_settled"] and figures["screened_without_failing"] == 0
    assert figures["finished"] + figures["screened_out"] == 12 and figures["without_code"] == 0
    # The server applied each arm's clue cost to its participants' rounds.
    assert abs(figures["clue_cost_s"]["A"] - 20) < 2 and abs(figures["clue_cost_s"]["B"] - 5) < 2
    assert f"bonus total: {figures['bonus_file_total']} from the bonus files" in run.stdout
    # The difference the server's export recovers is the one the bots played, with an interval around it.
    assert abs(figures["recovered"] - figures["played"]) <= 0.00015 and figures["misjudged_rounds"] == 0 and figures["odd_votes"] == 0
    assert figures["ci95"] is not None and figures["ci95"][0] <= figures["recovered"] <= figures["ci95"][1]
