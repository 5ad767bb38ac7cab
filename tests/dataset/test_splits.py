"""The page-split rules, as tables: release pages keep their split (unless re-split),
test-exclusive authors go to test, the rest is cut by hash in proportions of claims; and the
summary of which rule placed what, with the option that fills an empty split."""

from __future__ import annotations

import pytest

from foolgame.dataset.splits import PageClaims, page_hash, parse_proportions, plan_splits, split_summary, split_summary_lines


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


def release_pages(n: int, split: str = "dev") -> list[PageClaims]:
    return [PageClaims(i, f"Release {i}", 5 + i % 4, {split: 5 + i % 4}) for i in range(n)]


def test_release_pages_keep_their_split_and_the_summary_names_the_option() -> None:
    plan = plan_splits(release_pages(20), seed=0, proportions=(0.8, 0.1, 0.1))
    summary = split_summary(plan, proportions=(0.8, 0.1, 0.1), resplit_release=False)
    claims = sum(5 + i % 4 for i in range(20))
    assert summary["rules"] == [
        {"rule": "release", "description": "release page, kept its release split",
         "pages": {"train": 0, "dev": 20, "test": 0}, "claims": {"train": 0, "dev": claims, "test": 0}},
    ]
    assert [(e["split"], e["option"]) for e in summary["empty_splits"]] == [("train", "resplit_release"), ("test", "resplit_release")]
    lines = split_summary_lines(summary, fixes={"resplit_release": "Use THE OPTION."})
    assert lines == [
        f"release page, kept its release split: dev 20 pages ({claims} claims)",
        "train and test are empty: 20 release page(s) kept their release split (20 in dev). Use THE OPTION.",
    ]


def test_resplit_release_pages_share_out_by_the_proportions_page_disjoint_and_repeatably() -> None:
    pages = release_pages(20) + [PageClaims(100 + i, f"New {i}", 2) for i in range(5)]
    plan = plan_splits(pages, seed=4, proportions=(0.6, 0.2, 0.2), resplit_release=True)
    assert set(plan.page_split) == {page.page_id for page in pages}  # each page in exactly one split
    assert set(plan.page_split.values()) == {"train", "dev", "test"}
    assert plan.pages_by_rule == {"resplit": 20, "hashed": 5}
    assert plan.release_conflict_claims == 0
    again = plan_splits(list(reversed(pages)), seed=4, proportions=(0.6, 0.2, 0.2), resplit_release=True)
    assert again.page_split == plan.page_split
    summary = split_summary(plan, proportions=(0.6, 0.2, 0.2), resplit_release=True)
    assert [row["rule"] for row in summary["rules"]] == ["hashed", "resplit"]
    assert summary["empty_splits"] == []


def test_resplit_keeps_the_test_exclusive_rule_and_withholds_nothing() -> None:
    pages = [PageClaims(100, "A", 5, {"train": 5}, exclusive_claims=1), *release_pages(10)]
    kept = plan_splits(pages, seed=0, proportions=(0.8, 0.1, 0.1))
    assert (kept.page_split[100], kept.withheld_exclusive_claims) == ("train", 1)
    resplit = plan_splits(pages, seed=0, proportions=(0.8, 0.1, 0.1), resplit_release=True)
    assert (resplit.page_split[100], resplit.withheld_exclusive_claims) == ("test", 0)
    assert resplit.pages_by_rule["exclusive"] == 1


def test_withheld_claims_are_not_counted_as_placed() -> None:
    plan = plan_splits([PageClaims(1, "A", 5, {"train": 4}, exclusive_claims=1)], seed=0, proportions=(0.8, 0.1, 0.1))
    assert plan.placed_claims == {("release", "train"): 4}


@pytest.mark.parametrize(
    ("pages", "proportions", "resplit", "empty"),
    [
        ([], (0.8, 0.1, 0.1), False, {"train": None, "dev": None, "test": None}),
        ([PageClaims(i, f"P{i}", 1) for i in range(10)], (1.0, 0.0, 0.0), False, {"dev": "splits", "test": "splits"}),
        # One page goes where its middle claim falls (dev here): too few pages for the others.
        ([PageClaims(1, "Only", 10)], (0.5, 0.25, 0.25), False, {"train": "splits", "test": "splits"}),
        (release_pages(1, "test"), (0.5, 0.25, 0.25), True, {"train": "splits", "test": "splits"}),
        (release_pages(3, "train") + [PageClaims(9, "New", 1)], (0.8, 0.1, 0.1), False, {"dev": "resplit_release", "test": "resplit_release"}),
    ],
)
def test_an_empty_split_names_the_option_that_would_fill_it(
    pages: list[PageClaims], proportions: tuple[float, float, float], resplit: bool, empty: dict[str, str | None]
) -> None:
    plan = plan_splits(pages, seed=0, proportions=proportions, resplit_release=resplit)
    summary = split_summary(plan, proportions=proportions, resplit_release=resplit)
    assert {e["split"]: e["option"] for e in summary["empty_splits"]} == empty
