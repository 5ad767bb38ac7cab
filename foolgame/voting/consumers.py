"""The round's WebSocket: transport only. Frames call the same services as the REST twins.

The server pushes ``tick`` every second from the process's heartbeat
(``core.sockets.heartbeat``; the socket leaves it on disconnect). The consumer keeps the round's deadline in memory so a tick costs no query;
any change made elsewhere (a REST reveal or vote, a timeout) arrives as ``round.changed``
through the channel layer and the deadline is re-read from the database, which stays the
only clock: every action re-checks the time under the round's row lock.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone
from collections.abc import Callable, Mapping
from typing import Any

from foolgame.core import clock
from foolgame.core.queries import compiled_rows
from foolgame.core.errors import ServiceError
from foolgame.core.sockets import (
    CLOSE_NO_SUCH_ROUND,
    CLOSE_NOT_YOUR_ROUND,
    FrameError,
    GameSocketConsumer,
    claim_field,
    database_sync_to_async,
    run_eagerly,
)
from foolgame.voting import payloads, services
from foolgame.voting.events import round_group, round_socket
from foolgame.voting.models import Report, Round

logger = logging.getLogger(__name__)

def _clock_row(*, round_id: int) -> tuple[str, datetime | None] | None:
    """The round's committed state and deadline."""
    return Round.objects.filter(pk=round_id).values_list("state", "deadline").first()


def _owner_row(*, round_id: int) -> tuple[int, str, bool] | None:
    """The round's player, state and whether its player is shown points: what every new
    socket reads first, its SQL compiled once (``core.queries.compiled_rows``)."""
    rows = compiled_rows(
        "round_owner", lambda: Round.objects.filter(pk=round_id).values_list("player_id", "state", "points_shown")[:1], [round_id]
    )
    return tuple(rows[0]) if rows else None  # type: ignore[return-value]


def _expired_row(*, round_id: int) -> tuple[str, datetime | None] | None:
    """Close the round if its time is up, and read its clock after: one trip to the database."""
    services.round_expire(round_id=round_id)
    return _clock_row(round_id=round_id)


def _then(service: Callable[..., Any], then: Callable[..., Any]) -> Callable[..., Any]:
    """``service`` followed by ``then`` (its answer is returned instead), in the same trip to
    the database: a hop to a database thread costs more than the second query."""

    def both(*, round_id: int, **kwargs: Any) -> Any:
        service(round_id=round_id, **kwargs)
        return then(round_id=round_id)

    return both


