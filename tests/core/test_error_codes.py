"""One registry of error codes (``foolgame.core.errors.ErrorCode``), and every code the code
base can send is in it.

The check reads the source (AST) of every module under ``foolgame/`` for the places a code is
written: ``ServiceError(code, ...)`` with its ``status_code``, a socket's ``FrameError`` and
``send_error``, a claim ``Problem``, ``error_body``, a ``ParseError(code=...)``, an
``{"error": {"code": ...}}`` body written out, and the throttle helper's code argument. A code
written as a string must be registered, with the status it is raised with among its statuses;
a code the check cannot read (a variable) must be one of the forwarding sites listed below,
each passing on a code that is checked where it is written."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pytest
from rest_framework import exceptions

from foolgame.core.errors import ErrorCode, WarningCode

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "foolgame"

# The calls that carry a code: the index of their code argument, or the keyword it is given by.
CODE_ARGUMENT: dict[str, int | str] = {
    "ServiceError": 0,
    "FrameError": 0,
    "Problem": 0,
    "error_body": 0,
    "send_error": 0,
    "_throttled": 2,  # players.services: a 429 with the caller's code
    "_whole_number": "code",  # voting.apis: a query parameter's whole number
}
# DRF exceptions whose ``code=`` becomes the error's code (core.errors.exception_handler).
DRF_CODE_KEYWORD = {"APIException", "ParseError", "NotFound", "PermissionDenied", "NotAuthenticated", "MethodNotAllowed", "Throttled"}

# Sites whose code is a variable, by (module, enclosing function): each passes on a code
# written elsewhere and checked there (or below, for the tables).
FORWARDING = {
    ("core/errors.py", "exception_handler"): "a ServiceError's own code, or a DRF exception's (test_drf_exception_codes_are_registered)",
    ("core/sockets.py", "__call__"): "CLOSE_REASONS (test_socket_and_middleware_tables_are_registered)",
    ("core/sockets.py", "_refuse"): "CLOSE_REASONS",
    ("core/sockets.py", "receive"): "a FrameError's or ServiceError's own code, or CLOSE_REASONS",
    ("core/sockets.py", "_parse"): "core.parsers.TOO_DEEP, written (and checked) in core/parsers.py",
    ("middleware.py", "service_unavailable"): "_STATUS_CODES (test_socket_and_middleware_tables_are_registered)",
    ("middleware.py", "process_response"): "_STATUS_CODES",
    ("authoring/services.py", "_refuse"): "the first Problem's code",
    ("players/services.py", "_throttled"): "its callers' code argument (scanned: _throttled in CODE_ARGUMENT)",
    ("voting/apis.py", "_whole_number"): "its callers' code= (scanned: _whole_number in CODE_ARGUMENT)",
}


@dataclass(frozen=True)
class Site:
    where: str  # module:line
    function: str
    call: str
    code: str | None  # None: not written as a string here
    status: int | None  # a ServiceError's status_code (400 when not given); None when not known


def _status_of(call: ast.Call) -> int | None:
    for keyword in call.keywords:
        if keyword.arg == "status_code":
            value = keyword.value
            if isinstance(value, ast.Constant) and isinstance(value.value, int):
                return value.value
            if isinstance(value, ast.Attribute) and value.attr.startswith("HTTP_"):
                return int(value.attr.split("_")[1])
            return None
    return 400


def _codes_of(node: ast.expr, constants: dict[str, object], functions: dict[str, ast.FunctionDef]) -> list[str | None]:
    """The codes an argument may name: a string, ``ErrorCode.NAME``, a module constant
    holding a string, ``*NAME`` of a module constant ``(code, message)``, or ``*f(...)`` of a
    function of the module that returns such constants. ``[None]``: none of these."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("ErrorCode", "WarningCode"):
        member = getattr(ErrorCode, node.attr, None) or getattr(WarningCode, node.attr, None)
        return [str(member) if member is not None else f"ErrorCode.{node.attr}"]
    if isinstance(node, ast.Name) and isinstance(constants.get(node.id), str):
        return [constants[node.id]]  # type: ignore[list-item]
    if isinstance(node, ast.Starred) and isinstance(node.value, ast.Name):
        value = constants.get(node.value.id)
        if isinstance(value, tuple) and value and isinstance(value[0], str):
            return [value[0]]
    if isinstance(node, ast.Starred) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
        function = functions.get(node.value.func.id)
        if function is not None:
            returned = [r.value for r in ast.walk(function) if isinstance(r, ast.Return) and r.value is not None]
            names = [n for value in returned for n in ast.walk(value) if isinstance(n, ast.Name) and n.id in constants]
            codes = [code for n in names for code in _codes_of(ast.Starred(value=n), constants, functions)]
            if names and len(codes) == len(names):
                return codes
    return [None]


