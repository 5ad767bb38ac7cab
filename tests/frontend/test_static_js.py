"""The page scripts share one client (frontend/static/fm2/common.js, socket.js, round_view.js)
instead of each repeating it: one HTTP helper, one socket with one reconnect policy, one
claim-card markup. These read the files; the browser tests drive them."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STATIC = REPO / "frontend" / "static" / "fm2"
TEMPLATES = REPO / "frontend" / "templates"

FETCH_ALLOWED = {"common.js"}


def scripts() -> list[Path]:
    found = sorted(STATIC.glob("*.js"))
    assert found, STATIC
    return found


def test_only_common_js_calls_fetch() -> None:
    """Every page goes through fm2.api (CSRF token, JSON, the server's error code and message)."""
    calling = {path.name for path in scripts() if re.search(r"\bfetch\s*\(", path.read_text())}
    assert calling <= FETCH_ALLOWED, sorted(calling - FETCH_ALLOWED)


def test_only_socket_js_opens_websockets() -> None:
    """One reconnect policy: the pages open their sockets through fm2.socket."""
    opening = {path.name for path in scripts() if re.search(r"\bnew\s+WebSocket\s*\(", path.read_text())}
    assert opening == {"socket.js"}


def test_the_claim_card_markup_is_written_once() -> None:
    """The solo page and the room page include voting/claim_cards.html; nobody else writes a card."""
    writing = sorted(str(path.relative_to(TEMPLATES)) for path in TEMPLATES.rglob("*.html") if 'class="claim-card"' in path.read_text())
    assert writing == ["voting/claim_cards.html"]
    including = sorted(str(path.relative_to(TEMPLATES)) for path in TEMPLATES.rglob("*.html") if "voting/claim_cards.html" in path.read_text() and path.name != "claim_cards.html")
    assert including == ["rooms/room.html", "voting/play.html"]
