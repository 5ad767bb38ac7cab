"""A release that certifies itself: the quality gates of quality.json, the exit status that
names the failed ones, the job's record of them, the sha256 manifest and the Croissant file."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from foolgame.checks.models import Check, ClaimValidation
from foolgame.claims.models import Claim
from foolgame.dataset import certify
from foolgame.dataset.exporter import ExportOptions
from foolgame.dataset.models import Export
from foolgame.dataset.services import dataset_export
from foolgame.dataset.writers import CLAIM_FIELDS
from tests.dataset.conftest import client_for
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

LENIENT = {
    "MIN_CHECKED_SHARE": 0.5,
    "MIN_KAPPA": 0.6,
    "MIN_KAPPA_CLAIMS": 5,
    "ARTIFACT_MARGIN": 1.0,
    "MAX_LMI": 1.0,
    "MAX_PERSONAL_DATA": 0,
    "MAX_OFFENSIVE_WORDS": 0,
}
"""Thresholds the small test world can meet once its claims are checked (the baseline and
LMI of 14 claims say nothing: their own tests fail them under the defaults)."""


@pytest.fixture
def lenient(settings):
    settings.FM2_CERTIFY = dict(LENIENT)
    return settings.FM2_CERTIFY


def check_claims(claims, *, labels: int = 4, agree: bool = True) -> None:
    """``labels`` answered checks on each claim by checkers with no gold record (weight 1),
    agreeing with the author's label or not, and the claim's validation row."""
    checkers = [UserFactory(username=f"checker_{i}") for i in range(labels)]
    now = timezone.now()
    for claim in claims:
        other = "REFUTES" if claim.label == "SUPPORTS" else "SUPPORTS"
        for checker in checkers:
            Check.objects.create(player=checker, claim=claim, dealt_at=now, expires_at=now + timedelta(seconds=45),
                                 answered_at=now, label=claim.label if agree else other)
        ClaimValidation.objects.create(claim=claim, labels=labels, gold_label=claim.label if agree else other)


def gates(out: Path) -> dict[str, dict]:
    return {gate["name"]: gate for gate in json.loads((out / "quality.json").read_text())["gates"]}


def export(out: Path, **options) -> dict:
    result = dataset_export(out_dir=out, options=ExportOptions(certify=True, **options), salt=b"0" * 32)
    assert result.quality is not None
    return result.quality


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_checked_clean_release_passes_every_gate_and_the_command_exits_zero(world, lenient, tmp_path: Path, capsys) -> None:
    check_claims(world.claims.values())
    call_command("export_dataset", str(tmp_path / "out"), "--certify", "-v", "0")
    quality = json.loads((tmp_path / "out" / "quality.json").read_text())
    assert quality["passed"] is True and quality["failed"] == []
    assert [gate["name"] for gate in quality["gates"]] == list(certify.GATES)
    found = gates(tmp_path / "out")
    assert found["checked_share"]["value"] == 1.0 and found["checked_share"]["checked_claims"] == 14
    assert found["kappa"]["value"] == 1.0 and found["kappa"]["claims"] == 14
    assert found["page_disjoint"]["pages_by_split"] == {"train": 5, "dev": 1, "test": 1}
    assert "pass kappa: 1.0 (threshold 0.6)" in capsys.readouterr().out


def test_failed_gates_are_written_then_named_in_a_non_zero_exit(world, tmp_path: Path, capsys) -> None:
    with pytest.raises(CommandError, match=r"^quality gates failed: checked_share, kappa, artifacts, lmi$"):
        call_command("export_dataset", str(tmp_path / "out"), "--certify", "-v", "0")
    assert not gates(tmp_path / "out")["checked_share"]["passed"]
    assert (tmp_path / "out" / "manifest.json").exists()
    assert "FAIL kappa" in capsys.readouterr().out


def test_too_few_checks_fail_the_checked_share_and_kappa_gates(world, lenient, tmp_path: Path) -> None:
    check_claims([world.claims["t0"], world.claims["f0"]])
    check_claims([world.claims["t1"]], labels=3)  # three labels are not enough to count
    quality = export(tmp_path / "out")
    found = gates(tmp_path / "out")
    assert found["checked_share"]["checked_claims"] == 2 and found["checked_share"]["value"] == round(2 / 14, 4)
    assert found["kappa"]["reason"] == "not enough validated claims (2, 5 needed)" and found["kappa"]["value"] is None
    assert quality["failed"] == ["checked_share", "kappa"]


def test_labels_that_disagree_with_the_author_fail_the_kappa_gate(world, lenient, tmp_path: Path) -> None:
    claims = list(world.claims.values())
    check_claims(claims[:7])
    check_claims(claims[7:], agree=False)
    export(tmp_path / "out")
    found = gates(tmp_path / "out")
    assert found["kappa"]["passed"] is False and found["kappa"]["value"] < 0.6


def test_a_planted_email_address_fails_personal_data_with_its_claim_id_never_the_address(world, lenient, tmp_path: Path) -> None:
    check_claims(world.claims.values())
    claim = world.claims["t3"]
    claim.text = "Topic 3 was founded by jane.roe@example.com, reachable on (555) 123-4567."
    claim.save(update_fields=["text"])
    quality = export(tmp_path / "out")
    gate = gates(tmp_path / "out")["personal_data"]
    assert quality["failed"] == ["personal_data"] and gate["value"] == 2
    assert gate["kinds"]["email"] == {"matches": 1, "claims": 1, "examples": [f"game-{claim.pk}"]}
    assert gate["kinds"]["phone"]["matches"] == 1 and gate["kinds"]["street_address"]["matches"] == 0
    written = (tmp_path / "out" / "quality.json").read_text()
    assert "jane.roe" not in written and "123-4567" not in written


def test_a_word_of_the_list_fails_offensive_language(world, lenient, tmp_path: Path) -> None:
    check_claims(world.claims.values())
    claim = world.claims["f4"]
    claim.text = "Topic 4 was founded by a total wanker."
    claim.save(update_fields=["text"])
    quality = export(tmp_path / "out")
    gate = gates(tmp_path / "out")["offensive_language"]
    assert quality["failed"] == ["offensive_language"]
    assert (gate["matches"], gate["claims"], gate["examples"]) == (1, 1, [f"game-{claim.pk}"])
    assert "wanker" not in (tmp_path / "out" / "quality.json").read_text()


def test_wikipedia_quotes_are_reported_not_counted_so_the_reference_release_passes(world, lenient, tmp_path: Path) -> None:
    """The FM2 dev split quotes addresses and song titles from Wikipedia in its evidence: a gate
    that counted them failed the field's reference release. What a player wrote still counts."""
    check_claims(world.claims.values())
    quoted = world.claims["t2"]
    clues = [dict(clue) for clue in quoted.clues]
    clues[0]["text"] = "The address of Petco Park is 19 Tony Gwynn Drive, where the song Bullshit was first played."
    Claim.objects.filter(pk=quoted.pk).update(clues=clues)
    quality = export(tmp_path / "out")
    found = gates(tmp_path / "out")
    assert quality["passed"] is True
    assert found["personal_data"]["quoted"]["kinds"]["street_address"] == {"matches": 1, "claims": 1, "examples": [f"game-{quoted.pk}"]}
    assert (found["offensive_language"]["quoted"]["matches"], found["offensive_language"]["quoted"]["examples"]) == (1, [f"game-{quoted.pk}"])
    written = world.claims["f2"]
    written.text = "Topic 2 was founded at 19 Tony Gwynn Drive."
    written.save(update_fields=["text"])
    assert export(tmp_path / "again")["failed"] == ["personal_data"]


