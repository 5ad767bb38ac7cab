"""manage.py build_indexes: encodes what is missing, reports it, and a re-run encodes nothing."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from foolgame.evidence.models import SentenceEmbedding
from foolgame.pages.models import Page, Sentence

pytestmark = pytest.mark.django_db


def build_indexes(*args: str) -> dict[str, int]:
    out = StringIO()
    call_command("build_indexes", *args, no_progress=True, stdout=out, stderr=StringIO())
    found = re.search(r"encoded=(\d+) reused=(\d+)", out.getvalue())
    assert found, out.getvalue()
    return {"encoded": int(found.group(1)), "reused": int(found.group(2))}


@pytest.mark.slow
def test_build_indexes_encodes_the_named_pages_once_and_a_rerun_encodes_nothing() -> None:
    call_command("import_fm2", str(settings.FM2_DEMO_FIXTURE), split="dev", no_progress=True, stdout=StringIO(), stderr=StringIO())
    pages = list(Page.objects.order_by("id")[:2])
    ids = [str(page.pk) for page in pages]
    count = Sentence.objects.filter(page__in=pages, retired=False).count()

    assert build_indexes(*ids) == {"encoded": count, "reused": 0}
    assert SentenceEmbedding.objects.count() == count
    assert build_indexes(*ids) == {"encoded": 0, "reused": count}
    assert SentenceEmbedding.objects.count() == count


def test_build_indexes_with_nothing_to_encode_never_loads_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from foolgame.evidence import services

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(services.Encoder, "encode", no_model)
    assert build_indexes("--all") == {"encoded": 0, "reused": 0}


def test_build_indexes_refuses_unknown_pages() -> None:
    with pytest.raises(CommandError, match="no page with id 424242"):
        call_command("build_indexes", "424242", no_progress=True, stdout=StringIO())
