"""Every hook through which a higher app reacts to a lower one, in one file.

Apps stand in layers (``tests/test_layers.py``): a lower app never imports a higher one. When
something a lower app does must change a higher one's state (a vote makes a claim's quality
flags stale; a room's round settles and its question may be over; an import adds sentences
that need an index), the lower app sends a hook here and the higher app connects its
receiver in its ``AppConfig.ready()``. The lower app names what happened, never who cares.

A ``Hook`` is declared by a function that has only a signature and a docstring (``@hook``,
as Datasette's ``hookspecs.py``): the keyword arguments it sends, with their types, and what
each receiver answers (``None``: nothing is read). It has any number of receivers, called in
the order they connected, with those keyword arguments only; ``send`` returns their answers
(a hook that asks a question, e.g. ``page_in_play``, reads them). A receiver that raises
propagates to the sender, as a direct call would: hooks move who knows whom, not what
happens. ``Slot`` holds one provider with a default (``round_groups``), for a lower app that
needs a policy a higher app may set; the default's class declares what a provider offers.

The signatures are checked: ``Hook.connect`` and ``Slot.set`` refuse a receiver or provider
that could not be called as declared, and outside production every ``send`` refuses a missing
or undeclared keyword, an argument or an answer of the wrong type (``HookSignatureError``).
``docs/hooks.md`` lists every hook and slot with its arguments (``tests/core/test_hooks.py``).
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Model, Q, QuerySet


class HookSignatureError(TypeError):
    """A receiver, a provider or a send that does not match its hook's or slot's declaration."""


def _name_of(thing: Any) -> str:
    return f"{getattr(thing, '__module__', '?')}.{getattr(thing, '__qualname__', repr(thing))}"


def _annotation_text(annotation: Any) -> str:
    # With postponed annotations (PEP 563) they are the source text itself.
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


def signature_text(signature: inspect.Signature) -> str:
    """``(*, page_ids: list[int]) -> None``: a signature as its source reads, for the errors
    and the docs."""
    parts: list[str] = []
    star = False
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if parameter.kind is parameter.VAR_POSITIONAL:
            star = True
        stars: dict[Any, str] = {parameter.VAR_POSITIONAL: "*", parameter.VAR_KEYWORD: "**"}
        text = stars.get(parameter.kind, "") + parameter.name
        if parameter.annotation is not parameter.empty:
            text += f": {_annotation_text(parameter.annotation)}"
        if parameter.default is not parameter.empty:
            text += f" = {parameter.default!r}"
        parts.append(text)
    returns = "" if signature.return_annotation is signature.empty else f" -> {_annotation_text(signature.return_annotation)}"
    return f"({', '.join(parts)}){returns}"


def _checking() -> bool:
    """Sends are checked in development and tests, not in production (a send is on every vote)."""
    return getattr(settings, "DJANGO_ENV", "development") != "production"


def _conforms(value: Any, expected: Any) -> bool:
    """A shallow check of ``value`` against a type hint: the container's own type and, for a
    list, tuple or set, each item's. A hint it cannot check (``Any``, a protocol) passes."""
    if expected is Any:
        return True
    origin = typing.get_origin(expected)
    if origin is None:
        if expected is None or expected is type(None):
            return value is None
        return isinstance(value, expected) if isinstance(expected, type) else True
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, option) for option in typing.get_args(expected))
    if isinstance(origin, type) and not isinstance(value, origin):
        return False
    arguments = typing.get_args(expected)
    if isinstance(value, (list, tuple, set, frozenset)) and len(arguments) == 1 and issubclass(origin, Iterable):
        return all(_conforms(item, arguments[0]) for item in value)
    if isinstance(value, dict) and len(arguments) == 2:
        return all(_conforms(k, arguments[0]) and _conforms(v, arguments[1]) for k, v in value.items())
    return True


