"""The research page's plots, drawn on the server as SVG from an export's ``stats.json``.

Each plot is a ``<figure>`` the page includes as it is: an inline SVG (``role="img"``, named by
its title and described by a sentence that states its main figures), a caption, and its data
as a table in a ``<details>`` element, so it reads without JavaScript, in a screen reader, and
at a phone's width (the SVG scales with its box; its text is sized for 360 px). Nothing here
reads the database: the figures are those researchers get in the export's files.

- claims and votes per day (``per_day``);
- labels per split (``table1``);
- accuracy by clues bought, with 95% Wilson intervals (``accuracy_by_clues``; FM2's figure);
- agreement: Fleiss' kappa with its 95% bootstrap interval, overall and per split
  (``validation``);
- the model's error per collection round (``model_in_the_loop.rounds``; ANLI's table);
- difficulty against votes (``difficulty_votes``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from foolgame.core.plots import (  # the drawing itself, shared with a study's page
    FONT,
    HEIGHT,
    LEFT,
    RIGHT,
    SERIES,
    WIDTH,
    BOTTOM,
    Plot,
    Frame as _Frame,
    axis as _axis,
    pct as _pct,
    whiskers as _whiskers,
)

KAPPA_GATE = 0.6


def per_day(stats: Mapping[str, Any]) -> Plot:
    days = stats.get("per_day") or {}
    title = "Claims and votes per day"
    if not days:
        return Plot("plot-per-day", title, "No claim or vote in this export has a day.")
    names = sorted(days)
    claims = [days[d]["claims"] for d in names]
    votes = [days[d]["votes"] for d in names]
    busiest = max(names, key=lambda d: days[d]["claims"] + days[d]["votes"])
    summary = (f"{sum(claims):,} claims and {sum(votes):,} votes over {len(names)} day(s), {names[0]} to {names[-1]}; "
               f"the busiest day, {busiest}, had {days[busiest]['claims']:,} claims and {days[busiest]['votes']:,} votes.")
    top, ticks = _axis(max(max(claims), max(votes)))
    frame = _Frame("plot-per-day", title, summary, x=(-0.5, len(names) - 0.5), y=(0, top))
    frame.y_axis(ticks, "per day", lambda v: f"{v:,.0f}")
    width = (frame.sx(1) - frame.sx(0)) * 0.8
    for index, series in enumerate((claims, votes)):
        bar = max(width / 2, 0.6)
        for i, count in enumerate(series):
            if count:
                x = frame.sx(i) - width / 2 + index * width / 2
                frame.parts.append(f'<rect x="{round(x, 1)}" y="{frame.sy(count)}" width="{round(bar, 1)}" '
                                   f'height="{round(frame.sy(0) - frame.sy(count), 1)}" fill="{SERIES[index]}"/>')
    frame.x_axis([(0, names[0])] if len(names) == 1 else [], "day (UTC)")
    if len(names) > 1:  # the first and last days, each kept inside the plot's width
        frame.text(LEFT, HEIGHT - BOTTOM + 16, names[0], anchor="start")
        frame.text(WIDTH - RIGHT, HEIGHT - BOTTOM + 16, names[-1], anchor="end")
    frame.legend(["claims", "votes"])
    rows = [[d, f"{days[d]['claims']:,}", f"{days[d]['votes']:,}"] for d in names]
    return Plot("plot-per-day", title, summary, frame.svg(), ["day", "claims", "votes"], rows)


def labels_per_split(stats: Mapping[str, Any]) -> Plot:
    table = stats.get("table1") or {}
    splits = [s for s in ("train", "dev", "test") if s in table]
    counts = []
    for split in splits:
        claims = int(table[split]["claims"])
        supports = round(claims * float(table[split]["supports_percent"]) / 100)
        counts.append((split, supports, claims - supports))
    title = "Labels per split"
    total = sum(s + r for _, s, r in counts)
    if not total:
        return Plot("plot-labels", title, "This export has no claim.")
    summary = "; ".join(f"{split}: {s:,} SUPPORTS and {r:,} REFUTES" for split, s, r in counts) + "."
    top, ticks = _axis(max(s + r for _, s, r in counts))
    frame = _Frame("plot-labels", title, summary, x=(-0.5, len(counts) - 0.5), y=(0, top))
    frame.y_axis(ticks, "claims", lambda v: f"{v:,.0f}")
    width = (frame.sx(1) - frame.sx(0)) * 0.5
    for i, (split, supports, refutes) in enumerate(counts):
        x = round(frame.sx(i) - width / 2, 1)
        for index, (low, high) in enumerate(((0, supports), (supports, supports + refutes))):
            if high > low:
                frame.parts.append(f'<rect x="{x}" y="{frame.sy(high)}" width="{round(width, 1)}" '
                                   f'height="{round(frame.sy(low) - frame.sy(high), 1)}" fill="{SERIES[index]}"/>')
    frame.x_axis([(i, split) for i, (split, _, _) in enumerate(counts)], "split")
    frame.legend(["SUPPORTS", "REFUTES"])
    rows = [[split, f"{s:,}", f"{r:,}", _pct(s / (s + r)) if s + r else "n/a"] for split, s, r in counts]
    return Plot("plot-labels", title, summary, frame.svg(), ["split", "SUPPORTS", "REFUTES", "% SUPPORTS"], rows)


def accuracy_by_clues(stats: Mapping[str, Any]) -> Plot:
    rows_in = stats.get("accuracy_by_clues") or []
    title = "Accuracy by clues bought"
    if not rows_in:
        return Plot("plot-clues", title, "No vote in this export: nothing to plot.")
    best = max(rows_in, key=lambda r: r["votes"])
    summary = (f"Share of votes that found the false claim by clues bought in the round, over {sum(r['votes'] for r in rows_in):,} votes; "
               f"the commonest, {best['clues']} clue(s), {_pct(best['accuracy'])} of {best['votes']:,} votes.")
    most = max(r["clues"] for r in rows_in)
    frame = _Frame("plot-clues", title, summary, x=(-0.5, most + 0.5), y=(0, 1))
    frame.y_axis([0, 0.25, 0.5, 0.75, 1.0], "votes correct", lambda v: f"{100 * v:.0f}%")
    for row in rows_in:
        _whiskers(frame, frame.sx(row["clues"]), row["accuracy"], row["ci95"][0], row["ci95"][1], SERIES[0])
    step = max(1, (most + 1) // 8)
    frame.x_axis([(c, str(c)) for c in range(0, most + 1, step)], "clues bought (both claims)")
    rows = [[str(r["clues"]), f"{r['votes']:,}", _pct(r["accuracy"]), f"{_pct(r['ci95'][0])} to {_pct(r['ci95'][1])}"] for r in rows_in]
    return Plot("plot-clues", title, summary, frame.svg(), ["clues", "votes", "correct", "95% interval"], rows)


def agreement(stats: Mapping[str, Any]) -> Plot:
    validation = stats.get("validation") or {}
    groups = [("overall", validation.get("overall") or {})]
    groups += [(split, group) for split, group in (validation.get("splits") or {}).items()]
    shown = [(name, group) for name, group in groups if group.get("kappa") is not None]
    title = "Agreement (Fleiss' kappa)"
    if not shown:
        return Plot("plot-kappa", title, "No validated claim with a defined kappa yet: claims need independent checks.")
    parts = []
    for name, group in shown:
        interval = group.get("kappa_ci95")
        parts.append(f"{name} {group['kappa']:.2f}" + (f" (95% interval {interval[0]:.2f} to {interval[1]:.2f})" if interval else "")
                     + f" over {group['counts']['claims']:,} claims")
    summary = "Fleiss' kappa of the authors' and checkers' labels: " + "; ".join(parts) + f". The release gate asks for {KAPPA_GATE}."
    low = min(0.0, *(g.get("kappa_ci95", [g["kappa"]])[0] if g.get("kappa_ci95") else g["kappa"] for _, g in shown))
    frame = _Frame("plot-kappa", title, summary, x=(-0.5, len(shown) - 0.5), y=(low, 1))
    frame.y_axis([t for t in (-1, -0.5, 0, 0.2, 0.4, 0.6, 0.8, 1.0) if t >= low], "kappa")
    gate = frame.sy(KAPPA_GATE)
    frame.parts.append(f'<line x1="{LEFT}" y1="{gate}" x2="{WIDTH - RIGHT}" y2="{gate}" stroke="{SERIES[1]}" stroke-dasharray="5 4" stroke-width="1.5"/>')
    frame.text(WIDTH - RIGHT - 2, gate - 4, f"gate {KAPPA_GATE}", anchor="end", fill=SERIES[1])
    for i, (_, group) in enumerate(shown):
        interval = group.get("kappa_ci95") or [group["kappa"], group["kappa"]]
        _whiskers(frame, frame.sx(i), group["kappa"], interval[0], interval[1], SERIES[0])
    frame.x_axis([(i, name) for i, (name, _) in enumerate(shown)], "validated claims")
    rows = [[name, f"{g['counts']['claims']:,}", f"{g['kappa']:.3f}",
             f"{g['kappa_ci95'][0]:.3f} to {g['kappa_ci95'][1]:.3f}" if g.get("kappa_ci95") else "n/a"] for name, g in shown]
    return Plot("plot-kappa", title, summary, frame.svg(), ["claims", "validated", "kappa", "95% interval"], rows)


def model_rounds(stats: Mapping[str, Any]) -> Plot:
    rounds = [r for r in ((stats.get("model_in_the_loop") or {}).get("rounds") or []) if r.get("model_error_rate") is not None]
    title = "The model's error per collection round"
    if not rounds:
        return Plot("plot-rounds", title, "No exported claim was written against a model version.")
    summary = "Share of the claims written against each version that it got wrong at the save (verified: people confirmed the label): " + "; ".join(
        f"{r['version']} {_pct(r['model_error_rate'])}, verified {_pct(r['verified_model_error_rate'])}, of {r['claims']:,} claims" for r in rounds) + "."
    frame = _Frame("plot-rounds", title, summary, x=(-0.5, len(rounds) - 0.5), y=(0, 1))
    frame.y_axis([0, 0.25, 0.5, 0.75, 1.0], "claims it got wrong", lambda v: f"{100 * v:.0f}%")
    width = (frame.sx(1) - frame.sx(0)) * 0.6
    for i, row in enumerate(rounds):
        for index, key in enumerate(("model_error_rate", "verified_model_error_rate")):
            value = row.get(key) or 0.0
            x = round(frame.sx(i) - width / 2 + index * width / 2, 1)
            frame.parts.append(f'<rect x="{x}" y="{frame.sy(value)}" width="{round(width / 2, 1)}" '
                               f'height="{round(frame.sy(0) - frame.sy(value), 1)}" fill="{SERIES[index]}"/>')
    frame.x_axis([(i, str(r["version"])) for i, r in enumerate(rounds)], "version written against (round)")
    frame.legend(["wrong", "wrong, label verified"])
    rows = [[str(r["version"]), f"{r['claims']:,}", _pct(r["model_error_rate"]), _pct(r["verified_model_error_rate"])] for r in rounds]
    return Plot("plot-rounds", title, summary, frame.svg(), ["version", "claims", "wrong", "wrong, verified"], rows)


def difficulty_votes(stats: Mapping[str, Any]) -> Plot:
    data = stats.get("difficulty_votes") or {}
    points = data.get("points") or []
    title = "Difficulty against votes"
    if not points:
        return Plot("plot-difficulty", title, "No claim has a difficulty rating yet: ratings come from the game's own votes.")
    difficulties = [d for _, d in points]
    summary = (f"Each dot a claim ({len(points):,} of the {data.get('rated', len(points)):,} rated): its difficulty rating "
               f"(1500 a newcomer's; higher fools more voters) against its votes; ratings from {min(difficulties):,} to {max(difficulties):,}.")
    most, vote_ticks = _axis(max(v for v, _ in points))
    low, high = min(1000, min(difficulties)), max(2000, max(difficulties))
    frame = _Frame("plot-difficulty", title, summary, x=(0, most), y=(low, high))
    frame.y_axis([t for t in range(int(low // 250 * 250), int(high) + 1, 250) if t >= low], "difficulty", lambda v: f"{v:.0f}")
    for votes, difficulty in points:
        frame.parts.append(f'<circle cx="{frame.sx(votes)}" cy="{frame.sy(difficulty)}" r="2.5" fill="{SERIES[0]}" fill-opacity="0.6"/>')
    frame.x_axis([(t, f"{t:,.0f}") for t in vote_ticks], "votes on the claim")
    rows = [[f"{v:,}", f"{d:,}"] for v, d in points[:50]]
    return Plot("plot-difficulty", title, summary, frame.svg(), ["votes", "difficulty"], rows)


PLOTS = (per_day, labels_per_split, accuracy_by_clues, agreement, model_rounds, difficulty_votes)


def research_plots(stats: Mapping[str, Any]) -> list[Plot]:
    """Every plot of the research page from one export's statistics, in the page's order."""
    return [plot(stats) for plot in PLOTS]
