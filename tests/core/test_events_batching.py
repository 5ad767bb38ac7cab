"""Batched follow-up tasks: the votes of half a second share one run of their quality refresh
and one of their ratings (``events.task_batched_on_commit``), sent by the publisher's task
thread, which a slow broker never lets hold a socket's group message."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from foolgame.core import events
from tests.waiting import wait_for

STOPPED: list[events._Publisher] = []


class RecordingTask:
    """Stands in for a Celery task: records each run sent, optionally slowly."""

    def __init__(self, name: str, delay: float = 0.0) -> None:
        self.name, self.delay = name, delay
        self.sent: list[list[Any]] = []
        self.options: list[dict[str, Any]] = []
        self.sent_event = threading.Event()
        self.entered = threading.Event()  # a run is being sent (and held for ``delay``)

    def apply_async(self, args: list[Any], **options: Any) -> None:
        self.entered.set()
        time.sleep(self.delay)
        self.sent.append(args)
        self.options.append(options)
        self.sent_event.set()


@pytest.fixture
def publisher(monkeypatch) -> Iterator[events._Publisher]:
    monkeypatch.setattr(events, "BATCH_SECONDS", 0.2)
    publisher = events._Publisher()
    yield publisher
    publisher.loop.call_soon_threadsafe(publisher.loop.stop)
    publisher.thread.join(timeout=5)
    publisher.tasks.shutdown(wait=True)
    STOPPED.append(publisher)


def test_calls_within_the_window_share_one_run_over_their_sorted_union(publisher) -> None:
    quality, ratings = RecordingTask("quality"), RecordingTask("ratings")
    for ids in ([12, 5], [5, 12], [7, 3]):  # three votes: two on one pair
        publisher.batch_task(quality, ids)
    publisher.batch_task(ratings, [41])
    publisher.batch_task(ratings, [40])
    wait_for(lambda: quality.sent and ratings.sent, what="both batches to be sent", every=0.01)
    # Later votes start new batches, sent after anything left of the first window: once
    # they are in, nothing more of that window can come.
    publisher.batch_task(quality, [9])
    publisher.batch_task(ratings, [42])
    wait_for(lambda: [9] in quality.sent[-1] and [42] in ratings.sent[-1], what="the later batches", every=0.01)
    assert quality.sent == [[[3, 5, 7, 12]], [[9]]]
    assert ratings.sent == [[[40, 41]], [[42]]]


def test_a_slow_broker_does_not_hold_a_group_message(publisher, monkeypatch) -> None:
    received = threading.Event()

    async def group_send(group: str, message: dict) -> None:
        received.set()

    slow = RecordingTask("slow", delay=1.0)
    publisher.send_task(slow, [1], {})
    assert slow.entered.wait(timeout=5), "the slow publish never began"
    wait_for(lambda: hasattr(publisher, "layer"), what="the publisher's layer", every=0.01)
    monkeypatch.setattr(publisher.layer, "group_send", group_send)
    started = time.monotonic()
    publisher.publish("room-ABCDEF", {"type": "room.answer"})
    assert received.wait(timeout=0.5), "the group message waited for the broker"
    assert time.monotonic() - started < 0.5
    assert slow.sent_event.wait(timeout=5)


@pytest.mark.django_db
def test_eager_tasks_run_at_once_with_the_ids(django_capture_on_commit_callbacks) -> None:
    from foolgame.voting import tasks

    ran: list[list[int]] = []

    class Eager(RecordingTask):
        app = tasks.rate_votes.app

        def apply_async(self, args: list[Any], **options: Any) -> None:
            ran.append(args[0])

    with django_capture_on_commit_callbacks(execute=True):
        events.task_batched_on_commit(Eager("eager"), (3, 1))
    assert ran == [[3, 1]]


def test_groups_are_sent_side_by_side_each_in_its_own_order(publisher) -> None:
    # One room's answer must not wait behind a slow send to another group; one group's
    # messages still arrive in the order they were published.
    import asyncio

    sent: list[tuple[str, int]] = []
    both_b = threading.Event()

    async def group_send(group: str, message: dict) -> None:
        if group == "slow" and message["n"] == 0:
            await asyncio.sleep(0.5)
        sent.append((group, message["n"]))
        if [g for g, _ in sent].count("room-B") == 2:
            both_b.set()

    wait_for(lambda: hasattr(publisher, "layer"), what="the publisher's layer", every=0.01)
    publisher.layer.group_send = group_send
    for n in range(3):
        publisher.publish("slow", {"type": "x", "n": n})
    publisher.publish("room-B", {"type": "room.answer", "n": 0})
    publisher.publish("room-B", {"type": "room.ended", "n": 1})
    assert both_b.wait(0.3), "another group's slow send held this one"
    wait_for(lambda: len(sent) == 5, what="the five messages", every=0.01)
    assert [n for g, n in sent if g == "slow"] == [0, 1, 2]
    assert [n for g, n in sent if g == "room-B"] == [0, 1]
    assert sent.index(("room-B", 0)) < sent.index(("slow", 0))


def test_ids_due_in_the_same_second_share_one_run_sent_for_the_end_of_that_second(publisher) -> None:
    """``events.task_batched_on_commit`` with an eta: the REST rounds' expiries of half a second, one
    run per second their deadlines fall in, due when the latest of them is (never early)."""
    from datetime import datetime, timezone

    expiry = RecordingTask("expiry")
    second = datetime(2026, 11, 29, 12, 0, 7, tzinfo=timezone.utc)
    publisher.batch_task(expiry, [3], second.replace(microsecond=200_000))
    publisher.batch_task(expiry, [1], second.replace(microsecond=900_000))
    publisher.batch_task(expiry, [2], second.replace(second=8))  # due on the second: with the two due in the second before it
    publisher.batch_task(expiry, [4], second.replace(second=8, microsecond=1))  # a microsecond later: the next second's
    wait_for(lambda: len(expiry.sent) == 2, what="the two runs", every=0.01)
    runs = sorted(zip((options["eta"] for options in expiry.options), (args[0] for args in expiry.sent)))
    assert runs == [(second.replace(second=8), [1, 2, 3]), (second.replace(second=9), [4])]
