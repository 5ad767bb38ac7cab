from typing import Any

from django.apps import AppConfig


def _ensure_researchers_group(**kwargs: Any) -> None:
    from foolgame.dataset.services import researchers_group_ensure

    researchers_group_ensure()


class DatasetConfig(AppConfig):
    name = "foolgame.dataset"
    label = "dataset"
    verbose_name = "Dataset exports"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        # Migration 0003 makes the group; a flush (tests) empties it, and post_migrate follows.
        post_migrate.connect(_ensure_researchers_group, dispatch_uid="fm2-researchers-group")
