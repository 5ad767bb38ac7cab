"""Usernames unique case-insensitively in the database: a unique index on lower(username).

``player_create`` checks ``username__iexact`` first, but two signups racing (``Alice`` and
``alice`` at once) both passed that check and made case-variant twins. An existing database
that already holds twins stops here with their names: rename the later account(s) (admin or
``manage.py shell``) and run ``migrate`` again; accounts are never renamed silently.
"""

from django.db import migrations

INDEX = "players_auth_user_username_lower_uniq"


def refuse_existing_twins(apps, schema_editor):
    User = apps.get_model("auth", "User")
    table = schema_editor.quote_name(User._meta.db_table)
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"SELECT lower(username) FROM {table} GROUP BY lower(username) HAVING count(*) > 1")
        twins = [row[0] for row in cursor.fetchall()]
    if twins:
        groups = [sorted(User.objects.filter(username__iexact=name).values_list("username", flat=True)) for name in twins]
        raise RuntimeError(
            "Usernames that differ only by case cannot be made unique: "
            + "; ".join(", ".join(group) for group in groups)
            + ". Rename all but one account of each group (admin or manage.py shell), then run migrate again."
        )


class Migration(migrations.Migration):
    dependencies = [
        ("players", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.RunPython(refuse_existing_twins, migrations.RunPython.noop),
        migrations.RunSQL(
            f"CREATE UNIQUE INDEX {INDEX} ON auth_user (lower(username))",
            f"DROP INDEX {INDEX}",
        ),
    ]
