"""The hooks and slots of ``foolgame/core/hooks.py``: declared signatures, checked when a receiver
connects, a provider is set and (outside production) a hook is sent; and ``docs/hooks.md``
lists every one with its arguments (as Datasette's ``test_plugin_hooks_are_documented``)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db.models import Q

from foolgame.core import hooks
from foolgame.core.hooks import Hook, HookSignatureError, RoundGroups, Slot, hook
from tests.conftest import REPO

DOCS = REPO / "docs" / "hooks.md"


def declared() -> dict[str, Hook | Slot]:
    return {name: thing for name, thing in vars(hooks).items() if isinstance(thing, (Hook, Slot))}


def documented() -> dict[str, str]:
    """Each ``### `heading``` of docs/hooks.md by the hook or slot it names, with the text
    under it up to the next heading."""
    text = DOCS.read_text()
    sections = re.split(r"^(?=#{2,3} )", text, flags=re.M)
    found: dict[str, str] = {}
    for section in sections:
        heading = re.match(r"### `([A-Za-z_]\w*)([^`]*)`", section)
        if heading:
            found[heading.group(1)] = section
    return found


# --- the docs ----------------------------------------------------------------------------------


def test_every_hook_and_slot_is_documented_with_its_arguments() -> None:
    sections = documented()
    missing = sorted(set(declared()) - set(sections))
    assert missing == [], f"docs/hooks.md does not list: {missing}"
    for name, thing in declared().items():
        section = sections[name]
        if isinstance(thing, Hook):
            assert section.startswith(f"### `{thing.signature_text()}`"), (
                f"docs/hooks.md lists {name} as {section.splitlines()[0]!r}, declared {thing.signature_text()!r}"
            )
        else:
            listed = set(re.findall(r"^- `([^`]+)`", section, flags=re.M))
            assert set(thing.signature_lines()) <= listed, (
                f"docs/hooks.md lists for slot {name} {sorted(listed)}, declared {thing.signature_lines()}"
            )


def test_the_docs_name_no_hook_or_slot_that_is_gone() -> None:
    assert sorted(set(documented()) - set(declared())) == []


def test_each_hook_and_slot_is_named_as_its_module_attribute() -> None:
    assert {name: thing.name for name, thing in declared().items()} == {name: name for name in declared()}


# --- hooks: connecting -------------------------------------------------------------------------


@hook
def pages_changed(*, page_ids: list[int], reason: str) -> None:
    """A hook of the tests' own, so the app's receivers stay as they are."""


def _missing_one(*, page_ids: list[int]) -> None: ...


def _wants_more(*, page_ids: list[int], reason: str, force: bool) -> None: ...


def _positional(page_ids: list[int], reason: str, /) -> None: ...


def _misspelt(*, page_id: list[int], reason: str) -> None: ...


@pytest.mark.parametrize(
    "receiver, complaint",
    [
        (_missing_one, "it does not take reason by name"),
        (_wants_more, "it requires force, which is not sent"),
        (_positional, "it does not take page_ids by name; it does not take reason by name"),
        (_misspelt, "it does not take page_ids by name; it requires page_id, which is not sent"),
    ],
)
def test_a_receiver_with_a_wrong_signature_is_refused_when_it_connects(receiver: Any, complaint: str) -> None:
    with pytest.raises(HookSignatureError) as refused:
        pages_changed.connect(receiver)
    message = str(refused.value)
    assert "pages_changed(*, page_ids: list[int], reason: str) -> None" in message
    assert f"test_hooks.{receiver.__name__}" in message and complaint in message
    assert receiver not in pages_changed.receivers


def test_an_app_hook_refuses_a_receiver_that_misses_one_of_its_arguments() -> None:
    def in_play(*, player_id: int) -> bool:
        return False

    with pytest.raises(HookSignatureError, match=r"cannot receive hook page_in_play\(\*, player_id: int, page_id: int\) -> bool"):
        hooks.page_in_play.connect(in_play)
    assert in_play not in hooks.page_in_play.receivers


@pytest.mark.parametrize(
    "receiver",
    [
        lambda *, page_ids, reason: None,
        lambda *, page_ids, reason, force=False: None,  # a parameter of its own, with a default
        lambda **kwargs: None,
        lambda page_ids, reason: None,  # keyword or positional: the names are what counts
    ],
)
def test_a_receiver_that_takes_the_declared_keywords_connects(receiver: Any) -> None:
    local = Hook(pages_changed.spec)
    assert local.connect(receiver) is receiver
    local.connect(receiver)  # twice is once (ready() may run again)
    assert local.receivers == [receiver]


def test_a_hook_declared_with_a_positional_argument_is_refused() -> None:
    def positional(page_ids: list[int]) -> None: ...

    with pytest.raises(HookSignatureError, match="keyword arguments only"):
        Hook(positional)


# --- hooks: sending ----------------------------------------------------------------------------


@pytest.fixture
def heard() -> tuple[Hook, list[dict[str, Any]]]:
    local, calls = Hook(pages_changed.spec), []
    local.connect(lambda **kwargs: calls.append(kwargs))
    return local, calls


@pytest.mark.parametrize(
    "kwargs, complaint",
    [
        ({"page_ids": [1]}, "missing a required argument: 'reason'"),
        ({"page_ids": [1], "reason": "import", "force": True}, "unexpected keyword argument 'force'"),
        ({"page_ids": 1, "reason": "import"}, "sent page_ids=1, not a list[int]"),
        ({"page_ids": ["1"], "reason": "import"}, "sent page_ids=['1'], not a list[int]"),
    ],
)
def test_sending_a_missing_undeclared_or_mistyped_keyword_raises_and_calls_no_receiver(
    heard: tuple[Hook, list[dict[str, Any]]], kwargs: dict[str, Any], complaint: str
) -> None:
    local, calls = heard
    with pytest.raises(HookSignatureError) as refused:
        local.send(**kwargs)
    assert "pages_changed(" in str(refused.value) and complaint in str(refused.value)
    assert calls == []


def test_a_send_as_declared_reaches_every_receiver(heard: tuple[Hook, list[dict[str, Any]]]) -> None:
    local, calls = heard
    assert local.send(page_ids=[1, 2], reason="import") == [None]
    assert calls == [{"page_ids": [1, 2], "reason": "import"}]


def test_a_receiver_answering_the_wrong_type_raises() -> None:
    @hook
    def page_cited(*, page_id: int) -> set[int]:
        """A question hook of the tests' own."""

    def answers_a_list(*, page_id: int) -> list[int]:
        return [page_id]

    page_cited.connect(lambda *, page_id: {page_id})
    assert page_cited.send(page_id=3) == [{3}]
    page_cited.connect(answers_a_list)
    with pytest.raises(HookSignatureError, match=r"test_hooks\..*answers_a_list answered hook page_cited"):
        page_cited.send(page_id=3)


