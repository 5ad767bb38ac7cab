"""The room's WebSocket, one per member: transport only, under the round socket's rules
(origin, frame size and rate, leases, error frames and close codes: ``GameSocketConsumer``).

The services broadcast to the room's group (any web process, through the Redis layer): a
question reaches every member's socket in one message that names each member's round, so
starting a question costs no query per socket. Each socket then plays its own player's round
with the round services and ticks its clock from the deadline it holds; the database stays the
only clock: every action re-checks the time under the round's row lock, and a question ends
when the database says so (``room_question_finish``, which any socket may call at the
deadline: the first one ends it, the others find it done).
"""

from __future__ import annotations

import asyncio
import logging
import random
import weakref
from datetime import datetime, timezone
from collections.abc import Mapping
from typing import Any

from django.conf import settings

from foolgame.core.errors import ServiceError
from foolgame.rooms import services
from foolgame.rooms.events import room_group, votes_message
from foolgame.core import clock
from foolgame.voting import payloads
from foolgame.voting import services as rounds
from foolgame.core.sockets import (
    CLOSE_NO_SUCH_ROUND,
    CLOSE_NOT_YOUR_ROUND,
    FrameError,
    GameSocketConsumer,
    ProcessBatch,
    claim_field,
    database_sync_to_async,
    run_eagerly,
)
from foolgame.rooms.payloads import EndedFrame, MembersFrame, QuestionFrame, RoomState, Score, VotedFrame, VotesCount, VotesFrame
from foolgame.voting.models import Round

logger = logging.getLogger(__name__)

# The round socket's codes, read for a room: 4403 a player who has not joined, 4404 no room.
CLOSE_NOT_A_MEMBER = CLOSE_NOT_YOUR_ROUND
CLOSE_NO_SUCH_ROOM = CLOSE_NO_SUCH_ROUND
CLOSE_ROOM_ENDED = 1000


_presence = ProcessBatch(
    "room presence",
    flush=lambda member_ids: database_sync_to_async(services.room_members_seen)(member_ids=member_ids),
    every=lambda: float(settings.FM2_ROOMS["SEEN_EVERY_SECONDS"]),
)
"""The members whose room sockets this process holds open, marked seen in one UPDATE every
SEEN_EVERY_SECONDS for all of them (not one write per socket: 1,000 sockets would cost 100
writes a second)."""


class _VotesCounts:
    """The room's ``votes`` messages after the votes cast on this process's sockets: at most
    one per question each MEMBERS_FRAME_SECONDS, the first at once and then the latest count
    at the end of each interval (a count of the votes of other processes too: it is read from
    the database). Every socket sends its own frame at most that often anyway, so a message a
    vote (20 votes of a room: 20 messages through Redis, each handed to its 20 sockets) only
    cost the process work its sockets then threw away. Counts sent by two processes may cross:
    the sockets keep the larger one. Kept per event loop, on that loop."""

    def __init__(self) -> None:
        self.loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, list[VotesCount | None]]] = weakref.WeakKeyDictionary()
        self.sending: set[asyncio.Task] = set()

    def offer(self, layer: Any, counted: VotesCount) -> None:
        loop = asyncio.get_running_loop()
        questions = self.loops.setdefault(loop, {})
        waiting = questions.get(counted["question_id"])
        if waiting is None:  # nothing sent for this question within the interval: now
            questions[counted["question_id"]] = [None]
            self._send(layer, counted)
            loop.call_later(float(settings.FM2_ROOMS["MEMBERS_FRAME_SECONDS"]), self._due, layer, questions, counted["question_id"])
        elif waiting[0] is None or waiting[0]["votes"] < counted["votes"]:
            waiting[0] = counted

    def _due(self, layer: Any, questions: dict[int, list[VotesCount | None]], question_id: int) -> None:
        counted = questions[question_id][0]
        if counted is None:
            del questions[question_id]
            return
        questions[question_id][0] = None
        self._send(layer, counted)
        asyncio.get_running_loop().call_later(float(settings.FM2_ROOMS["MEMBERS_FRAME_SECONDS"]), self._due, layer, questions, question_id)

    def _send(self, layer: Any, counted: VotesCount) -> None:
        message = votes_message(question_id=counted["question_id"], votes=counted["votes"], players=counted["players"])
        task = asyncio.ensure_future(layer.group_send(room_group(counted["code"]), message))
        self.sending.add(task)
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task) -> None:
        self.sending.discard(task)
        if not task.cancelled() and task.exception() is not None:  # the next count, or the answer, follows
            logger.warning("room socket: a votes count was not sent: %s", task.exception())


