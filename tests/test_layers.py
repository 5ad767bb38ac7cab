"""The apps of ``foolgame`` stand in layers, and this test holds them there.

Lowest first (an app may import only from a lower layer, never a higher one nor a sibling,
not even inside a function):

    core                       the domain error, REST base, on-commit events, hooks, sockets
    pages                      the corpus: pages, sentences, categories, imports of pages
    claims                     claims about pages, their gold sentences, the release import
    players                    accounts, roles, the ledger, ratings' rows, notifications' rows
    evidence                   retrieval over a page: indexes, hints
    authoring                  write tasks, the writing rules, saving a claim
    voting                     rounds: dealing, the clock, votes, likes, reports, ratings
    rooms, moderation          live rooms over voting's rounds; moderators' queue and actions
    checks                     validation: fact checks, independent labels, gold labels
    verifier                   the model in the loop: versions, verdicts, machine answers
    dataset                    the export, reports, researchers
    (project)                  api/ and the project modules (urls, routing, asgi, celery,
                               middleware, settings...) compose the apps

When a lower app's work must change a higher one (a vote makes quality flags stale, a
room's round settles its question, an import needs indexes), the lower app sends a hook of
``foolgame/core/hooks.py`` and the higher one connects to it in its ``AppConfig.ready()``.
No module imports another app's private (``_``-prefixed) names, and every side effect after
a commit goes through ``foolgame/core/events.py``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "foolgame"

LAYERS: list[set[str]] = [
    {"core"},
    {"pages"},
    {"claims"},
    {"players"},
    {"evidence"},
    {"authoring"},
    {"voting"},
    {"rooms", "moderation"},
    {"checks"},
    {"verifier"},
    {"dataset"},
]
PROJECT = len(LAYERS)
"""The layer of ``foolgame/api/`` and the project's own modules: above every app."""


def layer_of(unit: str) -> int:
    for number, apps in enumerate(LAYERS):
        if unit in apps:
            return number
    return PROJECT


@dataclass(frozen=True)
class Violation:
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def unit_of(module: str, *, package_root: Path = PACKAGE) -> str | None:
    """The app (or ``core``, or a project module) a dotted ``foolgame...`` name belongs to."""
    parts = module.split(".")
    if parts[0] != "foolgame":
        return None
    if len(parts) == 1:
        return "foolgame"
    if (package_root / parts[1]).is_dir():
        return parts[1]
    return parts[1]  # a project module: foolgame/settings.py, foolgame/middleware.py...


