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
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

SPLITS = ("train", "dev", "test")
_TIE_ORDER = {"test": 0, "dev": 1, "train": 2}


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
    """How many pages each rule placed: release, exclusive, hashed."""
    release_conflict_claims: int = 0
    """Release claims on a page whose (majority) release split is another one."""
    withheld_exclusive_claims: int = 0
    """Test-exclusive authors' claims on release pages of train or dev, left out."""


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
    pages: Iterable[PageClaims], *, seed: int, proportions: tuple[float, float, float]
) -> SplitPlan:
    """Assign every page to train, dev or test by the three rules of this module."""
    plan = SplitPlan(page_split={}, pages_by_rule=Counter())
    free: list[PageClaims] = []
    pool = 0
    for page in pages:
        release = _release_split(page.release_claims)
        if release is not None:
            plan.page_split[page.page_id] = release
            plan.pages_by_rule["release"] += 1
            plan.release_conflict_claims += sum(
                n for split, n in page.release_claims.items() if split != release
            )
            if release != "test":
                plan.withheld_exclusive_claims += page.exclusive_claims
        elif page.exclusive_claims:
            plan.page_split[page.page_id] = "test"
            plan.pages_by_rule["exclusive"] += 1
            pool += page.claims
        else:
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
        plan.page_split[page.page_id] = split
        plan.pages_by_rule["hashed"] += 1
        walked += page.claims
    return plan