def _cannot_take(accepts: inspect.Signature, names: list[str]) -> list[str]:
    """Why a callable of signature ``accepts`` cannot be called with exactly the keyword
    arguments ``names`` (nothing: it can)."""
    parameters = accepts.parameters
    any_keyword = any(p.kind is p.VAR_KEYWORD for p in parameters.values())

    def takes(name: str) -> bool:
        parameter = parameters.get(name)
        return any_keyword if parameter is None else parameter.kind not in (parameter.POSITIONAL_ONLY, parameter.VAR_POSITIONAL)

    problems = [f"it does not take {name} by name" for name in names if not takes(name)]
    problems += [
        f"it requires {p.name}, which is not sent"
        for p in parameters.values()
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in names
    ]
    return problems


class Hook:
    """One thing a lower app tells the apps above it; declared with ``@hook`` (below)."""

    def __init__(self, spec: Callable[..., Any]) -> None:
        self.spec = spec
        self.name, self.__doc__ = spec.__name__, inspect.getdoc(spec)
        self.signature = inspect.signature(spec)
        positional = [p.name for p in self.signature.parameters.values() if p.kind is not p.KEYWORD_ONLY]
        if positional:
            raise HookSignatureError(f"hook {self.name}: a hook sends keyword arguments only, not {positional}")
        self.answers_read = self.signature.return_annotation not in (None, "None", inspect.Signature.empty)
        self._hints: dict[str, Any] | None = None
        self.receivers: list[Callable[..., Any]] = []

    def signature_text(self) -> str:
        """``sentences_added(*, page_ids: list[int]) -> None``, as ``docs/hooks.md`` lists it."""
        return self.name + signature_text(self.signature)

    def connect(self, receiver: Callable[..., Any]) -> Callable[..., Any]:
        """Add ``receiver`` (once: ``ready()`` may run again in tests). Usable as a decorator.

        Refuses one that could not take the declared keyword arguments: a name missing, a
        parameter the hook never sends, a positional parameter without a default."""
        try:
            accepts = inspect.signature(receiver)
        except (TypeError, ValueError):  # a builtin without a signature: calling it will tell
            accepts = None
        problems = [] if accepts is None else _cannot_take(accepts, list(self.signature.parameters))
        if accepts is not None and problems:
            raise HookSignatureError(
                f"{_name_of(receiver)}{signature_text(accepts)} cannot receive hook {self.signature_text()}: "
                + "; ".join(problems)
            )
        if receiver not in self.receivers:
            self.receivers.append(receiver)
        return receiver

    def _type_hints(self) -> dict[str, Any]:
        if self._hints is None:
            self._hints = typing.get_type_hints(self.spec)
        return self._hints

    def send(self, **kwargs: Any) -> list[Any]:
        if not _checking():
            return [receiver(**kwargs) for receiver in list(self.receivers)]
        try:
            self.signature.bind(**kwargs)
        except TypeError as error:
            raise HookSignatureError(f"hook {self.signature_text()} sent with {sorted(kwargs)}: {error}") from None
        hints = self._type_hints()
        for name, value in kwargs.items():
            if not _conforms(value, hints.get(name, Any)):
                raise HookSignatureError(
                    f"hook {self.signature_text()} sent {name}={value!r:.80}, not a {_annotation_text(self.signature.parameters[name].annotation)}"
                )
        answers = []
        for receiver in list(self.receivers):
            answer = receiver(**kwargs)
            if self.answers_read and not _conforms(answer, hints.get("return", Any)):
                raise HookSignatureError(
                    f"{_name_of(receiver)} answered hook {self.signature_text()} with {answer!r:.80}"
                )
            answers.append(answer)
        return answers

    def __repr__(self) -> str:
        return f"<Hook {self.name}: {len(self.receivers)} receivers>"


def hook(spec: Callable[..., Any]) -> Hook:
    """Declare a hook by its signature and docstring; the function's body is never run."""
    return Hook(spec)


# --- pages and claims: imports -------------------------------------------------------------


