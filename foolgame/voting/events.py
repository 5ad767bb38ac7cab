"""The round's own socket messages, sent after the commit through ``core.events``."""

from __future__ import annotations

from foolgame.core.events import group_send_on_commit
from foolgame.voting.models import Round


def round_group(round_id: int) -> str:
    return f"round-{round_id}"


def round_changed_on_commit(round_: Round) -> None:
    """After the commit, tell the round's sockets its new state and deadline (what was
    committed), so they need not query the database to keep ticking."""
    message = {
        "type": "round.changed",
        "round": round_.pk,
        "state": round_.state,
        "deadline": round_.deadline.timestamp() if round_.deadline else None,
    }
    group_send_on_commit(round_group(round_.pk), message)
