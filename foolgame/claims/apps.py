from django.apps import AppConfig


class ClaimsConfig(AppConfig):
    name = "foolgame.claims"
    verbose_name = "Claims"
