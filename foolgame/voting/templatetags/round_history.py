"""The profile's history of rounds (``players/me.html``): the players app stands below voting,
so its page asks voting for the rows through this tag, as the nav asks for the unread count."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import template

from foolgame.voting.services import rounds_history
from foolgame.voting.selectors import player_rounds

register = template.Library()

PAGE_SIZE = 20
OUTCOME_WORDS = {"right": "Right", "wrong": "Fooled", "timeout": "Time ran out", "forfeited": "Given up", "reported": "Reported"}


@register.simple_tag(takes_context=True)
def round_history(context: dict[str, Any]) -> dict[str, Any]:
    """The logged-in player's past rounds whose answer is out, newest first, a page of
    ``PAGE_SIZE`` (``?page=`` of the request), with whether they have played any round."""
    user, request = context.get("user"), context.get("request")
    if user is None or not user.is_authenticated:
        return {"rounds": [], "played": False}
    try:
        page = max(1, int(request.GET.get("page", 1))) if request is not None else 1
    except ValueError:
        page = 1
    rounds, next_offset = rounds_history(player=user, offset=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    for row in rounds:
        row["outcome_word"] = "Room ended" if row["ended_by_room"] else OUTCOME_WORDS[row["outcome"]]  # type: ignore[typeddict-unknown-key]
        row["ended"] = datetime.fromisoformat(row["ended_at"]) if row["ended_at"] else None  # type: ignore[typeddict-unknown-key]
    return {
        "rounds": rounds,
        "page": page,
        "next_page": page + 1 if next_offset is not None else None,
        "previous_page": page - 1 if page > 1 else None,
        "played": bool(rounds) or page > 1 or player_rounds(player=user).exists(),
    }
