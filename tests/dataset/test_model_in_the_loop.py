"""The model in the loop in an export: each claim's verdicts, version, tries and hardness, and
the active version's figures on test (FM2 Tables 6 and 7), ANLI's round table and the
hardness counts in stats and the card. The verifier is a fake whose verdicts the test sets."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.verifier.conftest import confirm_by_checkers
from foolgame.claims.models import Claim
from foolgame.dataset.exporter import ExportOptions
from foolgame.dataset.privacy import Pseudonyms
from foolgame.dataset.services import dataset_export
from foolgame.verifier import runtime
from foolgame.verifier.models import ClaimVerdict, VerifierVersion, WrittenAgainst
from scoring.filters import wilson
from tests.dataset.conftest import make_claim, play
from tests.factories import PageFactory, UserFactory

pytestmark = pytest.mark.django_db
SALT = b"a fixed salt for the tests, 32 bytes"
S, R = "SUPPORTS", "REFUTES"
FLIP = {S: R, R: S}


@dataclass(frozen=True)
class FakeVerdict:
    supports: float

    @property
    def refutes(self) -> float:
        return 1.0 - self.supports

    @property
    def label(self) -> str:
        return S if self.supports >= 0.5 else R

    @property
    def probability(self) -> float:
        return max(self.supports, self.refutes)


@dataclass
class FakeVerifier:
    """Right on every claim but those named: with gold evidence (the gold sentences read
    "Decisive evidence for ...") it gets ``wrong_with_gold`` wrong, with anything else
    ``wrong_with_retrieved``. It keeps every call's items."""

    labels: dict[str, str]
    wrong_with_gold: set[str] = field(default_factory=set)
    wrong_with_retrieved: set[str] = field(default_factory=set)
    calls: list[list[tuple[str, list[str]]]] = field(default_factory=list)

    def verdicts(self, items):
        self.calls.append([(text, list(evidence)) for text, evidence in items])
        out = []
        for text, evidence in items:
            gold = any(sentence.startswith("Decisive evidence") for sentence in evidence)
            wrong = text in (self.wrong_with_gold if gold else self.wrong_with_retrieved)
            label = FLIP[self.labels[text]] if wrong else self.labels[text]
            out.append(FakeVerdict(0.9 if label == S else 0.1))
        return out


@dataclass
class Loop:
    claims: dict[str, Claim]
    active: VerifierVersion
    retired: VerifierVersion
    verifier: FakeVerifier
    tester: object
    author: object


def version(number: int, status: str, **fields) -> VerifierVersion:
    return VerifierVersion.objects.create(number=number, kind="head", name=f"head {number}", status=status, fingerprint="x", blob=b"", **fields)


def verdict(claim: Claim, version_: VerifierVersion, label: str) -> None:
    ClaimVerdict.objects.create(claim=claim, version=version_, label=label, supports=0.8 if label == S else 0.2)


def written(claim: Claim, version_: VerifierVersion, label: str, tries: int, **fields) -> None:
    WrittenAgainst.objects.create(claim=claim, version=version_, label=label, supports=None if not label else 0.5, tries=tries, **fields)


@pytest.fixture(autouse=True)
def forget_loaded_versions():
    yield
    runtime.forget()


@pytest.fixture(autouse=True)
def first_two_retrieved(monkeypatch):
    """These tests control what the verifier reads end to end: each claim's first two
    retrieved sentences (for a game claim, its first two clues). What the retriever picks from
    a page's pool is tested on its own below."""
    import foolgame.dataset.model_loop as model_loop

    monkeypatch.setattr(model_loop, "_retrieved", lambda records: [[e["text"] for e in r["retrieved_evidence"][:2]] for r in records])


def test_end_to_end_evidence_is_the_retrievers_best_in_the_pages_pool_gold_or_not(monkeypatch) -> None:
    from foolgame.dataset import model_loop
    from tests.retrieval.test_game import _WordEncoder

    monkeypatch.undo()  # the real _retrieved
    monkeypatch.setattr("foolgame.evidence.services.encoder_get", _WordEncoder)
    gold = {"text": "The iron tower stands in Paris.", "section_header": ""}
    other = {"text": "A stone bridge crosses the river in London.", "section_header": ""}
    opera = {"text": "The opera house is in Vienna.", "section_header": ""}
    records = [
        {"text": "The Paris tower is iron", "wikipedia_page": "P", "gold_evidence": [gold], "retrieved_evidence": [other, opera]},  # its list puts gold nowhere
        {"text": "Vienna has an opera", "wikipedia_page": "P", "gold_evidence": [opera], "retrieved_evidence": [gold, other]},
        {"text": "Vienna has an opera", "wikipedia_page": "Q", "gold_evidence": [], "retrieved_evidence": [other]},  # another page: another pool
    ]
    found = model_loop._retrieved(records)
    assert found[0][0] == gold["text"] and found[1][0] == opera["text"]
    assert found[2] == [other["text"]]


