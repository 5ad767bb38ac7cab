"""The claim verifiers: the default MiniLM head and any local NLI model folder.

The NLI tests build a tiny random BERT classifier themselves and compare what the ONNX
path folds into SUPPORTS/REFUTES with the torch model's own softmax on the same input;
the head tests use a hashing fake encoder, so they train in milliseconds.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from retrieval import verifier as verifier_module
from retrieval.verifier import (
    REFUTES,
    SUPPORTS,
    HeadVerifier,
    NliFolderVerifier,
    Verdict,
    Verifier,
    train_head_verifier,
    verdict,
)

REPO_ROOT = Path(__file__).resolve().parents[2]

WORDS = (
    "alice bob carol paris rome london born in was the a of city river film 1950 1960 1970 "
    "1980 not never first largest director wrote played team won lost album released "
    "and to by from with"
).split()

ITEMS: list[tuple[str, list[str]]] = [
    ("alice was born in paris", ["alice was born in paris in 1950"]),
    ("bob wrote the film", ["the film was directed by carol", "bob played in the team"]),
    ("the team won in 1970", []),
    ("carol released a first album in 1980 and the album won", ["not the largest city"]),
]


# -- a tiny NLI model, built here ----------------------------------------------------------


def _tiny_nli_model(folder: Path, id2label: dict[int, str]) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder.mkdir(parents=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab=str(vocab), do_lower_case=True, model_max_length=64)
    torch.manual_seed(len(id2label))
    config = BertConfig(
        vocab_size=len(WORDS) + 5,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        initializer_range=0.2,
        num_labels=len(id2label),
        id2label=id2label,
        label2id={name: i for i, name in id2label.items()},
    )
    model = BertForSequenceClassification(config).eval()
    with torch.no_grad():  # a random BERT says nearly the same for every input: make it react
        model.bert.pooler.dense.weight.mul_(0.3)
        model.classifier.weight.mul_(10.0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _torch_probabilities(folder: Path, items: Sequence[tuple[str, Sequence[str]]]) -> np.ndarray:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(str(folder), local_files_only=True).eval()
    rows = []
    with torch.no_grad():
        for claim, evidence in items:  # one at a time: no padding in the reference
            inputs = tokenizer(claim, " ".join(evidence), truncation=True, return_tensors="pt")
            rows.append(torch.softmax(model(**inputs).logits[0], dim=-1).numpy())
    return np.array(rows, dtype=np.float64)


@pytest.fixture(scope="module")
def three_way(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_nli_model(
        tmp_path_factory.mktemp("nli") / "tiny-mnli", {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}
    )


@pytest.fixture(scope="module")
def two_way(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_nli_model(tmp_path_factory.mktemp("nli") / "tiny-rte", {0: "entailment", 1: "not_entailment"})


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx")


@pytest.mark.parametrize(
    ("neutral", "expected_supports"),
    [
        ("drop", lambda p: p[:, 2] / (p[:, 2] + p[:, 0])),
        ("refutes", lambda p: p[:, 2]),
        ("supports", lambda p: p[:, 2] + p[:, 1]),
    ],
)
def test_three_way_model_folds_neutral_by_the_policy(three_way: Path, onnx_cache: Path, neutral, expected_supports) -> None:
    nli = NliFolderVerifier(three_way, neutral=neutral, onnx_cache_dir=onnx_cache)
    reference = _torch_probabilities(three_way, ITEMS)
    got = nli.verdicts(ITEMS)
    np.testing.assert_allclose([v.supports for v in got], expected_supports(reference), atol=1e-4)
    assert all(abs(v.supports + v.refutes - 1) < 1e-9 for v in got)
    assert nli.name == "tiny-mnli"
    assert isinstance(nli, Verifier)


def test_onnx_probabilities_equal_the_torch_model(three_way: Path, onnx_cache: Path) -> None:
    """Batched and padded through ONNX Runtime, the model says what torch says item by item."""
    nli = NliFolderVerifier(three_way, onnx_cache_dir=onnx_cache)
    nli.batch_size = 3  # items of different lengths in one padded batch
    reference = _torch_probabilities(three_way, ITEMS)
    assert reference.std(axis=0).min() > 0.01  # the check means something: each class moves with the input
    np.testing.assert_allclose(nli.probabilities(ITEMS), reference, atol=1e-4)


def test_two_way_model_with_a_label_map(two_way: Path, onnx_cache: Path) -> None:
    nli = NliFolderVerifier(two_way, label_map={"NOT_ENTAILMENT": REFUTES}, onnx_cache_dir=onnx_cache)
    reference = _torch_probabilities(two_way, ITEMS)
    got = nli.verdicts(ITEMS)
    np.testing.assert_allclose([v.supports for v in got], reference[:, 0], atol=1e-4)
    np.testing.assert_allclose([v.refutes for v in got], reference[:, 1], atol=1e-4)
    assert [v.label for v in got] == [SUPPORTS if p[0] >= p[1] else REFUTES for p in reference]


def test_a_label_the_map_cannot_place_is_refused_by_name(two_way: Path, onnx_cache: Path) -> None:
    with pytest.raises(ValueError, match="not_entailment"):
        NliFolderVerifier(two_way, onnx_cache_dir=onnx_cache)


def test_a_map_that_leaves_one_side_empty_is_refused(three_way: Path, onnx_cache: Path) -> None:
    with pytest.raises(ValueError, match="REFUTES"):
        NliFolderVerifier(three_way, label_map={"contradiction": "NEUTRAL"}, onnx_cache_dir=onnx_cache)
    with pytest.raises(ValueError, match="label_map values"):
        NliFolderVerifier(three_way, label_map={"contradiction": "FALSE"}, onnx_cache_dir=onnx_cache)


def test_the_onnx_export_is_cached_and_reused(three_way: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    first = NliFolderVerifier(three_way, onnx_cache_dir=cache).verdicts(ITEMS[:1])
    exported = sorted(cache.glob("*.onnx"))
    assert [p.name.split("-")[0] for p in exported] == ["tiny"] and exported[0].name.endswith(".nli.onnx")
    assert list(cache.glob("*.tmp")) == []

    def no_export(*args: object) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(verifier_module, "_export_nli", no_export)
    verifier_module._load_nli_runner.cache_clear()  # a new process: only the file remains
    second = NliFolderVerifier(three_way, onnx_cache_dir=cache).verdicts(ITEMS[:1])
    assert second == first
    assert sorted(cache.glob("*.onnx")) == exported


def test_nli_verifier_judges_nothing_without_loading(three_way: Path, tmp_path: Path) -> None:
    assert NliFolderVerifier(three_way, onnx_cache_dir=tmp_path).verdicts([]) == []
    assert list(tmp_path.iterdir()) == []


# -- the default head, over a fake encoder -----------------------------------------------


class HashingEncoder:
    """Each word hashed to a fixed random vector; a text is the normalised sum of its words."""

    model_name = "hashing-fake"
    dimension = 32

    def __init__(self) -> None:
        self.calls = 0

    def _word(self, word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little")
        return np.random.default_rng(seed).standard_normal(self.dimension)

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        self.calls += 1
        rows = np.zeros((len(texts), self.dimension))
        for row, text in enumerate(texts):
            for word in text.lower().replace(".", " ").split():
                rows[row] += self._word(word)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0).astype(np.float32)


NAMES = ["Alice", "Bruno", "Chen", "Dmitri", "Elena", "Farid", "Greta", "Hiro"]
CITIES = ["Paris", "Lagos", "Lima", "Oslo", "Quito", "Hanoi", "Perth", "Dakar"]
JOBS = ["painter", "singer", "chemist", "pilot", "writer", "sculptor"]


def synthetic(n: int, seed: int) -> tuple[list[str], list[list[str]], list[str]]:
    """Claims whose evidence agrees with them (SUPPORTS) or swaps a name, city or year (REFUTES)."""
    rng = random.Random(seed)
    claims, evidence, labels = [], [], []
    for _ in range(n):
        name, city, job, year = rng.choice(NAMES), rng.choice(CITIES), rng.choice(JOBS), rng.randint(1800, 1999)
        claims.append(f"{name} was a {job} born in {city} in {year}.")
        label = rng.choice([SUPPORTS, REFUTES])
        if label == REFUTES:
            swap = rng.choice(["city", "year", "name"])
            city = rng.choice([c for c in CITIES if c != city]) if swap == "city" else city
            year = year + rng.randint(1, 30) if swap == "year" else year
            name = rng.choice([m for m in NAMES if m != name]) if swap == "name" else name
        evidence.append([f"Born in {year} in {city}, {name} worked as a {job}.", *(["It rained."] if rng.random() < 0.3 else [])])
        labels.append(label)
    return claims, evidence, labels


def test_head_learns_that_agreeing_evidence_supports() -> None:
    encoder = HashingEncoder()
    claims, evidence, labels = synthetic(200, seed=1)
    steps: list[tuple[int, int]] = []
    head = train_head_verifier(claims, evidence, labels, encoder=encoder, progress=lambda done, total: steps.append((done, total)))
    test_claims, test_evidence, test_labels = synthetic(100, seed=2)
    got = head.verdicts(list(zip(test_claims, test_evidence)))
    accuracy = np.mean([v.label == label for v, label in zip(got, test_labels)])
    assert accuracy >= 0.9
    assert steps[-1][0] == steps[-1][1] and all(a[0] < b[0] for a, b in zip(steps, steps[1:]))
    assert head.head.cv_accuracy is not None and head.head.trained_on == 200
    assert isinstance(head, Verifier) and head.name == "minilm-head"


@pytest.fixture(scope="module")
def trained_head() -> HeadVerifier:
    claims, evidence, labels = synthetic(120, seed=3)
    return train_head_verifier(claims, evidence, labels, encoder=HashingEncoder(), seed=5)


def test_dump_and_load_give_identical_verdicts(trained_head: HeadVerifier) -> None:
    blob = trained_head.dumps()
    loaded = HeadVerifier.loads(blob, HashingEncoder())
    assert loaded.verdicts(ITEMS) == trained_head.verdicts(ITEMS)
    assert loaded.name == trained_head.name and loaded.head.regularisation == trained_head.head.regularisation


def test_the_stored_head_is_not_a_pickle(trained_head: HeadVerifier) -> None:
    blob = trained_head.dumps()
    assert blob[:2] == b"PK"  # a zip of .npy files
    with np.load(io.BytesIO(blob), allow_pickle=False) as archive:
        assert sorted(archive.files) == ["coef", "mean", "metadata", "scale"]
        assert all(archive[name].dtype != object for name in archive.files)
        metadata = json.loads(bytes(archive["metadata"]).decode())
    assert metadata["format"] == "fm2-verifier-head/1" and metadata["encoder_name"] == "hashing-fake"


@pytest.mark.parametrize("blob", [b"", b"not a zip", b"\x80\x04\x95pickle"])
def test_loading_anything_else_is_a_value_error(blob: bytes) -> None:
    with pytest.raises(ValueError):
        HeadVerifier.loads(blob, HashingEncoder())


def test_loading_a_head_with_other_features_is_refused(trained_head: HeadVerifier) -> None:
    buffer = io.BytesIO()
    with np.load(io.BytesIO(trained_head.dumps()), allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    metadata = json.loads(bytes(arrays["metadata"]).decode())
    metadata["feature_names"][0] = "something_else"
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    np.savez(buffer, **arrays)
    with pytest.raises(ValueError, match="retrain"):
        HeadVerifier.loads(buffer.getvalue(), HashingEncoder())


def test_probabilities_sum_to_one_and_empty_evidence_works(trained_head: HeadVerifier) -> None:
    got = trained_head.verdicts(ITEMS)
    assert len(got) == len(ITEMS)
    for v in got:
        assert 0 <= v.supports <= 1 and abs(v.supports + v.refutes - 1) < 1e-9
        assert v.probability == max(v.supports, v.refutes) >= 0.5
    # Without evidence the head falls back on the claim alone, which says nothing here.
    alone = verdict(trained_head, "Alice was a painter born in Paris in 1900.", [])
    assert 0.2 < alone.supports < 0.8
    assert trained_head.verdicts([]) == []


def test_one_encoder_call_per_batch_of_verdicts(trained_head: HeadVerifier) -> None:
    encoder = HashingEncoder()
    HeadVerifier(encoder, trained_head.head).verdicts(ITEMS)
    assert encoder.calls == 1


@pytest.mark.parametrize(
    ("size", "labels", "message"),
    [
        (10, None, "at least 20 claims"),
        (40, [SUPPORTS] * 37 + [REFUTES] * 3, "at least 5 of each"),
        (30, [SUPPORTS] * 30, "both labels"),
        (30, [SUPPORTS] * 15 + ["NOT ENOUGH INFO"] * 15, "SUPPORTS or REFUTES"),
    ],
)
def test_training_refuses_too_few_examples(size: int, labels: list[str] | None, message: str) -> None:
    claims, evidence, synthetic_labels = synthetic(size, seed=4)
    with pytest.raises(ValueError, match=message):
        train_head_verifier(claims, evidence, labels or synthetic_labels, encoder=HashingEncoder())


@pytest.mark.parametrize(
    ("supports", "refutes", "label", "probability"),
    [(0.7, 0.3, SUPPORTS, 0.7), (0.2, 0.8, REFUTES, 0.8), (0.5, 0.5, SUPPORTS, 0.5), (0.0, 1.0, REFUTES, 1.0)],
)
def test_verdict_label_and_probability(supports: float, refutes: float, label: str, probability: float) -> None:
    v = Verdict(supports=supports, refutes=refutes)
    assert (v.label, v.probability) == (label, probability)


@pytest.mark.parametrize(("supports", "refutes"), [(0.7, 0.7), (1.2, -0.2), (0.4, 0.5)])
def test_verdict_refuses_probabilities_that_do_not_add_up(supports: float, refutes: float) -> None:
    with pytest.raises(ValueError):
        Verdict(supports=supports, refutes=refutes)


# -- the real packaged MiniLM --------------------------------------------------------------


@pytest.mark.slow
def test_head_on_the_packaged_minilm_trains_on_fm2_sample_claims() -> None:
    from retrieval.encoder import Encoder

    rows = [json.loads(line) for line in (REPO_ROOT / "fixtures" / "fm2-dev-sample.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [row for row in rows if row["label"] in (SUPPORTS, REFUTES)][:40]
    encoder = Encoder()
    head = train_head_verifier(
        [r["text"] for r in rows],
        [[e["text"] for e in r["gold_evidence"]] for r in rows],
        [r["label"] for r in rows],
        encoder=encoder,
    )
    items = [(r["text"], [e["text"] for e in r["gold_evidence"]]) for r in rows[:5]] + [(rows[0]["text"], [])]
    got = head.verdicts(items)
    assert len(got) == len(items)
    assert all(abs(v.supports + v.refutes - 1) < 1e-9 and v.label in (SUPPORTS, REFUTES) for v in got)
    assert head.head.encoder_name == encoder.model_name
    assert HeadVerifier.loads(head.dumps(), encoder).verdicts(items) == got