def _module_constants(tree: ast.Module) -> dict[str, object]:
    constants: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                constants[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return constants


def code_sites(source: str, *, where: str) -> list[Site]:
    """Every place in ``source`` that writes an error code."""
    tree = ast.parse(source)
    constants = _module_constants(tree)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    sites: list[Site] = []

    def add(node: ast.Call, function: str, call: str, argument: ast.expr, status: int | None) -> None:
        for code in _codes_of(argument, constants, functions):
            sites.append(Site(f"{where}:{node.lineno}", function, call, code, status))

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else ""
            where_code = CODE_ARGUMENT.get(name)
            status = _status_of(node) if name == "ServiceError" else None
            keyword = next((k.value for k in node.keywords if k.arg == (where_code if isinstance(where_code, str) else "code")), None)
            if where_code is not None and keyword is not None:
                add(node, function, name, keyword, status)
            elif isinstance(where_code, int) and node.args:
                # ``ServiceError(*PAIR)``: the starred (code, message) stands first
                first = node.args[0]
                add(node, function, name, first if isinstance(first, ast.Starred) else node.args[min(where_code, len(node.args) - 1)], status)
            elif name in DRF_CODE_KEYWORD and keyword is not None:
                add(node, function, name, keyword, None)
        if isinstance(node, ast.Dict):  # {"error": {"code": "...", ...}} written out
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "error" and isinstance(value, ast.Dict):
                    for inner_key, inner_value in zip(value.keys, value.values):
                        if isinstance(inner_key, ast.Constant) and inner_key.value == "code":
                            for code in _codes_of(inner_value, constants, functions):
                                sites.append(Site(f"{where}:{node.lineno}", function, "error body", code, None))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, "")
    return sites


def problems(sites: Iterable[Site]) -> list[str]:
    """What is wrong with these sites: an unregistered code, a status its code does not list,
    a frame code the registry does not mark as the socket's, a code the check cannot read."""
    found = []
    warnings = {str(code) for code in WarningCode}
    known = {str(code) for code in ErrorCode} | warnings
    for site in sites:
        module = site.where.rsplit(":", 1)[0]
        if site.code is None:
            if (module, site.function) not in FORWARDING:
                found.append(f"{site.where}: {site.call} with a code this check cannot read (write the code, or list the site in FORWARDING)")
            continue
        if site.code not in known:
            found.append(f"{site.where}: {site.call} code {site.code!r} is not in foolgame.core.errors.ErrorCode")
            continue
        if site.code in warnings:
            if site.call != "Problem":
                found.append(f"{site.where}: {site.code!r} is a warning code, not an error")
            continue
        registered = ErrorCode(site.code)
        if site.status is not None and site.status not in registered.statuses:
            found.append(f"{site.where}: {site.code!r} raised with {site.status}; ErrorCode lists {registered.statuses}")
        if site.call in ("FrameError", "send_error") and not registered.socket:
            found.append(f"{site.where}: {site.code!r} is sent in a socket frame; mark it socket=True in ErrorCode")
    return found


@functools.cache
def _package_sites() -> tuple[Site, ...]:
    sites = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        sites += code_sites(path.read_text(encoding="utf-8"), where=str(path.relative_to(PACKAGE)))
    return tuple(sites)


def test_every_code_the_source_sends_is_registered_with_its_status() -> None:
    sites = _package_sites()
    assert len([s for s in sites if s.call == "ServiceError"]) >= 100  # the scan sees the raise sites
    assert problems(sites) == []


def test_every_registered_code_is_sent_somewhere() -> None:
    """No dead entries: each code is written at a raise site, or comes from a table or from DRF."""
    written = {site.code for site in _package_sites()}
    from foolgame.core import sockets
    from foolgame.middleware import _STATUS_CODES
    from foolgame.rooms.consumers import RoomConsumer

    written |= {code for code, _ in [*sockets.CLOSE_REASONS.values(), *RoomConsumer.CLOSE_REASONS.values(), *_STATUS_CODES.values()]}
    written |= {cls.default_code for cls in DRF_EXCEPTIONS} | {"error"}
    assert sorted(str(code) for code in ErrorCode if str(code) not in written) == []


PLANTED = [
    ('def f():\n    raise ServiceError("round_gone", "No.", status_code=404)\n', "'round_gone' is not in"),
    ('def f():\n    raise ServiceError("round_over", "Over.", status_code=404)\n', "'round_over' raised with 404"),
    ('def f():\n    raise ServiceError("round_over", "Over.")\n', "'round_over' raised with 400"),
    ('def f(code):\n    raise ServiceError(code, "?")\n', "cannot read"),
    ('def f(name):\n    raise ServiceError(f"invalid_{name}", "?")\n', "cannot read"),
    ('async def f(self):\n    await self.send_error("round_over", "Over.")\n', "mark it socket=True"),
    ('def f():\n    raise FrameError("frame_bad", "No.")\n', "'frame_bad' is not in"),
    ('def f():\n    return [Problem("text_too_wordy", "text", "No.")]\n', "'text_too_wordy' is not in"),
    ('def f():\n    return JsonResponse({"error": {"code": "gone_fishing", "message": "."}})\n', "'gone_fishing' is not in"),
    ('def f():\n    raise ParseError("?", code="broken_json")\n', "'broken_json' is not in"),
    ('PAIR = ("name_clash", "Taken.")\ndef f():\n    raise ServiceError(*PAIR, status_code=409)\n', "'name_clash' is not in"),
    ('def f():\n    raise ServiceError(ErrorCode.ROUND_GONE, "No.")\n', "'ErrorCode.ROUND_GONE' is not in"),
    ('def f():\n    raise _throttled("Slow down.", 5, "too_fast")\n', "'too_fast' is not in"),
    ('def f(request):\n    return _whole_number(request, "page", 1, 1, 9, code="invalid_page")\n', "'invalid_page' is not in"),
    ('A = ("name_a", "?")\nB = ("username_taken", "?")\ndef pick(x):\n    return A if x else B\ndef f(x):\n    raise ServiceError(*pick(x), status_code=409)\n', "'name_a' is not in"),
    ('def f():\n    raise ServiceError("not_standalone", "No.")\n', "is a warning code"),
]