@hook
def sentences_added(*, page_ids: list[int]) -> None:
    """An import added or replaced sentences of these pages, inside its transaction: their
    search indexes are stale. (evidence builds them after the commit.)"""


@hook
def sentences_cited(*, sentence_ids: list[int]) -> set[int]:
    """Which of these sentences does something cite and so must be kept (retired, not
    deleted) when an import drops them from their page? Each receiver answers a set of ids.
    (claims: the ones cited as gold.)"""


@hook
def claims_imported(*, claim_ids: list[int]) -> None:
    """An import created these claims, inside its transaction. (moderation computes their
    quality flags from the release's vote counts.)"""


# --- evidence: who may read a page -----------------------------------------------------------


@hook
def page_in_play(*, player_id: int, page_id: int) -> bool:
    """Is the player in a game on a claim about the page? Then nothing that reads the page
    for them (hints, draft checks) may run: the free top-10 would hand a voter the gold
    sentence. (voting answers True for an open round on one of its claims.)"""


# --- voting: rounds, votes and reports -------------------------------------------------------


@hook
def claims_voted(*, claim_ids: list[int]) -> None:
    """A vote on a round of these claims is being written, inside its transaction: what is
    derived from their votes is stale. (moderation refreshes their quality flags after the
    commit, batched; verifier has the model answer their rounds.)"""


@hook
def claim_reported(*, claim_id: int) -> None:
    """A player reported this claim, inside the report's transaction. (moderation refreshes
    its quality flags after the commit.)"""


@hook
def rounds_voted(*, player_id: int) -> bool:
    """Has the player finished a round with a vote (solo or in a room)? (voting answers;
    players finishes the first-run tutorial of a player who has, and has saved a claim.)"""


@hook
def claims_kept_from(*, players: Sequence[Model]) -> Q:
    """Which claims must never be dealt in a round to any of these players (user rows)? Each
    receiver answers a ``Q`` over claims to exclude. (checks: the claims they checked, whose
    evidence they read; rooms: the claims of rooms they hosted without playing, whose answers
    they saw; moderation: the claims they saw with their answer as moderators.)"""


@hook
def round_settled(*, round_id: int) -> None:
    """A round service committed a vote, a report or a forfeit on the round of a group (sent
    once, after the commit, whatever the transport), or its player is about to read it
    (``round_read``): an app that plays rounds in groups ends the group when nothing is left
    to wait for. (rooms ends the room's question.)"""


# --- checks: validation ----------------------------------------------------------------------


@hook
def check_answered(*, check_id: int, claim_id: int) -> None:
    """A player answered the check of the claim, inside the answer's transaction: its claim's
    gold label may have changed. (verifier has the model answer the same claim and pays its
    author if people now confirm a label the model got wrong.)"""


# --- the skill board --------------------------------------------------------------------------


@hook
def skill_board_machines() -> list[dict[str, Any]]:
    """Which machine players does the skill board show in a row of their own, on the players'
    scale? Each receiver answers a list of ``{"name", "skill", "rating", "deviation",
    "votes", "active"}``. (verifier: its model versions.)"""


# --- slots: one provider of a policy ----------------------------------------------------------


class RoundGroups:
    """How voting treats rounds that a higher app plays in groups (a room's question): the
    answer of a grouped round is the group's, out for everyone at once. This default has no
    groups: every round is a solo round. rooms sets its own in ``RoomsConfig.ready()``."""

    related: tuple[str, ...] = ()
    """``select_related`` paths that make ``in_group`` and ``answer_withheld`` free for a round
    read with them."""

    def solo(self, prefix: str = "") -> Q:
        """The rounds (``prefix``: the path to them) that belong to no group."""
        return Q()

    def in_group(self, round_: Any) -> bool:
        return False

    def answer_withheld(self, round_: Any) -> bool:
        """Must every payload of this round leave its answer out for now (its group's
        answer is not out for everyone)?"""
        return False

    def forfeit_answer_at(self, round_: Any) -> datetime | None:
        """When a started grouped round given up shows its answer: the group's own clock, not
        the member's (None: the round's own deadline)."""
        return None

    def votes_due(self, votes: QuerySet[Any], now: datetime) -> list[int]:
        """The ids of these unsettled votes whose answer is out for everyone now, so they may
        be paid, notified and rated."""
        return list(votes.values_list("pk", flat=True))


