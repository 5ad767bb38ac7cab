"""The game's brains stay framework-free: scoring/ and retrieval/ never import Django."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN = ("django", "channels", "channels_redis", "celery", "rest_framework", "foolgame")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", ["scoring", "retrieval"])
def test_brain_packages_do_not_import_the_framework(package: str) -> None:
    offenders = {
        f"{path.relative_to(REPO)}: {name}"
        for path in (REPO / package).rglob("*.py")
        for name in imported_modules(path)
        if name.split(".")[0] in FORBIDDEN
    }
    assert not offenders, f"{package}/ must stay plain Python: {sorted(offenders)}"


@pytest.mark.parametrize("package", ["scoring", "retrieval"])
def test_brain_packages_import_without_django_loaded(package: str) -> None:
    """Importing every module leaves Django unloaded (catches indirect imports too)."""
    modules = sorted(
        ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for path in (REPO / package).rglob("*.py")
        if "__main__" not in path.name
    )
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})\n"
        "print(loaded); sys.exit(1 if loaded else 0)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_forbidden_import_is_detected(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import os\nfrom django.db import models\n")
    assert "django.db" in imported_modules(sample)


def test_a_web_process_does_not_load_scipy_or_sklearn(tmp_path: Path) -> None:
    """SciPy's statistics and optimizers cost a process about 70 MB and scikit-learn about 95
    MB more; only the quality refresh, the batch rating fit and the export's classifier use
    them. The ASGI app with its URL conf and a vote's rating update must not load either, or
    every web process pays for them (and the export goes over its 300 MB)."""
    code = (
        "import os, sys\n"
        "os.environ['DJANGO_SETTINGS_MODULE'] = 'foolgame.settings'\n"
        "import foolgame.asgi\n"
        "from django.urls import get_resolver\n"
        "get_resolver().url_patterns\n"
        "from scoring.ratings import Rating, pair_target, round_update\n"
        "round_update(Rating(1500, 200), Rating(1600, 150), Rating(1400, 150), correct=True)\n"
        "pair_target(Rating(1500, 200), 0.6)\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'sklearn'})\n"
        "print(loaded); sys.exit(1 if loaded else 0)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "FM2_DATA_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
