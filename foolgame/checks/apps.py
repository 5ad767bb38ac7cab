from django.apps import AppConfig


class ChecksConfig(AppConfig):
    name = "foolgame.checks"
    label = "checks"
    verbose_name = "Validation (fact checks)"

    def ready(self) -> None:
        """A claim a player checked is never dealt to them in a round: they saw its evidence."""
        from foolgame.checks.selectors import claims_checked_by
        from foolgame.core import hooks

        hooks.claims_kept_from.connect(claims_checked_by)
