"""Which split each page goes to: plain Python, so the rules can be tested with tables.

Three rules, in this order, decide a page's split; a page is never in two splits.

1. **Release pages.** A page with claims imported from a published release keeps that
   release's split, and every other claim on the page follows it, so a new release never
   puts a game claim about a dev page into train. (The FM2 release is page-disjoint, so a
   page holds one release split; should two releases disagree, the split with the most
   claims wins, ties going to test, then dev, and the outvoted claims are counted.)
2. **Test-exclusive authors' pages** go to test (Adversarial NLI kept some annotators for
   test only). When such an author wrote on a release page of train or dev, rule 1 wins
   and that author's claims there are *withheld* from the export: putting them in train
   would break the author rule, moving the page would break the release rule, and
   splitting the page would break disjointness. The count is reported.
3. **Other pages** are ordered by a hash of the seed and their title and cut in the
   requested proportions of *claims*: walking pages in hash order, a page goes to the
   split its middle claim falls in. The pool to share out is these pages plus the
   test-exclusive ones, which count towards test first.

When the export is asked to *re-split release pages*, rule 1 is skipped: release pages go
through rules 2 and 3 with the game's own pages (reported as the rule ``resplit``), so a
database that holds only release pages can still fill train, dev and test.

:func:`split_summary` says, per rule, how many pages and claims went to each split, and for
each split that came out empty why, and which option would fill it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

SPLITS = ("train", "dev", "test")
_TIE_ORDER = {"test": 0, "dev": 1, "train": 2}
RULES = {
    "release": "release page, kept its release split",
    "exclusive": "page of a test-exclusive author, put in test",
    "hashed": "new page, placed by the page-disjoint split of the requested proportions",
    "resplit": "release page, re-split by the requested proportions",
}
"""The rules that place pages, in the order they are tried, with what they mean."""
RESPLIT_OPTION = "resplit_release"
SPLITS_OPTION = "splits"


@dataclass(frozen=True, slots=True)
class PageClaims:
    """What the split rules need to know about one page's exported claims."""

    page_id: int
    title: str
    claims: int
    release_claims: Mapping[str, int] = field(default_factory=dict)
    """Claims per release split (train/dev/test) among the page's claims."""
    exclusive_claims: int = 0
    """Claims by test-exclusive authors."""


@dataclass
class SplitPlan:
    page_split: dict[int, str]
    pages_by_rule: Counter[str]
    """How many pages each rule placed: release, exclusive, hashed, resplit."""
    release_conflict_claims: int = 0
    """Release claims on a page whose (majority) release split is another one."""
    withheld_exclusive_claims: int = 0
    """Test-exclusive authors' claims on release pages of train or dev, left out."""
    placed: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Pages per (rule, split)."""
    placed_claims: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Claims written per (rule, split): a page's claims less those withheld."""

    def place(self, page: PageClaims, split: str, rule: str, *, withheld: int = 0) -> None:
        self.page_split[page.page_id] = split
        self.pages_by_rule[rule] += 1
        self.placed[(rule, split)] += 1
        self.placed_claims[(rule, split)] += page.claims - withheld


def parse_proportions(text: str) -> tuple[float, float, float]:
    """``"0.8,0.1,0.1"`` or ``"80,10,10"`` -> proportions that add up to 1."""
    parts = [part.strip() for part in text.split(",")]
    if len(parts) != 3:
        raise ValueError("splits must be three numbers for train,dev,test, e.g. 0.8,0.1,0.1")
    try:
        values = [float(part) for part in parts]
    except ValueError:
        raise ValueError(f"splits must be numbers, not {text!r}") from None
    if any(value < 0 or value != value for value in values) or sum(values) <= 0:
        raise ValueError("split proportions must be >= 0 and not all 0")
    total = sum(values)
    train, dev, test = (value / total for value in values)
    return (train, dev, test)


