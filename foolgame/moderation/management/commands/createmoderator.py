from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from foolgame.api.errors import ServiceError
from foolgame.moderation.services import moderator_set


class Command(BaseCommand):
    help = "Put a player in the moderators group (who may work the moderation queue), or take them out with --remove."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--remove", action="store_true", help="take the player out of the moderators group")

    def handle(self, *args, username: str, remove: bool, **options) -> None:
        try:
            moderator_set(username=username, moderator=not remove)
        except ServiceError as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"{username} is {'no longer' if remove else 'now'} a moderator.")
