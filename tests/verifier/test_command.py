"""``manage.py verifier``: the operator's commands, each answering with figures or a clear error."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from foolgame.pages.models import Page
from foolgame.verifier.models import VerifierVersion
from tests.verifier.conftest import OTHER, learnable_claims

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    quiet = ("--no-progress",) if args[0] in ("train", "evaluate") else ()
    call_command("verifier", *args, *quiet, stdout=out)
    return out.getvalue()


def release_file(tmp_path: Path, rows: list[dict]) -> str:
    path = tmp_path / "claims.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def test_train_list_evaluate_activate_and_rollback(tmp_path: Path) -> None:
    assert "No version yet" in run("list")
    learnable_claims(pages=4)
    with pytest.raises(CommandError, match="not due"):
        run("train")
    learnable_claims(pages=6, first=4, seed=1)
    assert run("train").startswith("v1 [active]")
    learnable_claims(pages=2, first=10, seed=2)
    assert run("train", "--force").startswith("v2 [active]")
    listed = run("list")
    assert "v1 [retired]" in listed and "v2 [active]" in listed and "frozen slice accuracy" in listed

    trained_title = Page.objects.get(pk=VerifierVersion.objects.get(number=2).trained_page_ids[0]).title
    rows = [
        {"text": "river castle bridge violin topic 99.", "label": "SUPPORTS", "wikipedia_page": "Unseen", "gold_evidence": [{"text": "river castle bridge violin planet.", "section_header": ""}], "retrieved_evidence": [{"text": "nothing here at all.", "section_header": ""}]},
        {"text": " ".join(OTHER[:4]) + " topic 99.", "label": "REFUTES", "wikipedia_page": "Unseen", "gold_evidence": [{"text": "river castle bridge violin planet.", "section_header": ""}], "retrieved_evidence": []},
        {"text": "river castle topic 1.", "label": "SUPPORTS", "wikipedia_page": trained_title, "gold_evidence": [{"text": "river castle.", "section_header": ""}]},
    ]
    result = json.loads(run("evaluate", release_file(tmp_path, rows), "--json"))
    assert result["n"] == 2 and result["skipped_trained_pages"] == 1 and result["evidence"] == "gold"
    assert result["accuracy"] == 1.0 and result["version"] == 2
    retrieved = json.loads(run("evaluate", release_file(tmp_path, rows), "--json", "--retrieved"))
    assert retrieved["evidence"] == "retrieved (top 2)" and retrieved["n"] == 2
    text = run("evaluate", release_file(tmp_path, rows), "--version", "1")
    assert text.startswith("v1 on ") and "accuracy" in text and "n 2" in text

    assert run("rollback").startswith("v1 [active]")
    assert run("activate", "2").startswith("v2 [active]")
    with pytest.raises(CommandError, match="already active"):
        run("activate", "2")


def test_evaluate_names_the_bad_line_of_a_file(tmp_path: Path) -> None:
    learnable_claims(pages=8)
    run("train")
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "fine", "label": "SUPPORTS"}\n{"text": "no label"}\n')
    with pytest.raises(CommandError, match=r"bad.jsonl:2: needs text and a SUPPORTS/REFUTES label"):
        run("evaluate", str(path))
    with pytest.raises(CommandError, match="cannot read"):
        run("evaluate", str(tmp_path / "missing.jsonl"))


def test_train_if_due_succeeds_quietly_when_nothing_is_due() -> None:
    assert "none is active yet" in run("train", "--if-due")
    learnable_claims(pages=8)
    assert run("train", "--if-due").startswith("v1 [active]")
    assert "v1 stays active" in run("train", "--if-due")
