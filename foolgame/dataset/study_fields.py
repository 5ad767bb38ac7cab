"""The studies in an export: each claim, vote and check label made by a study's participant
carries its ``study`` (the slug) and ``arm`` (the arm's name), null for everyone else, and
``stats.json`` gains ``studies``: per study and arm the figures the export computes for
everyone, and for two or more arms each arm's difference from the first with a bootstrap 95%
interval that resamples participants.

A participant is named in the files as every player is, by the run pseudonyms of
``privacy.Fragments``; the platform ids (``Participant.platform_id``, ``platform_extra``) are
never read here. :class:`StudyMarks` is filled as the writers write (one small entry per
participant and one per participant's written claim id), and :meth:`StudyMarks.statistics`
reads the database once more for which of those claims people confirmed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from foolgame.claims.models import Claim
from foolgame.studies.models import Participant

BOOTSTRAP_DRAWS = 1000
BOOTSTRAP_SEED = 0
ID_CHUNK = 2000
FIGURES = ("vote_accuracy", "model_error_rate", "verified_model_error_rate", "claims_per_participant")
"""The scalar figures per arm, each a ratio of two sums over the arm's participants: right votes
over votes; claims the model got wrong at the save over the claims it judged; of those, the
ones people then confirmed, over the same; claims over participants."""
NO_MARK: tuple[None, None] = (None, None)


@dataclass
class _Person:
    """What one participant's records in the export add up to."""

    study: str
    arm: str
    claims: int = 0
    judged: int = 0
    fooled: int = 0
    fooled_ids: list[int] = field(default_factory=list)
    votes: int = 0
    correct: int = 0
    by_clues: Counter[int] = field(default_factory=Counter)
    right_by_clues: Counter[int] = field(default_factory=Counter)
    verified_fooled: int = 0


class StudyMarks:
    """The study and arm of each participant's account, and what each wrote into the export."""

    def __init__(self) -> None:
        rows = Participant.objects.order_by("study_id", "sequence").values_list("user_id", "study__slug", "arm__name", "arm__position", "study_id")
        self._people: dict[int, _Person] = {}
        self._arms: dict[str, list[tuple[int, str]]] = {}
        for user_id, slug, arm, position, _ in rows:
            self._people[user_id] = _Person(study=slug, arm=arm)
            arms = self._arms.setdefault(slug, [])
            if (position, arm) not in arms:
                arms.append((position, arm))

    def __bool__(self) -> bool:
        return bool(self._people)

    def mark(self, user_id: int | None) -> tuple[str | None, str | None]:
        person = self._people.get(user_id) if user_id is not None else None
        return (person.study, person.arm) if person is not None else NO_MARK

    def fields(self, user_id: int | None) -> dict[str, str | None]:
        study, arm = self.mark(user_id)
        return {"study": study, "arm": arm}

    def claim(self, user_id: int, claim_id: int, model_fooled: bool | None) -> None:
        person = self._people.get(user_id)
        if person is None:
            return
        person.claims += 1
        if model_fooled is not None:
            person.judged += 1
            if model_fooled:
                person.fooled += 1
                person.fooled_ids.append(claim_id)

    def vote(self, user_id: int, *, correct: bool | None, clues: int) -> None:
        person = self._people.get(user_id)
        if person is None or correct is None:
            return
        person.votes += 1
        person.correct += int(correct)
        person.by_clues[clues] += 1
        person.right_by_clues[clues] += int(correct)

    def _confirm(self) -> None:
        """Which fooling claims people confirmed (the rule of ``model_in_the_loop.rounds``)."""
        from foolgame.verifier.services import confirmed_by_people  # the rule lives with the payments

        fooled = [pk for person in self._people.values() for pk in person.fooled_ids]
        confirmed: set[int] = set()
        for start in range(0, len(fooled), ID_CHUNK):
            chunk = fooled[start : start + ID_CHUNK]
            confirmed.update(Claim.objects.filter(confirmed_by_people(), pk__in=chunk).values_list("pk", flat=True))
        for person in self._people.values():
            person.verified_fooled = sum(1 for pk in person.fooled_ids if pk in confirmed)

    def statistics(self) -> list[dict[str, Any]]:
        """``stats.json``'s ``studies``: one object per study with participants (docs/dataset.md)."""
        if not self._people:
            return []
        self._confirm()
        out = []
        for slug, arms in self._arms.items():
            people = {name: [p for p in self._people.values() if p.study == slug and p.arm == name] for _, name in sorted(arms)}
            names = list(people)
            clue_counts = sorted({clues for group in people.values() for p in group for clues in p.by_clues})
            block: dict[str, Any] = {
                "study": slug,
                "arms": [_arm_figures(name, group, clue_counts) for name, group in people.items()],
                "differences": [],
                "bootstrap": {"draws": BOOTSTRAP_DRAWS, "seed": BOOTSTRAP_SEED, "resampled": "participants, within each arm", "interval": "percentile 95%"},
            }
            for name in names[1:]:
                block["differences"].append(_difference(name, names[0], people[name], people[names[0]], clue_counts))
            out.append(block)
        return out


