"""What every role (moderators, researchers) has in the same shape: its ``create<role>``
command and its pages' 403 for everyone else."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from foolgame.core.errors import ServiceError


def role_command(*, role: str, group: str, what: str, role_set: Callable[[str, bool], Any]) -> type[BaseCommand]:
    """A command that puts a player in a role's group, or takes them out with ``--remove``.

    ``role_set(username, member)`` is the role's service (it raises ServiceError for an
    unknown player)."""

    class Command(BaseCommand):
        help = f"Put a player in the {group} group ({what}), or take them out with --remove."

        def add_arguments(self, parser: CommandParser) -> None:
            parser.add_argument("username")
            parser.add_argument("--remove", action="store_true", help=f"take the player out of the {group} group")

        def handle(self, *args, username: str, remove: bool, **options) -> None:
            try:
                role_set(username, not remove)
            except ServiceError as error:
                raise CommandError(error.message) from None
            self.stdout.write(f"{username} is {'no longer' if remove else 'now'} a {role}.")

    return Command


def role_page(check: Callable[[Any], bool], forbidden_template: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """A browser page for one role: everyone ``check(user)`` refuses, logged in or not, gets
    ``forbidden_template`` with 403 (the page's API answers them 403 too)."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not check(request.user):
                return render(request, forbidden_template, status=403)
            return view(request, *args, **kwargs)

        return wrapped

    return decorator
