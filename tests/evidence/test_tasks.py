"""Page indexes are built after imports, once: the task and the import hook."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings

from foolgame.evidence.models import SentenceEmbedding
from foolgame.evidence.tasks import build_page_index
from foolgame.pages.models import Page

pytestmark = pytest.mark.django_db

ARTICLE = """Saturn

Saturn is the sixth planet from the Sun. It is a gas giant.

## Rings
The rings are made mostly of ice. Galileo first saw them in 1610.
"""


def import_article(folder: Path, text: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "saturn.txt").write_text(text)
    call_command("import_pages", str(folder), no_progress=True, stdout=StringIO(), stderr=StringIO())


def build_on_import(on: bool):
    from django.conf import settings

    return override_settings(FM2_RETRIEVAL={**settings.FM2_RETRIEVAL, "BUILD_ON_IMPORT": on})


def test_import_queues_one_index_build_per_page_with_new_sentences_after_commit(
    tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    with build_on_import(True):
        with django_capture_on_commit_callbacks() as first:
            import_article(tmp_path / "a", ARTICLE)
        with django_capture_on_commit_callbacks() as again:
            import_article(tmp_path / "a", ARTICLE)
    assert len(first) == 1
    assert again == []  # nothing new to encode


def test_import_with_eager_tasks_leaves_the_build_to_build_indexes(
    tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    with build_on_import(False), django_capture_on_commit_callbacks() as callbacks:
        import_article(tmp_path / "a", ARTICLE)
    assert callbacks == []


def test_fm2_import_queues_its_pages_too(tmp_path: Path, django_capture_on_commit_callbacks) -> None:
    from django.conf import settings

    with build_on_import(True), django_capture_on_commit_callbacks() as callbacks:
        call_command("import_fm2", str(settings.FM2_DEMO_FIXTURE), split="dev", no_progress=True, stdout=StringIO(), stderr=StringIO())
    assert len(callbacks) == Page.objects.count() == 20


@pytest.mark.slow
def test_committed_import_builds_the_index_and_a_second_delivery_encodes_nothing(
    tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    with build_on_import(True), django_capture_on_commit_callbacks(execute=True):
        import_article(tmp_path / "a", ARTICLE)
    page = Page.objects.get(title="Saturn")
    assert SentenceEmbedding.objects.count() == page.sentences.count() == 4

    assert build_page_index.delay(page.pk).get() == {"encoded": 0, "reused": 4}
    assert SentenceEmbedding.objects.count() == 4


@pytest.mark.slow
def test_reimport_encodes_only_the_edited_sentence(tmp_path: Path) -> None:
    import_article(tmp_path / "a", ARTICLE)
    page = Page.objects.get(title="Saturn")
    assert build_page_index(page.pk) == {"encoded": 4, "reused": 0}

    import_article(tmp_path / "a", ARTICLE)
    assert build_page_index(page.pk) == {"encoded": 0, "reused": 4}

    import_article(tmp_path / "a", ARTICLE.replace("in 1610", "in the year 1610"))
    assert build_page_index(page.pk) == {"encoded": 1, "reused": 3}
    assert SentenceEmbedding.objects.count() == 5


def test_task_for_a_deleted_page_does_nothing() -> None:
    assert build_page_index(987654) == {"encoded": 0, "reused": 0}
