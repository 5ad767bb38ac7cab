from django.apps import AppConfig


class PagesConfig(AppConfig):
    name = "foolgame.pages"
    verbose_name = "Pages and sentences"
