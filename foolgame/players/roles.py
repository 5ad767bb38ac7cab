"""What every role (moderators, researchers) has in the same shape: who holds it, its
``create<role>`` command and its pages' 403 for everyone else.

The checks live here, below the apps whose permissions they read, so that any app (the
account endpoint's ``is_moderator`` and ``is_researcher``) may ask them."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, Permission, PermissionsMixin
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from foolgame.core.errors import ServiceError
from foolgame.core.auth import MODEL_BACKEND
from foolgame.core.queries import compiled_rows, prepared_rows
from foolgame.players.models import Guest


def is_guest(user: Any) -> bool:
    """A guest account (``players.Guest``: made with a nickname to join a live room, not
    claimed with a password yet), which plays rooms and nothing else. One query, remembered
    on the user object for the request (a socket's: for its life), its SQL compiled once
    (``compiled_rows``): every request past ``GuestLimitsMiddleware`` and every socket's first
    vote asks it."""
    if not getattr(user, "is_authenticated", False):
        return False
    cached = getattr(user, "_fm2_is_guest", None)
    if cached is None:
        cached = bool(compiled_rows("is_guest", lambda: Guest.objects.filter(user_id=user.pk).values_list("pk")[:1], [user.pk]))
        user._fm2_is_guest = cached
    return cached


def has_role_permission(user: Any, permission: str) -> bool:
    """``user.has_perm(permission)`` ("app_label.codename") for an active, logged-in user, in
    one query for all of a user's permissions, its SQL compiled once (``prepared_rows``) and
    its answer remembered on the user object (as Django remembers its own, for the request or
    a socket's life). Django's ``ModelBackend`` reads them in two queries built afresh each
    request: a third of ``/api/me``'s CPU, which asks two roles. With any other backend
    configured, Django's ``has_perm`` answers (a backend may grant what the tables do not)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if user.is_superuser:
        return True  # as Django's PermissionsMixin: an active superuser holds every permission
    if list(settings.AUTHENTICATION_BACKENDS) != [MODEL_BACKEND] or not isinstance(user, PermissionsMixin):
        return bool(user.has_perm(permission))
    held = getattr(user, "_fm2_permissions", None)
    if held is None:
        rows = prepared_rows(
            "role_permissions",
            lambda user: Permission.objects.filter(
                Q(pk__in=get_user_model().user_permissions.through.objects.filter(user_id=user).values("permission_id"))
                | Q(pk__in=Group.permissions.through.objects.filter(group__user=user).values("permission_id"))
            )
            .values_list("content_type__app_label", "codename")
            .order_by(),
            user=user.pk,
        )
        held = user._fm2_permissions = frozenset(f"{app}.{codename}" for app, codename in rows)
    return permission in held


def is_moderator(user: Any) -> bool:
    """Who may work the queue: holders of ``moderation.moderate_claims``, which the
    ``moderators`` group grants (and Django grants superusers every permission)."""
    return has_role_permission(user, "moderation.moderate_claims")


def is_researcher(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Who may export: holders of ``dataset.export_dataset`` (the ``researchers`` group grants
    it, superusers hold every permission), and staff."""
    if not user.is_authenticated or not user.is_active:
        return False
    return bool(user.is_staff or has_role_permission(user, "dataset.export_dataset"))


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
