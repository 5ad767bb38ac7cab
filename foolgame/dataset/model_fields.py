"""The model in the loop's fields of each claim record, read chunk by chunk as the claims
are written (:class:`ClaimModels`, called by the claims' writer like
``validation.ClaimChecks``): every verifier version's verdict on the claim with its gold
evidence (``model_verdicts``), the version it was written against (``model_version``), whether
that version's verdict at the save was wrong (``model_fooled``), the drafts it judged
(``tries``), and whom the claim is hard for (``hard_for``: people by its votes, the model by
the active version's verdict; ``foolgame.verifier.services.hard_for``). Four queries a chunk
(and the author's settings for a claim paid without a ledger row), none when no version
exists.

The figures that read the written files back are :mod:`foolgame.dataset.model_loop`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Sum

from foolgame.core import hooks
from foolgame.players.models import LedgerEntry
from foolgame.verifier import selectors as verifier_selectors
from foolgame.verifier.models import VerifierVersion, WrittenAgainst


def version_name(number: int) -> str:
    """How the export names a version (``model_version``, the keys of ``model_verdicts``)."""
    return f"v{number}"


@dataclass(frozen=True)
class ChunkModels:
    """A chunk's model rows: per claim its verdicts by version name, what it was written
    against (``verifier.selectors.written_by_claim``), and the model points the ledger paid
    its author for it (none for a claim not paid, or paid 0 by a study's arm)."""

    verdicts: dict[int, dict[str, dict[str, Any]]] = field(default_factory=dict)
    written: dict[int, dict[str, Any]] = field(default_factory=dict)
    paid: dict[int, int] = field(default_factory=dict)


class ClaimModels:
    """The model fields of the claims as they are written: :meth:`read` takes a chunk's rows
    (four queries, none when no version exists), :meth:`fields` gives a claim's fields and
    :meth:`points_shown` the model points its record shows of its author.

    The active version is the one active when the export started (:attr:`active`): the
    claims' ``hard_for`` and the test figures are both about it, whatever an operator
    activates meanwhile.
    """

    def __init__(self) -> None:
        versions = verifier_selectors.versions()
        self.any_version = versions.exists()
        self.active: VerifierVersion | None = versions.filter(status=VerifierVersion.Status.ACTIVE).first()
        self._active_name = version_name(self.active.number) if self.active is not None else ""
        self._hard_for: Callable[..., str | None] | None = None
        if self.active is not None:
            from foolgame.verifier.services import hard_for  # the verifier's rule, only with a model to judge by

            self._hard_for = hard_for

    def read(self, ids: list[int]) -> ChunkModels:
        if not self.any_version:
            return ChunkModels()
        return ChunkModels(
            verdicts=verifier_selectors.verdicts_by_claim(claim_ids=ids),
            written=verifier_selectors.written_by_claim(claim_ids=ids),
            paid=self._model_points_paid(ids),
        )

    @staticmethod
    def _model_points_paid(ids: list[int]) -> dict[int, int]:
        """``{claim id: model points paid for it}`` over the claims paid (``WrittenAgainst.paid``):
        what the ledger holds for the claim; for a claim paid without a ledger row (its
        author's arm pays 0), the author's ``model_points`` (``hooks.player_settings``)."""
        paid = list(WrittenAgainst.objects.filter(claim_id__in=ids, paid=True).values_list("claim_id", "claim__author_id"))
        if not paid:
            return {}
        ledger = dict(
            LedgerEntry.objects.filter(kind=LedgerEntry.Kind.MODEL, claim_id__in=[claim_id for claim_id, _ in paid])
            .values_list("claim_id")
            .annotate(total=Sum("amount"))
            .order_by()
        )
        provider = hooks.player_settings.get()
        return {
            claim_id: int(ledger[claim_id]) if claim_id in ledger else int(provider.settings_for(player_id=author_id)["model_points"])
            for claim_id, author_id in paid
        }

    def points_shown(self, chunk: ChunkModels, claim_id: int) -> int:
        """The model points the claim earned its author (the public ``model`` leaderboard
        shows them): ``model_fooled`` with a label people confirmed tells a reader they were
        paid, so the author's run counts them (``privacy.Fragments``). What the ledger paid
        for the claim, which is the author's arm's ``model_points`` in a study (not the
        setting ``MODEL_POINTS``), and at least what the file reveals."""
        return int(chunk.paid.get(claim_id, 0))

    def fields(self, chunk: ChunkModels, claim_id: int, *, label: str, votes: int, smoothed_correctness: float) -> dict[str, Any]:
        """``smoothed_correctness`` as written, so that ``hard_for`` can be checked from the file."""
        mine = chunk.verdicts.get(claim_id, {})
        against = chunk.written.get(claim_id)
        hard = None
        if self._hard_for is not None:
            active = mine.get(self._active_name)
            hard = self._hard_for(
                people_wrong_share=1 - smoothed_correctness if votes else None,
                model_wrong=active["label"] != label if active is not None else None,
            )
        return {
            "model_verdicts": mine,
            "model_version": version_name(against["version"]) if against else None,
            "model_fooled": against["fooled"] if against else None,
            "tries": against["tries"] if against else None,
            "hard_for": hard,
        }
