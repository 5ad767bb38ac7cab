"""What moderation does when a lower app sends a hook (``core.hooks``), connected in
``ModerationConfig.ready()``: votes, reports and imports make claims' quality flags stale."""

from __future__ import annotations

from collections.abc import Sequence

from foolgame.core import events


def claims_voted(*, claim_ids: Sequence[int]) -> None:
    """A vote's claims: their flags are refreshed after the commit, batched with the other
    votes of the next moment (a room's 20 votes on one pair cost one refresh)."""
    from foolgame.moderation.tasks import refresh_claims_quality

    events.task_batched_on_commit(refresh_claims_quality, claim_ids)


def claim_reported(*, claim_id: int) -> None:
    from foolgame.moderation.tasks import refresh_claims_quality

    events.task_on_commit(refresh_claims_quality, [claim_id])


def claims_imported(*, claim_ids: Sequence[int]) -> None:
    """An import's new claims get their flags in the import's own transaction, from the
    release's vote counts: the queue lists the release's too-hard claims as soon as the
    import commits, without waiting for the hourly refresh."""
    from foolgame.moderation.quality import quality_refresh_chunked

    quality_refresh_chunked(claim_ids=claim_ids)
