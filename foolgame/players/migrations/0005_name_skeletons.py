"""Every account's name gets its TR39 confusable skeleton (``PlayerName``), unique across accounts.

The backfill goes through the existing accounts oldest first (``date_joined``, then id). When
older names already look alike (``admin`` and ``admın``), every account is kept and none is
renamed: the oldest holds the skeleton in the unique index, the later ones are stored with
``grandfathered=True`` (outside the index, still compared with every new name) and are listed
on the migration's output. A moderator may rename them in the admin; a new name that looks
like no other one takes them into the index.
"""

import hashlib
import sys

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from foolgame.players.tr39 import username_skeleton

BATCH = 2000


def backfill(apps, schema_editor):
    User = apps.get_model("auth", "User")
    PlayerName = apps.get_model("players", "PlayerName")
    holders: dict[str, str] = {}
    twins: list[tuple[str, str]] = []
    rows = []
    for user_id, username in User.objects.order_by("date_joined", "id").values_list("id", "username").iterator(chunk_size=BATCH):
        skeleton = username_skeleton(username)
        digest = hashlib.sha256(skeleton.encode("utf-8")).hexdigest()
        grandfathered = digest in holders
        if grandfathered:
            twins.append((username, holders[digest]))
        else:
            holders[digest] = username
        rows.append(PlayerName(user_id=user_id, skeleton=skeleton, digest=digest, grandfathered=grandfathered))
        if len(rows) >= BATCH:
            PlayerName.objects.bulk_create(rows)
            rows = []
    PlayerName.objects.bulk_create(rows)
    if twins:
        sys.stdout.write(
            f"\n  {len(twins)} account(s) kept with a name that looks like an older one's (grandfathered): "
            + "; ".join(f"{name!r} like {older!r}" for name, older in twins[:50])
            + ("; ..." if len(twins) > 50 else "")
            + "\n"
        )


class Migration(migrations.Migration):

    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("players", "0004_ratings"),
    ]

    operations = [
        migrations.CreateModel(
            name="PlayerName",
            fields=[
                ("user", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name="name_skeleton", serialize=False, to=settings.AUTH_USER_MODEL)),
                ("skeleton", models.TextField()),
                ("digest", models.CharField(db_index=True, max_length=64)),
                ("grandfathered", models.BooleanField(default=False)),
            ],
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="playername",
            constraint=models.UniqueConstraint(condition=models.Q(("grandfathered", False)), fields=("digest",), name="player_name_skeleton_unique"),
        ),
    ]
