from django.apps import AppConfig


class AuthoringConfig(AppConfig):
    name = "foolgame.authoring"
    label = "authoring"
    verbose_name = "Authoring"
