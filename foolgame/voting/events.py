"""The round's own socket messages, sent after the commit through ``core.events``."""

from __future__ import annotations

from contextvars import ContextVar

from foolgame.core.events import group_send_on_commit
from foolgame.voting.models import Round

round_socket: ContextVar[str | None] = ContextVar("round_socket", default=None)
"""The channel of the round socket whose frame is being served (``RoundConsumer._call``)."""


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
    # The round socket that made a start or a vote keeps the state from its own call: the
    # message is not sent back to it (two messages a round to read and drop). An end that it
    # must announce (a timeout, a void, a forfeit, a report) still comes back to it.
    own = round_.state in (Round.State.PLAYING, Round.State.VOTED)
    group_send_on_commit(round_group(round_.pk), message, skip=round_socket.get() if own else None)