_votes_counts = _VotesCounts()


class RoomConsumer(GameSocketConsumer):
    kind = "room"
    CLOSE_REASONS = {
        **GameSocketConsumer.CLOSE_REASONS,
        CLOSE_NOT_A_MEMBER: ("not_a_member", "Join the room first (POST /api/rooms/<code>/join)."),
        CLOSE_NO_SUCH_ROOM: ("not_found", "No room has this code."),
    }
    code: str
    question_id: int | None = None
    question_number: int = 0
    question_deadline: datetime | None = None
    round_id: int | None = None  # the player's own round of the current question
    played: int = 0  # the number of the last question this player was dealt
    deadline: datetime | None = None
    status: str | None = None
    timeout_sent: bool = False
    finishing: bool = False
    admitted: bool = False
    hosting: bool = False  # the host of a room they do not play: the claims and every answer, no round
    room_id: int | None = None
    member_id: int | None = None
    members_board: list[Score] | None = None  # the latest board of a members message not sent yet
    members_task: asyncio.Task | None = None
    members_sent_at: float = float("-inf")  # the loop's time of the last members frame
    votes_pending: VotesFrame | None = None  # the latest votes count not sent yet
    votes_task: asyncio.Task | None = None
    votes_sent_at: float = float("-inf")
    votes_sent: int = 0  # the count of the last votes frame, for the current question
    answer_later: tuple[datetime, dict[str, Any]] | None = None  # a question given up: its answer, due at its deadline

    async def connect(self) -> None:
        self.code = self.label = str(self.scope["url_route"]["kwargs"]["code"]).upper()
        self.group = room_group(self.code)
        # Group messages are ignored until the socket is accepted: see _live.
        state = await self._open()
        if state is None:
            return
        self.admitted = True
        _presence.add(self.member_id)
        self._remember(state)
        await self.send_frame("room", state)
        if state["state"] == "ended":
            await self.close(code=CLOSE_ROOM_ENDED)
            return
        self._start_beating(self._beat)

    def _opening_state(self, user: Any) -> tuple[RoomState | None, int]:
        try:
            state, room_id, self.member_id = services.room_socket_state(code=self.code, player=user)
        except ServiceError:
            return None, CLOSE_NO_SUCH_ROOM
        self.room_id = room_id if self.member_id is not None else None
        self.hosting = state["is_host"] and not state["host_plays"]
        return (state, 0) if state["member"] else (None, CLOSE_NOT_A_MEMBER)

    async def disconnect(self, code: int) -> None:
        for task in (self.members_task, self.votes_task):
            if task is not None:
                task.cancel()
        if self.admitted:
            self._forget()
        if self.member_id is not None and self.member_id not in _presence and self.leased:
            try:  # absent at once: the next question is not dealt to a closed socket
                await database_sync_to_async(services.room_member_seen)(room_id=self.room_id, player_id=self.scope["user"].pk, present=False)
            except Exception:  # presence then simply runs out (PRESENT_SECONDS)
                logger.warning("room socket: could not mark %s away in room %s", self.scope["user"].pk, self.code)
        await self._release()

    def _forget(self) -> None:
        """No longer counted present by this process."""
        if self.admitted:
            self.admitted = False
            _presence.discard(self.member_id)

    def _remember(self, state: Mapping[str, Any]) -> None:
        """Keep the question's clock and the player's own round from a state just read."""
        question = state.get("question")
        self.question_id = question["id"] if question else None
        self.question_number = question["number"] if question else 0
        playing = question is not None and question["status"] == "playing"
        self.question_deadline = datetime.fromisoformat(question["deadline"]) if playing else None
        own = question["round"] if question else None
        self.round_id = own["id"] if own else None
        self.played = self.question_number if own else self.played
        self.status = own["status"] if own else None
        self.deadline = datetime.fromisoformat(own["deadline"]) if own and own.get("deadline") and playing else None
        self.timeout_sent = bool(own and own["status"] == Round.State.TIMED_OUT)

    # --- frames from the client -------------------------------------------------------

    async def on_state(self, frame: dict[str, Any]) -> None:
        state = await database_sync_to_async(services.room_state)(code=self.code, player=self.scope["user"])
        self._remember(state)
        await self.send_frame("room", state)

    async def on_start(self, frame: dict[str, Any]) -> None:
        """The answer is the ``question`` frame every socket of the room gets (this one too)."""
        await database_sync_to_async(services.room_next_question)(code=self.code, player=self.scope["user"])

    def _own_round(self) -> int:
        if self.round_id is None or self.question_deadline is None:
            raise FrameError("not_playing", "You have no round in this question: you play from the next one.")
        return self.round_id

    async def on_reveal(self, frame: dict[str, Any]) -> None:
        claim = claim_field(frame, "claim", also="false_claim")
        result = await database_sync_to_async(rounds.round_reveal_clue)(round_id=self._own_round(), player=self.scope["user"], claim_index=claim)
        self.deadline = datetime.fromisoformat(result["deadline"])
        await self.send_frame("clue", result)

    async def on_vote(self, frame: dict[str, Any]) -> None:
        """The ack says the vote is in, not whether it was right: the answer is for
        everyone at once, when the question is over. The vote, then the question's finish
        when that was the last vote it waited for (``room_question_finish``: one query when
        it was not), are one trip to a database thread; the ack is handed to the loop as soon
        as the vote is in (no second wait for a thread before the room's answer), so the
        vote's ``round_settled`` is left to this call (``services.rounds_settled_here``), which
        asks ``room_question_voted`` after the ack. The room's count of votes then goes out
        through ``_votes_counts``."""
        false_claim = claim_field(frame, "false_claim", also="claim")
        round_id, question_id, player = self._own_round(), self.question_id, self.scope["user"]
        loop = asyncio.get_running_loop()

        def vote_then_finish() -> VotesCount | None:
            with services.rounds_settled_here():  # the ack first, then the question (below)
                result = rounds.vote_cast(round_id=round_id, player=player, false_claim=false_claim)
            asyncio.run_coroutine_threadsafe(self._voted(result), loop)
            try:
                return services.room_question_voted(question_id=question_id)[1]
            except Exception:  # the vote stands; the deadline, the task or the sweep ends the question
                logger.exception("room socket: question %s not finished after a vote", question_id)
                return None

        counted = await database_sync_to_async(vote_then_finish)()
        if counted is not None:
            _votes_counts.offer(self.channel_layer, counted)

    async def _voted(self, result: Mapping[str, Any]) -> None:
        self.status = Round.State.VOTED
        await self.send_frame("voted", VotedFrame(remaining=result["remaining"]))

    async def on_end_question(self, frame: dict[str, Any]) -> None:
        """The host ends the question now; the answer is the ``answer`` frame every socket gets."""
        await database_sync_to_async(services.room_question_end)(code=self.code, player=self.scope["user"])

    async def on_skip_question(self, frame: dict[str, Any]) -> None:
        """The host skips the question: it ends now and its votes count for nothing (``answer``, ``skipped``)."""
        await database_sync_to_async(services.room_question_end)(code=self.code, player=self.scope["user"], skip=True)

    async def on_leave(self, frame: dict[str, Any]) -> None:
        await database_sync_to_async(services.room_leave)(code=self.code, player=self.scope["user"])
        await self.send_frame("ok", payloads.OkFrame({"for": "leave"}))
        self._forget()  # left already: nothing to mark on the way out
        await self.close(code=1000)

    HANDLERS = {
        "state": on_state,
        "start": on_start,
        "reveal": on_reveal,
        "vote": on_vote,
        "leave": on_leave,
        "end_question": on_end_question,
        "skip_question": on_skip_question,
    }

    # --- the room's group -------------------------------------------------------------

    def _live(self) -> bool:
        return self.beating  # accepted and ticking: group messages apply

    def _gave_up(self, event: dict[str, Any]) -> bool:
        """Did this socket's member give up a question whose deadline is ahead? Then the
        message's answer and board are not theirs yet: they read their own view (docs/rules.md:
        giving up is never a faster way to an answer than waiting)."""
        return str(self.scope["user"].pk) in event.get("withheld", ())

    async def room_question(self, event: dict[str, Any]) -> None:
        if not self._live():
            return
        self.question_id, self.question_number = event["question_id"], event["number"]
        self.question_deadline = datetime.fromtimestamp(event["deadline"], tz=timezone.utc)
        self.round_id = event["rounds"].get(str(self.scope["user"].pk))
        self.played = self.question_number if self.round_id else self.played
        self.status = Round.State.PLAYING if self.round_id else None
        self.deadline = self.question_deadline if self.round_id else None
        self.timeout_sent = self.finishing = False
        self.votes_pending, self.votes_sent = None, 0
        remaining = max((self.question_deadline - clock.now()).total_seconds(), 0.0)
        watching = self.round_id is None and not self.hosting
        await self.send_frame(
            "question",
            QuestionFrame(
                {
                    "id": self.question_id,
                    "number": self.question_number,
                    "questions": event["questions"],
                    "started_at": event["started_at"],
                    "deadline": self.question_deadline.isoformat(),
                    "remaining": round(remaining, 2),
                    "points": None if self.round_id is None else payloads.round_points(remaining),
                    "round": self.round_id,
                    "watching": watching,
                    "hosting": self.hosting,
                    "claims": None if watching else event["claims"],
                    "clues_left": None if self.round_id is None else event["clues_left"],
                    "clue_cost": settings.FM2["CLUE_COST_SECONDS"],
                    "players": event.get("players", len(event["rounds"])),
                }
            ),
        )

    async def room_answer(self, event: dict[str, Any]) -> None:
        if not self._live():
            return
        answer = {k: v for k, v in event.items() if k not in ("type", "withheld", "deadline")}
        if self.played != event["number"] and not self.hosting:  # a watcher was not dealt this pair: its answer stays unseen
            answer = {k: answer[k] for k in services.WATCHER_ANSWER_KEYS if k in answer}
        if self._gave_up(event):  # nothing of a question given up before its deadline
            full = answer
            answer = await database_sync_to_async(services.room_answer_for)(question_id=event["question_id"], player_id=self.scope["user"].pk, answer=full)
            if not self._live():
                return
            if "false_claim" in full and "false_claim" not in answer and "deadline" in event:
                self.answer_later = (datetime.fromtimestamp(event["deadline"], tz=timezone.utc), full)
        if event["question_id"] == self.question_id:
            if self._ran_out(clock.now()):
                # Another socket's beat ended the question before this one's saw the member's
                # clock run out: its ``timeout`` still comes first, as on its own beat.
                await self._send_timeout()
            self.question_deadline = self.deadline = None
            self.round_id, self.status = None, None
        self._members_superseded()
        self.votes_pending = None
        await self.send_frame("answer", answer)

    async def room_members(self, event: dict[str, Any]) -> None:
        """At most one members frame per MEMBERS_FRAME_SECONDS, carrying the latest board:
        a burst of joins and leaves costs each socket one frame now and one at the end of
        the burst, not one per join."""
        if not self._live():
            return
        board = event["scoreboard"]
        if self._gave_up(event):
            board = await database_sync_to_async(services.room_board_for)(room_id=self.room_id, player_id=self.scope["user"].pk, scoreboard=board)
            if not self._live():
                return
        self.members_board = board
        if self.members_task is None:
            self.members_task = asyncio.create_task(self._send_members())

    async def _send_members(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.members_board is not None:
                wait = self.members_sent_at + float(settings.FM2_ROOMS["MEMBERS_FRAME_SECONDS"]) - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                    continue
                board, self.members_board = self.members_board, None
                if board is not None:
                    self.members_sent_at = loop.time()
                    await self.send_frame("members", MembersFrame(scoreboard=board))
        finally:
            self.members_task = None

    async def room_votes(self, event: dict[str, Any]) -> None:
        """How many have voted on the question playing, at most one frame per
        MEMBERS_FRAME_SECONDS (a burst of votes comes as one frame with the latest count;
        counts sent by two processes may cross: the larger one stands)."""
        if not self._live() or event["question_id"] != self.question_id or self.question_deadline is None:
            return
        pending = self.votes_pending
        if pending is None or pending["question_id"] != event["question_id"] or pending["votes"] <= event["votes"]:
            self.votes_pending = VotesFrame(question_id=event["question_id"], votes=event["votes"], players=event["players"])
        if self.votes_task is None:
            self.votes_task = asyncio.create_task(self._send_votes())

    async def _send_votes(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.votes_pending is not None:
                wait = self.votes_sent_at + float(settings.FM2_ROOMS["MEMBERS_FRAME_SECONDS"]) - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                    continue
                frame, self.votes_pending = self.votes_pending, None
                if frame is not None and frame["question_id"] == self.question_id and frame["votes"] > self.votes_sent:
                    self.votes_sent_at, self.votes_sent = loop.time(), frame["votes"]
                    await self.send_frame("votes", frame)
        finally:
            self.votes_task = None

    def _members_superseded(self) -> None:
        """An answer or the end carries a board read after any members message before it."""
        self.members_board = None

    async def room_ended(self, event: dict[str, Any]) -> None:
        if not self._live():
            return
        self._members_superseded()
        board, winners = event["scoreboard"], event.get("winners", [])
        if self._gave_up(event):
            board, winners = await database_sync_to_async(services.room_end_for)(
                room_id=self.room_id, player_id=self.scope["user"].pk, scoreboard=board, winners=winners
            )
            if not self._live():
                return
        await self.send_frame("ended", EndedFrame(reason=event["reason"], scoreboard=board, winners=winners))
        self._forget()
        await self.close(code=CLOSE_ROOM_ENDED)

    # --- the clock ------------------------------------------------------------------------

    def _beat(self) -> None:
        """The socket's beat, once a second (``heartbeat``): the player's own round's ``tick``
        goes out at once (``run_eagerly``: a task only while the client's buffer is full).
        What must wait (an answer due at its deadline, the round's timeout, the question's
        finish) runs in one task at a time (``_due``, kept as ``ticker``: cancelled when the
        socket goes); a beat that finds it still running leaves it be. Every socket of a
        room ran a task of its own that woke each second, for more CPU than its ticks."""
        now = clock.now()
        due = self.answer_later is not None and now >= self.answer_later[0]
        if self.question_deadline is not None:
            if self.status == Round.State.PLAYING and self.deadline is not None:
                remaining = (self.deadline - now).total_seconds()
                if remaining > 0:
                    run_eagerly(self.send_frame("tick", payloads.ClockFrame(remaining=round(remaining, 2), points=payloads.round_points(remaining))))
                else:
                    due = True
            due = due or (now >= self.question_deadline and not self.finishing)
        if due and (self.ticker is None or self.ticker.done()):
            self.ticker = asyncio.ensure_future(self._due())

    async def _due(self) -> None:
        """What the beat found due and must wait for, in the order the room needs it: a
        given-up question's answer, the player's round timed out, then the question finished
        when its deadline has passed."""
        try:
            if self.answer_later is not None and clock.now() >= self.answer_later[0]:
                await self._answer_at_deadline(self.answer_later[1])
            if self.question_deadline is None:
                return
            now = clock.now()
            await self._own_clock(now)
            if now >= self.question_deadline and not self.finishing:
                self.finishing = True
                await asyncio.sleep(random.random() * 0.2)  # the room's sockets need not all ask at once
                await database_sync_to_async(services.room_question_finish)(question_id=self.question_id)
        except asyncio.CancelledError:
            pass
        except Exception:  # a service down: the next beat tries again (the deadline task and the sweep end the question)
            logger.warning("room socket: what was due in room %s was not done", self.code, exc_info=True)

    async def _answer_at_deadline(self, answer: dict[str, Any]) -> None:
        """The answer of a question this member gave up, at its deadline, as waiting would
        have shown it: unless a newer question plays (then ``state`` shows it)."""
        self.answer_later = None
        if self.question_id != answer["question_id"]:
            return
        answer = await database_sync_to_async(services.room_answer_for)(question_id=answer["question_id"], player_id=self.scope["user"].pk, answer=answer)
        if self._live() and self.question_id == answer["question_id"]:
            await self.send_frame("answer", answer)

    async def _own_clock(self, now: datetime) -> None:
        """Time the player's own round out through the round services when it has run out
        (its deadline moves earlier with each clue; ``_beat`` sends its ticks)."""
        if not self._ran_out(now):
            return
        await database_sync_to_async(rounds.round_expire)(round_id=self.round_id)
        self.status = Round.State.TIMED_OUT
        await self._send_timeout()

    def _ran_out(self, now: datetime) -> bool:
        """The player's own round still says playing, and its clock has run out."""
        return self.status == Round.State.PLAYING and self.deadline is not None and now >= self.deadline

    async def _send_timeout(self) -> None:
        """The ``timeout`` frame, once per round."""
        if not self.timeout_sent:
            self.timeout_sent = True
            await self.send_frame("timeout", payloads.ClockFrame(remaining=0, points=0))