@pytest.fixture
def loop(db) -> Loop:
    """Train: four pages of claims that say "alpha" when true and "beta" when false. Test (a
    test-exclusive author's pages): four pages with a true and a false claim each, and two
    claims on a page v2 was trained on. v2 is active, v1 retired."""
    author, tester = UserFactory(username="train_author"), UserFactory(username="test_author")
    voters = [UserFactory(username=f"loop_voter_{i}") for i in range(4)]
    c: dict[str, Claim] = {}
    for p in range(4):
        page = PageFactory(title=f"Train page {p}")
        c[f"train_t{p}"] = make_claim(page, label=S, author=author, text=f"Alpha alpha claim {p} is right.")
        c[f"train_f{p}"] = make_claim(page, label=R, author=author, text=f"Beta beta claim {p} is wrong.")
    for p in range(4):
        page = PageFactory(title=f"Test page {p}")
        c[f"t{p}"] = make_claim(page, label=S, author=tester, text=f"Alpha alpha test {p} holds.")
        c[f"f{p}"] = make_claim(page, label=R, author=tester, text=f"Beta beta test {p} fails.")
    trained_page = PageFactory(title="Trained page")
    c["trained_t"] = make_claim(trained_page, label=S, author=tester, text="Alpha alpha trained holds.")
    c["trained_f"] = make_claim(trained_page, label=R, author=tester, text="Beta beta trained fails.")
    c["removed"] = make_claim(PageFactory(title="Removed page"), label=S, author=tester, text="Alpha alpha removed holds.")
    Claim.objects.filter(pk=c["removed"].pk).update(status=Claim.Status.REMOVED)

    retired = version(1, "retired")
    active = version(2, "active", trained_page_ids=[trained_page.pk, c["train_t0"].page_id])
    # The verdicts stored per claim with its gold evidence (model_verdicts, hard_for).
    for name in ("t0", "f0", "f1", "f3"):
        verdict(c[name], active, c[name].label)
    for name in ("t1", "t3"):
        verdict(c[name], active, FLIP[c[name].label])
    verdict(c["t0"], retired, R)
    verdict(c["t3"], retired, c["t3"].label)  # a retired version's verdict is not hard_for's
    # Written against: t0 fooled v1 and people confirmed its label; f0 did not fool v1; t1 and
    # f1 fooled v2, unconfirmed; t2's verdict never came; train_t1 did not fool v2; the removed
    # claim fooled v1 and is confirmed, but it is not exported.
    written(c["t0"], retired, R, 3)
    confirm_by_checkers(c["t0"], label=S)  # three independent checkers whose labels count
    written(c["f0"], retired, R, 1)
    written(c["t1"], active, R, 2)
    written(c["f1"], active, S, 4)
    written(c["t2"], active, "", 1)
    written(c["train_t1"], active, S, 5)
    written(c["removed"], retired, R, 1)
    confirm_by_checkers(c["removed"], label=S)
    # Votes: four wrong on the pair of page 3 (smoothed 4/9, hard for people); one right on page 1.
    for voter in voters:
        play(voter, c["t3"], c["f3"], correct=False)
    play(voters[0], c["t1"], c["f1"], correct=True)

    labels = {claim.text: claim.label for claim in c.values()}
    fake = FakeVerifier(
        labels,
        wrong_with_gold={c["f2"].text, c["trained_t"].text, c["trained_f"].text},
        wrong_with_retrieved={c["f2"].text, c["t3"].text, c["f3"].text, c["trained_t"].text, c["trained_f"].text},
    )
    runtime.remember(active, fake)
    return Loop(claims=c, active=active, retired=retired, verifier=fake, tester=tester, author=author)


def export(tmp_path: Path, name: str = "out", *, progress=None, **options) -> Path:
    out = tmp_path / name
    options.setdefault("splits", (1, 0, 0))
    options.setdefault("exclusive_test_authors", frozenset({"test_author"}))
    dataset_export(out_dir=out, options=ExportOptions(**options), salt=SALT, progress=progress)
    return out


def records(out: Path) -> dict[str, dict]:
    rows = {}
    for split in ("train", "dev", "test"):
        for line in (out / f"{split}.jsonl").read_text().splitlines():
            record = json.loads(line)
            rows[record["text"]] = {**record, "split": split}
    return rows


