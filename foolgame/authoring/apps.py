from django.apps import AppConfig


class AuthoringConfig(AppConfig):
    name = "foolgame.authoring"
    label = "authoring"
    verbose_name = "Authoring"

    def ready(self) -> None:
        from foolgame.core import hooks
        from foolgame.authoring.selectors import player_has_open_write_task_on_page

        hooks.hints_allowed.connect(player_has_open_write_task_on_page)
