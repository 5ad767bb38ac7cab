from typing import Any

from django.apps import AppConfig


def _ensure_moderators_group(**kwargs: Any) -> None:
    from foolgame.moderation.actions import moderators_group_ensure

    moderators_group_ensure()


class ModerationConfig(AppConfig):
    name = "foolgame.moderation"
    label = "moderation"
    verbose_name = "Moderation"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        # The group's permissions exist only once every app has migrated.
        post_migrate.connect(_ensure_moderators_group, dispatch_uid="fm2-moderators-group")

        from foolgame.core import hooks
        from foolgame.moderation import receivers

        hooks.claims_voted.connect(receivers.claims_voted)
        hooks.claim_reported.connect(receivers.claim_reported)
        hooks.claims_imported.connect(receivers.claims_imported)
        hooks.claims_kept_from.connect(receivers.claims_kept_from)
        hooks.play_rules.set(receivers.ModerationPlayRules())
