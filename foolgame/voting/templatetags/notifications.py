"""The nav's unread badge: one count query per page, only for a logged-in player."""

from __future__ import annotations

from typing import Any

from django import template

from foolgame.voting.notifications import notifications_unread_count

register = template.Library()


@register.simple_tag(takes_context=True)
def unread_notifications(context: dict[str, Any]) -> int:
    user = context.get("user")
    if user is None or not user.is_authenticated:
        return 0
    return notifications_unread_count(player=user)
