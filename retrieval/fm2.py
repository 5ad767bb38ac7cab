"""Reading the public FM2 release into claims and sentence pools, without a database.

The release gives, per claim, its gold and retrieved evidence sentences but not the whole
Wikipedia page. A page's *pool* is therefore the union of the evidence of all its claims,
which is also how the game's demo pages are seeded (docs/rules.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from retrieval.base import Doc


@dataclass(frozen=True, slots=True)
class Claim:
    """One FM2 claim with the texts of its gold evidence sentences."""

    id: str
    text: str
    label: str
    page_title: str
    gold_texts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Fm2Dataset:
    """Claims and, per page title, the pool of sentences to retrieve from."""

    claims: list[Claim]
    pools: dict[str, list[Doc]]

    def corpus(self) -> list[Doc]:
        """Every sentence of every page, for corpus-wide retrieval."""
        return [doc for pool in self.pools.values() for doc in pool]


def load_fm2(path: str | Path) -> Fm2Dataset:
    """Read an FM2 JSON Lines file.

    Pools keep first-seen order and hold each text once per page (a sentence is both gold
    for one claim and retrieved for another). Doc ids are ``"<page>#<n>"`` strings, unique
    across the whole file, so corpus-wide search can mix pages.
    """
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return dataset_from_rows(rows)


def dataset_from_rows(rows: Iterable[dict]) -> Fm2Dataset:
    """Build claims and pools from parsed FM2 rows (used by ``load_fm2`` and by tests)."""
    claims: list[Claim] = []
    pools: dict[str, list[Doc]] = {}
    seen_texts: dict[str, set[str]] = {}
    for row in rows:
        page = row["wikipedia_page"]
        pool = pools.setdefault(page, [])
        seen = seen_texts.setdefault(page, set())
        for evidence in [*row.get("gold_evidence", []), *row.get("retrieved_evidence", [])]:
            text = evidence["text"]
            if text in seen:
                continue
            seen.add(text)
            pool.append(
                Doc(
                    id=f"{page}#{len(pool)}",
                    text=text,
                    section_header=evidence.get("section_header") or "",
                    page_title=page,
                )
            )
        claims.append(
            Claim(
                id=str(row["id"]),
                text=row["text"],
                label=row.get("label", ""),
                page_title=page,
                gold_texts=tuple(e["text"] for e in row.get("gold_evidence", [])),
            )
        )
    return Fm2Dataset(claims=claims, pools=pools)
