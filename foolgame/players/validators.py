"""User names: no invisible characters, no look-alikes of system players or reserved names.

Reserved names are compared twice: by Unicode's TR39 skeleton (``foolgame.players.tr39``, the
same comparison every account's name gets against every other) and by the looser fold below,
which also drops separators and reads digits and signs as letters (``FM2_Re1ease``).
"""

from __future__ import annotations

import unicodedata

from django.conf import settings

from foolgame.players import tr39

# Letters that look alike in most fonts, folded to one Latin letter (after NFKC and casefold).
HOMOGLYPHS = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
        "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d",
        "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l",
        # Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
        "τ": "t", "υ": "u", "χ": "x", "ω": "w", "μ": "u",
        # Digits and signs used as letters
        "0": "o", "1": "l", "i": "l", "|": "l", "!": "l", "3": "e", "4": "a", "5": "s", "$": "s",
        "7": "t", "@": "a", "+": "t",
    }
)
SEPARATORS = str.maketrans("", "", "-_. \t")
# Invisible letters \\w accepts: Hangul fillers, the Khmer vowels inherent, and the like.
INVISIBLE = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u17b4", "\u17b5", "\u180e", "\u2800"}


def username_skeleton(name: str) -> str:
    """What a name looks like: ``FM2_Re1ease``, ``fm2-rеlease`` (Cyrillic е) -> ``fm2release``."""
    text = unicodedata.normalize("NFKC", name).casefold().translate(tr39.EXTRA_FOLDS)
    text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    text = text.translate(SEPARATORS).replace("rn", "m").replace("vv", "w")
    # "2" stays a digit: fm2 is the system namespace.
    return text.translate(HOMOGLYPHS)


def has_invisible_characters(name: str) -> bool:
    return any(ch in INVISIBLE or unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cn", "Zl", "Zp", "Zs") for ch in name)


def _reserved_names() -> list[str]:
    return [*settings.FM2_SIGNUP["RESERVED_USERNAMES"], *settings.FM2["SYSTEM_PLAYERS"], settings.FM2["RELEASE_AUTHOR"]]


def reserved_skeletons() -> set[str]:
    return {username_skeleton(name) for name in _reserved_names()}


def is_reserved_username(name: str) -> bool:
    prefixes = settings.FM2_SIGNUP["RESERVED_PREFIXES"]
    for fold, reserved in ((username_skeleton, reserved_skeletons()), (tr39.username_skeleton, {tr39.username_skeleton(n) for n in _reserved_names()})):
        skeleton = fold(name)
        if skeleton in reserved or skeleton.startswith(tuple(fold(prefix) for prefix in prefixes)):
            return True
    return False
