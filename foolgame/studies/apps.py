from typing import Any

from django.apps import AppConfig

RESEARCHERS_GROUP = "researchers"
RUN_STUDY_PERMISSION = ("studies", "run_study")


def _ensure_researchers_run_studies(**kwargs: Any) -> None:
    from foolgame.players.services import role_group_ensure

    role_group_ensure(name=RESEARCHERS_GROUP, permissions=[RUN_STUDY_PERMISSION])


class StudiesConfig(AppConfig):
    name = "foolgame.studies"
    label = "studies"
    verbose_name = "Studies: paid crowd studies and class experiments"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from foolgame.core import hooks
        from foolgame.studies.receivers import StudyPlayerSettings, on_check_answered

        hooks.player_settings.set(StudyPlayerSettings())
        hooks.check_answered.connect(on_check_answered)
        # Migration 0002_a makes the permission and grants it; a flush (tests) empties the
        # group, and post_migrate follows (as for the export permission).
        post_migrate.connect(_ensure_researchers_run_studies, dispatch_uid="fm2-researchers-run-study")