@pytest.mark.parametrize(("source", "expected"), PLANTED)
def test_the_check_reports_a_planted_unknown_code(source: str, expected: str) -> None:
    """The check can fail: each planted raise (an unknown code, a wrong status, a code it
    cannot read) is reported."""
    found = problems(code_sites(source, where="voting/planted.py"))
    assert any(expected in line for line in found), found


def test_the_check_accepts_registered_codes_written_either_way() -> None:
    source = (
        'TAKEN = ("username_taken", "Taken.")\n'
        "def f():\n"
        '    raise ServiceError("round_over", "Over.", status_code=409)\n'
        "def g():\n"
        "    raise ServiceError(ErrorCode.NO_PAIR_AVAILABLE, 'Gone.', status_code=status.HTTP_409_CONFLICT)\n"
        "def h():\n"
        "    raise ServiceError(*TAKEN, status_code=409)\n"
    )
    sites = code_sites(source, where="players/planted.py")
    assert [s.code for s in sites] == ["round_over", "no_pair_available", "username_taken"]
    assert problems(sites) == []


# What DRF answers by itself in a request's cycle (the view's authentication and permission
# checks, content negotiation, the parsers, the serializers), mapped to codes by
# core.errors.exception_handler.
DRF_EXCEPTIONS = [
    exceptions.ValidationError,
    exceptions.ParseError,
    exceptions.NotAuthenticated,
    exceptions.PermissionDenied,
    exceptions.NotFound,
    exceptions.MethodNotAllowed,
    exceptions.NotAcceptable,
    exceptions.UnsupportedMediaType,
]


def test_drf_exception_codes_are_registered() -> None:
    for exception in DRF_EXCEPTIONS:
        code = ErrorCode(exception.default_code)
        # DRF answers NotAuthenticated 403, not 401, under session authentication (no WWW-Authenticate)
        status = 403 if exception is exceptions.NotAuthenticated else exception.status_code
        assert status in code.statuses, (exception, code.statuses)


def test_socket_and_middleware_tables_are_registered() -> None:
    from foolgame.core import sockets
    from foolgame.middleware import _STATUS_CODES
    from foolgame.rooms.consumers import RoomConsumer

    for code, _message in [*sockets.CLOSE_REASONS.values(), *RoomConsumer.CLOSE_REASONS.values()]:
        assert ErrorCode(code).socket, code
    for status, (code, _message) in _STATUS_CODES.items():
        assert status in ErrorCode(code).statuses, (status, code)


def test_the_registry_is_well_formed() -> None:
    for code in ErrorCode:
        assert code.value == code.name.lower(), code
        assert code.meaning and "\n" not in code.meaning and not code.meaning.endswith("."), code
        assert all(400 <= status < 600 for status in code.statuses), code
        assert code.statuses or code.socket or code is ErrorCode.ERROR, f"{code}: neither an HTTP status nor a socket frame"
    assert not {str(code) for code in ErrorCode} & {str(code) for code in WarningCode}


def test_docs_errors_table_is_generated_from_the_registry() -> None:
    from foolgame.core.errors import DOC_BEGIN, DOC_END, error_codes_markdown

    doc = (REPO / "docs" / "errors.md").read_text(encoding="utf-8")
    table = doc.split(DOC_BEGIN + "\n", 1)[1].split(DOC_END, 1)[0]
    assert table == error_codes_markdown() + "\n", "docs/errors.md is stale: run python -m foolgame.core.errors"


def test_websocket_doc_names_only_registered_codes() -> None:
    """Every code in the error tables of docs/websocket.md is a registered code."""
    import re

    doc = (REPO / "docs" / "websocket.md").read_text(encoding="utf-8")
    named = set(re.findall(r"^\| `([a-z_]+)` \|", doc, flags=re.MULTILINE)) | set(re.findall(r"`error` `([a-z_]+)`", doc))
    frames = {"state", "clue", "result", "ok", "tick", "timeout", "void", "forfeited", "error", "room", "question", "votes", "voted", "answer", "members", "ended"}
    codes = named - frames
    assert len(codes) >= 25
    known = {str(code) for code in ErrorCode}
    assert sorted(codes - known) == []
