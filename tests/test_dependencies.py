"""Every dependency names the major versions it was tested with: a fresh install next year must
not pick up a new major release (Django 6, redis-py 9, ...) that nobody has run the suite on."""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement
from packaging.version import Version

from tests.conftest import REPO


def _requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lines = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        lines.extend(extra)
    return [Requirement(line) for line in lines]


def _has_upper_bound(requirement: Requirement) -> bool:
    return any(spec.operator in ("<", "<=", "==", "~=", "===") for spec in requirement.specifier)


def test_every_dependency_has_an_upper_bound() -> None:
    unbounded = [str(r) for r in _requirements() if not _has_upper_bound(r)]
    assert unbounded == []


def test_upper_bounds_stop_at_the_next_major_version_at_most() -> None:
    """A bound like ``<99`` is no bound: the ceiling is at most one major version above the floor."""
    too_loose = []
    for requirement in _requirements():
        floors = [Version(s.version) for s in requirement.specifier if s.operator in (">=", "==", "~=")]
        ceilings = [Version(s.version) for s in requirement.specifier if s.operator == "<"]
        if floors and ceilings and ceilings[0].major > floors[0].major + 1:
            too_loose.append(str(requirement))
    assert too_loose == []


def test_the_installed_versions_satisfy_the_bounds() -> None:
    """What the suite runs on is what pyproject.toml allows (a stale virtualenv would not be)."""
    from importlib.metadata import PackageNotFoundError, version

    outside = []
    for requirement in _requirements():
        try:
            installed = version(requirement.name)
        except PackageNotFoundError:
            continue  # an extra that is not installed here (e.g. the test extras in a plain install)
        if not requirement.specifier.contains(Version(installed).base_version, prereleases=True):
            outside.append(f"{requirement} (installed {installed})")
    assert outside == []


def test_the_package_builds_without_setuptools_deprecation_warnings(tmp_path) -> None:
    """``make run`` installs the project; its metadata must not warn (the licence was once a
    TOML table, deprecated since setuptools 77)."""
    import shutil
    import subprocess
    import sys

    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, tmp_path / name)
    (tmp_path / "out").mkdir()
    code = "import setuptools.build_meta as b; print(b.prepare_metadata_for_build_wheel('out'))"
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Deprecat" not in result.stderr, result.stderr
    metadata = next((tmp_path / "out").glob("*.dist-info")) / "METADATA"
    assert "License-Expression: Apache-2.0" in metadata.read_text(encoding="utf-8")
