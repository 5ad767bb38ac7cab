"""The round's WebSocket: frames, ticks from the server clock, reconnects, bad frames."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from foolgame.asgi import application
from foolgame.routing import websocket_urlpatterns
from foolgame.voting import services
from foolgame.voting.models import ClueReveal, Round, Vote
from tests.waiting import wait_for_async

pytestmark = [pytest.mark.django_db(transaction=True)]

router = URLRouter(websocket_urlpatterns)


async def connect(round_id: int, user) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(router, f"/ws/rounds/{round_id}/")
    communicator.scope["user"] = user
    connected, code = await communicator.connect()
    assert connected, code
    return communicator


async def frame(communicator: WebsocketCommunicator, *types: str, timeout: float = 3) -> dict:
    """The next frame of one of ``types``, skipping ticks unless asked for."""
    while True:
        message = json.loads(await communicator.receive_from(timeout=timeout))
        if message["type"] in types:
            return message
        assert message["type"] == "tick", message


@pytest.fixture
def dealt(game):
    return services.round_create(player=game.voter)


async def test_round_played_over_the_socket(game, dealt, fake_clock) -> None:
    ws = await connect(dealt.pk, game.voter)
    assert await ws.receive_nothing(timeout=0.3), "nothing is sent before start"
    await ws.send_json_to({"type": "start"})
    state = await frame(ws, "state")
    assert state["remaining"] == 180 and {c["text"] for c in state["claims"]} == {game.true_claim.text, game.false_claim.text}
    await ws.send_json_to({"type": "reveal", "claim": 0})
    clue = await frame(ws, "clue")
    assert clue["remaining"] == 170 and clue["clue"]["position"] == 0
    fake_clock.advance(30)
    tick = await frame(ws, "tick", timeout=2)
    assert tick["remaining"] == 140 and tick["points"] == 120
    round_ = await database_sync_to_async(Round.objects.select_related("left_claim").get)(pk=dealt.pk)
    await ws.send_json_to({"type": "vote", "false_claim": round_.false_index})
    result = await frame(ws, "result")
    assert result["correct"] is True and result["points"] == 120
    await ws.send_json_to({"type": "like", "claim": None})
    assert (await frame(ws, "ok"))["for"] == "like"
    await ws.disconnect()


async def test_a_solo_rounds_vote_has_no_group_to_settle(game, dealt, fake_clock, monkeypatch) -> None:
    """``round_settled`` (a room's question may be over) is for rounds played in a group: a
    solo round's vote sends it to nobody, so no query asks which room the round is in. (A
    room round's vote over this socket ends the question: tests/rooms/test_consumers.py.)"""
    from foolgame.core import hooks

    settled = []
    monkeypatch.setattr(hooks.round_settled, "send", lambda **kwargs: settled.append(kwargs) or [])
    ws = await connect(dealt.pk, game.voter)
    try:
        await ws.send_json_to({"type": "start"})
        await frame(ws, "state")
        round_ = await database_sync_to_async(Round.objects.select_related("left_claim").get)(pk=dealt.pk)
        await ws.send_json_to({"type": "vote", "false_claim": round_.false_index})
        assert (await frame(ws, "result"))["correct"] is True
        assert settled == []
    finally:
        await ws.disconnect()


async def test_timeout_frame_when_the_server_clock_runs_out(game, dealt, fake_clock) -> None:
    ws = await connect(dealt.pk, game.voter)
    await ws.send_json_to({"type": "start"})
    await frame(ws, "state")
    fake_clock.advance(181)
    assert (await frame(ws, "timeout", timeout=3))["remaining"] == 0
    assert await database_sync_to_async(lambda: Round.objects.get(pk=dealt.pk).state)() == "timeout"
    await ws.send_json_to({"type": "vote", "false_claim": 0})
    error = await frame(ws, "error")
    assert error["code"] == "round_over"
    await ws.disconnect()


async def test_reconnect_gets_the_true_remaining_time_and_bought_clues(game, dealt, fake_clock) -> None:
    ws = await connect(dealt.pk, game.voter)
    await ws.send_json_to({"type": "start"})
    await frame(ws, "state")
    await ws.send_json_to({"type": "reveal", "claim": 1})
    bought = (await frame(ws, "clue"))["clue"]
    await ws.disconnect()
    fake_clock.advance(50)
    again = await connect(dealt.pk, game.voter)
    state = await frame(again, "state")
    assert state["remaining"] == 180 - 50 - 10
    assert state["clues"] == [[], [bought]]
    await again.disconnect()


async def test_rest_reveal_reaches_the_socket_clock(game, dealt, fake_clock) -> None:
    """A round may mix REST and the socket: a REST reveal moves the socket's ticks too."""
    ws = await connect(dealt.pk, game.voter)
    await ws.send_json_to({"type": "start"})
    await frame(ws, "state")
    await database_sync_to_async(services.round_reveal_clue)(round_id=dealt.pk, player=game.voter, claim_index=0)
    await database_sync_to_async(services.round_reveal_clue)(round_id=dealt.pk, player=game.voter, claim_index=1)
    # The reveals reach the socket as ``round.changed`` messages, after their commits: with
    # Redis through the publisher thread, so a tick may come first, from the deadline the
    # socket held then (the clock stands still: 180 or 170). Wait for the one that shows both.
    seen = []
    while not seen or seen[-1] != 160:
        seen.append((await frame(ws, "tick", timeout=3))["remaining"])
        assert set(seen) <= {180, 170, 160} and len(seen) <= 5, seen
    await ws.disconnect()


@pytest.mark.parametrize(
    "raw, code",
    [
        ("not json", "bad_json"),
        ('["start"]', "bad_json"),
        ('{"type": "dance"}', "unknown_type"),
        ('{"type": "reveal", "claim": 7}', "invalid_claim"),
        ('{"type": "vote", "false_claim": "left"}', "invalid_claim"),
        ('{"type": "report", "claim": 0, "reason": "boring"}', "invalid_reason"),
        ('{"type": "vote", "false_claim": 0, "pad": "' + "x" * 5000 + '"}', "frame_too_large"),
    ],
)
async def test_bad_frames_get_an_error_frame_and_change_nothing(game, dealt, fake_clock, raw: str, code: str) -> None:
    ws = await connect(dealt.pk, game.voter)
    await ws.send_json_to({"type": "start"})
    await frame(ws, "state")
    await ws.send_to(text_data=raw)
    error = await frame(ws, "error")
    assert error["code"] == code and error["message"]
    counts = await database_sync_to_async(lambda: (Vote.objects.count(), ClueReveal.objects.count(), Round.objects.get(pk=dealt.pk).state))()
    assert counts == (0, 0, "playing")
    await ws.disconnect()


async def test_flood_of_frames_is_rate_limited(game, dealt, fake_clock) -> None:
    ws = await connect(dealt.pk, game.voter)
    for _ in range(12):
        await ws.send_json_to({"type": "state"})
    frames = [json.loads(await ws.receive_from(timeout=3)) for _ in range(12)]
    assert [f["type"] for f in frames if f["type"] != "tick"].count("error") >= 1
    assert any(f.get("code") == "rate_limited" for f in frames)
    await ws.disconnect()


async def refusal(round_id: int, user) -> tuple[str, int]:
    """A refused socket is accepted, told why in an error frame, then closed with the code."""
    communicator = WebsocketCommunicator(router, f"/ws/rounds/{round_id}/")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    error = json.loads(await communicator.receive_from(timeout=3))
    closed = await communicator.receive_output(timeout=3)
    assert error["type"] == "error" and error["message"] and closed["type"] == "websocket.close"
    return error["code"], closed["code"]


async def test_only_the_rounds_player_may_connect(game, dealt) -> None:
    from django.contrib.auth.models import AnonymousUser

    assert await refusal(dealt.pk, game.true_author) == ("not_your_round", 4403)
    assert await refusal(dealt.pk, AnonymousUser()) == ("not_authenticated", 4401)
    assert await refusal(999999, game.voter) == ("not_found", 4404)


async def test_socket_from_a_foreign_origin_is_refused(game, dealt) -> None:
    communicator = WebsocketCommunicator(application, f"/ws/rounds/{dealt.pk}/", headers=[(b"origin", b"https://evil.example"), (b"host", b"localhost")])
    connected, _ = await communicator.connect()
    assert not connected


def session_cookie(user) -> bytes:
    from django.conf import settings
    from django.test import Client

    client = Client()
    if user is not None:
        client.force_login(user)
    else:
        client.get("/")  # an anonymous visitor's session, if any
    session = client.cookies.get(settings.SESSION_COOKIE_NAME)
    return f"{settings.SESSION_COOKIE_NAME}={session.value if session else 'none'}".encode()


async def through_the_stack(round_id: int, cookie: bytes) -> WebsocketCommunicator:
    """A socket through the whole ASGI stack (origin check, cookies, session, user)."""
    return WebsocketCommunicator(application, f"/ws/rounds/{round_id}/", headers=[(b"origin", b"http://localhost"), (b"host", b"localhost"), (b"cookie", cookie)])


async def test_the_sockets_user_is_read_in_its_opening_trip_to_the_database(game, dealt, monkeypatch) -> None:
    """A logged-in socket's user comes from its session in the same hop to a database thread
    as the round's opening state: one hop to open a socket, not one for the user and one for
    the round. An anonymous one is still refused with 4401."""
    from channels.db import DatabaseSyncToAsync

    hops = []
    handler = DatabaseSyncToAsync.thread_handler
    monkeypatch.setattr(DatabaseSyncToAsync, "thread_handler", lambda self, *a, **k: hops.append(self.func) or handler(self, *a, **k))
    ws = await through_the_stack(dealt.pk, await database_sync_to_async(session_cookie)(game.voter))
    hops.clear()
    try:
        connected, _ = await ws.connect()
        assert connected
        assert len(hops) == 1, hops
        await ws.send_json_to({"type": "start"})
        assert (await frame(ws, "state"))["status"] == Round.State.PLAYING
    finally:
        await ws.disconnect()
    for user, expected in ((None, ("not_authenticated", 4401)), (game.true_author, ("not_your_round", 4403))):
        ws = await through_the_stack(dealt.pk, await database_sync_to_async(session_cookie)(user))
        try:
            connected, _ = await ws.connect()
            assert connected
            error = json.loads(await ws.receive_from(timeout=3))
            closed = await ws.receive_output(timeout=3)
            assert (error["code"], closed["code"]) == expected
        finally:
            await ws.disconnect()


async def test_a_sockets_user_is_read_without_compiling_its_query_and_a_stale_session_is_refused(game, dealt, monkeypatch) -> None:
    """The socket's user comes from its session with the SQL compiled once: after the first
    socket the user query only runs. The session's checks hold as Django's: a session from
    before a password change, or of a deactivated account, opens as nobody (4401)."""
    from django.contrib.auth import get_user_model
    from django.db.models.sql.compiler import SQLCompiler

    cookie = await database_sync_to_async(session_cookie)(game.voter)
    ws = await through_the_stack(dealt.pk, cookie)
    assert (await ws.connect())[0]
    await ws.disconnect()
    compiled = []
    as_sql = SQLCompiler.as_sql
    monkeypatch.setattr(SQLCompiler, "as_sql", lambda self, *a, **k: compiled.append(self.query.model) or as_sql(self, *a, **k))
    ws = await through_the_stack(dealt.pk, cookie)
    try:
        assert (await ws.connect())[0]
        await ws.send_json_to({"type": "start"})
        assert (await frame(ws, "state"))["status"] == Round.State.PLAYING  # it is the voter's socket
        assert get_user_model() not in compiled
    finally:
        await ws.disconnect()

    def change(**fields) -> None:
        user = get_user_model().objects.get(pk=game.voter.pk)
        for name, value in fields.items():
            setattr(user, name, value)
        user.save()

    for fields in ({"password": "changed elsewhere"}, {"is_active": False}):
        cookie = await database_sync_to_async(session_cookie)(game.voter)
        await database_sync_to_async(change)(**fields)
        ws = await through_the_stack(dealt.pk, cookie)
        try:
            assert (await ws.connect())[0]
            error = json.loads(await ws.receive_from(timeout=3))
            closed = await ws.receive_output(timeout=3)
            assert (error["code"], closed["code"]) == ("not_authenticated", 4401), fields
        finally:
            await ws.disconnect()
        await database_sync_to_async(change)(is_active=True)


async def test_a_new_socket_reads_its_round_without_compiling_the_query_again(game, dealt, monkeypatch) -> None:
    """Every new socket reads its round's player and state: after the first socket the query
    only runs (compiled once: ``core.queries.compiled_rows``)."""
    from django.db.models.sql.compiler import SQLCompiler

    ws = await connect(dealt.pk, game.voter)
    await ws.disconnect()
    compiled = []
    as_sql = SQLCompiler.as_sql
    monkeypatch.setattr(SQLCompiler, "as_sql", lambda self, *a, **k: compiled.append(self.query.model) or as_sql(self, *a, **k))
    ws = await connect(dealt.pk, game.voter)  # the round not started: its owner and state are all it reads
    try:
        assert await ws.receive_nothing(timeout=0.1)
        assert Round not in compiled
    finally:
        await ws.disconnect()


async def test_ticks_stop_on_disconnect(game, dealt, fake_clock) -> None:
    from foolgame.core.sockets import heartbeat

    others = set(heartbeat.slot_of)
    ws = await connect(dealt.pk, game.voter)
    await ws.send_json_to({"type": "start"})
    await frame(ws, "state")
    beating = set(heartbeat.slot_of) - others
    assert beating
    await ws.disconnect()
    await wait_for_async(lambda: not beating & set(heartbeat.slot_of), what="the ticks to stop", every=0.01)


def shows_no_answer(message: dict, round_: Round) -> None:
    text = json.dumps(message)
    assert "result" not in message and "false_claim" not in text and "SUPPORTS" not in text and "REFUTES" not in text
    for claim in round_.claims:
        for gold in claim.gold_sentences.all():
            assert gold.text not in text


async def test_a_forfeit_elsewhere_reaches_the_socket_without_the_answer_until_its_time(game, dealt, fake_clock) -> None:
    round_ = await database_sync_to_async(lambda: Round.objects.select_related("left_claim", "right_claim").get(pk=dealt.pk))()
    golds = database_sync_to_async(lambda message: shows_no_answer(message, round_))
    ws = await connect(dealt.pk, game.voter)
    try:
        await ws.send_json_to({"type": "start"})
        await frame(ws, "state")
        fake_clock.advance(30)
        await database_sync_to_async(services.round_forfeit)(round_id=dealt.pk, player=game.voter)  # another tab, over REST
        forfeited = await frame(ws, "forfeited")
        await golds(forfeited)
        deadline = await database_sync_to_async(lambda: Round.objects.get(pk=dealt.pk).deadline)()
        assert forfeited["answer_at"] == deadline.isoformat()
        await ws.send_json_to({"type": "state"})
        await golds(await frame(ws, "state"))
        await ws.send_json_to({"type": "start"})
        await golds(await frame(ws, "state"))
        await ws.send_json_to({"type": "vote", "false_claim": 0})
        assert (await frame(ws, "error"))["code"] == "round_over"
    finally:
        await ws.disconnect()
    again = await connect(dealt.pk, game.voter)  # a reconnect's opening state
    try:
        await golds(await frame(again, "state"))
        fake_clock.advance(150)
        await again.send_json_to({"type": "state"})
        shown = await frame(again, "state")
        assert shown["status"] == "forfeited" and shown["result"]["false_claim"] == round_.false_index
    finally:
        await again.disconnect()


async def test_a_round_given_up_before_its_start_opens_with_no_claims(game, dealt, fake_clock) -> None:
    await database_sync_to_async(services.round_forfeit)(round_id=dealt.pk, player=game.voter)
    round_ = await database_sync_to_async(lambda: Round.objects.select_related("left_claim", "right_claim").get(pk=dealt.pk))()
    ws = await connect(dealt.pk, game.voter)
    try:
        state = await frame(ws, "state")
        assert state["status"] == "forfeited" and state["claims"] is None
        await database_sync_to_async(shows_no_answer)(state, round_)
        assert round_.left_claim.text not in json.dumps(state)
    finally:
        await ws.disconnect()


def test_round_changed_skips_the_socket_that_made_a_start_or_a_vote_but_never_an_end(monkeypatch) -> None:
    """``round.changed`` is not sent back to the round socket whose own call started the
    round or voted (it has the state from its call); a timeout, void, forfeit or report is
    announced to every socket, that one included. Outside a socket's call nobody is skipped."""
    from types import SimpleNamespace

    from foolgame.voting import events

    sent = []
    monkeypatch.setattr(events, "group_send_on_commit", lambda group, message, skip=None: sent.append((message["state"], skip)))
    token = events.round_socket.set("specific.abc!def")
    try:
        for state in (Round.State.PLAYING, Round.State.VOTED, Round.State.TIMED_OUT, Round.State.VOIDED, Round.State.FORFEITED, Round.State.REPORTED):
            events.round_changed_on_commit(SimpleNamespace(pk=3, state=state, deadline=None))
    finally:
        events.round_socket.reset(token)
    events.round_changed_on_commit(SimpleNamespace(pk=3, state=Round.State.VOTED, deadline=None))
    assert sent == [
        ("playing", "specific.abc!def"), ("voted", "specific.abc!def"),
        ("timeout", None), ("voided", None), ("forfeited", None), ("reported", None),
        ("voted", None),
    ]


async def test_a_socket_start_leaves_the_expiry_to_the_socket_which_sends_it_when_it_goes_with_the_round_playing(game, fake_clock, monkeypatch) -> None:
    """A start through the round socket sends no expiry task: the socket's tick closes the
    round at its deadline. A socket that closes with its round still playing sends the task
    then, for the deadline; one whose round ended in a vote sends none."""
    from foolgame.core import events
    from foolgame.voting import tasks

    sent: list[tuple] = []
    monkeypatch.setattr(events, "task_runs_eagerly", lambda task: False)
    capture = lambda how: lambda task, *args, **options: sent.append((how, args, options.get("eta"))) if task is tasks.expire_round else None  # noqa: E731
    monkeypatch.setattr(events, "task_on_commit", capture("on_commit"))
    monkeypatch.setattr(events, "task_send", capture("now"))
    monkeypatch.setattr(events, "task_batched_on_commit", lambda task, ids, **options: None)
    from tests.factories import UserFactory

    for ends_in_a_vote in (False, True):
        voter = await database_sync_to_async(UserFactory)()  # the game has one pair: a round each
        round_ = await database_sync_to_async(services.round_create)(player=voter)
        ws = await connect(round_.pk, voter)
        await ws.send_json_to({"type": "start"})
        await frame(ws, "state")
        assert sent == []
        if ends_in_a_vote:
            await ws.send_json_to({"type": "vote", "false_claim": 0})
            await frame(ws, "result")
        await ws.disconnect()
        round_ = await database_sync_to_async(Round.objects.get)(pk=round_.pk)
        if ends_in_a_vote:
            assert sent == [] and round_.state == Round.State.VOTED
        else:
            assert sent == [("now", (round_.pk,), round_.deadline)] and round_.state == Round.State.PLAYING
            sent.clear()
