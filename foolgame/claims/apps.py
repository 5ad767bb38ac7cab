from django.apps import AppConfig


def _sentences_cited(*, sentence_ids: list[int]) -> set[int]:
    """The sentences cited as a claim's gold: an import keeps them, retired (``sentences_cited``)."""
    from foolgame.claims.models import ClaimGold

    return set(ClaimGold.objects.filter(sentence_id__in=sentence_ids).values_list("sentence_id", flat=True))


class ClaimsConfig(AppConfig):
    name = "foolgame.claims"
    verbose_name = "Claims"

    def ready(self) -> None:
        from foolgame.core import hooks

        hooks.sentences_cited.connect(_sentences_cited)