def section(out: Path) -> dict:
    return json.loads((out / "stats.json").read_text())["model_in_the_loop"]


def test_each_claim_carries_the_versions_verdicts_what_it_was_written_against_and_whom_it_is_hard_for(loop, tmp_path: Path) -> None:
    rows = records(export(tmp_path))
    c = loop.claims

    def row(name: str) -> dict:
        return rows[c[name].text]

    assert row("t0")["split"] == "test" and row("train_t1")["split"] == "train"
    assert row("t0")["model_verdicts"] == {"v1": {"label": R, "supports": 0.2}, "v2": {"label": S, "supports": 0.8}}
    assert row("t2")["model_verdicts"] == {}
    expected = {  # model_version, model_fooled, tries
        "t0": ("v1", True, 3), "f0": ("v1", False, 1), "t1": ("v2", True, 2), "f1": ("v2", True, 4),
        "t2": ("v2", None, 1), "train_t1": ("v2", False, 5), "f2": (None, None, None), "trained_t": (None, None, None),
    }
    for name, fields in expected.items():
        assert (row(name)["model_version"], row(name)["model_fooled"], row(name)["tries"]) == fields, name
    # People: smoothed correctness under one half (4 wrong votes: 4/9). Model: v2's verdict wrong.
    hard = {name: row(name)["hard_for"] for name in ("t0", "f0", "t1", "f1", "t2", "f2", "t3", "f3")}
    assert hard == {"t0": None, "f0": None, "t1": "model", "f1": "neither", "t2": None, "f2": None, "t3": "both", "f3": "people"}
    assert row("f3")["smoothed_correctness"] == round(4 / 9, 4)


def test_the_test_figures_leave_out_the_versions_trained_pages_and_match_tables_6_and_7(loop, tmp_path: Path) -> None:
    figures = section(export(tmp_path))
    assert figures["active_version"] == {"version": "v2", "name": "head 2", "kind": "head", "trained_pages": 2}
    test = figures["test"]
    # 10 test claims, the 2 on the page v2 was trained on left out (it gets both wrong).
    assert (test["claims"], test["left_out_trained_pages"], test["evaluated"]) == (10, 2, 8)
    # Gold evidence: all right but f2 (7 of 8). SUPPORTS F1 8/9, REFUTES F1 6/7.
    low, high = wilson(7, 8)
    assert test["gold_evidence"] == {"n": 8, "accuracy": 0.875, "ci95": [round(low, 4), round(high, 4)], "macro_f1": round((8 / 9 + 6 / 7) / 2, 4)}
    # Retrieved evidence: f2, t3 and f3 wrong (5 of 8). SUPPORTS F1 6/9, REFUTES F1 4/7.
    low, high = wilson(5, 8)
    assert test["retrieved_evidence"] == {"n": 8, "accuracy": 0.625, "ci95": [round(low, 4), round(high, 4)], "macro_f1": round((6 / 9 + 4 / 7) / 2, 4)}
    # The claim-only baseline learns "alpha" and "beta" from train, on the same 8 claims.
    assert test["claim_only"]["n"] == 8 and test["claim_only"]["accuracy"] == 1.0
    assert test["claim_only_train_claims"] == 8 and "claim_only_reason" not in test
    # The verifier never read a claim of a trained page; end to end it read the first 2 clues.
    judged = [item for call in loop.verifier.calls for item in call]
    assert {text for text, _ in judged} == {loop.claims[f"{kind}{p}"].text for kind in "tf" for p in range(4)}
    t0 = loop.claims["t0"]
    clues = [clue["text"] for clue in t0.clues]  # three retrieved sentences, then the gold one
    assert (t0.text, clues[:2]) in judged and (t0.text, clues[3:]) in judged
    assert clues[3].startswith("Decisive evidence")


def test_the_verifier_judges_in_batches_of_64_reporting_progress(loop, tmp_path: Path, monkeypatch) -> None:
    import foolgame.dataset.model_loop as model_loop

    assert model_loop.JUDGE_BATCH == 64
    monkeypatch.setattr(model_loop, "JUDGE_BATCH", 3)
    reports: list[tuple[str, int, int]] = []
    export(tmp_path, progress=lambda stage, done, total: reports.append((stage, done, total)))
    assert [len(call) for call in loop.verifier.calls] == [3, 3, 3, 3, 2, 2]  # gold, then retrieved, per batch
    assert [r for r in reports if r[0] == "model"] == [("model", 0, 8), ("model", 3, 8), ("model", 6, 8), ("model", 8, 8)]
    stages = list(dict.fromkeys(stage for stage, _, _ in reports))
    assert stages.index("stats") < stages.index("model") < stages.index("artifacts")