def _calls(declared: inspect.Signature) -> Iterable[tuple[list[None], dict[str, None]]]:
    """Every way a caller may call what ``declared`` describes: all arguments given, only the
    required ones, and the ones that may be named given by name."""
    parameters = [p for p in declared.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword = [p for p in parameters if p.kind is p.KEYWORD_ONLY]
    yield [None] * len(positional), {p.name: None for p in keyword}
    yield [None] * sum(p.default is p.empty for p in positional), {p.name: None for p in keyword if p.default is p.empty}
    only_positional = [p for p in positional if p.kind is p.POSITIONAL_ONLY]
    yield [None] * len(only_positional), {p.name: None for p in parameters if p not in only_positional}


class Slot:
    """One provider of a policy, with a default until a higher app sets its own.

    The default declares the slot: its class's public methods and attributes are what every
    provider must offer, each method callable in every way the default's is (for a plain
    function as the default, its own signature). ``set`` refuses a provider that falls short.
    """

    def __init__(self, name: str, default: Any) -> None:
        self.name = name
        self.interface: Any = default if inspect.isfunction(default) else type(default)
        self.provider = default
        self._check(default)

    def members(self) -> list[tuple[str, Any]]:
        """``(name, declaration)`` of what a provider offers: a method's function, or an
        attribute's default value (the slot's own name and function for a plain function)."""
        if inspect.isfunction(self.interface):
            return [(self.name, self.interface)]
        found: dict[str, Any] = {}
        for klass in reversed(self.interface.__mro__[:-1]):  # ``object`` offers nothing of its own
            found.update((name, value) for name, value in vars(klass).items() if not name.startswith("_"))
        return list(found.items())

    def _declared_signature(self, declared: Callable[..., Any]) -> inspect.Signature:
        signature = inspect.signature(declared)
        if inspect.isfunction(self.interface):
            return signature
        return signature.replace(parameters=list(signature.parameters.values())[1:])  # ``self``

    def signature_lines(self) -> list[str]:
        """``solo(prefix: str = '') -> Q``, ``related: tuple[str, ...]``: each member as
        ``docs/hooks.md`` lists it."""
        lines = []
        for name, declared in self.members():
            if inspect.isfunction(declared):
                lines.append(name + signature_text(self._declared_signature(declared)))
            else:
                annotations = {k: v for klass in self.interface.__mro__[::-1] for k, v in vars(klass).get("__annotations__", {}).items()}
                lines.append(f"{name}: {_annotation_text(annotations.get(name, type(declared)))}")
        return lines

    def _check(self, provider: Any) -> None:
        problems = []
        for name, declared in self.members():
            offered = provider if inspect.isfunction(self.interface) else getattr(provider, name, inspect.Parameter.empty)
            if offered is inspect.Parameter.empty:
                problems.append(f"it has no {name}")
            elif inspect.isfunction(declared):
                wanted = self._declared_signature(declared)
                try:
                    accepts = inspect.signature(offered)
                except (TypeError, ValueError):
                    problems.append(f"its {name} is not a function")
                    continue
                for args, kwargs in _calls(wanted):
                    try:
                        accepts.bind(*args, **kwargs)
                    except TypeError as error:
                        problems.append(f"its {name}{signature_text(accepts)} cannot be called as {name}{signature_text(wanted)}: {error}")
                        break
            elif declared is not None and not isinstance(offered, type(declared)):
                problems.append(f"its {name} is {offered!r:.60}, not a {type(declared).__name__}")
        if problems:
            raise HookSignatureError(f"{_name_of(type(provider))} cannot fill slot {self.name}: " + "; ".join(problems))

    def set(self, provider: Any) -> None:
        self._check(provider)
        self.provider = provider

    def get(self) -> Any:
        return self.provider

    def __repr__(self) -> str:
        return f"<Slot {self.name}: {_name_of(type(self.provider))}>"


round_groups = Slot("round_groups", RoundGroups())


class ModelVerdicts:
    """How authoring asks the model in the loop for its verdict on a claim and its gold
    sentences while it is written. This default has no model, so no verdict; verifier sets
    its own in ``VerifierConfig.ready()``. A verdict is a dict (``version``, ``label``,
    ``probability``, ``fooled``), or ``{"pending": True, ...}`` while the model loads."""

    def on_draft(self, *, task: Any, text: str, gold: Sequence[Any]) -> dict[str, Any] | None:
        """A draft that passes every rule of the text, with ``gold`` ticked (a try)."""
        return None

    def on_save(self, *, claim: Any, task: Any, gold: Sequence[Any]) -> dict[str, Any] | None:
        """A claim being saved, inside the save's transaction: record the version it was
        written against."""
        return None


model_verdicts = Slot("model_verdicts", ModelVerdicts())


class PlayRules:
    """What a higher app decides about what voting may deal and whose play counts: the claims
    taken out of play, the claims a player saw with their answer outside a round, the players
    held as improbable. Each answer is a ``Q`` over the claims or players (``prefix``: the
    path to them from the model voting queries), or None for none; voting applies it as it
    stands and never names the higher app's models or relations, so its queries stay in its
    layer (``tests/test_layers.py`` reads them). This default has no such rules; moderation
    sets its own in ``ModerationConfig.ready()``."""

    def claims_out_of_play(self, prefix: str = "") -> Q | None:
        """The claims that may be dealt to nobody (reported until reviewed, too hard and not
        kept: moderation's ``ClaimQuality.out_of_play``)."""
        return None

    def claims_answer_seen(self, *, player_id: int, at: datetime, prefix: str = "") -> Q | None:
        """The claims the player had seen with their answer (label and gold) by the moment
        ``at`` outside a round (a moderator's ``Sighting``): a vote on one pays nobody and is
        not rated (``Vote.unpaid``)."""
        return None

    def players_held(self, prefix: str = "") -> Q | None:
        """The players held out of the leaderboards and the ratings (an improbable player's
        ``PlayerHold``, until a moderator clears it)."""
        return None


play_rules = Slot("play_rules", PlayRules())


class PlayerSettings:
    """The game as one player plays it, where a higher app changes it for some players: a
    study's arm (``foolgame.studies``) overrides settings of ``core.arms.ARM_SETTINGS`` for its
    participants and keeps them off the public boards. This default changes nothing for
    anyone; studies sets its own in ``StudiesConfig.ready()``. Lower apps (voting, authoring,
    checks, verifier) ask ``settings_for`` wherever they read one of those settings for a
    player, so the server applies an arm as it applies the defaults."""

    def settings_for(self, *, player_id: int) -> dict[str, Any]:
        """Every setting of ``ARM_SETTINGS`` as it applies to the player (``core.arms.effective``)."""
        from foolgame.core import arms

        return arms.defaults()

    def players_off_boards(self, prefix: str = "") -> Q | None:
        """The players kept off the public leaderboards (a study's participants), as a ``Q``
        over players (``prefix``: the path to them), or None for none."""
        return None

    def page_ids_for(self, *, player_id: int) -> list[int] | None:
        """The only pages the player's rounds, write tasks and checks may draw from (a study's
        pages or categories), or None for any page."""
        return None

    def settled_checks_owed(self, *, player_id: int) -> int:
        """How many checks on settled claims the player is owed by now, their next check
        included (a study's attention checks not yet answered, at the places the study
        spread them): while it is above 0 the checks deal prefers a settled claim. 0 for
        everyone else."""
        return 0


player_settings = Slot("player_settings", PlayerSettings())