def _sums(group: Iterable[_Person], clue_counts: list[int]) -> np.ndarray:
    """One row per participant: the numerators and denominators of every figure."""
    rows = []
    for p in group:
        row = [p.correct, p.votes, p.fooled, p.judged, p.verified_fooled, p.judged, p.claims, 1]
        for clues in clue_counts:
            row += [p.right_by_clues[clues], p.by_clues[clues]]
        rows.append(row)
    return np.array(rows, dtype=float).reshape(len(rows), 8 + 2 * len(clue_counts))


def _ratios(totals: np.ndarray) -> np.ndarray:
    """Figures from column sums (the last axis): NaN over nothing."""
    numerators, denominators = totals[..., 0::2], totals[..., 1::2]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominators > 0, numerators / np.where(denominators > 0, denominators, 1), np.nan)


def _rounded(value: float) -> float | None:
    return None if np.isnan(value) else round(float(value), 4)


def _arm_figures(name: str, group: list[_Person], clue_counts: list[int]) -> dict[str, Any]:
    sums = _sums(group, clue_counts).sum(axis=0)
    ratios = _ratios(sums)
    figures = {key: _rounded(ratios[i]) for i, key in enumerate(FIGURES)}
    by_clues = []
    for i, clues in enumerate(clue_counts):
        votes = int(sums[8 + 2 * i + 1])
        if votes:
            by_clues.append({"clues": clues, "votes": votes, "correct": int(sums[8 + 2 * i]), "accuracy": _rounded(ratios[4 + i])})
    return {
        "arm": name,
        "participants": len(group),
        "claims": int(sums[6]),
        "votes": int(sums[1]),
        "model_judged_claims": int(sums[3]),
        **figures,
        "accuracy_by_clues": by_clues,
    }


def _difference(name: str, first: str, arm: list[_Person], base: list[_Person], clue_counts: list[int]) -> dict[str, Any]:
    """``arm - first`` for each figure, with a percentile bootstrap 95% interval: each draw
    resamples each arm's participants with replacement (their records travel together, since
    one person's votes or claims are not independent), seeded, so the same export gives the
    same intervals. Null when the figure is undefined in either arm, or in most draws."""
    a, b = _sums(arm, clue_counts), _sums(base, clue_counts)
    point = _ratios(a.sum(axis=0)) - _ratios(b.sum(axis=0))
    intervals: list[list[float] | None] = [None] * len(point)
    if len(a) and len(b):
        rng = np.random.default_rng(BOOTSTRAP_SEED)
        draws = np.empty((BOOTSTRAP_DRAWS, len(point)))
        for d in range(BOOTSTRAP_DRAWS):
            sa = a[rng.integers(0, len(a), len(a))].sum(axis=0)
            sb = b[rng.integers(0, len(b), len(b))].sum(axis=0)
            draws[d] = _ratios(sa) - _ratios(sb)
        for i in range(len(point)):
            column = draws[:, i]
            defined = column[~np.isnan(column)]
            if not np.isnan(point[i]) and len(defined) * 2 > BOOTSTRAP_DRAWS:
                low, high = np.percentile(defined, [2.5, 97.5])
                intervals[i] = [round(float(low), 4), round(float(high), 4)]

    def item(i: int) -> dict[str, Any]:
        return {"difference": _rounded(point[i]), "ci95": intervals[i] if not np.isnan(point[i]) else None}

    return {
        "arm": name,
        "against": first,
        **{key: item(i) for i, key in enumerate(FIGURES)},
        "accuracy_by_clues": [{"clues": clues, **item(4 + i)} for i, clues in enumerate(clue_counts)],
    }


def _cell(value: float | None, *, share: bool = True) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.1f}%" if share else f"{value:.2f}"


def _interval(item: dict[str, Any], *, share: bool = True) -> str:
    if item["difference"] is None:
        return "n/a"
    scale, unit = (100, " pt") if share else (1, "")
    text = f"{scale * item['difference']:+.{1 if share else 2}f}{unit}"
    if item["ci95"] is not None:
        low, high = item["ci95"]
        text += f" [{scale * low:+.{1 if share else 2}f}, {scale * high:+.{1 if share else 2}f}]"
    return text


def studies_markdown(studies: list[dict[str, Any]]) -> list[str]:
    """``stats.md``'s studies: a table per study, a row per arm, then the differences."""
    lines = ["## Studies", "", "Per arm, over the records of the study's participants; differences from the first arm with a "
             "95% bootstrap interval over participants (docs/dataset.md, Studies in the export).", ""]
    for study in studies:
        lines += [f"### {study['study']}", "", "| arm | participants | claims | votes | vote accuracy | model error rate | verified model error rate | claims per participant |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for arm in study["arms"]:
            lines.append(
                f"| {arm['arm']} | {arm['participants']:,} | {arm['claims']:,} | {arm['votes']:,} | {_cell(arm['vote_accuracy'])} "
                f"| {_cell(arm['model_error_rate'])} | {_cell(arm['verified_model_error_rate'])} | {_cell(arm['claims_per_participant'], share=False)} |"
            )
        for difference in study["differences"]:
            lines += [
                "",
                f"{difference['arm']} minus {difference['against']}: vote accuracy {_interval(difference['vote_accuracy'])}, "
                f"model error rate {_interval(difference['model_error_rate'])}, verified model error rate "
                f"{_interval(difference['verified_model_error_rate'])}, claims per participant "
                f"{_interval(difference['claims_per_participant'], share=False)}.",
            ]
        lines.append("")
    return lines