def test_the_round_table_counts_the_exported_claims_written_against_each_version(loop, tmp_path: Path) -> None:
    rounds = {row["version"]: row for row in section(export(tmp_path))["rounds"]}
    # v1: t0 (wrong, confirmed by people) and f0 (right); the removed claim is not exported.
    assert rounds["v1"] == {
        "version": "v1", "name": "head 1", "status": "retired", "claims": 2, "model_error_rate": 0.5,
        "verified_claims": 1, "verified_model_error_rate": 0.5, "tries_per_claim": 2.0,
    }
    # v2: t1 and f1 (wrong, unconfirmed) and train_t1 (right); t2's verdict never came.
    assert rounds["v2"] == {
        "version": "v2", "name": "head 2", "status": "active", "claims": 3, "model_error_rate": round(2 / 3, 4),
        "verified_claims": 0, "verified_model_error_rate": 0.0, "tries_per_claim": round(11 / 3, 3),
    }


def test_stats_and_the_card_show_the_figures_the_rounds_and_the_hardness_counts(loop, tmp_path: Path) -> None:
    out = export(tmp_path)
    figures = section(out)
    assert figures["verdict_versions"] == ["v1", "v2"]
    assert figures["hardness"]["splits"]["test"] == {"people": 1, "model": 1, "both": 1, "neither": 1, "unknown": 6}
    assert figures["hardness"]["total"] == {"people": 1, "model": 1, "both": 1, "neither": 1, "unknown": 14}
    for text in ((out / "stats.md").read_text(), (out / "README.md").read_text()):
        assert "## The model in the loop" in text
        assert "2 of the 10 test claims were left out, 8 evaluated" in text
        assert "| v2 with gold evidence (FM2 Table 6) | 8 | 87.5% |" in text
        assert "| v2 with retrieved evidence (FM2 Table 7) | 8 | 62.5% |" in text
        assert "| v1 | retired | 2 | 50.0% | 50.0% | 2.00 |" in text
        assert "| test | 1 | 1 | 1 | 1 | 6 |" in text
    card = (out / "README.md").read_text()
    for name in ("model_verdicts", "model_version", "model_fooled", "tries", "hard_for"):
        assert f"| `{name}` |" in card


def test_csv_only_exports_give_the_same_figures_and_model_fields(loop, tmp_path: Path) -> None:
    from foolgame.dataset.reports import read_claims

    both, csv_only = export(tmp_path, "both"), export(tmp_path, "csv", formats=("csv",))
    assert section(csv_only) == section(both)
    fields = ("model_verdicts", "model_version", "model_fooled", "tries", "hard_for", "retrieved_evidence")
    for split in ("train", "test"):
        from_csv = [{key: record[key] for key in fields} for record in read_claims(csv_only, split)]
        assert from_csv == [{key: record[key] for key in fields} for record in read_claims(both, split)]


def test_an_empty_train_split_gives_no_claim_only_baseline_and_says_why(loop, tmp_path: Path) -> None:
    out = export(tmp_path, splits=(0, 0, 1), exclusive_test_authors=frozenset())
    test = section(out)["test"]
    assert test["claim_only"] is None and test["claim_only_reason"] == "train is empty"
    # Every page in test: the two pages v2 was trained on (Trained page, Train page 0) are left out.
    assert (test["left_out_trained_pages"], test["evaluated"], test["gold_evidence"]["n"]) == (4, 14, 14)
    assert "| claim only | 0 | n/a (train is empty) | | |" in (out / "README.md").read_text()


def test_an_export_with_no_version_says_no_model_was_active(world, tmp_path: Path) -> None:
    out = export(tmp_path, exclusive_test_authors=frozenset())
    figures = section(out)
    assert figures["active_version"] is None and figures["reason"] == "no model version was active"
    assert figures["test"] is None and figures["rounds"] == [] and figures["verdict_versions"] == []
    assert figures["hardness"]["total"] == {"people": 0, "model": 0, "both": 0, "neither": 0, "unknown": 14}
    for row in records(out).values():
        assert (row["model_verdicts"], row["model_version"], row["model_fooled"], row["tries"], row["hard_for"]) == ({}, None, None, None, None)
    assert "No model version was active" in (out / "README.md").read_text()


