"""JSON nesting is capped before parsing: REST bodies (the DRF parser below) and socket frames
(``GameSocketConsumer._parse``) go through :func:`json_depth_check` before ``json.loads``.

``json.loads`` recurses once per ``[`` or ``{``: a 64 KiB body of brackets reached Python's
recursion limit and came out as a 500 with a traceback in the log. No request of the API
nests deeper than a few levels, so a small cap (``FM2_HTTP["MAX_JSON_DEPTH"]``) costs nothing.
"""

from __future__ import annotations

import codecs
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils import json

TOO_DEEP = "too_deep"
# Over UTF-8 bytes (where no multi-byte character holds an ASCII byte): objects' braces become
# brackets and every other byte goes.
_SAME_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")


def max_json_depth() -> int:
    return settings.FM2_HTTP["MAX_JSON_DEPTH"]


def json_depth(text: str, *, limit: int) -> int:
    """The deepest nesting of arrays and objects in ``text``, at most ``limit + 1``: ``{}`` is
    1, ``{"a": [1]}`` is 2, a bracket inside a string counts nothing, and a bracket never
    closed (bad JSON, which json.loads would still recurse into) counts as nesting.

    No recursion, and every loop runs in C: escaped backslashes and quotes are dropped, the
    text between quotes (strings) is dropped, then each pass removes the innermost pairs of
    brackets; the passes are the depth. A 64 KiB body takes 1 to 14 ms on a busy 2-core
    machine, about what json.loads takes for it (the worst: 1,600 arrays 20 deep)."""
    data = text.encode("utf-8", "surrogatepass")
    if b'"' in data:
        if b"\\" in data:  # outside a string a backslash is bad JSON: dropping it changes no depth
            data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
        data = b"".join(data.split(b'"')[::2])  # an unterminated string's brackets are never parsed either
    brackets = data.translate(_SAME_BRACKETS, _NOT_BRACKETS)
    depth = 0
    while brackets and depth <= limit:
        inner_removed = brackets.replace(b"[]", b"")
        if len(inner_removed) == len(brackets):
            break
        brackets, depth = inner_removed, depth + 1
    return min(depth + brackets.count(b"["), limit + 1)


def too_deep_message(limit: int) -> str:
    return f"JSON may nest arrays and objects at most {limit} levels deep."


def json_too_deep(text: str) -> bool:
    """Whether ``text`` nests deeper than ``FM2_HTTP["MAX_JSON_DEPTH"]``. Most bodies hold fewer
    brackets than the limit in all, which settles it at once."""
    limit = max_json_depth()
    if text.count("[") + text.count("{") <= limit:
        return False
    return json_depth(text, limit=limit) > limit


class DepthLimitedJSONParser(JSONParser):
    """DRF's JSON parser with the nesting cap checked on the text before ``json.loads``:
    400 ``too_deep`` instead of a RecursionError (a 500 and a traceback)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        encoding = get_encoding(parser_context or {})
        try:
            text = codecs.getreader(encoding)(stream).read() if stream is not None else ""
        except ValueError as exc:  # UnicodeDecodeError
            raise ParseError(f"JSON parse error - {exc}") from None
        if json_too_deep(text):
            raise ParseError(too_deep_message(max_json_depth()), code=TOO_DEEP)
        try:
            return json.loads(text, parse_constant=json.strict_constant if self.strict else None)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
