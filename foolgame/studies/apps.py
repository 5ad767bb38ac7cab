from django.apps import AppConfig


class StudiesConfig(AppConfig):
    name = "foolgame.studies"
    label = "studies"
    verbose_name = "Studies: paid crowd studies and class experiments"