def _move_line(out: Path, source: str, target: str, *, matching: str = "", copy: bool = False) -> dict:
    lines = (out / f"{source}.jsonl").read_text().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if matching in line)
    record = json.loads(lines[index])
    if copy:
        record["id"] += "-copy"
    else:
        (out / f"{source}.jsonl").write_text("".join(lines[:index] + lines[index + 1:]))
    with (out / f"{target}.jsonl").open("a") as handle:
        handle.write(json.dumps(record) + "\n")
    return record


def test_a_page_in_two_splits_fails_page_disjoint(world, lenient, tmp_path: Path) -> None:
    out = tmp_path / "out"
    options = ExportOptions(certify=True)
    result = dataset_export(out_dir=out, options=options)
    assert gates(out)["page_disjoint"]["passed"]
    _move_line(out, "train", "dev", copy=True)
    quality = certify.release_quality(out_dir=out, options=options, stats=result.stats, artifacts=result.artifacts)
    gate = next(gate for gate in quality["gates"] if gate["name"] == "page_disjoint")
    assert (gate["passed"], gate["value"], gate["shared_pages"]) == (False, 1, 1)


def test_a_test_exclusive_authors_claim_in_train_fails_the_gate(world, lenient, tmp_path: Path) -> None:
    out = tmp_path / "out"
    options = ExportOptions(certify=True, exclusive_test_authors=frozenset({"author_2"}))
    result = dataset_export(out_dir=out, options=options)
    before = gates(out)["exclusive_test_authors"]
    assert before["passed"] and before["authors"] == 1 and before["claims_by_split"]["test"] == 4
    _move_line(out, "test", "train", matching="Topic 2 was founded")
    quality = certify.release_quality(out_dir=out, options=options, stats=result.stats, artifacts=result.artifacts)
    gate = next(gate for gate in quality["gates"] if gate["name"] == "exclusive_test_authors")
    assert (gate["passed"], gate["value"], gate["claims_by_split"]) == (False, 1, {"train": 1, "dev": 0, "test": 3})
    assert "page_disjoint" in quality["failed"]  # the moved claim's page is now in two splits too


