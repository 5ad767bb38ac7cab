"""Telling open sockets that a round changed, once the change is committed.

Consumers keep the round's deadline in memory to tick without a query a second; any
change made elsewhere (a REST reveal, a timeout, a vote) reaches them through the group.
"""

from __future__ import annotations

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

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

    def send() -> None:
        layer = get_channel_layer()
        if layer is not None:
            async_to_sync(layer.group_send)(round_group(message["round"]), message)

    transaction.on_commit(send)
