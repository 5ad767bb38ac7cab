"""The roles' permission checks answer as Django's ``has_perm`` does, in one query."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from foolgame.players.roles import has_role_permission, is_moderator, is_researcher
from foolgame.studies.services import may_run_studies
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ROLES = ("moderation.moderate_claims", "dataset.export_dataset", "studies.run_study")


def _permission(name: str) -> Permission:
    app, codename = name.split(".")
    return Permission.objects.get(content_type__app_label=app, codename=codename)


def _fresh(user):
    return type(user).objects.get(pk=user.pk)


def test_a_role_is_held_exactly_when_djangos_has_perm_says_so() -> None:
    nobody = UserFactory()
    direct = UserFactory()
    direct.user_permissions.add(_permission("dataset.export_dataset"))
    grouped = UserFactory()
    moderators = Group.objects.create(name="role-test-moderators")
    moderators.permissions.add(_permission("moderation.moderate_claims"), _permission("studies.run_study"))
    grouped.groups.add(moderators)
    both = UserFactory()
    both.groups.add(moderators)
    both.user_permissions.add(_permission("moderation.moderate_claims"))  # held twice: still held
    left = UserFactory(is_active=False)
    left.groups.add(moderators)
    boss = UserFactory(is_superuser=True)
    held = {}
    for user in (nobody, direct, grouped, both, left, boss):
        ours = {role for role in ROLES if has_role_permission(_fresh(user), role)}
        assert ours == {role for role in ROLES if _fresh(user).has_perm(role)}, user.username
        held[user.username] = ours
    assert held[nobody.username] == set() and held[left.username] == set()
    assert held[direct.username] == {"dataset.export_dataset"}
    assert held[grouped.username] == held[both.username] == {"moderation.moderate_claims", "studies.run_study"}
    assert held[boss.username] == set(ROLES)
    assert (is_moderator(_fresh(grouped)), is_researcher(_fresh(grouped)), may_run_studies(_fresh(grouped))) == (True, False, True)
    assert (is_moderator(_fresh(direct)), is_researcher(_fresh(direct)), may_run_studies(_fresh(direct))) == (False, True, False)
    assert is_researcher(_fresh(UserFactory(is_staff=True)))  # staff export without the permission


def test_a_requests_roles_are_read_in_one_query_and_a_new_request_reads_them_again(client: Client) -> None:
    player = UserFactory()
    client.force_login(player)
    with CaptureQueriesContext(connection) as queries:
        body = client.get("/api/me").json()
    assert (body["is_moderator"], body["is_researcher"]) == (False, False)
    assert sum("auth_permission" in q["sql"] for q in queries.captured_queries) == 1
    player.groups.add(Group.objects.get_or_create(name="moderators")[0])
    _fresh(player).groups.get(name="moderators").permissions.add(_permission("moderation.moderate_claims"))
    assert client.get("/api/me").json()["is_moderator"] is True
