"""User names are compared by their Unicode TR39 confusable skeleton with every existing name:
``admın`` (dotless i), ``admіn`` (Cyrillic і) and ``ɑdmin`` (Latin alpha) are refused when
``admin`` exists, and the other way round, whatever the case; the unique index on the skeleton
decides between two signups at once."""

from __future__ import annotations

import threading
import unicodedata

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection
from django.test import Client

from foolgame.core.errors import ServiceError
from foolgame.players import services
from foolgame.players.models import PlayerName
from foolgame.players.services import player_create
from foolgame.players.tr39 import skeleton, username_skeleton
from tests.factories import PASSWORD, UserFactory
from tests.players.test_signup_login import signups_at_once

User = get_user_model()

# (an existing name, a new one, whether they must collide)
PAIRS = [
    ("vera", "verа", True),  # Cyrillic а
    ("vera", "ѵera", True),  # Cyrillic izhitsa
    ("alice", "alıce", True),  # dotless i
    ("alice", "alіce", True),  # Cyrillic і
    ("alice", "ɑlice", True),  # Latin alpha
    ("ɑlice", "alice", True),  # and the other way round
    ("alice", "ALICE", True),
    ("alice", "ALІCE", True),  # Cyrillic capital І, upper case
    ("Alice", "ɑlıce", True),
    ("paypal", "pаypаl", True),
    ("henry", "hеnry", True),  # Cyrillic е
    ("xeno", "хеnо", True),  # three Cyrillic letters
    ("oscar", "οscar", True),  # Greek omicron
    ("user1", "userl", True),  # digit one and small L
    ("bob0", "bobo", True),  # digit zero and o (the prototype is a capital O)
    ("file", "ﬁle", True),  # the fi ligature (NFKC)
    ("ｆｏｘ", "fox", True),  # fullwidth (NFKC)
    ("straße", "strasse", True),  # casefolding
    ("sam", "sarn", True),  # TR39 maps m to rn: accepted, see the module's docstring
    ("arnold", "amold", True),
    # Beyond TR39 (tr39.EXTRA_FOLDS): turned, reversed and small-capital letters a reader takes
    # for the Latin letter, which confusables.txt keeps apart (issue 36).
    ("adam", "ǝdam", True),  # turned e, drawn as a one-storey a
    ("adam", "ɐdam", True),  # turned a
    ("rosa", "ɹosa", True),  # turned r
    ("tina", "ʇina", True),  # turned t
    ("kate", "ʞate", True),  # turned k
    ("rene", "renɘ", True),  # reversed e
    ("mary", "ᴍᴀʀʏ", True),  # small capitals
    ("dora", "ᴅora", True),
    ("ǝdam", "adam", True),  # and the other way round
    ("ada", "adam", False),
    ("alice", "alicia", False),
    ("ana", "anna", False),
    ("José", "Jose", False),  # accents are not look-alikes in TR39
    ("Zoë", "Zoe", False),
    ("niño", "nino", False),
    ("kim", "klm", False),
    ("vv", "w", False),
    ("Борис", "Bopnc", False),
    ("李明", "李朋", False),
    ("player1", "player10", False),
]


@pytest.mark.parametrize("existing, new, collide", PAIRS)
def test_skeletons_collide_only_for_look_alikes(existing: str, new: str, collide: bool) -> None:
    assert (username_skeleton(existing) == username_skeleton(new)) is collide


@pytest.mark.parametrize(
    "text, expected",
    [
        ("admın", "adrnin"),  # ı -> i, m -> rn
        ("ɑ", "a"),
        ("і", "i"),
        ("1", "l"),
        ("I", "l"),  # TR39 alone is case-sensitive: capital I is a small L
        ("0", "O"),
        ("é", "e\u0301"),  # NFD, the accent kept
    ],
)
def test_skeleton_follows_tr39_nfd_map_nfd(text: str, expected: str) -> None:
    assert skeleton(text) == expected


