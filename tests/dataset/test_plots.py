"""The research page's plots: drawn on the server from stats.json, each named and described,
with its data as a table; and the statistics they read (per day, clues, kappa's interval,
difficulty against votes) computed from a real export."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from foolgame.dataset import plots
from foolgame.dataset.exporter import ExportOptions
from foolgame.dataset.services import dataset_export
from tests.dataset.test_certify import check_claims

SVG = "{http://www.w3.org/2000/svg}"

STATS = {
    "per_day": {"2026-11-01": {"claims": 12, "votes": 0}, "2026-11-02": {"claims": 3, "votes": 40}, "2026-11-05": {"claims": 0, "votes": 7}},
    "table1": {"train": {"claims": 100, "supports_percent": 49.0}, "dev": {"claims": 20, "supports_percent": 55.0},
               "test": {"claims": 0, "supports_percent": 0.0}, "total": {"claims": 120, "supports_percent": 50.0}},
    "accuracy_by_clues": [{"clues": 0, "votes": 30, "correct": 21, "accuracy": 0.7, "ci95": [0.52, 0.83]},
                          {"clues": 3, "votes": 10, "correct": 9, "accuracy": 0.9, "ci95": [0.6, 0.98]}],
    "validation": {"overall": {"kappa": 0.71, "kappa_ci95": [0.6, 0.8], "counts": {"claims": 40}},
                   "splits": {"train": {"kappa": 0.65, "kappa_ci95": [0.5, 0.79], "counts": {"claims": 30}},
                              "dev": {"kappa": None, "kappa_ci95": None, "counts": {"claims": 0}}}},
    "model_in_the_loop": {"rounds": [{"version": "v1", "claims": 50, "model_error_rate": 0.4, "verified_model_error_rate": 0.3},
                                     {"version": "v2", "claims": 20, "model_error_rate": 0.25, "verified_model_error_rate": None}]},
    "difficulty_votes": {"rated": 3, "points": [[1, 1480], [4, 1620], [12, 1710]]},
}


def parsed(plot: plots.Plot) -> ET.Element:
    return ET.fromstring(plot.svg)


def test_every_plot_is_an_svg_image_named_and_described_by_its_figures() -> None:
    drawn = plots.research_plots(STATS)
    assert [p.id for p in drawn] == ["plot-per-day", "plot-labels", "plot-clues", "plot-kappa", "plot-rounds", "plot-difficulty"]
    for plot in drawn:
        svg = parsed(plot)
        assert svg.get("role") == "img" and svg.get("aria-labelledby") == f"{plot.id}-title {plot.id}-desc"
        assert svg.find(f"{SVG}title").text == plot.title and svg.find(f"{SVG}desc").text == plot.summary
        assert plot.rows and all(len(row) == len(plot.head) for row in plot.rows)
    by_id = {p.id: p for p in drawn}
    assert "15 claims and 47 votes over 3 day(s), 2026-11-01 to 2026-11-05" in by_id["plot-per-day"].summary
    assert "train: 49 SUPPORTS and 51 REFUTES; dev: 11 SUPPORTS and 9 REFUTES" in by_id["plot-labels"].summary
    assert "0 clue(s), 70.0% of 30 votes" in by_id["plot-clues"].summary
    assert "overall 0.71 (95% interval 0.60 to 0.80) over 40 claims; train 0.65" in by_id["plot-kappa"].summary
    assert "v1 40.0%, verified 30.0%, of 50 claims; v2 25.0%, verified n/a" in by_id["plot-rounds"].summary
    assert "ratings from 1,480 to 1,710" in by_id["plot-difficulty"].summary


def test_bars_and_points_stand_where_their_figures_say() -> None:
    labels = parsed(plots.labels_per_split(STATS))
    bars = labels.findall(f"{SVG}rect")[:4]  # train's two segments, then dev's (legend swatches come after)
    heights = [float(bar.get("height")) for bar in bars]
    assert heights[0] / heights[1] == pytest.approx(49 / 51, rel=0.02) and heights[0] / heights[2] == pytest.approx(49 / 11, rel=0.02)
    clues = parsed(plots.accuracy_by_clues(STATS)).findall(f"{SVG}circle")
    assert float(clues[0].get("cy")) > float(clues[1].get("cy"))  # 70% drawn below 90%
    kappa = plots.agreement(STATS)
    assert [row[0] for row in kappa.rows] == ["overall", "train"]  # dev has no kappa: not drawn


@pytest.mark.parametrize("plot", plots.PLOTS, ids=lambda f: f.__name__)
def test_a_plot_without_data_says_why_and_draws_nothing(plot) -> None:
    empty = plot({"table1": {"train": {"claims": 0, "supports_percent": 0}}, "validation": {}})
    assert empty.svg == "" and empty.rows == [] and empty.summary


@pytest.mark.django_db
def test_stats_hold_what_the_plots_read_from_the_written_files(world, tmp_path: Path) -> None:
    check_claims([world.claims[key] for key in ("t0", "f0", "t1", "f1", "t2", "f2")], labels=4)
    out = tmp_path / "out"
    dataset_export(out_dir=out, options=ExportOptions(splits=(0.4, 0.3, 0.3)), salt=b"0" * 32)
    stats = json.loads((out / "stats.json").read_text())
    votes = [json.loads(line) for line in (out / "votes.jsonl").read_text().splitlines()]
    claims = [json.loads(line) for split in ("train", "dev", "test") for line in (out / f"{split}.jsonl").read_text().splitlines()]
    assert sum(day["votes"] for day in stats["per_day"].values()) == len(votes) == 4
    assert sum(day["claims"] for day in stats["per_day"].values()) == len(claims)
    voted = [v for v in votes if v["outcome"] == "voted"]
    by_clues = {row["clues"]: row for row in stats["accuracy_by_clues"]}
    assert sum(row["votes"] for row in by_clues.values()) == len(voted) == 2
    expected: dict[int, list[int]] = {}
    for vote in voted:
        row = expected.setdefault(vote["clues_revealed_true"] + vote["clues_revealed_false"], [0, 0])
        row[0] += 1
        row[1] += vote["correct"]
    assert {c: [r["votes"], r["correct"]] for c, r in by_clues.items()} == expected
    overall = stats["validation"]["overall"]
    low, high = overall["kappa_ci95"]
    assert low <= overall["kappa"] <= high  # every check agrees with its author: kappa 1, interval [1, 1]
    assert stats["difficulty_votes"]["rated"] == sum(1 for c in claims if c["difficulty"] is not None)
    drawn = plots.research_plots(stats)
    assert all(p.svg for p in drawn if p.id in ("plot-per-day", "plot-labels", "plot-clues", "plot-kappa"))
