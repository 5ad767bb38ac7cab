"""Platform ids never leave the server but to the study's owner (issue 41, items 5 and 6): the
leak world's study (``tests.leak_world.build_study``: participants from Prolific, Mechanical
Turk and a plain link at every stage, their work made through the API) exported as a release,
and no file of it holds a platform id or a platform parameter, while the participants' records
are in it (marked with the study). The walks over every endpoint and page, with the logs, are
``tests/test_answer_leak.py``'s ``test_no_study_endpoint_or_page_shows_an_answer_or_a_platform_id``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.leak_world import HashEncoder, build_world

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_sentence_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("foolgame.evidence.services.encoder_get", HashEncoder)


def test_the_export_holds_the_participants_work_and_none_of_their_platform_ids(tmp_path: Path) -> None:
    world = build_world(study=True)
    platform_ids = world.study.platform_ids()
    assert len(platform_ids) >= 8  # four participants' ids and their platforms' parameters
    out = tmp_path / "release"
    call_command("export_dataset", str(out), "--splits", "1,0,0", "--formats", "jsonl,csv", stdout=io.StringIO(), stderr=io.StringIO())
    files = {path.relative_to(out).as_posix(): path.read_text(encoding="utf-8", errors="replace") for path in out.rglob("*") if path.is_file()}
    assert "train.jsonl" in files
    claims = [json.loads(line) for line in files["train.jsonl"].splitlines()]
    marked = [claim for claim in claims if claim.get("study") == world.study.slug]
    assert len(marked) >= 2, "the participants' claims are not in the export: the search below would find nothing to miss"
    found = sorted(f"{pid} in {name}" for name, text in files.items() for pid in platform_ids if pid in text)
    assert found == [], "platform ids in the export:\n" + "\n".join(found)