@pytest.mark.django_db
@pytest.mark.parametrize("existing, new, collide", PAIRS)
def test_signup_of_a_look_alike_of_an_existing_name_is_refused(existing: str, new: str, collide: bool) -> None:
    player_create(username=existing, password=PASSWORD)
    if not collide:
        assert player_create(username=new, password=PASSWORD).username == new
        return
    with pytest.raises(ServiceError) as refused:
        player_create(username=new, password=PASSWORD)
    # The same name in another case is taken (by the database's own case rule: PostgreSQL's
    # upper() also folds the dotless ı to I); any other look-alike is confusable.
    same_name = User.objects.filter(username__iexact=unicodedata.normalize("NFKC", new)).exists()
    assert refused.value.code == ("username_taken" if same_name else "username_confusable")
    assert refused.value.status_code == 409
    assert User.objects.count() == 1 and PlayerName.objects.count() == 1


@pytest.mark.django_db
def test_rest_signup_of_a_look_alike_is_409_username_confusable_and_creates_nobody() -> None:
    UserFactory(username="admiral")
    client = Client()
    response = client.post("/api/auth/signup", {"username": "admіral", "password": PASSWORD}, content_type="application/json")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "username_confusable" and "looks like" in error["message"]
    assert client.get("/api/me").status_code == 403
    assert list(User.objects.values_list("username", flat=True)) == ["admiral"]


@pytest.mark.django_db
def test_html_signup_of_a_look_alike_shows_the_reason_and_creates_nobody() -> None:
    UserFactory(username="admiral")
    response = Client().post("/accounts/signup/", {"username": "ɑdmiral", "password": PASSWORD})
    assert response.status_code == 200
    assert "looks like one already taken" in response.content.decode()
    assert User.objects.count() == 1


@pytest.mark.django_db
def test_every_account_gets_its_skeleton_and_a_rename_updates_it() -> None:
    user = UserFactory(username="vera")
    assert PlayerName.objects.get(user=user).skeleton == username_skeleton("vera")
    user.username = "verity"
    user.save()
    assert PlayerName.objects.get(user=user).skeleton == username_skeleton("verity")
    assert player_create(username="vera", password=PASSWORD)  # the old name is free again


@pytest.mark.django_db
def test_a_rename_to_a_look_alike_is_refused_outside_the_signup_too() -> None:
    UserFactory(username="vera")
    other = UserFactory(username="otto")
    other.username = "verа"  # Cyrillic а: a shell, createsuperuser, any save
    with pytest.raises(ValidationError):
        other.save()
    other.refresh_from_db()
    assert other.username == "otto"
    assert PlayerName.objects.get(user=other).skeleton == username_skeleton("otto")


