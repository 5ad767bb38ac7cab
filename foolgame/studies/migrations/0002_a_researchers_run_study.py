"""The ``researchers`` group is granted ``studies.run_study``: researchers define studies.

As for the export permission (dataset 0003), the permission row is made here, since Django
makes permissions only after every migration has run."""

from django.db import migrations

GROUP = "researchers"
CODENAME = "run_study"
NAME = "Can run studies and read their bonus files"


def grant(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    content_type, _ = ContentType.objects.get_or_create(app_label="studies", model="study")
    permission, _ = Permission.objects.get_or_create(content_type=content_type, codename=CODENAME, defaults={"name": NAME})
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(permission)


def revoke(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    group = Group.objects.filter(name=GROUP).first()
    if group is not None:
        group.permissions.remove(*Permission.objects.filter(content_type__app_label="studies", codename=CODENAME))


class Migration(migrations.Migration):

    dependencies = [
        ("studies", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
