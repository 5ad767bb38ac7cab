"""Plots drawn on the server as SVG: a frame with linear scales, its axes, legend and marks,
and the ``Plot`` a page includes as it is (an inline SVG named by its title and described by a
sentence with its main figures, a caption, and its data as a table). The research pages'
plots are drawn with it: the dataset export's (``foolgame.dataset.plots``) and a study's
(``foolgame.studies.research_views``). Plain drawing: it reads no model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.utils.html import escape

WIDTH, HEIGHT = 400, 230
FONT = 13
"""Text size in the SVG's units: 10.4 px on a 390 px phone, where the plot is 320 px wide."""
LEFT, RIGHT, TOP, BOTTOM = 48, 14, 30, 48
"""Margins: the legend sits in the top one, above the plot area."""
INK = "#222"
GRID = "#ccc"
SERIES = ("#1f5fa8", "#a8431e")
"""Two series colours, each above 4.5:1 against white (text drawn in them stays readable)."""


@dataclass
class Plot:
    id: str
    title: str
    summary: str
    """One sentence with the plot's main figures: the SVG's description and the caption."""
    svg: str = ""
    """Empty when there is nothing to draw (then ``summary`` says why)."""
    head: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


class Frame:
    """A plot area with a linear x and y scale, and the SVG elements drawn into it."""

    def __init__(self, plot_id: str, title: str, summary: str, *, x: tuple[float, float], y: tuple[float, float]) -> None:
        self.plot_id, self.title, self.summary = plot_id, title, summary
        self.x0, self.x1 = x if x[1] > x[0] else (x[0], x[0] + 1)
        self.y0, self.y1 = y if y[1] > y[0] else (y[0], y[0] + 1)
        self.parts: list[str] = []

    def sx(self, value: float) -> float:
        return round(LEFT + (value - self.x0) / (self.x1 - self.x0) * (WIDTH - LEFT - RIGHT), 1)

    def sy(self, value: float) -> float:
        return round(HEIGHT - BOTTOM - (value - self.y0) / (self.y1 - self.y0) * (HEIGHT - TOP - BOTTOM), 1)

    def text(self, x: float, y: float, words: str, *, anchor: str = "middle", size: int = FONT, fill: str = INK, rotate: bool = False) -> None:
        turn = f' transform="rotate(-90 {x} {y})"' if rotate else ""
        self.parts.append(f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{turn}>{escape(words)}</text>')

    def y_axis(self, ticks: Sequence[float], label: str, fmt: Callable[[float], str] = lambda v: f"{v:g}") -> None:
        for tick in ticks:
            y = self.sy(tick)
            self.parts.append(f'<line x1="{LEFT}" y1="{y}" x2="{WIDTH - RIGHT}" y2="{y}" stroke="{GRID}" stroke-width="1"/>')
            self.text(LEFT - 5, y + 4, fmt(tick), anchor="end")
        self.text(12, (TOP + HEIGHT - BOTTOM) / 2, label, rotate=True)

    def x_axis(self, ticks: Sequence[tuple[float, str]], label: str) -> None:
        base = HEIGHT - BOTTOM
        self.parts.append(f'<line x1="{LEFT}" y1="{base}" x2="{WIDTH - RIGHT}" y2="{base}" stroke="{INK}" stroke-width="1"/>')
        for value, words in ticks:
            self.text(self.sx(value), base + 16, words)
        self.text((LEFT + WIDTH - RIGHT) / 2, HEIGHT - 8, label)

    def legend(self, names: Sequence[str]) -> None:
        x = LEFT + 6
        for index, name in enumerate(names):
            self.parts.append(f'<rect x="{x}" y="6" width="10" height="10" fill="{SERIES[index]}"/>')
            self.text(x + 14, 15, name, anchor="start", fill=SERIES[index])
            x += 24 + 8 * len(name)

    def svg(self) -> str:
        title_id, desc_id = f"{self.plot_id}-title", f"{self.plot_id}-desc"
        return (
            f'<svg class="plot" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-labelledby="{title_id} {desc_id}" '
            f'xmlns="http://www.w3.org/2000/svg" font-family="system-ui, sans-serif">'
            f'<title id="{title_id}">{escape(self.title)}</title><desc id="{desc_id}">{escape(self.summary)}</desc>'
            + "".join(self.parts)
            + "</svg>"
        )


def axis(value: float, *, most_ticks: int = 5) -> tuple[float, list[float]]:
    """A round top at or above ``value`` and its ticks from 0: steps of 1, 2 or 5 times a power of ten."""
    step = 1.0
    while value / step > most_ticks:
        for factor in (2, 2.5, 2):  # 1 -> 2 -> 5 -> 10
            step *= factor
            if value / step <= most_ticks:
                break
    count = max(1, math.ceil(value / step))
    return step * count, [step * i for i in range(count + 1)]


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"




def whiskers(frame: Frame, x: float, value: float, low: float, high: float, colour: str) -> None:
    frame.parts.append(f'<line x1="{x}" y1="{frame.sy(low)}" x2="{x}" y2="{frame.sy(high)}" stroke="{colour}" stroke-width="2"/>')
    for end in (low, high):
        frame.parts.append(f'<line x1="{x - 4}" y1="{frame.sy(end)}" x2="{x + 4}" y2="{frame.sy(end)}" stroke="{colour}" stroke-width="2"/>')
    frame.parts.append(f'<circle cx="{x}" cy="{frame.sy(value)}" r="4" fill="{colour}"/>')

