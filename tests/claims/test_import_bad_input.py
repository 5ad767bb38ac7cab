"""import_fm2 refuses bad and absurd rows with FILE:LINE (a 60 MB claim was once imported and dealt)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from foolgame.claims.models import Claim
from foolgame.pages.models import Page, Sentence
from tests.conftest import FM2_SAMPLE

pytestmark = pytest.mark.django_db


def run_import(*paths: Path, **options: object) -> str:
    out = StringIO()
    call_command("import_fm2", *map(str, paths), no_progress=True, stdout=out, stderr=StringIO(), **options)
    return out.getvalue().strip()


def stored() -> tuple[int, int, int]:
    return Page.objects.count(), Claim.objects.count(), Sentence.objects.count()


def good_row(**changes: object) -> dict:
    row = {
        "id": "c1", "text": "Pluto is a dwarf planet.", "label": "SUPPORTS", "wikipedia_page": "Pluto",
        "category": "Science", "gold_evidence": [{"text": "Pluto is a dwarf planet.", "section_header": ""}],
        "retrieved_evidence": [{"text": "Pluto is far away.", "section_header": "Orbit"}],
        "total_votes": 3, "correct_votes": 2, "total_likes": 1,
    }
    row.update(changes)
    return row


def line(**changes: object) -> bytes:
    return json.dumps(good_row(**changes)).encode()


def evidence(text: str, header: str = "") -> list[dict]:
    return [{"text": text, "section_header": header}]


BAD_ROWS = {
    "claim over the limit": (line(text="Pluto " * 200), "limit of 1000"),
    "claim of 60 MB is refused by the line bound": (None, "line longer than"),
    "id over the column": (line(id="x" * 65), "limit of 64"),
    "id a number": (line(id=7), "missing 'id'"),
    "NUL in the claim": (b'{"id": "c1", "text": "Pluto\\u0000 is small.", "label": "SUPPORTS", "wikipedia_page": "P", "gold_evidence": [{"text": "g"}]}', "control character (U+0000)"),
    "lone surrogate in evidence": (b'{"id": "c1", "text": "Pluto is small.", "label": "SUPPORTS", "wikipedia_page": "P", "gold_evidence": [{"text": "g \\udfff"}]}', "lone surrogate (U+DFFF)"),
    "control character in the page": (line(wikipedia_page="Plu\x08to"), "control character (U+0008)"),
    "page title over the column": (line(wikipedia_page="P" * 301), "limit of 300"),
    "evidence sentence over the limit": (line(gold_evidence=evidence("A" * 5001)), "limit of 5000"),
    "section header over the column": (line(retrieved_evidence=evidence("Far.", "H" * 501)), "limit of 500"),
    "too many retrieved sentences": (line(retrieved_evidence=[{"text": f"S {i}."} for i in range(51)]), "limit of 50"),
    "category over the column": (line(category="C" * 101), "limit of 100"),
    "votes huge": (line(total_votes=10**12, correct_votes=0), "limit of 1000000"),
    "votes negative": (line(total_likes=-1), "whole number >= 0"),
    "votes a float": (line(total_votes=3.0), "whole number >= 0"),
    "votes of 5000 digits": (b'{"id": "c1", "total_votes": 1' + b"0" * 5000 + b"}", "not valid JSON"),
    "label of another kind": (line(label="TRUE"), "label must be SUPPORTS or REFUTES"),
    "not UTF-8": (b'{"id": "c1", "text": "Pl\xf6to"}', "not UTF-8 text"),
    "gold evidence null": (line(gold_evidence=None), "'gold_evidence' must be a list"),
    "gold evidence text a list": (line(gold_evidence=[{"text": ["a"]}]), "non-empty 'text'"),
}


@pytest.mark.parametrize("bad, message", BAD_ROWS.values(), ids=BAD_ROWS.keys())
def test_bad_row_is_refused_with_file_and_line_and_changes_nothing(tmp_path: Path, settings, bad: bytes | None, message: str) -> None:
    if bad is None:  # 60 MB would be slow to build: the same refusal under a smaller bound
        settings.FM2_IMPORT = {**settings.FM2_IMPORT, "LINE_MAX_BYTES": 100_000}
        bad = line(text="Pluto is small. " * 20_000)
    run_import(FM2_SAMPLE)
    before = stored()
    path = tmp_path / "train.jsonl"
    path.write_bytes(line(id="new-1") + b"\n" + bad + b"\n")
    with pytest.raises(CommandError) as error:
        run_import(path)
    assert str(error.value).startswith(f"{path}:2: ")
    assert message in str(error.value)
    assert stored() == before
    assert not Claim.objects.filter(external_id="new-1").exists()


def test_label_in_lower_case_is_read_as_the_label(tmp_path: Path) -> None:
    path = tmp_path / "dev.jsonl"
    path.write_bytes(line(label="refutes") + b"\n")
    run_import(path)
    assert Claim.objects.get(external_id="c1").label == Claim.Label.REFUTES


def test_file_with_a_byte_order_mark_imports(tmp_path: Path) -> None:
    path = tmp_path / "dev.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + line() + b"\n")
    assert run_import(path).startswith("pages=1 claims=1 ")


def test_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "dev.jsonl"
    path.write_bytes(b"")
    with pytest.raises(CommandError, match=rf"^{path}:1: empty file"):
        run_import(path)


def test_a_bad_second_file_leaves_the_first_unwritten(tmp_path: Path) -> None:
    first = tmp_path / "train.jsonl"
    first.write_bytes(line(id="t1") + b"\n")
    second = tmp_path / "dev.jsonl"
    second.write_bytes(line(id="d1") + b"\n" + line(id="d2", label="MAYBE") + b"\n")
    with pytest.raises(CommandError, match=rf"^{second}:2: label"):
        run_import(first, second)
    assert stored() == (0, 0, 0)


def test_release_limits_sit_well_above_the_dev_split(fm2_dev: Path, settings) -> None:
    rows = [json.loads(raw) for raw in fm2_dev.read_text().splitlines()]
    evidence_items = [e for r in rows for e in r["gold_evidence"] + r["retrieved_evidence"]]
    limits = settings.FM2_IMPORT
    assert max(len(r["text"]) for r in rows) * 2 < limits["CLAIM_MAX_CHARS"]
    assert max(len(e["text"]) for e in evidence_items) * 1.5 < limits["SENTENCE_MAX_CHARS"]
    assert max(len(r["wikipedia_page"]) for r in rows) * 2 < limits["TITLE_MAX_CHARS"]
    assert max(len(r["retrieved_evidence"]) for r in rows) * 2 < limits["EVIDENCE_PER_CLAIM_MAX"]