def check_source(source: str, *, unit: str, where: str, package_root: Path = PACKAGE) -> list[Violation]:
    """Every import in ``source`` (module level and inside functions) that breaks the layers,
    and every use of another unit's private name, for a module of ``unit``."""
    found: list[Violation] = []
    own = layer_of(unit)
    aliases: dict[str, str] = {}  # a local name bound to a module of another unit -> that unit
    tree = ast.parse(source)
    for node in ast.walk(tree):
        targets: list[tuple[str, list[str], ast.AST]] = []
        if isinstance(node, ast.Import):
            for alias in node.names:
                targets.append((alias.name, [], node))
                if alias.asname and unit_of(alias.name, package_root=package_root) not in (None, unit):
                    aliases[alias.asname] = unit_of(alias.name, package_root=package_root) or ""
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [alias.name for alias in node.names]
            targets.append((node.module, names, node))
            other = unit_of(node.module, package_root=package_root)
            if other not in (None, unit):
                folder = package_root.joinpath(*node.module.split(".")[1:])
                for alias in node.names:  # from foolgame.voting import services as rounds
                    if (folder / f"{alias.name}.py").exists() or (folder / alias.name).is_dir():
                        aliases[alias.asname or alias.name] = unit_of(f"{node.module}.{alias.name}", package_root=package_root) or ""
        for module, names, at in targets:
            other = unit_of(module, package_root=package_root)
            if other is None or other == unit:
                continue
            if module == "foolgame" and names:  # from foolgame import voting
                others = [unit_of(f"foolgame.{name}", package_root=package_root) or name for name in names]
            else:
                others = [other]
            for target in others:
                if unit == "core" and target != "core":
                    found.append(Violation(f"{where}:{at.lineno}", f"core imports {module} (core uses no app)"))
                elif own < PROJECT and layer_of(target) >= own and unit != target:
                    found.append(Violation(f"{where}:{at.lineno}", f"{unit} (layer {own}) imports {module} (layer {layer_of(target)})"))
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    found.append(Violation(f"{where}:{at.lineno}", f"imports the private name {name} of {module}"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            if node.attr.startswith("_") and not node.attr.startswith("__"):
                found.append(Violation(f"{where}:{node.lineno}", f"uses the private name {node.value.id}.{node.attr} of {aliases[node.value.id]}"))
    return found


def modules() -> list[tuple[Path, str]]:
    """Every module of the project with the unit it belongs to (migrations included)."""
    result = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        unit = relative.parts[0] if len(relative.parts) > 1 else relative.stem
        result.append((path, unit))
    return result


def test_no_app_imports_a_higher_or_sibling_app_nor_anothers_private_names() -> None:
    violations = []
    for path, unit in modules():
        violations += check_source(path.read_text(encoding="utf-8"), unit=unit, where=str(path.relative_to(REPO)))
    assert [str(v) for v in violations] == []


def test_every_app_has_its_layer() -> None:
    """A new app must be placed in LAYERS (and in the README's map) before it can land."""
    apps = {path.name for path in PACKAGE.iterdir() if path.is_dir() and (path / "apps.py").exists()}
    placed = set().union(*LAYERS)
    assert apps - placed == set()


@pytest.mark.parametrize(
    ("unit", "source", "expected"),
    [
        ("voting", "def f():\n    from foolgame.rooms.models import RoomRound\n", "voting (layer 6) imports foolgame.rooms.models (layer 7)"),
        ("pages", "import foolgame.claims.models\n", "pages (layer 1) imports foolgame.claims.models (layer 2)"),
        ("rooms", "from foolgame.moderation import receivers\n", "rooms (layer 7) imports foolgame.moderation (layer 7)"),
        ("core", "from foolgame.pages.models import Page\n", "core imports foolgame.pages.models (core uses no app)"),
        ("voting", "from foolgame.api.urls import urlpatterns\n", "voting (layer 6) imports foolgame.api.urls (layer 11)"),
        ("rooms", "from foolgame.voting.consumers import _claim_field\n", "imports the private name _claim_field of foolgame.voting.consumers"),
        ("rooms", "from foolgame.voting import services as rounds\nrounds._deal_pair(1)\n", "uses the private name rounds._deal_pair of voting"),
    ],
)
def test_the_check_reports_a_planted_breach(unit: str, source: str, expected: str) -> None:
    """The check itself can fail: each planted breach (an upward import inside a function, a
    sibling, core reaching into an app, a private name) is reported."""
    assert expected in [v.what for v in check_source(source, unit=unit, where="planted.py")]


def test_the_check_allows_what_the_layers_allow() -> None:
    source = "from foolgame.core import hooks\nfrom foolgame.voting import services as rounds\nrounds.vote_cast()\nfrom foolgame.rooms.models import Room\n"
    assert check_source(source, unit="rooms", where="fine.py") == []


def test_side_effects_after_a_commit_go_through_core_events() -> None:
    """One way to send a side effect after the commit: ``core.events`` (its task and group
    helpers), never a hand-written ``transaction.on_commit`` in an app."""
    hand_written = [
        f"{path.relative_to(REPO)}:{number}"
        for path, unit in modules()
        if path != PACKAGE / "core" / "events.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "on_commit(" in line and "transaction" in line and not line.lstrip().startswith(("#", '"', "``"))
    ]
    assert hand_written == []


def app_graph() -> dict[tuple[str, str], int]:
    """How many imports (module level and inside functions) each unit makes of each other."""
    edges: dict[tuple[str, str], int] = {}
    for path, unit in modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                other = unit_of(name)
                if other not in (None, unit, "foolgame"):
                    edges[(unit, other)] = edges.get((unit, other), 0) + 1
    return edges


if __name__ == "__main__":  # python -m tests.test_layers: the import graph between apps, by layer
    for (unit, other), count in sorted(app_graph().items(), key=lambda e: (-layer_of(e[0][0]), e[0])):
        print(f"{unit} (layer {layer_of(unit)}) -> {other} (layer {layer_of(other)}): {count}")
