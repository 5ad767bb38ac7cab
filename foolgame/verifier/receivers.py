"""What this app does when lower apps tell it something (foolgame/core/hooks.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from foolgame.core import events, hooks

# The services (and through them the retrieval stack) load on first use, not with the app:
# a command that never needs a verdict (an export) does not import faiss and torch's kin.


class Verdicts(hooks.ModelVerdicts):
    """Authoring's verdicts come from the active version."""

    def on_draft(self, *, task: Any, text: str, gold: Sequence[Any]) -> dict[str, Any] | None:
        from foolgame.verifier import services

        return services.verdict_on_draft(task=task, text=text, gold=gold)

    def on_save(self, *, claim: Any, task: Any, gold: Sequence[Any]) -> dict[str, Any] | None:
        from foolgame.verifier import services

        return services.verdict_on_save(claim=claim, task=task, gold=gold)


def check_answered(*, check_id: int, claim_id: int) -> None:
    """The model answers the same check, and the claim's author may now be due model points
    (after the commit, in the worker or the background thread: never in the request)."""
    from foolgame.verifier.tasks import verifier_after_checks

    events.task_batched_in_background_on_commit(verifier_after_checks, [check_id])


def claims_voted(*, claim_ids: Sequence[int]) -> None:
    """The model answers the rounds of these claims once their answer is out."""
    from foolgame.verifier.tasks import verifier_after_votes

    events.task_batched_in_background_on_commit(verifier_after_votes, claim_ids)


def skill_board_rows() -> list[dict[str, Any]]:
    from foolgame.verifier import selectors

    return selectors.skill_board_rows()
