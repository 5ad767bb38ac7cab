"""The first-run tutorial on the game's pages (``players/tutorial.html``): where the visitor
stands with it. A player's state is on the server (``TutorialProgress``); an anonymous
visitor's is in their browser, so the page renders it hidden and ``tutorial.js`` decides."""

from __future__ import annotations

from typing import Any

from django import template

from foolgame.players.services import player_tutorial_get

register = template.Library()


@register.simple_tag(takes_context=True)
def tutorial_state(context: dict[str, Any]) -> str:
    """``new``, ``done`` or ``skipped`` for a logged-in player; ``anonymous`` otherwise."""
    user = context.get("user")
    if user is None or not user.is_authenticated:
        return "anonymous"
    return player_tutorial_get(player_id=user.pk)
