from django.apps import AppConfig


class EvidenceConfig(AppConfig):
    name = "foolgame.evidence"
    verbose_name = "Evidence retrieval"
