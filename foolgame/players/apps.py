from django.apps import AppConfig


class PlayersConfig(AppConfig):
    name = "foolgame.players"
    verbose_name = "Players and points"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save, pre_save

        from foolgame.players import signals

        user_model = get_user_model()
        pre_save.connect(signals.refuse_confusable_name, sender=user_model, dispatch_uid="players-refuse-confusable-name")
        post_save.connect(signals.record_name_skeleton, sender=user_model, dispatch_uid="players-record-name-skeleton")
