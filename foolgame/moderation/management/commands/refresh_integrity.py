"""Test every player who ever voted for improbable play now (the periodic task tests only
the recent voters), and print the holds."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from foolgame.moderation.integrity import integrity_refresh_all
from foolgame.moderation.models import PlayerHold


class Command(BaseCommand):
    help = "Test every voter for improbable play (FM2_INTEGRITY) and hold the flagged ones."

    def handle(self, *args: Any, **options: Any) -> None:
        held = integrity_refresh_all()
        counts = {status: PlayerHold.objects.filter(status=status).count() for status in PlayerHold.Status.values}
        self.stdout.write(f"{held} newly held; holds: " + ", ".join(f"{n} {status}" for status, n in counts.items()))
