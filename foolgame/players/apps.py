from django.apps import AppConfig


class PlayersConfig(AppConfig):
    name = "foolgame.players"
    verbose_name = "Players and points"