class RoundConsumer(GameSocketConsumer):
    kind = "round"
    round_id: int
    deadline: datetime | None
    status: str
    timeout_sent: bool = False
    points_shown: bool = True  # the round's (``Round.points_shown``): its ticks carry points
    expiring: asyncio.Future | None = None

    async def connect(self) -> None:
        self.round_id = self.label = int(self.scope["url_route"]["kwargs"]["round_id"])
        self.group = round_group(self.round_id)
        # One trip to the database checks the owner and reads the state; until the socket is
        # accepted its group messages are ignored (see round_changed).
        state = await self._open()
        if state is None:
            return
        await self._remember(state)
        if state["status"] != Round.State.READY:
            # A reconnect: the true remaining time and the clues already bought.
            await self.send_frame("state", state)
        self._start_beating(self._tick)

    async def _call(self, service: Callable[..., Any], **kwargs: Any) -> Any:
        """``service`` for this socket's round and player, in a database thread. The round's
        ``round.changed`` for a start or a vote it makes is not sent back to this socket
        (``events.round_socket``): it keeps the state the service returns."""
        token = round_socket.set(self.channel_name)
        try:
            return await database_sync_to_async(service)(round_id=self.round_id, player=self.scope["user"], **kwargs)
        finally:
            round_socket.reset(token)

    async def disconnect(self, code: int) -> None:
        """Leave as every socket does; a round still playing gets its expiry task now (a
        start through this socket sent none: ``services.round_left_playing``)."""
        await super().disconnect(code)
        if getattr(self, "status", None) == Round.State.PLAYING and getattr(self, "deadline", None) is not None:
            try:
                services.round_left_playing(round_id=self.round_id, deadline=self.deadline)
            except Exception:  # the sweep closes it within a minute, and any read on time
                logger.warning("round socket: no expiry task for round %s", self.round_id, exc_info=True)

    async def on_start(self, frame: dict[str, Any]) -> None:
        state = await self._call(services.round_start)
        await self._remember(state)
        await self.send_frame("state", state)

    async def on_state(self, frame: dict[str, Any]) -> None:
        state = await self._call(services.round_read)
        await self._remember(state)
        await self.send_frame("state", state)

    async def on_reveal(self, frame: dict[str, Any]) -> None:
        result = await self._call(services.round_reveal_clue, claim_index=claim_field(frame, "claim", also="false_claim"))
        self.deadline = datetime.fromisoformat(result["deadline"])
        await self.send_frame("clue", result)

    async def on_vote(self, frame: dict[str, Any]) -> None:
        result = await self._call(services.vote_cast, false_claim=claim_field(frame, "false_claim", also="claim"))
        self.status = Round.State.VOTED
        await self.send_frame("result", result)

    async def on_like(self, frame: dict[str, Any]) -> None:
        await self._call(services.round_like, claim=claim_field(frame, "claim", nullable=True))
        await self.send_frame("ok", payloads.OkFrame({"for": "like"}))

    async def on_report(self, frame: dict[str, Any]) -> None:
        reason, note = frame.get("reason"), frame.get("note", "")
        if reason not in Report.Reason.values:
            raise FrameError("invalid_reason", "reason must be one of: " + ", ".join(Report.Reason.values) + ".")
        if not isinstance(note, str):
            raise FrameError("invalid_note", "note must be text.")
        row = await self._call(_then(services.round_report, _clock_row), claim=claim_field(frame, "claim"), reason=reason, note=note)
        self._take_row(row)
        await self.send_frame("ok", payloads.OkFrame({"for": "report"}))

    HANDLERS = {"start": on_start, "state": on_state, "reveal": on_reveal, "vote": on_vote, "like": on_like, "report": on_report}

    # --- the clock ------------------------------------------------------------------------

    def _opening_state(self, user: Any) -> tuple[Mapping[str, Any] | None, int]:
        """The round's state for its player, or None and the close code for anyone else.
        A round not started yet (every new socket's) sends no state on opening (``connect``)
        and has no clock: its owner and status, in one narrow query, are all it needs; the
        full state (``round_get_state``: claims, pages, clues, lazy expiry) is read for the
        others, a reconnect's."""
        row = _owner_row(round_id=self.round_id)
        if row is None:
            return None, CLOSE_NO_SUCH_ROUND
        if row[0] != user.pk:
            return None, CLOSE_NOT_YOUR_ROUND
        self.points_shown = row[2]
        if row[1] == Round.State.READY:
            return {"status": Round.State.READY, "deadline": None}, 0
        try:
            return services.round_get_state(round_id=self.round_id, player=user), 0
        except ServiceError:  # withdrawn since the query above
            return None, CLOSE_NO_SUCH_ROUND

    async def _remember(self, state: Mapping[str, Any]) -> None:
        """Keep the round's status and deadline from a state the services just returned."""
        self.status = state["status"]
        deadline = state.get("deadline")
        self.deadline = datetime.fromisoformat(deadline) if deadline and self.status == Round.State.PLAYING else None

    async def _refresh(self) -> None:
        self._take_row(await database_sync_to_async(_clock_row)(round_id=self.round_id))

    def _take_row(self, row: tuple[str, datetime | None] | None) -> None:
        if row is not None:
            self.status, self.deadline = row[0], row[1] if row[0] == Round.State.PLAYING else None

    async def round_changed(self, event: dict[str, Any]) -> None:
        """A socket, a REST call or a task changed the round: take its committed clock."""
        if not self.beating:  # not accepted (yet, or ever): nothing to keep in step
            return
        self.status = event["state"]
        deadline = event.get("deadline")
        self.deadline = datetime.fromtimestamp(deadline, tz=timezone.utc) if deadline and self.status == Round.State.PLAYING else None
        await self._announce_timeout()

    async def _announce_timeout(self) -> None:
        """Send ``timeout`` once, whichever path (tick, task, another request) saw it first;
        a round voided by moderation gets one ``void`` frame the same way, and a round given
        up (from another tab or over REST) one ``forfeited`` frame with when its answer shows."""
        if self.status == Round.State.TIMED_OUT and not self.timeout_sent:
            self.timeout_sent = True
            await self.send_frame("timeout", payloads.ClockFrame(remaining=0, points=0))
        elif self.status == Round.State.VOIDED and not self.timeout_sent:
            self.timeout_sent = True
            await self.send_frame("void", payloads.VoidFrame(remaining=0, points=0, message=payloads.VOIDED_MESSAGE))
        elif self.status == Round.State.FORFEITED and not self.timeout_sent:
            self.timeout_sent = True
            state = await self._call(services.round_get_state)
            await self.send_frame(
                "forfeited", payloads.ForfeitedFrame(remaining=0, points=0, answer_at=state.get("answer_at"), message=payloads.FORFEIT_MESSAGE)
            )

    def _tick(self) -> None:
        """The socket's beat (``heartbeat``): a ``tick`` frame with the time left on the
        deadline it holds; at the deadline, once, the round is closed if the database agrees
        its time is up and the timeout announced. A tick goes out at once (``run_eagerly``: a
        task only while the client's buffer is full); the close starts a task of its own."""
        if self.status != Round.State.PLAYING or self.deadline is None:
            return
        remaining = (self.deadline - clock.now()).total_seconds()
        if remaining <= 0:
            if self.expiring is None or self.expiring.done():
                self.expiring = asyncio.ensure_future(self._expire())
            return
        frame = payloads.ClockFrame(remaining=round(remaining, 2), points=payloads.round_points(remaining))
        if not self.points_shown:  # a study's arm hides points from its player
            del frame["points"]
        run_eagerly(self.send_frame("tick", frame))

    async def _expire(self) -> None:
        try:
            self._take_row(await database_sync_to_async(_expired_row)(round_id=self.round_id))
            await self._announce_timeout()
        except Exception:  # a service down: the next beat tries again
            logger.warning("round socket: could not close round %s at its deadline", self.round_id, exc_info=True)
