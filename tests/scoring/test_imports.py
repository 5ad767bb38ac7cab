"""scoring/ stays plain Python: no web framework, and heavy libraries only where needed."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SCORING = Path(__file__).resolve().parents[2] / "scoring"
FORBIDDEN = {"django", "channels", "celery", "foolgame", "rest_framework", "torch"}


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("path", sorted(SCORING.rglob("*.py")), ids=lambda p: p.name)
def test_scoring_never_imports_the_web_stack(path: Path) -> None:
    assert imported_roots(path).isdisjoint(FORBIDDEN)


def test_importing_scoring_does_not_load_scikit_learn() -> None:
    """The game's services import scoring on every request; only the export needs sklearn."""
    code = (
        "import sys, scoring.rounds, scoring.filters, scoring.artifacts; "
        "sys.exit('sklearn' in sys.modules)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=SCORING.parent, capture_output=True, check=False
    )
    assert completed.returncode == 0, completed.stderr.decode()
