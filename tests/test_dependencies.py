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
