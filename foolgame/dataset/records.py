"""The export's own types: its options, its progress callback and what the writers counted.

They sit below every module of the export (the writers, the exporter, the reports, the
services), so that each imports them from here and none from a module above it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from foolgame.dataset.splits import SplitPlan
from foolgame.verifier.models import VerifierVersion

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: called as the export moves on."""

FORMATS = ("jsonl", "csv")
BASELINE_MAX_CLAIMS = 8_000


class ExportError(ValueError):
    """Bad export options (unknown author, bad splits...): nothing was written."""


@dataclass(frozen=True)
class ExportOptions:
    seed: int = 0
    splits: tuple[float, float, float] = (0.8, 0.1, 0.1)
    exclusive_test_authors: frozenset[str] = frozenset()
    """Usernames whose claims go to test only."""
    include_removed: bool = False
    resplit_release: bool = False
    """Release pages are split by the requested proportions like the game's own, instead of
    keeping their release split (``foolgame.dataset.splits``)."""
    formats: tuple[str, ...] = FORMATS
    chunk_size: int = 2000
    baseline_max_claims: int = BASELINE_MAX_CLAIMS
    """The claim-only classifier learns from at most this many claims (memory bound)."""
    certify: bool = False
    """Write ``quality.json``: the release's quality gates (``foolgame.dataset.certify``)."""


@dataclass
class WriteSummary:
    claims: Counter[str] = field(default_factory=Counter)
    """Claims written per split."""
    votes: int = 0
    rounds_left_out: Counter[str] = field(default_factory=Counter)
    """Ended rounds not written, by why (a claim not exported, labels now equal)."""
    removed_left_out: int = 0
    voided_rounds: int = 0
    """Voided rounds written (marked ``outcome: voided``, no vote)."""
    plan: SplitPlan | None = None
    files: list[str] = field(default_factory=list)
    active_version: VerifierVersion | None = None
    """The verifier version active when the claims were written (``hard_for``'s), or None."""
    studies: Any = None
    """``study_fields.StudyMarks``: what the studies' participants wrote, for ``stats.json``'s ``studies``."""
