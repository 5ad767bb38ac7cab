"""The ``researchers`` group, holding the new ``dataset.export_dataset`` permission.

Django creates permissions only after every migration has run (post_migrate), so this data
migration makes the permission row itself; the post_migrate pass then finds it in place.
"""

from django.db import migrations

GROUP = "researchers"
CODENAME = "export_dataset"
NAME = "Can export the dataset and download its files"


def researchers_group_create(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    content_type, _ = ContentType.objects.get_or_create(app_label="dataset", model="export")
    permission, _ = Permission.objects.get_or_create(content_type=content_type, codename=CODENAME, defaults={"name": NAME})
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(permission)


def researchers_group_delete(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("dataset", "0002_export_heartbeat_attempts_owner"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="export",
            options={"ordering": ["-created", "-id"], "permissions": [(CODENAME, NAME)]},
        ),
        migrations.RunPython(researchers_group_create, researchers_group_delete),
    ]
