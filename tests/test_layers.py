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

The layers hold in the queries too (``check_queries``): a lookup, annotation, ``F()``/``Q()``,
``values()``/``order_by()`` or ``select_related``/``prefetch_related`` path written in a lower
app may not step onto a higher (or sibling) app's model, reverse relations included
(``Claim.objects.exclude(quality__out_of_play=True)`` in voting reaches moderation's
``ClaimQuality``). The paths are read from the source and resolved through the models' meta.
A higher app's rule reaches a lower one through a hook or a ``Slot`` (``core/hooks.py``).
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
    {"studies"},
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


# --- queries ----------------------------------------------------------------------------------

LOOKUP_CALLS = {"filter", "exclude", "get", "get_or_create", "update_or_create", "Q"}
"""Calls whose keyword names are lookups (``filter(quality__out_of_play=True)``, ``Q(...)``)."""
PATH_CALLS = {
    "values", "values_list", "order_by", "select_related", "prefetch_related", "only", "defer", "distinct",
    "latest", "earliest", "in_bulk", "F", "OuterRef", "Prefetch", "FilteredRelation",
}
"""Calls whose string arguments are paths (``values_list("round__player__integrity_hold__held")``)."""
PATH_KEYWORDS = {"order_by", "ordering", "partition_by", "field_name"}
"""Keyword arguments of those calls (and of expressions) that take a path."""
NOT_LOOKUPS = {"defaults", "create_defaults"}


def _expression_names() -> set[str]:
    """The expressions, aggregates and database functions whose string arguments are paths
    (``Count("moderation_sightings")``, ``Coalesce("quality__score", 0)``)."""
    from django.db import models
    from django.db.models import functions

    return {name for module in (models, functions) for name in dir(module) if name[:1].isupper()}


def _call_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    if isinstance(node.func, ast.Name):
        return node.func.id
    return None


