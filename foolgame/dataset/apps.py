from django.apps import AppConfig


class DatasetConfig(AppConfig):
    name = "foolgame.dataset"
    label = "dataset"
    verbose_name = "Dataset exports"
