"""Every stored name's skeleton again, with the look-alike foldings added after migration 0005
(turned, reversed and small-capital letters: docs/operations.md), so that a name stored before
them (``ǝve``) blocks its look-alike (``eve``) as a new one would.

As in 0005: oldest accounts first; when two existing names now look alike, both are kept, the
older holds the skeleton in the unique index and the later is ``grandfathered`` (listed on the
migration's output). Re-running it changes nothing.
"""

import hashlib
import sys

from django.db import migrations

from foolgame.players.tr39 import username_skeleton

BATCH = 2000


def refold(apps, schema_editor):
    User = apps.get_model("auth", "User")
    PlayerName = apps.get_model("players", "PlayerName")
    holders: dict[str, str] = {}
    twins: list[tuple[str, str]] = []
    stored = set(PlayerName.objects.values_list("user_id", flat=True))
    rows = []
    for user_id, username in User.objects.order_by("date_joined", "id").values_list("id", "username").iterator(chunk_size=BATCH):
        if user_id not in stored:
            continue
        skeleton = username_skeleton(username)
        digest = hashlib.sha256(skeleton.encode("utf-8")).hexdigest()
        grandfathered = digest in holders
        if grandfathered:
            twins.append((username, holders[digest]))
        else:
            holders[digest] = username
        rows.append(PlayerName(user_id=user_id, skeleton=skeleton, digest=digest, grandfathered=grandfathered))
    # Out of the unique index while the digests move; the holders, unique by construction, go back in.
    PlayerName.objects.update(grandfathered=True)
    PlayerName.objects.bulk_update(rows, ["skeleton", "digest", "grandfathered"], batch_size=BATCH)
    if twins:
        sys.stdout.write(
            f"\n  {len(twins)} account(s) kept with a name that now looks like an older one's (grandfathered): "
            + "; ".join(f"{name!r} like {older!r}" for name, older in twins[:50])
            + ("; ..." if len(twins) > 50 else "")
            + "\n"
        )


class Migration(migrations.Migration):

    dependencies = [
        ("players", "0011_signup_origin"),
    ]

    operations = [
        migrations.RunPython(refold, migrations.RunPython.noop),
    ]