def _strings(node: ast.AST) -> list[str]:
    """The string constants of an argument: a string, or those in a list, tuple or ``*(...)``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Starred):
        return _strings(node.value)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [text for element in node.elts for text in _strings(element)]
    return []


def query_paths(source: str) -> list[tuple[int, str]]:
    """Every lookup or path written in ``source``, with its line: the keyword names of
    ``filter``/``exclude``/``get``/``Q`` (and the constant keys of a ``**{...}`` there), and the
    string arguments of ``values``, ``order_by``, ``select_related``, ``prefetch_related``,
    ``F``, ``OuterRef``, ``Prefetch`` and every expression, aggregate and function of
    ``django.db.models``. Paths built at run time (an f-string, a variable) are not read: a
    ``Slot`` hands those over on purpose."""
    expressions = _expression_names()
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        if name in LOOKUP_CALLS:
            for keyword in node.keywords:
                if keyword.arg is not None and keyword.arg not in NOT_LOOKUPS:
                    found.append((keyword.lineno, keyword.arg))
                elif keyword.arg is None and isinstance(keyword.value, ast.Dict):
                    found += [(key.lineno, key.value) for key in keyword.value.keys if isinstance(key, ast.Constant) and isinstance(key.value, str)]
        if name in PATH_CALLS or name in expressions:
            found += [(argument.lineno, text) for argument in node.args for text in _strings(argument)]
            found += [(keyword.lineno, text) for keyword in node.keywords if keyword.arg in PATH_KEYWORDS for text in _strings(keyword.value)]
    return found


def _model_unit(model: type) -> str | None:
    return unit_of(model.__module__)


def _relations(model: type) -> dict[str, type]:
    """The relations a lookup may step through from ``model``, by the name a lookup uses:
    its forward relations and the reverse ones other models point at it (``quality``,
    ``moderation_sightings``, ``integrity_hold``)."""
    return {
        field.name: field.related_model
        for field in model._meta.get_fields()
        if field.is_relation and isinstance(field.related_model, type)
    }


def _visible(unit: str, model: type) -> bool:
    """May ``unit`` import ``model`` (its own, a lower app's, or Django's own)?"""
    other = _model_unit(model)
    return other is None or other == unit or (layer_of(other) < layer_of(unit) and unit != "core")


def check_queries(source: str, *, unit: str, where: str) -> list[Violation]:
    """Every query path in ``source`` (``query_paths``) that steps onto a model of a higher or
    sibling app, for a module of ``unit``. Each path is resolved through the models' meta,
    segment by segment, from every model ``unit`` may import; a segment is a breach when every
    relation of that name reaches a model ``unit`` may not import. Transforms and plain
    fields end the walk."""
    from django.apps import apps

    if layer_of(unit) >= PROJECT:
        return []
    models = apps.get_models()
    start = [model for model in models if _visible(unit, model)]
    relations = {model: _relations(model) for model in models}
    found: list[Violation] = []
    for line, path in query_paths(source):
        candidates = start
        for segment in path.lstrip("-").split("__"):
            targets = {relations[model][segment] for model in candidates if model in relations and segment in relations[model]}
            if not targets:
                break
            if all(not _visible(unit, target) for target in targets):
                target = sorted(targets, key=lambda m: m._meta.label)[0]
                other = _model_unit(target) or target._meta.app_label
                found.append(
                    Violation(
                        f"{where}:{line}",
                        f"{unit} (layer {layer_of(unit)}) queries {path}: {segment} is {other}'s {target.__name__} (layer {layer_of(other)})",
                    )
                )
                break
            candidates = list(targets)
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


def test_no_app_queries_a_higher_or_sibling_apps_models() -> None:
    """No lookup, annotation, ``F``/``Q``, ``values``/``order_by`` or ``select_related``/
    ``prefetch_related`` path written in a lower app steps onto a higher app's model, reverse
    relations included: that is an upward import in disguise."""
    violations = []
    for path, unit in modules():
        violations += check_queries(path.read_text(encoding="utf-8"), unit=unit, where=str(path.relative_to(REPO)))
    assert [str(v) for v in violations] == []


@pytest.mark.parametrize(
    ("unit", "source", "expected"),
    [
        ("voting", "Claim.objects.exclude(quality__out_of_play=True)\n", "voting (layer 6) queries quality__out_of_play: quality is moderation's ClaimQuality (layer 7)"),
        ("voting", "claims.exclude(moderation_sightings__moderator__in=players)\n", "voting (layer 6) queries moderation_sightings__moderator__in: moderation_sightings is moderation's Sighting (layer 7)"),
        ("voting", "LedgerEntry.objects.exclude(player__integrity_hold__held=True)\n", "voting (layer 6) queries player__integrity_hold__held: integrity_hold is moderation's PlayerHold (layer 7)"),
        ("voting", "Vote.objects.values_list('round_id', 'round__player__integrity_hold__held')\n", "voting (layer 6) queries round__player__integrity_hold__held: integrity_hold is moderation's PlayerHold (layer 7)"),
        ("voting", "Round.objects.select_related('left_claim__page', 'room_play__question')\n", "voting (layer 6) queries room_play__question: room_play is rooms's RoomRound (layer 7)"),
        ("voting", "Claim.objects.annotate(seen=Count('moderation_sightings'))\n", "voting (layer 6) queries moderation_sightings: moderation_sightings is moderation's Sighting (layer 7)"),
        ("voting", "Claim.objects.filter(Q(page_id=1) | Q(quality__kept=True))\n", "voting (layer 6) queries quality__kept: quality is moderation's ClaimQuality (layer 7)"),
        ("voting", "Claim.objects.order_by('-quality__score').values('id', F('quality__score'))\n", "voting (layer 6) queries -quality__score: quality is moderation's ClaimQuality (layer 7)"),
        ("voting", "Claim.objects.prefetch_related(*('gold_links', 'audit_records'))\n", "voting (layer 6) queries audit_records: audit_records is moderation's AuditRecord (layer 7)"),
        ("voting", "Claim.objects.filter(**{'quality__too_hard': True})\n", "voting (layer 6) queries quality__too_hard: quality is moderation's ClaimQuality (layer 7)"),
        ("claims", "Claim.objects.filter(dealt__player=1)\n", "claims (layer 2) queries dealt__player: dealt is voting's SeenClaim (layer 6)"),
        ("rooms", "Claim.objects.exclude(quality__out_of_play=True)\n", "rooms (layer 7) queries quality__out_of_play: quality is moderation's ClaimQuality (layer 7)"),
    ],
)
def test_the_query_check_reports_a_planted_upward_lookup(unit: str, source: str, expected: str) -> None:
    """The query check itself can fail: each planted path onto a higher (or sibling) app's
    model, through a filter, an exclude, ``values_list``, ``select_related``, an aggregate,
    ``Q``, ``order_by``, ``F``, ``prefetch_related`` or a ``**{...}`` lookup, is reported."""
    assert expected in [v.what for v in check_queries(source, unit=unit, where="planted.py")]


def test_the_query_check_allows_what_the_layers_allow() -> None:
    """Paths through an app's own models and lower ones, a higher app's paths onto a lower
    app's reverse relations, and a path handed over at run time by a slot pass."""
    allowed = [
        ("voting", "Claim.objects.filter(page__category__slug='x', dealt__player=1).order_by('deal_votes', 'id')\n"),
        ("voting", "Round.objects.filter(hooks.round_groups.get().solo(), player=p).select_related(*related)\n"),
        ("rooms", "Round.objects.filter(room_play__isnull=True).values_list('room_play__question__state')\n"),
        ("moderation", "Claim.objects.exclude(quality__out_of_play=True).filter(moderation_sightings__moderator=1)\n"),
        ("dataset", "Vote.objects.values_list('round__player__integrity_hold__held')\n"),
    ]
    assert [str(v) for unit, source in allowed for v in check_queries(source, unit=unit, where="fine.py")] == []


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
        ("voting", "from foolgame.api.urls import urlpatterns\n", "voting (layer 6) imports foolgame.api.urls (layer 12)"),
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
