from django.apps import AppConfig


class RoomsConfig(AppConfig):
    name = "foolgame.rooms"
    verbose_name = "Live rooms"
