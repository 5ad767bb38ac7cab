"""Reads for evidence retrieval: a page's indexed sentences, its index version, stored vectors."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import connection
from django.db.models import QuerySet

from foolgame.evidence.models import SentenceEmbedding
from foolgame.core import hooks
from foolgame.pages.models import Page, Sentence
from foolgame.pages.selectors import page_sentences

# SQLite allows 999 parameters per statement in old builds; stay well under.
KEY_CHUNK = 500


def page_indexed_sentences(*, page: Page) -> QuerySet[Sentence]:
    """What a page's retrievers search: its sentences in article order, retired ones left out."""
    return page_sentences(page=page)


def page_index_version(*, page: Page) -> tuple:
    """A cheap fingerprint of a page's indexed sentences, for the in-process hint cache.

    Imports only ever add sentences (a new largest id), delete or retire them (the count
    and the position sum change) or move them (the position sum changes), and a new section
    header changes the header length sum. The text length sum guards against ids reused
    after a rollback (SQLite tests). The title is part of it because BM25 indexes it with
    every sentence.

    It runs on every hint request, so it is one hand-written aggregate: the same query
    through the ORM costs 1 ms of query building, 15 times the query itself (65 us).
    """
    table = connection.ops.quote_name(Sentence._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COUNT(id), MAX(id), SUM(position), SUM(LENGTH(section_header)), SUM(LENGTH(text))"
            f" FROM {table} WHERE page_id = %s AND NOT retired",
            [page.pk],
        )
        totals = cursor.fetchone()
    return (page.title, *totals)


def embedding_keys_stored(*, model_name: str, keys: Iterable[str]) -> set[str]:
    """Which of ``keys`` already have a vector for ``model_name`` (without loading vectors)."""
    keys = list(keys)
    stored: set[str] = set()
    for start in range(0, len(keys), KEY_CHUNK):
        stored.update(
            SentenceEmbedding.objects.filter(
                model_name=model_name, text_key__in=keys[start : start + KEY_CHUNK]
            ).values_list("text_key", flat=True)
        )
    return stored


def embedding_rows(*, model_name: str, keys: Sequence[str]) -> list[tuple[str, bytes]]:
    """``(text_key, vector bytes)`` of the stored vectors among ``keys``."""
    rows: list[tuple[str, bytes]] = []
    for start in range(0, len(keys), KEY_CHUNK):
        rows.extend(
            SentenceEmbedding.objects.filter(
                model_name=model_name, text_key__in=keys[start : start + KEY_CHUNK]
            ).values_list("text_key", "vector")
        )
    return rows


def player_in_round_on_page(*, player_id: int, page_id: int) -> bool:
    """Is the player in a round (ready or playing) about the page? (``page_in_play``: voting
    answers.) Then nothing that reads the page for them (hints, draft checks) may run."""
    return any(hooks.page_in_play.send(player_id=player_id, page_id=page_id))