def test_in_production_a_send_calls_its_receivers_unchecked(settings, heard: tuple[Hook, list[dict[str, Any]]]) -> None:
    settings.DJANGO_ENV = "production"
    local, calls = heard
    local.send(page_ids=[1], reason="import", force=True)
    assert calls == [{"page_ids": [1], "reason": "import", "force": True}]


# --- slots -------------------------------------------------------------------------------------


class Grouped(RoundGroups):
    related = ("group",)

    def solo(self, prefix: str = "") -> Q:
        return Q(**{f"{prefix}group__isnull": True})


class NoPrefix(RoundGroups):
    def solo(self) -> Q:  # type: ignore[override]
        return Q()


class RenamedArgument(RoundGroups):
    def in_group(self, round: Any) -> bool:  # type: ignore[override]
        return True


class Ducks:
    """Not a RoundGroups, and missing most of what one offers."""

    related = ("group",)

    def solo(self, prefix: str = "") -> Q:
        return Q()


def test_a_provider_that_offers_what_the_default_does_fills_the_slot() -> None:
    slot = Slot("round_groups", RoundGroups())
    slot.set(provider := Grouped())
    assert slot.get() is provider


@pytest.mark.parametrize(
    "provider, complaint",
    [
        (NoPrefix(), "its solo() -> Q cannot be called as solo(prefix: str = '') -> Q"),
        (RenamedArgument(), "its in_group(round: Any) -> bool cannot be called as in_group(round_: Any) -> bool"),
        (Ducks(), "it has no in_group"),
    ],
)
def test_a_provider_with_a_wrong_signature_is_refused(provider: Any, complaint: str) -> None:
    slot = Slot("round_groups", default := RoundGroups())
    with pytest.raises(HookSignatureError) as refused:
        slot.set(provider)
    message = str(refused.value)
    assert f"test_hooks.{type(provider).__name__} cannot fill slot round_groups" in message
    assert complaint in message, message
    assert slot.get() is default


def test_a_function_slot_is_declared_by_its_default_signature() -> None:
    def rank(*, texts: list[str], k: int = 10) -> list[int]:
        return list(range(min(k, len(texts))))

    slot = Slot("rank", rank)
    assert slot.signature_lines() == ["rank(*, texts: list[str], k: int = 10) -> list[int]"]
    slot.set(lambda *, texts, k=5: [])
    with pytest.raises(HookSignatureError, match="cannot fill slot rank"):
        slot.set(lambda *, texts: [])  # k is part of the slot: callers may pass it
