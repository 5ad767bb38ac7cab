"""The page-split rules, as tables: release pages keep their split, test-exclusive authors
go to test, the rest is cut by hash in proportions of claims."""

from __future__ import annotations

import pytest

from foolgame.dataset.splits import PageClaims, page_hash, parse_proportions, plan_splits


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.8,0.1,0.1", (0.8, 0.1, 0.1)),
        ("80,10,10", (0.8, 0.1, 0.1)),
        ("1,0,0", (1.0, 0.0, 0.0)),
        (" 2, 1 ,1", (0.5, 0.25, 0.25)),
    ],
)
def test_proportions_are_normalised(text: str, expected: tuple[float, float, float]) -> None:
    assert parse_proportions(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["0.8,0.2", "a,b,c", "0,0,0", "-1,1,1", "nan,1,1"])
def test_bad_proportions_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_proportions(text)


@pytest.mark.parametrize(
    ("page", "split", "rule"),
    [
        (PageClaims(1, "A", 5, {"dev": 3}), "dev", "release"),
        (PageClaims(1, "A", 5, {"train": 2}, exclusive_claims=1), "train", "release"),
        (PageClaims(1, "A", 5, {"train": 2, "test": 2}), "test", "release"),  # tie -> test
        (PageClaims(1, "A", 5, {"train": 3, "dev": 2}), "train", "release"),
        (PageClaims(1, "A", 5, exclusive_claims=1), "test", "exclusive"),
    ],
)
def test_pinned_pages(page: PageClaims, split: str, rule: str) -> None:
    plan = plan_splits([page], seed=0, proportions=(1.0, 0.0, 0.0))
    assert plan.page_split == {1: split}
    assert plan.pages_by_rule == {rule: 1}


def test_exclusive_authors_on_train_release_pages_are_withheld_and_counted() -> None:
    plan = plan_splits(
        [PageClaims(1, "A", 5, {"train": 4}, exclusive_claims=1), PageClaims(2, "B", 3, {"test": 3}, exclusive_claims=2)],
        seed=0,
        proportions=(0.8, 0.1, 0.1),
    )
    assert plan.withheld_exclusive_claims == 1
    assert plan.page_split == {1: "train", 2: "test"}


def test_release_conflicts_are_counted() -> None:
    plan = plan_splits([PageClaims(1, "A", 5, {"train": 3, "dev": 2})], seed=0, proportions=(0.8, 0.1, 0.1))
    assert plan.release_conflict_claims == 2


def test_hashed_pages_follow_the_proportions_of_claims() -> None:
    pages = [PageClaims(i, f"Page {i}", 1 + i % 7) for i in range(2000)]
    plan = plan_splits(pages, seed=3, proportions=(0.8, 0.1, 0.1))
    claims = {"train": 0, "dev": 0, "test": 0}
    for page in pages:
        claims[plan.page_split[page.page_id]] += page.claims
    total = sum(claims.values())
    assert claims["train"] / total == pytest.approx(0.8, abs=0.005)
    assert claims["dev"] / total == pytest.approx(0.1, abs=0.005)


def test_exclusive_pages_count_towards_test_first() -> None:
    pages = [PageClaims(0, "Exclusive", 10, exclusive_claims=10)] + [PageClaims(i, f"Page {i}", 1) for i in range(1, 91)]
    plan = plan_splits(pages, seed=0, proportions=(0.8, 0.1, 0.1))
    assert sum(split == "test" for split in plan.page_split.values()) == 1
    assert sum(split == "train" for split in plan.page_split.values()) == 80


def test_the_seed_decides_and_the_same_seed_repeats() -> None:
    pages = [PageClaims(i, f"Page {i}", 2) for i in range(200)]
    first = plan_splits(pages, seed=1, proportions=(0.5, 0.25, 0.25)).page_split
    assert plan_splits(list(reversed(pages)), seed=1, proportions=(0.5, 0.25, 0.25)).page_split == first
    assert plan_splits(pages, seed=2, proportions=(0.5, 0.25, 0.25)).page_split != first
    assert page_hash("Page 1", 1) == page_hash("Page 1", 1) != page_hash("Page 1", 2)
