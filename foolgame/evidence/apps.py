from django.apps import AppConfig


def _sentences_added(*, page_ids: list[int]) -> None:
    from foolgame.evidence.services import page_indexes_build_on_commit

    page_indexes_build_on_commit(page_ids=page_ids)


class EvidenceConfig(AppConfig):
    name = "foolgame.evidence"
    verbose_name = "Evidence retrieval"

    def ready(self) -> None:
        from foolgame.core import hooks

        hooks.sentences_added.connect(_sentences_added)