@pytest.mark.django_db
def test_the_admin_refuses_a_rename_or_new_account_that_looks_like_another(admin_client) -> None:
    UserFactory(username="vera")
    otto = UserFactory(username="otto")
    response = admin_client.post(f"/admin/auth/user/{otto.pk}/change/", {"username": "vеra", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"})
    assert response.status_code == 200 and "looks like one already taken" in response.content.decode()
    otto.refresh_from_db()
    assert otto.username == "otto"
    response = admin_client.post("/admin/auth/user/add/", {"username": "ѵera", "usable_password": "false"})
    assert response.status_code == 200 and "looks like one already taken" in response.content.decode()
    assert not User.objects.filter(username="ѵera").exists()


@pytest.mark.django_db
def test_a_login_of_a_grandfathered_twin_still_works(capsys) -> None:
    """Twins from before the rule are kept (migration 0005): saving them without a new name
    (a login's last_login, an admin edit) changes nothing."""
    older, later = User.objects.bulk_create([User(username="vera"), User(username="verа")])  # no receivers: as before 0005
    for user in (older, later):
        user.set_password(PASSWORD)
        user.save(update_fields=["password"])
    migration = __import__("foolgame.players.migrations.0005_name_skeletons", fromlist=["backfill"])
    migration.backfill(apps, connection.schema_editor())
    rows = {row.user_id: row for row in PlayerName.objects.all()}
    assert (rows[older.pk].grandfathered, rows[later.pk].grandfathered) == (False, True)
    assert "1 account(s) kept" in capsys.readouterr().out  # migrate names them
    assert Client().post("/api/auth/login", {"username": "verа", "password": PASSWORD}, content_type="application/json").status_code == 200
    later.refresh_from_db()
    later.email = "v@example.org"
    later.save()  # not renamed: passes
    with pytest.raises(ServiceError) as refused:
        player_create(username="vеra", password=PASSWORD)  # Cyrillic е: like both
    assert refused.value.code == "username_confusable"
    later.username = "veronika"
    later.save()
    assert PlayerName.objects.get(user=later).grandfathered is False


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent signups need PostgreSQL")
def test_concurrent_signups_of_look_alike_names_make_one_account(monkeypatch) -> None:
    real = services._confusable_holder
    barrier = threading.Barrier(2)

    def checked_together(username: str, **kwargs) -> str | None:
        holder = real(username, **kwargs)
        barrier.wait(timeout=10)  # both have passed the check before either writes
        return holder

    monkeypatch.setattr(services, "_confusable_holder", checked_together)
    assert signups_at_once("admiral", "admіral") == ["created", "username_confusable"]
    assert User.objects.count() == 1 and PlayerName.objects.count() == 1


@pytest.mark.django_db
def test_a_look_alike_committed_between_the_look_and_the_save_is_a_409_not_a_500(monkeypatch) -> None:
    """Two signups of look-alike names a moment apart (bench_abuse's six case twins at once
    on PostgreSQL gave five 500s): the other one's row is in by the time this save's own
    skeleton check runs, so that check refuses it; the signup answers 409 like the look."""
    UserFactory(username="admiral")
    real = services._confusable_holder
    answers = iter([None])  # the look saw no holder yet; the save's check sees the real one

    def raced(username: str, **kwargs):
        return next(answers, real(username, **kwargs))

    monkeypatch.setattr(services, "_confusable_holder", raced)
    with pytest.raises(ServiceError) as refused:
        player_create(username="admіral", password=PASSWORD)
    assert (refused.value.code, refused.value.status_code) == ("username_confusable", 409)
    assert User.objects.count() == 1


@pytest.mark.django_db
def test_names_stored_before_the_new_foldings_block_their_look_alikes_after_migration_0011(capsys) -> None:
    """A name stored with its old skeleton (``ǝlan`` before turned letters folded, as a reader sees
    ``alan``) would not block ``alan``: migration 0012 folds every stored name again, keeping the
    twins it finds."""
    turned = player_create(username="ǝlan", password=PASSWORD)
    older_twin = player_create(username="ada", password=PASSWORD)
    PlayerName.objects.filter(user=turned).update(skeleton="old", digest="0" * 64)  # as 0005 stored it
    later_twin = User.objects.create(username="zzz")
    PlayerName.objects.filter(user=later_twin).update(skeleton="old twin", digest="1" * 64)
    User.objects.filter(pk=later_twin.pk).update(username="ɐda")  # a name that now looks like the older "ada"
    migration = __import__("foolgame.players.migrations.0012_name_skeletons_refold", fromlist=["refold"])
    migration.refold(apps, connection.schema_editor())
    with pytest.raises(ServiceError) as refused:
        player_create(username="alan", password=PASSWORD)
    assert refused.value.code == "username_confusable"
    rows = {row.user_id: row for row in PlayerName.objects.all()}
    assert (rows[older_twin.pk].grandfathered, rows[later_twin.pk].grandfathered) == (False, True)
    assert "1 account(s) kept" in capsys.readouterr().out
    migration.refold(apps, connection.schema_editor())  # again: nothing moves
    assert {row.user_id: (row.digest, row.grandfathered) for row in PlayerName.objects.all()} == {k: (v.digest, v.grandfathered) for k, v in rows.items()}
