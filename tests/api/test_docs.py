"""The API documentation: /api/docs/ works offline, and the schema describes every operation
with its own description and the errors it answers."""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from drf_spectacular.generators import SchemaGenerator

from tests.conftest import REPO

HTTP_METHODS = {"get", "put", "post", "patch", "delete", "head", "options", "trace"}


def _operations() -> list[tuple[str, str, dict]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (method.upper(), path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in HTTP_METHODS
    ]


def test_the_schema_lists_every_endpoint() -> None:
    paths = {path for _, path, _ in _operations()}
    assert {"/api/rounds", "/api/rounds/{round_id}/vote", "/api/moderation/queue", "/api/exports"} <= paths
    assert len(_operations()) >= 27


def test_every_operation_has_its_own_description_and_a_4xx_response() -> None:
    operations = _operations()
    missing = [f"{m} {p}" for m, p, op in operations if not (op.get("description") or "").strip()]
    assert missing == []
    no_errors = [f"{m} {p}" for m, p, op in operations if not any(str(code).startswith("4") for code in op["responses"])]
    assert no_errors == []
    descriptions = [op["description"] for _, _, op in operations]
    assert len(set(descriptions)) == len(descriptions), "two operations share a description"


def test_every_error_response_has_the_error_body_and_names_its_codes() -> None:
    for method, path, operation in _operations():
        for code, response in operation["responses"].items():
            if int(code) < 400:
                continue
            ref = response["content"]["application/json"]["schema"]["$ref"]
            assert ref.rsplit("/", 1)[-1] in ("ApiError", "Error"), (method, path, code, ref)
            assert "`" in response["description"], (method, path, code)  # at least one `code`: why


def test_documented_error_codes_match_what_the_endpoints_answer(client, django_user_model) -> None:
    """Spot checks: the codes the docs promise are the ones the services send."""
    schema = {(m, p): op for m, p, op in _operations()}
    anonymous = client.get("/api/me")
    assert anonymous.status_code == 403 and anonymous.json()["error"]["code"] == "not_authenticated"
    assert "`not_authenticated`" in schema[("GET", "/api/me")]["responses"]["403"]["description"]

    client.force_login(django_user_model.objects.create_user("docs-reader", password="x-Secret-123"))
    missing = client.get("/api/rounds/999999")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "round_not_found"
    assert "`round_not_found`" in schema[("GET", "/api/rounds/{round_id}")]["responses"]["404"]["description"]

    bad_kind = client.get("/api/leaderboard?kind=nope")
    assert bad_kind.status_code == 400 and bad_kind.json()["error"]["code"] == "invalid_kind"
    assert "`invalid_kind`" in schema[("GET", "/api/leaderboard")]["responses"]["400"]["description"]

    too_deep = client.post("/api/rounds", "[" * 30 + "]" * 30, content_type="application/json")
    assert too_deep.status_code == 400 and too_deep.json()["error"]["code"] == "too_deep"
    assert "`too_deep`" in schema[("POST", "/api/rounds")]["responses"]["400"]["description"]
    signup = schema[("POST", "/api/auth/signup")]["responses"]["409"]["description"]
    assert "`username_confusable`" in signup and "`username_taken`" in signup

    not_moderator = client.get("/api/moderation/queue")
    assert not_moderator.status_code == 403 and not_moderator.json()["error"]["code"] == "permission_denied"
    assert "`permission_denied`" in schema[("GET", "/api/moderation/queue")]["responses"]["403"]["description"]


def test_the_schema_validates_without_warnings(tmp_path) -> None:
    """``manage.py spectacular --validate --fail-on-warn``: any warning or error fails it."""
    result = subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Warning" not in result.stderr and "Error" not in result.stderr, result.stderr[-3000:]
    assert (tmp_path / "schema.yaml").stat().st_size > 10_000


def test_docs_page_is_html_and_names_only_local_assets(client) -> None:
    response = client.get("/api/docs/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
    assert "cdn" not in html.lower() and "https://" not in html


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_docs_page_loads_in_chromium_with_no_request_leaving_the_machine(asgi_live_server, page) -> None:
    from playwright.sync_api import expect

    outside: list[str] = []

    def only_local(route) -> None:
        host = urlsplit(route.request.url).hostname
        if host == "127.0.0.1":
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_local)
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.goto(asgi_live_server + "/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("fm2 API")
    operations = page.locator(".opblock")
    expect(operations.first).to_be_visible()
    assert operations.count() >= 27
    expect(page.locator(".opblock-summary-path", has_text="/api/rounds/{round_id}/vote")).to_be_visible()
    # An operation opens to its description and its documented errors.
    page.locator(".opblock-summary-path", has_text="/api/rounds/{round_id}/vote").click()
    block = page.locator(".opblock.is-open")
    expect(block).to_contain_text("Casts the round's one vote")
    expect(block.locator(".responses-table")).to_contain_text("round_expired")
    assert outside == []
    assert failed == []


def test_websocket_doc_names_every_frame_error_and_close_code() -> None:
    """docs/websocket.md keeps up with the consumer: each code it can send is documented."""
    import re

    from foolgame.core import sockets as consumers

    doc = (REPO / "docs" / "websocket.md").read_text(encoding="utf-8")
    source = "".join((REPO / "foolgame" / name).read_text(encoding="utf-8") for name in ("core/sockets.py", "voting/consumers.py"))
    services = (REPO / "foolgame" / "voting" / "services.py").read_text(encoding="utf-8")
    codes = set(re.findall(r'FrameError\(\s*"([a-z_]+)"', source)) | set(re.findall(r'send_error\(\s*"([a-z_]+)"', source))
    codes |= {code for code, _ in consumers.CLOSE_REASONS.values()}
    codes |= set(re.findall(r'ServiceError\(\s*"([a-z_]+)"', services)) - {"no_pair_available", "too_many_open_rounds", "deal_rate_limited", "unknown_category", "unknown_page", "forfeit_rate_limited"}  # dealing and forfeiting are REST only
    assert codes and sorted(code for code in codes if f"`{code}`" not in doc) == []
    close_codes = {value for name, value in vars(consumers).items() if name.startswith("CLOSE_") and isinstance(value, int)} | {1009, 1012}
    assert sorted(code for code in close_codes if f"| {code} |" not in doc) == []
    from foolgame.voting.consumers import RoundConsumer

    frames = set(RoundConsumer.HANDLERS) | set(re.findall(r'send_frame\(\s*"([a-z]+)"', source))
    assert sorted(frame for frame in frames if f'"type": "{frame}"' not in doc and f"| `{frame}` |" not in doc) == []


def documented_codes(description: str) -> list[str]:
    """The codes of an error response's description: its ``- `code, code`: why`` lines."""
    import re

    return [code for found in re.findall(r"^- `([^`]+)`", description, flags=re.MULTILINE) for code in found.split(", ")]


def registry_problems(operations: list[tuple[str, str, dict]]) -> list[str]:
    """Each documented code that is not in ``core.errors.ErrorCode``, or not under one of its statuses."""
    from foolgame.core.errors import ErrorCode

    found = []
    for method, path, operation in operations:
        for status, response in operation["responses"].items():
            if int(status) < 400:
                continue
            for code in documented_codes(response.get("description", "")):
                if code not in ErrorCode._value2member_map_:
                    found.append(f"{method} {path} {status}: {code!r} is not in ErrorCode")
                elif int(status) not in ErrorCode(code).statuses:
                    found.append(f"{method} {path} {status}: {code!r} is answered with {ErrorCode(code).statuses}")
    return found


# Registered codes no operation of the schema lists, and why.
NOT_IN_THE_SCHEMA = {
    "bad_request": "Django's own 400 before the API (a host not allowed); no operation's rule",
    "not_acceptable": "content negotiation: an Accept header without JSON, on any operation",
    "server_error": "a bug, never promised",
    "forbidden": "/metrics, outside the API",
    "user_not_found": "the role commands (createmoderator, createresearcher)",
    "invalid_tutorial": "the service's own guard; the endpoint's serializer refuses first (invalid)",
    "not_a_moderator": "the moderation services' own guard; the endpoints' permission refuses first (permission_denied)",
    "not_researcher": "the export service's own guard; the endpoints' permission refuses first (permission_denied)",
    "participant_not_allowed": "ParticipantLimitsMiddleware, before any view, on the paths closed to a study's participants (FM2_STUDIES CLOSED_PATHS)",
    "participant_not_found": "the study forget command",
    "already_active": "the verifier command",
    "nothing_active": "the verifier command",
    "nothing_to_roll_back_to": "the verifier command",
    "note_too_long": "the report serializer refuses a long note first (invalid); a socket's report frame answers it",
}


def test_every_documented_error_code_is_registered_under_that_status() -> None:
    """The schema's error lists are held to the registry: a code it names is registered, under
    a status the registry gives it; and every code the REST API can answer is listed somewhere."""
    from foolgame.core.errors import ErrorCode

    operations = _operations()
    assert registry_problems(operations) == []
    listed = {code for _, _, op in operations for status, r in op["responses"].items() if int(status) >= 400 for code in documented_codes(r["description"])}
    unlisted = {str(code) for code in ErrorCode if code.statuses and str(code) not in listed}
    assert sorted(unlisted - set(NOT_IN_THE_SCHEMA)) == []
    assert sorted(set(NOT_IN_THE_SCHEMA) - unlisted) == []  # the exceptions stay true


def test_the_registry_check_reports_a_planted_code() -> None:
    planted = [
        ("GET", "/api/planted", {"responses": {"404": {"description": "- `round_gone`: no such round"}}}),
        ("GET", "/api/planted", {"responses": {"409": {"description": "- `round_not_found, round_over`: gone or over"}}}),
    ]
    assert registry_problems(planted) == [
        "GET /api/planted 404: 'round_gone' is not in ErrorCode",
        "GET /api/planted 409: 'round_not_found' is answered with (404,)",
    ]


def test_a_bare_code_is_documented_with_the_registrys_meaning() -> None:
    from foolgame.core.errors import ErrorCode

    schema = {(m, p): op for m, p, op in _operations()}
    description = schema[("POST", "/api/rounds/{round_id}/forfeit")]["responses"]["404"]["description"]
    assert f"- `round_not_found`: {ErrorCode.ROUND_NOT_FOUND.meaning}" in description
