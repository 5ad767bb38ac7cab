"""JSON nesting is capped before parsing: REST bodies (the DRF parser below) and socket frames
(``GameSocketConsumer._parse``) go through :func:`json_depth_check` before ``json.loads``.

``json.loads`` recurses once per ``[`` or ``{``: a 64 KiB body of brackets reached Python's
recursion limit and came out as a 500 with a traceback in the log. No request of the API
nests deeper than a few levels, so a small cap (``FM2_HTTP["MAX_JSON_DEPTH"]``) costs nothing.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils import json

TOO_DEEP = "too_deep"
# A JSON string (escaped quotes and backslashes included), or one bracket outside strings. A
# string left open (bad JSON anyway) matches nothing; its brackets then count, which can only
# refuse a body json.loads would refuse too.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def max_json_depth() -> int:
    return settings.FM2_HTTP["MAX_JSON_DEPTH"]


def json_depth(text: str, *, limit: int) -> int:
    """The deepest nesting of arrays and objects in ``text``, counted up to ``limit + 1``:
    ``{}`` is 1, ``{"a": [1]}`` is 2, a bracket inside a string counts nothing. Linear in
    the length, no recursion."""
    depth = deepest = 0
    for token in _TOKENS.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif char in "]}":
            depth -= 1
    return deepest


def too_deep_message(limit: int) -> str:
    return f"JSON may nest arrays and objects at most {limit} levels deep."


def json_too_deep(text: str) -> bool:
    return json_depth(text, limit=max_json_depth()) > max_json_depth()


class DepthLimitedJSONParser(JSONParser):
    """DRF's JSON parser with the nesting cap checked on the text before ``json.loads``:
    400 ``too_deep`` instead of a RecursionError (a 500 and a traceback)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        encoding = get_encoding(parser_context or {})
        try:
            text = codecs.getreader(encoding)(stream).read() if stream is not None else ""
        except ValueError as exc:  # UnicodeDecodeError
            raise ParseError(f"JSON parse error - {exc}") from None
        limit = max_json_depth()
        if json_depth(text, limit=limit) > limit:
            raise ParseError(too_deep_message(limit), code=TOO_DEEP)
        try:
            return json.loads(text, parse_constant=json.strict_constant if self.strict else None)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