def page_hash(title: str, seed: int) -> int:
    """A stable 64-bit position for a page: the same seed always orders pages the same way."""
    digest = hashlib.sha256(f"{seed}\x00{title}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _release_split(release_claims: Mapping[str, int]) -> str | None:
    counted = [(split, n) for split, n in release_claims.items() if n > 0 and split in SPLITS]
    if not counted:
        return None
    return min(counted, key=lambda item: (-item[1], _TIE_ORDER[item[0]]))[0]


def plan_splits(
    pages: Iterable[PageClaims],
    *,
    seed: int,
    proportions: tuple[float, float, float],
    resplit_release: bool = False,
) -> SplitPlan:
    """Assign every page to train, dev or test by the three rules of this module
    (without rule 1 when ``resplit_release``)."""
    plan = SplitPlan(page_split={}, pages_by_rule=Counter())
    free: list[PageClaims] = []
    resplit: set[int] = set()
    pool = 0
    for page in pages:
        release = _release_split(page.release_claims)
        if release is not None and not resplit_release:
            withheld = page.exclusive_claims if release != "test" else 0
            plan.place(page, release, "release", withheld=withheld)
            plan.release_conflict_claims += sum(
                n for split, n in page.release_claims.items() if split != release
            )
            plan.withheld_exclusive_claims += withheld
        elif page.exclusive_claims:
            plan.place(page, "test", "exclusive")
            pool += page.claims
        else:
            if release is not None:
                resplit.add(page.page_id)
            free.append(page)
            pool += page.claims
    train_end = proportions[0] * pool
    dev_end = (proportions[0] + proportions[1]) * pool
    walked = 0
    for page in sorted(free, key=lambda p: (page_hash(p.title, seed), p.title)):
        middle = walked + page.claims / 2
        if middle < train_end:
            split = "train"
        elif middle < dev_end:
            split = "dev"
        else:
            split = "test"
        plan.place(page, split, "resplit" if page.page_id in resplit else "hashed")
        walked += page.claims
    return plan


def split_summary(
    plan: SplitPlan, *, proportions: tuple[float, float, float], resplit_release: bool
) -> dict[str, Any]:
    """How the pages were split, as the export reports it (``stats.json``'s ``split_summary``).

    ``rules``: each rule that placed a page, with its pages and claims per split.
    ``empty_splits``: each split without a claim, with why and the option that would fill it
    (``resplit_release``, ``splits``, or None when there is nothing to export).
    """
    rules = [
        {
            "rule": rule,
            "description": description,
            "pages": {split: plan.placed[(rule, split)] for split in SPLITS},
            "claims": {split: plan.placed_claims[(rule, split)] for split in SPLITS},
        }
        for rule, description in RULES.items()
        if plan.pages_by_rule[rule]
    ]
    claims = Counter({split: sum(plan.placed_claims[(rule, split)] for rule in RULES) for split in SPLITS})
    kept = {split: plan.placed[("release", split)] for split in SPLITS if plan.placed[("release", split)]}
    empty = []
    for index, split in enumerate(SPLITS):
        if claims[split]:
            continue
        if not plan.page_split:
            reason, option = "there are no claims to export", None
        elif proportions[index] == 0:
            reason, option = "the requested proportion is 0", SPLITS_OPTION
        elif kept and not resplit_release:
            where = ", ".join(f"{n} in {name}" for name, n in kept.items())
            reason = f"{sum(kept.values())} release page(s) kept their release split ({where})"
            option = RESPLIT_OPTION
        else:
            shared = sum(plan.pages_by_rule[rule] for rule in ("hashed", "resplit"))
            reason = f"the {shared} page(s) shared out by the requested proportions are too few to reach it"
            option = SPLITS_OPTION
        empty.append({"split": split, "reason": reason, "option": option})
    return {"resplit_release": resplit_release, "rules": rules, "empty_splits": empty}


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def split_summary_lines(summary: Mapping[str, Any], *, fixes: Mapping[str, str]) -> list[str]:
    """The summary as lines of text: one per rule, then one per reason some splits are empty,
    ending with ``fixes[option]`` (how the reader's tool spells the option that fills them)."""
    lines = []
    for row in summary["rules"]:
        placed = [
            f"{split} {_count(row['pages'][split], 'page')} ({_count(row['claims'][split], 'claim')})"
            for split in SPLITS
            if row["pages"][split]
        ]
        lines.append(f"{row['description']}: {', '.join(placed)}")
    grouped: dict[tuple[str, str | None], list[str]] = {}
    for empty in summary["empty_splits"]:
        grouped.setdefault((empty["reason"], empty["option"]), []).append(empty["split"])
    for (reason, option), splits in grouped.items():
        names = " and ".join(splits)
        fix = f" {fixes[option]}" if option is not None and option in fixes else ""
        lines.append(f"{names} {'is' if len(splits) == 1 else 'are'} empty: {reason}.{fix}")
    return lines
