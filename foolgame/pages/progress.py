"""Progress bars for long commands: on stderr, so stdout keeps only the results."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


def progress(items: Iterable[T], *, desc: str, total: int | None = None, unit: str = "it", enabled: bool = True) -> Iterable[T]:
    return tqdm(items, desc=desc, total=total, unit=unit, file=sys.stderr, disable=not enabled, dynamic_ncols=True, leave=False)
