from django.db import migrations, models


class Migration(migrations.Migration):
    """A room's host no longer plays unless they chose to when making it. Rooms made before
    had their host play: they keep it (the column is added as True, then defaults to False)."""

    dependencies = [("rooms", "0002_room_next_room_and_early_questions")]

    operations = [
        migrations.AddField(model_name="room", name="host_plays", field=models.BooleanField(default=True)),
        migrations.AlterField(
            model_name="room",
            name="host_plays",
            field=models.BooleanField(
                default=False,
                help_text="the host plays the questions too (\"I'll play too\"); else they run the room and are dealt nothing, "
                "counted in no answers-in count, finish, scoreboard or podium",
            ),
        ),
    ]
