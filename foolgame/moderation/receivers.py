"""What moderation does when a lower app sends a hook (``core.hooks``), connected in
``ModerationConfig.ready()``: votes, reports and imports make claims' quality flags stale."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db.models import Q

from foolgame.core import events
from foolgame.core.hooks import PlayRules


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


def claims_kept_from(*, players: Sequence[Any]) -> Q:
    """The claims any of these players saw with their answer as a moderator (``Sighting``):
    never dealt to them, since their vote on one would be no evidence."""
    return Q(moderation_sightings__moderator__in=players)


class ModerationPlayRules(PlayRules):
    """Moderation's answers to voting's ``play_rules``: the flags, sightings and holds it keeps
    on its own rows, handed over as lookups from the claims or players voting queries."""

    def claims_out_of_play(self, prefix: str = "") -> Q:
        return Q(**{f"{prefix}quality__out_of_play": True})

    def claims_answer_seen(self, *, player_id: int, at: datetime, prefix: str = "") -> Q:
        return Q(**{f"{prefix}moderation_sightings__moderator_id": player_id, f"{prefix}moderation_sightings__first_seen__lte": at})

    def players_held(self, prefix: str = "") -> Q:
        return Q(**{f"{prefix}integrity_hold__held": True})