def test_the_manifest_lists_every_file_and_the_same_database_seed_and_salt_give_it_byte_for_byte(world, tmp_path: Path) -> None:
    for name in ("a", "b"):
        dataset_export(out_dir=tmp_path / name, options=ExportOptions(seed=4, certify=True), salt=b"s" * 32)
    manifest = (tmp_path / "a" / "manifest.json").read_bytes()
    assert manifest == (tmp_path / "b" / "manifest.json").read_bytes()
    entries = json.loads(manifest)["files"]
    on_disk = {path.name for path in (tmp_path / "a").iterdir()} - {"manifest.json", "SHA256SUMS"}  # SHA256SUMS lists the manifest
    assert {entry["name"] for entry in entries} == on_disk
    for entry in entries:
        path = tmp_path / "a" / entry["name"]
        assert (entry["sha256"], entry["size"]) == (sha256(path), path.stat().st_size)


def test_croissant_describes_every_file_with_its_sha256_and_the_claim_fields(world, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = dataset_export(out_dir=out, options=ExportOptions())
    assert "quality.json" not in result.files and {"croissant.json", "manifest.json"} <= set(result.files)
    croissant = json.loads((out / "croissant.json").read_text())
    assert croissant["@type"] == "sc:Dataset" and croissant["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert croissant["license"] == "https://creativecommons.org/licenses/by-sa/4.0/"
    assert {"@vocab", "cr", "sc"} <= set(croissant["@context"]) and "Fool Me Twice" in croissant["citeAs"]
    objects = {item["name"]: item for item in croissant["distribution"] if item["@type"] == "cr:FileObject"}
    assert set(objects) == {path.name for path in out.iterdir()} - {"croissant.json", "manifest.json", "SHA256SUMS"}
    for name, item in objects.items():
        assert item["sha256"] == sha256(out / name) and item["encodingFormat"]
    claim_set = next(item for item in croissant["distribution"] if item["@type"] == "cr:FileSet")
    assert claim_set["includes"] == ["train.jsonl", "dev.jsonl", "test.jsonl"]
    record_sets = {record_set["name"]: record_set for record_set in croissant["recordSet"]}
    assert list(record_sets) == ["claims", "votes"]  # no claim was checked: no validation label to read
    # model_verdicts has no key when no verifier version judged a claim: nothing to read.
    assert [field["name"] for field in record_sets["claims"]["field"]] == [name for name in CLAIM_FIELDS if name != "model_verdicts"]
    assert "croissant.json" in (out / "README.md").read_text()


@pytest.fixture
def researcher(db):
    user = UserFactory(username="rita")
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    return user


@pytest.mark.parametrize("value", ["yes please", None, [True]])
def test_a_bad_certify_value_is_refused(world, researcher, value) -> None:
    response = client_for(researcher).post(reverse("exports"), {"certify": value}, format="json")
    assert response.status_code == 400 and set(response.json()["error"]["details"]) == {"certify"}
    assert not Export.objects.exists()


@pytest.mark.usefixtures("exports_dir")
def test_a_certified_job_records_its_gates_on_the_export(world, researcher, django_capture_on_commit_callbacks) -> None:
    client = client_for(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        export_id = client.post(reverse("exports"), {"certify": True}, format="json").json()["id"]
    detail = client.get(reverse("export-detail", args=[export_id])).json()
    assert detail["status"] == "done" and detail["options"]["certify"] is True
    assert [gate["name"] for gate in detail["quality"]] == list(certify.GATES)
    assert detail["quality"][1] == {
        "name": "kappa", "passed": False, "value": None, "threshold": 0.6,
        "reason": "not enough validated claims (0, 30 needed)",
    }
    assert "quality.json" in {f["name"] for f in detail["files"]}
    with django_capture_on_commit_callbacks(execute=True):
        plain = client.post(reverse("exports"), {}, format="json").json()["id"]
    assert client.get(reverse("export-detail", args=[plain])).json()["quality"] is None
