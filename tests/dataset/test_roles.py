"""Researchers: the group migrate makes, createresearcher, GET /api/exports, and /api/me's roles."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.urls import reverse

from foolgame.dataset.models import Export
from foolgame.players.roles import is_researcher
from tests.dataset.conftest import client_for
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("exports_dir")]


def group_permissions(name: str) -> set[str]:
    return {f"{p.content_type.app_label}.{p.codename}" for p in Group.objects.get(name=name).permissions.all()}


def test_migrate_leaves_a_researchers_group_holding_the_export_permission() -> None:
    # And the permission to run studies (studies' migration 0002_a).
    assert group_permissions("researchers") == {"dataset.export_dataset", "studies.run_study"}


def test_the_data_migration_makes_the_group_and_its_permission_again() -> None:
    migration = importlib.import_module("foolgame.dataset.migrations.0003_researchers_group")
    Group.objects.filter(name="researchers").delete()
    migration.researchers_group_create(apps, None)
    migration.researchers_group_create(apps, None)  # a second run changes nothing
    assert group_permissions("researchers") == {"dataset.export_dataset"}


def test_createresearcher_lets_a_player_export_and_remove_takes_it_back(world, capsys) -> None:
    UserFactory(username="rita")
    call_command("createresearcher", "rita")
    assert "rita is now a researcher." in capsys.readouterr().out
    rita = UserFactory._meta.model.objects.get(username="rita")
    assert is_researcher(rita)
    assert client_for(rita).post(reverse("exports"), {}, format="json").status_code == 201

    call_command("createresearcher", "rita", "--remove")
    rita = UserFactory._meta.model.objects.get(username="rita")
    assert not is_researcher(rita)
    response = client_for(rita).post(reverse("exports"), {}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["message"] == "Only researchers (staff or the researchers group) may export the dataset."
    with pytest.raises(CommandError, match="nobody"):
        call_command("createresearcher", "nobody")


def test_superusers_are_researchers_and_moderators_and_me_says_so() -> None:
    root = UserFactory(username="root", is_superuser=True)
    me = client_for(root).get("/api/me").json()
    assert (me["is_moderator"], me["is_researcher"]) == (True, True)
    plain = client_for(UserFactory(username="plain")).get("/api/me").json()
    assert (plain["is_moderator"], plain["is_researcher"]) == (False, False)


def test_inactive_accounts_are_not_researchers() -> None:
    call_command("createresearcher", UserFactory(username="gone", is_active=False).username)
    assert not is_researcher(UserFactory._meta.model.objects.get(username="gone"))


def test_export_list_shows_every_export_newest_first_with_its_files(world, django_capture_on_commit_callbacks) -> None:
    rita = UserFactory(username="rita")
    call_command("createresearcher", "rita", stdout=None)
    client = client_for(rita)
    older = Export.objects.create(requested_by=None, options={"seed": 1})
    with django_capture_on_commit_callbacks(execute=True):
        newer = client.post(reverse("exports"), {"seed": 3}, format="json").json()["id"]
    listing = client.get(reverse("exports")).json()
    assert listing["count"] == 2
    assert [e["id"] for e in listing["exports"]] == [newer, older.pk]
    done, pending = listing["exports"]
    assert (done["status"], done["requested_by"], done["options"]["seed"]) == ("done", "rita", 3)
    assert done == client.get(reverse("export-detail", args=[newer])).json()
    stats = next(f for f in done["files"] if f["name"] == "stats.json")
    assert client.get(stats["url"]).status_code == 200
    assert (pending["status"], pending["requested_by"], pending["files"]) == ("pending", None, [])


@pytest.mark.parametrize("who", ["anonymous", "player", "moderator"])
def test_export_list_refuses_non_researchers_with_a_clear_message(who: str) -> None:
    user = None if who == "anonymous" else UserFactory(username=who)
    if who == "moderator":
        call_command("createmoderator", who, stdout=None)
    response = client_for(user).get(reverse("exports"))
    assert response.status_code == 403
    if who != "anonymous":
        assert response.json()["error"]["message"] == "Only researchers (staff or the researchers group) may export the dataset."