def test_a_retired_version_alone_keeps_its_round_but_gives_no_figures(loop, tmp_path: Path) -> None:
    VerifierVersion.objects.filter(pk=loop.active.pk).update(status="retired")
    figures = section(export(tmp_path))
    assert figures["active_version"] is None and figures["test"] is None
    assert [row["version"] for row in figures["rounds"]] == ["v1", "v2"]
    assert figures["hardness"]["total"]["unknown"] == 18
    assert loop.verifier.calls == []


def test_a_verifier_that_cannot_load_leaves_the_figures_null_with_the_reason(loop, tmp_path: Path, monkeypatch) -> None:
    runtime.forget()
    monkeypatch.setattr(runtime, "build", lambda version: (_ for _ in ()).throw(OSError("no weights")))
    test = section(export(tmp_path))["test"]
    assert test["gold_evidence"] is None and test["retrieved_evidence"] is None
    assert test["error"] == "the verifier could not be loaded: OSError: no weights"
    assert test["claim_only"]["n"] == 8  # the baseline needs no model


def test_model_points_paid_for_a_claim_cut_its_authors_run(loop, tmp_path: Path) -> None:
    from foolgame.players.models import LedgerEntry

    for n in range(5):  # five players far above one run on every leaderboard but model's
        LedgerEntry.objects.bulk_create(
            LedgerEntry(player=UserFactory(username=f"leader_{n}"), amount=30 if kind == "model" else 10_000, kind=kind, cause="test")
            for kind in LedgerEntry.Kind.values
        )

    def authors(name: str) -> tuple[str, str]:
        rows = records(export(tmp_path, name))
        return rows[loop.claims["t1"].text]["author"], rows[loop.claims["f1"].text]["author"]

    first, second = authors("unpaid")
    assert first == second == Pseudonyms(SALT).named(f"author:{loop.tester.pk}:1")  # t0 f0 | t1 f1 | ...
    WrittenAgainst.objects.filter(claim=loop.claims["f1"]).update(paid=True)  # 50 model points, over the 5th best's 30
    first, second = authors("paid")
    assert first != second == Pseudonyms(SALT).named(f"author:{loop.tester.pk}:2")


def test_the_card_loads_the_model_fields_with_datasets(loop, tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("datasets", reason="datasets is in the test extras")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    out = export(tmp_path)
    code = (out / "README.md").read_text().split("```python\n", 1)[1].split("```", 1)[0]
    code = "\n".join(line for line in code.splitlines() if "validation_labels" not in line)  # no check was answered
    code = code.replace("path/to/this/folder", str(out))
    namespace: dict = {}
    exec(code, namespace)
    test = namespace["claims"]["test"]
    t0 = next(row for row in test if row["text"] == loop.claims["t0"].text)
    assert t0["model_verdicts"] == {"v1": {"label": R, "supports": 0.2}, "v2": {"label": S, "supports": 0.8}}
    assert (t0["model_version"], t0["model_fooled"], t0["tries"], t0["hard_for"]) == ("v1", True, 3, None)


def test_model_verdicts_are_typed_for_datasets_and_read_by_croissant_per_version(loop, tmp_path: Path, monkeypatch) -> None:
    datasets = pytest.importorskip("datasets", reason="datasets is in the test extras")
    mlc = pytest.importorskip("mlcroissant", reason="mlcroissant is in the test extras")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    out = export(tmp_path, splits=(0.5, 0.5, 0))
    written = {name: [json.loads(line) for line in (out / f"{name}.jsonl").read_text().splitlines()] for name in ("train", "dev", "test")}
    claims = datasets.load_dataset(str(out))
    verdict_type = {"label": datasets.Value("string"), "supports": datasets.Value("float64")}
    assert claims["test"].features["model_verdicts"] == {"v1": verdict_type, "v2": verdict_type}
    by_id = {row["id"]: row for row in claims["test"]}
    for record in written["test"]:
        for name in ("v1", "v2"):
            assert by_id[record["id"]]["model_verdicts"][name] == record["model_verdicts"].get(name)
    dataset = mlc.Dataset(str(out / "croissant.json"))
    assert dataset.metadata.issues.warnings == set()
    rows = list(dataset.records("claims"))
    files = [record for name in sorted(written) for record in written[name]]
    assert len(rows) == len(files)
    for row, record in zip(rows, files):
        verdicts = row["claims/model_verdicts"]
        for name in ("v1", "v2"):
            label = verdicts[f"claims/model_verdicts/{name}_label"]
            expected = record["model_verdicts"].get(name)
            assert (label.decode() if isinstance(label, bytes) else label) == (expected and expected["label"])
            assert verdicts[f"claims/model_verdicts/{name}_supports"] == (expected and expected["supports"])
