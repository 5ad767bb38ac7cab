"""The base of every game socket (rounds, rooms): a service failing under it closes it with
1013, a refusal is accepted then closed with its 4xxx code, each open socket holds one of the
player's leases, and every frame passes the size, rate and JSON checks before its handler
sees it. Apps subclass ``GameSocketConsumer``; nothing here knows a round or a room."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections import deque
from importlib import import_module
from collections.abc import Awaitable, Callable, Coroutine, Hashable, Mapping
from typing import Any

from asgiref.sync import sync_to_async
from channels.auth import AuthMiddleware, UserLazyObject, get_user
from channels.db import database_sync_to_async as _database_sync_to_async
from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.sessions import CookieMiddleware, SessionMiddleware
from django.conf import settings

from foolgame.core import logcontext, metrics
from foolgame.core.auth import session_user
from foolgame.core.errors import SERVICE_DOWN_ERRORS, ServiceError
from foolgame.core.parsers import TOO_DEEP, json_too_deep, max_json_depth, too_deep_message
from foolgame.core.socket_leases import socket_lease_drop, socket_lease_take, socket_leases_renew

logger = logging.getLogger(__name__)

# On PostgreSQL, ORM work runs in the thread pool rather than channels' single shared
# thread: each call has its own connection and the round's row lock keeps calls on one round
# in order, so rounds do not queue behind each other. SQLite has one writer at a time and
# its busy handler backs off in sleeps of up to 100 ms, so there one thread is faster.
_ONE_DB_THREAD = settings.DATABASES["default"]["ENGINE"].endswith("sqlite3")


def database_sync_to_async(function: Callable[..., Any]) -> Callable[..., Any]:
    return _database_sync_to_async(function, thread_sensitive=_ONE_DB_THREAD)


class ProcessBatch:
    """What this process's open sockets hold (a key each, counted: two sockets of one member
    add it twice), handed together to ``flush`` every ``every()`` seconds by one task per
    event loop, started by the first key: one call for all the sockets of the process, not a
    call per socket (1,000 sockets renewing their leases one by one cost 100 thread hops and
    Redis round trips a second, queued with the votes). A failed flush is logged and tried
    again at the next interval."""

    def __init__(self, what: str, flush: Callable[[list[Any]], Awaitable[Any]], every: Callable[[], float]) -> None:
        self.what, self.flush, self.every = what, flush, every
        self.held: dict[Hashable, int] = {}
        self.flusher: asyncio.Task | None = None

    def __contains__(self, key: Hashable) -> bool:
        return key in self.held

    def add(self, key: Hashable) -> None:
        self.held[key] = self.held.get(key, 0) + 1
        loop = asyncio.get_running_loop()
        if self.flusher is None or self.flusher.done() or self.flusher.get_loop() is not loop:
            self.flusher = loop.create_task(self._run())

    def discard(self, key: Hashable) -> None:
        left = self.held.get(key, 0) - 1
        if left > 0:
            self.held[key] = left
        else:
            self.held.pop(key, None)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.every())
            if not self.held:
                continue
            try:
                await self.flush(list(self.held))
            except Exception:  # a service is down: the keys run out, the sockets go on
                logger.exception("sockets: %s not renewed", self.what)


def run_eagerly(coroutine: Coroutine[Any, Any, Any]) -> asyncio.Future | None:
    """Run ``coroutine`` at once, up to its first wait; only if it waits does the rest run
    in a task (returned). A socket's frame goes straight to its transport when the socket
    can write (uvicorn's send waits only while the client's buffer is full), so a tick sent
    from a beat costs no task and no turn of the event loop."""
    try:
        waiting_on = coroutine.send(None)
    except StopIteration:
        return None
    return asyncio.ensure_future(_resume(coroutine, waiting_on))


async def _resume(coroutine: Coroutine[Any, Any, Any], waiting_on: Any) -> Any:
    """Drive ``coroutine`` on from a wait, as a task would: the future it waits on is
    awaited here, then its outcome (a result, an error, a cancellation) sent into it."""
    while True:
        try:
            if waiting_on is None:  # a bare yield (asyncio.sleep(0))
                await asyncio.sleep(0)
            else:
                waiting_on._asyncio_future_blocking = False  # taken over, as a task takes it
                await waiting_on
        except BaseException as error:
            try:
                waiting_on = coroutine.throw(error)
            except StopIteration as stop:
                return stop.value
            continue
        try:
            waiting_on = coroutine.send(None)
        except StopIteration as stop:
            return stop.value


class Heartbeat:
    """Every socket's once-a-second beat, from one timer per event loop: the beats fall in
    hundredths of a second (``SLOTS``), each socket's in the hundredth it joined in, and the
    timer wakes a hundred times a second to run that hundredth's, in the order they joined.
    One task per socket sleeping a second each woke the process once per socket a second
    (1,000 sockets: 1,000 timer wakeups, each a system call and a switch back to the event
    loop), which cost more CPU than the ticks' own frames. In tenths, the last of a tenth's
    100 ticks (at 1,000 sockets) went out 3-4 ms after its second (tick lateness p99 4.5 ms,
    4x the floor's per-socket timers, bench_rounds_ws); in hundredths, 1.9 ms (1.7x), for
    about 16 ms more CPU a second. A beat is a plain function: one that must wait (a frame
    to send, the database) starts its own task, so no socket holds the others up."""

    SLOTS = 100

    def __init__(self) -> None:
        self.slots: list[dict[object, Callable[[], None]]] = [{} for _ in range(self.SLOTS)]
        self.slot_of: dict[object, int] = {}
        self.runner: asyncio.Task | None = None

    def add(self, key: object, beat: Callable[[], None]) -> None:
        """``beat`` runs about once a second from one second after now, until ``discard(key)``."""
        loop = asyncio.get_running_loop()
        slot = math.ceil((loop.time() + 1.0) * self.SLOTS) % self.SLOTS
        self.slots[slot][key] = beat
        self.slot_of[key] = slot
        if self.runner is None or self.runner.done() or self.runner.get_loop() is not loop:
            self.runner = loop.create_task(self._run())

    def discard(self, key: object) -> None:
        slot = self.slot_of.pop(key, None)
        if slot is not None:
            self.slots[slot].pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self.slot_of

    async def _run(self) -> None:
        """Drift-free: each slot is scheduled from the last one's due time."""
        loop = asyncio.get_running_loop()
        step = 1.0 / self.SLOTS
        due = math.ceil(loop.time() * self.SLOTS)
        while self.slot_of:  # none left: the next socket starts it again
            await asyncio.sleep(max(0.0, due * step - loop.time()))
            for beat in list(self.slots[due % self.SLOTS].values()):
                try:
                    beat()
                except Exception:  # one socket's failure never stops the others' clocks
                    logger.exception("sockets: a beat failed")
            due += 1


class PendingUser(UserLazyObject):
    """``scope["user"]`` of a socket, read from its session only when the socket opens, in
    the same trip to a database thread as the opening state (``GameSocketConsumer._open``).
    Channels' ``AuthMiddleware`` read it before the consumer ran, in a trip of its own to
    the process's one thread-sensitive thread: two thread hops per socket instead of one.
    Used before it is read, it raises as channels' own lazy user does."""

    def __init__(self, session: Any) -> None:
        super().__init__()
        self.__dict__["session"] = session

    def read(self) -> Any:
        """The session's user, or ``AnonymousUser``, as channels' ``get_user`` reads it; in a
        thread that may use the database. Every new socket reads one: ``core.auth.session_user``
        reads it with the SQL compiled once, and leaves channels' own reader every session it
        cannot answer alone (another backend's, a missing user, a stale hash)."""
        session = self.__dict__["session"]
        user = session_user(session)
        return user if user is not None else get_user.func({"session": session})


class SocketAuthMiddleware(AuthMiddleware):
    """Channels' ``AuthMiddleware`` with the user left to be read by the socket as it opens
    (``PendingUser``). A ``user`` already in the scope (a test's) is kept."""

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> Any:
        scope = dict(scope)
        if "session" not in scope:
            raise ValueError("SocketAuthMiddleware cannot find session in scope. SessionMiddleware must be above it.")
        if "user" not in scope:
            scope["user"] = PendingUser(scope["session"])
        return await self.inner(scope, receive, send)


class SocketSessionMiddleware(SessionMiddleware):
    """Channels' ``SessionMiddleware`` without its wrapper of a socket's ``send``: the wrapper
    saves a changed session when an HTTP response starts, which a socket never sends, and
    looked at the session on every frame the socket sent (every tick). The session, not
    loaded yet, is put in the scope as channels does; HTTP keeps channels' own."""

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> Any:
        if scope["type"] != "websocket" or "session" in scope:
            return await super().__call__(scope, receive, send)
        if "cookies" not in scope:
            raise ValueError("No cookies in scope - SessionMiddleware needs to run inside of CookieMiddleware.")
        scope = dict(scope)
        store = import_module(settings.SESSION_ENGINE).SessionStore
        scope["session"] = store(scope["cookies"].get(settings.SESSION_COOKIE_NAME))
        return await self.inner(scope, receive, send)


def SocketAuthMiddlewareStack(inner: Any) -> Any:
    """Channels' ``AuthMiddlewareStack`` (cookies, session, user) with ``SocketSessionMiddleware``
    and ``SocketAuthMiddleware``."""
    return CookieMiddleware(SocketSessionMiddleware(SocketAuthMiddleware(inner)))


heartbeat = Heartbeat()
"""The beats of this process's open sockets (``GameSocketConsumer._start_beating``)."""


_leases = ProcessBatch(
    "socket leases",
    flush=lambda leases: sync_to_async(socket_leases_renew, thread_sensitive=False)(leases=leases),
    every=lambda: float(settings.FM2_WS["SOCKET_LEASE_SECONDS"]) / 3,
)
"""The leases of this process's open sockets, renewed together every third of their life."""


MAX_FRAME_BYTES = settings.FM2_WS["MAX_FRAME_BYTES"]
MAX_FRAMES_PER_SECOND = settings.FM2_WS["MAX_FRAMES_PER_SECOND"]

# Sent after accepting the socket (a close before accepting reaches real clients as an HTTP
# 403 handshake refusal, without the code), each after an ``error`` frame with the message.
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_YOUR_ROUND = 4403
CLOSE_NO_SUCH_ROUND = 4404
CLOSE_TOO_MANY_SOCKETS = 4429
# RFC 6455 "Try Again Later": Redis (the channel layer, the leases) or the database went away
# under an open socket; the client reconnects after a pause, as after a 503.
CLOSE_SERVICE_UNAVAILABLE = 1013

CLOSE_REASONS = {
    CLOSE_UNAUTHENTICATED: ("not_authenticated", "Log in first."),
    CLOSE_NOT_YOUR_ROUND: ("not_your_round", "This round belongs to another player."),
    CLOSE_NO_SUCH_ROUND: ("not_found", "No such round."),
    CLOSE_TOO_MANY_SOCKETS: ("too_many_sockets", "Too many open round sockets; close one first."),
    CLOSE_SERVICE_UNAVAILABLE: ("service_unavailable", "A service the server needs is down; reconnect shortly."),
}


def _refuse_constant(name: str) -> Any:
    raise FrameError("bad_number", "Numbers must be finite (no NaN or Infinity).")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise FrameError("bad_number", "Numbers must be finite.")
    return value


class FrameError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def claim_field(frame: dict[str, Any], field: str, *, nullable: bool = False, also: str | None = None) -> int | None:
    """The frame's claim index in ``field``, or in ``also``, its other accepted name (``reveal``
    takes ``claim`` and ``vote`` takes ``false_claim``; each takes the other's name too, so a
    client may use one name for both). Both given and different: ``invalid_claim``."""
    if also is not None and also in frame:
        if field in frame and frame[field] != frame[also]:
            raise FrameError("invalid_claim", f"'{field}' and '{also}' name the same claim: give one of them.")
        field = field if field in frame else also
    value = frame.get(field)
    if value is None and nullable and field in frame:
        return None
    if isinstance(value, bool) or value not in (0, 1):
        raise FrameError("invalid_claim", f"'{field}' must be 0 (left) or 1 (right){' or null' if nullable else ''}.")
    return value


class GameSocketConsumer(AsyncWebsocketConsumer):
    """The rules every game socket keeps (rounds, rooms): a service failing under it closes
    it with 1013, a refusal is accepted then closed with its 4xxx code, each open socket holds
    one of the player's leases (``FM2_WS_MAX_SOCKETS_PER_PLAYER``), and every frame passes
    the size, rate and JSON checks before its handler in ``HANDLERS`` sees it.

    A subclass sets ``group`` (its channel-layer group) before joining it, ``label`` for the
    logs, and calls ``_admit`` to take the lease and accept."""

    kind = "game"
    label: Any = "?"
    group: str | None = None
    ticker: asyncio.Task | None = None  # a task the socket's beat started; cancelled when it goes
    leased: bool = False
    CLOSE_REASONS: dict[int, tuple[str, str]] = CLOSE_REASONS
    HANDLERS: dict[str, Callable[..., Any]] = {}

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        """A backing service that fails under the socket (the channel layer's Redis in its
        receive loop, the database in a handler) closes it with 1013 and a
        ``service_unavailable`` frame, logged as one line, instead of an ASGI crash (1011).
        A socket opening while the service is down (joining its group fails before the
        handshake is answered) is accepted first: a close before accepting reaches clients
        as an HTTP 403 refusal, which they do not retry."""
        self._accepted = False
        try:
            await super().__call__(scope, receive, send)
        except SERVICE_DOWN_ERRORS as error:
            logger.warning("%s socket: %s down under %s %s: %s", self.kind, type(error).__module__.split(".")[0], self.kind, self.label, error)
            await self._release()
            code, message = CLOSE_REASONS[CLOSE_SERVICE_UNAVAILABLE]
            try:
                if not self._accepted:
                    await send({"type": "websocket.accept"})
                await send({"type": "websocket.send", "text": json.dumps({"type": "error", "code": code, "message": message})})
                await send({"type": "websocket.close", "code": CLOSE_SERVICE_UNAVAILABLE})
            except OSError:  # the client has gone too
                pass
        except Exception:
            await self._release()  # a crash must not keep the player's socket slot for its lease time
            raise

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch without its ``close_old_connections`` before every message:
        that call goes through the process's one thread-sensitive thread, so every frame and
        every group message to every socket (a room's question and answer, 20 each) queued
        for that one thread first. With 1,000 sockets the queue reached hundreds of
        milliseconds when rooms changed questions, stalling votes and answers alike. The
        consumers touch the database only through ``database_sync_to_async``, which closes
        stale connections itself around each call, in the thread that uses them."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        """Channels' without its ``close_old_connections`` after ``disconnect``: one more hop
        to the thread-sensitive thread per socket, for connections the consumers' own calls
        close themselves (see ``dispatch``)."""
        for group in self.groups:
            await self.channel_layer.group_discard(group, self.channel_name)
        await self.disconnect(message["code"])
        raise StopConsumer()

    async def accept(self, subprotocol: str | None = None, headers: list | None = None) -> None:
        await super().accept(subprotocol, headers)
        self._accepted = True

    async def _admit(self, leased: bool | None = None) -> bool:
        """Take one of the player's socket leases (``leased``: taken already, or refused) and
        accept; refused with 4429 (and out of the group again) when the player already holds
        their share."""
        user = self.scope["user"]
        if leased is None:
            leased = await sync_to_async(socket_lease_take, thread_sensitive=False)(player_id=user.pk, channel=self.channel_name)
        if not leased:
            await self.channel_layer.group_discard(self.group, self.channel_name)
            await self._refuse(CLOSE_TOO_MANY_SOCKETS)
            return False
        self.leased = True
        _leases.add((user.pk, self.channel_name))
        self.frame_times: deque[float] = deque(maxlen=MAX_FRAMES_PER_SECOND)
        metrics.SOCKETS_OPEN.labels(self.kind).inc()
        await self.accept()
        return True

    async def _open(self) -> Mapping[str, Any] | None:
        """The opening of ``connect``, after ``group`` is set: refuse an anonymous socket (one
        whose user is still to be read from its session, in the trip below); join the group *before* reading the state (``_opening_state(user)``), so no change
        committed after the read is missed, while group messages wait until the socket is
        accepted; refuse with the state's code, or over the player's socket limit. The state
        and the lease are read and taken in one trip to a database thread. The state, or None
        when the socket was refused."""
        user = self.scope.get("user")
        pending = isinstance(user, PendingUser)
        if user is None or (not pending and not user.is_authenticated):
            await self._refuse(CLOSE_UNAUTHENTICATED)
            return None
        await self.channel_layer.group_add(self.group, self.channel_name)
        state, refusal, leased = await database_sync_to_async(self._opening)(user)
        if state is None:
            await self.channel_layer.group_discard(self.group, self.channel_name)
            await self._refuse(refusal)
            return None
        if not await self._admit(leased):
            return None
        return state

    def _opening(self, user: Any) -> tuple[Mapping[str, Any] | None, int, bool]:
        """The socket's user read from its session (``PendingUser``: an anonymous one is
        refused), ``_opening_state``, and the player's socket lease when the state admits them."""
        if isinstance(user, PendingUser):
            user = self.scope["user"] = user.read()
            if not user.is_authenticated:
                return None, CLOSE_UNAUTHENTICATED, False
        state, refusal = self._opening_state(user)
        if state is None:
            return None, refusal, False
        return state, refusal, socket_lease_take(player_id=user.pk, channel=self.channel_name)

    def _opening_state(self, user: Any) -> tuple[Mapping[str, Any] | None, int]:
        raise NotImplementedError

    async def _refuse(self, code: int) -> None:
        """Accept, say why, and close with the documented code, so real clients see it."""
        await self.accept()
        await self.send_error(*self.CLOSE_REASONS[code])
        await self.close(code=code)

    async def disconnect(self, code: int) -> None:
        await self._release()

    async def _release(self) -> None:
        """Stop the ticker, leave the group, give the lease back; with Redis down the group
        membership expires (CHANNEL_GROUP_EXPIRY) and the lease runs out by itself."""
        if self.ticker is not None:
            self.ticker.cancel()
            self.ticker = None
        heartbeat.discard(self)
        leased, self.leased = self.leased, False
        if leased:  # no longer renewed, whatever happens below
            _leases.discard((self.scope["user"].pk, self.channel_name))
            metrics.SOCKETS_OPEN.labels(self.kind).dec()
        try:
            if hasattr(self, "frame_times"):
                del self.frame_times
                await self.channel_layer.group_discard(self.group, self.channel_name)
            if leased:
                await sync_to_async(socket_lease_drop, thread_sensitive=False)(player_id=self.scope["user"].pk, channel=self.channel_name)
        except SERVICE_DOWN_ERRORS as error:
            logger.warning("%s socket: could not leave %s %s cleanly: %s", self.kind, self.kind, self.label, error)

    def _start_beating(self, beat: Callable[[], None]) -> None:
        """Have ``beat`` called once a second (``heartbeat``) until the socket is released:
        a subclass's clock without a task of its own; ``beating`` says it runs."""
        heartbeat.add(self, beat)

    @property
    def beating(self) -> bool:
        return self in heartbeat

    # --- frames from the client -------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if not hasattr(self, "frame_times"):  # refused: the socket is closing
            return
        now = time.monotonic()
        if len(self.frame_times) == MAX_FRAMES_PER_SECOND and now - self.frame_times[0] < 1.0:
            await self.send_error("rate_limited", f"At most {MAX_FRAMES_PER_SECOND} frames a second; this one was ignored.")
            return
        self.frame_times.append(now)
        # Each frame is a request of its own in the logs (LOG_FORMAT=json): its id and the user.
        logcontext.request_id.set(logcontext.new_request_id())
        logcontext.user_pseudonym.set(logcontext.pseudonym(self.scope["user"].pk))
        frame_name, outcome = "unknown", "ok"
        try:
            frame = self._parse(text_data, bytes_data)
            frame_type = frame.get("type")
            handler = self.HANDLERS.get(frame_type) if isinstance(frame_type, str) else None
            if handler is None:
                raise FrameError("unknown_type", "type must be one of: " + ", ".join(self.HANDLERS) + ".")
            frame_name = frame_type
            await handler(self, frame)
        except FrameError as error:
            outcome = "refused"
            await self.send_error(error.code, error.message)
        except ServiceError as error:
            outcome = "refused"
            await self.send_error(error.code, error.message)
        except SERVICE_DOWN_ERRORS as error:  # the socket stays; the frame may be sent again
            outcome = "failed"
            logger.warning("%s socket: frame of %s %s failed, a service is down: %s", self.kind, self.kind, self.label, error)
            await self.send_error(*CLOSE_REASONS[CLOSE_SERVICE_UNAVAILABLE])
        except Exception:
            outcome = "failed"
            # Whatever went wrong, the socket stays usable and the failure is not silent.
            logger.exception("%s socket: frame failed (%s %s)", self.kind, self.kind, self.label)
            await self.send_error("server_error", "The server could not handle this frame.")
        finally:
            metrics.SOCKET_FRAMES.labels(self.kind, frame_name, outcome).observe(time.monotonic() - now)

    @staticmethod
    def _parse(text_data: str | None, bytes_data: bytes | None) -> dict[str, Any]:
        if text_data is None:
            raise FrameError("text_only", "Send JSON text frames.")
        if len(text_data.encode("utf-8")) > MAX_FRAME_BYTES:
            raise FrameError("frame_too_large", f"A frame holds at most {MAX_FRAME_BYTES} bytes.")
        if json_too_deep(text_data):  # before json.loads recurses (foolgame.core.parsers)
            raise FrameError(TOO_DEEP, too_deep_message(max_json_depth()))
        try:
            frame = json.loads(text_data, parse_constant=_refuse_constant, parse_float=_finite_float)
        except FrameError:
            raise
        except RecursionError:
            raise FrameError("too_deep", "A frame's JSON is nested too deeply.") from None
        except ValueError:  # bad JSON, or an integer past Python's digit limit
            raise FrameError("bad_json", "A frame must be a JSON object.") from None
        if not isinstance(frame, dict):
            raise FrameError("bad_json", "A frame must be a JSON object.")
        return frame

    # --- frames to the client -----------------------------------------------------------------

    async def send_frame(self, frame_type: str, payload: Mapping[str, Any]) -> None:
        """``payload``: one of the app's typed frame shapes (its ``payloads`` module's TypedDicts)."""
        try:
            await self.send(text_data=json.dumps({"type": frame_type, **payload}))
        except OSError:  # uvicorn's ClientDisconnected: the client left mid-frame, nothing to tell
            logger.debug("%s socket: client of %s %s left before a %s frame", self.kind, self.kind, self.label, frame_type)

    async def send_error(self, code: str, message: str) -> None:
        await self.send_frame("error", {"code": code, "message": message})  # payloads.ErrorFrame
