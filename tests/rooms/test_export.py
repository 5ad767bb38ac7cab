"""Room votes are solo votes in every record: the export counts them like any round."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foolgame.dataset.exporter import ExportOptions
from foolgame.dataset.services import dataset_export
from foolgame.players.models import LedgerEntry
from foolgame.rooms import services
from foolgame.rooms.models import RoomQuestion, RoomRound
from foolgame.voting import services as rounds

pytestmark = pytest.mark.django_db


def test_the_export_counts_room_votes(party, fake_clock, tmp_path: Path) -> None:
    services.room_next_question(code=party.room.code, player=party.host)
    question = RoomQuestion.objects.get(room=party.room, number=1)
    plays = {p.player_id: p.round_id for p in RoomRound.objects.filter(question=question)}
    fake_clock.advance(30)
    rounds.vote_cast(round_id=plays[party.host.pk], player=party.host, false_claim=question.false_claim_index)
    rounds.vote_cast(round_id=plays[party.players[0].pk], player=party.players[0], false_claim=1 - question.false_claim_index)
    fake_clock.advance(151)
    assert services.room_question_finish(question_id=question.pk)

    dataset_export(out_dir=tmp_path / "out", options=ExportOptions(splits=(1, 0, 0)), salt=b"a fixed salt for the tests, 32 bytes")
    votes = [json.loads(line) for line in (tmp_path / "out" / "votes.jsonl").read_text().splitlines()]
    # 150 s left when both voted (a 180 s question, 30 s in): the export's 30 s bucket.
    assert sorted((v["outcome"], v["correct"], v["remaining_bucket"]) for v in votes) == [
        ("timeout", None, None), ("voted", False, 150), ("voted", True, 150)
    ]
    # The room showed its members who found the question: its rounds carry no voter (issue 24).
    assert {v["voter"] for v in votes} == {None}
    assert LedgerEntry.objects.filter(player=party.host, kind="verify").get().amount == 120
    claims = {r["text"]: r for r in map(json.loads, (tmp_path / "out" / "train.jsonl").read_text().splitlines())}
    for claim in question.claims:
        assert (claims[claim.text]["total_votes"], claims[claim.text]["correct_votes"]) == (2, 1)


def test_a_short_question_just_after_midnight_is_exported_on_its_own_day(party, fake_clock, tmp_path: Path) -> None:
    # A 30 s question's rounds keep their clock's origin 150 s before the question: a
    # question at 00:01 UTC must not be exported as played the day before.
    from datetime import datetime, timezone

    fake_clock.current = datetime(2026, 11, 24, 0, 1, tzinfo=timezone.utc)
    party.room.seconds = 30
    party.room.save(update_fields=["seconds"])
    services.room_next_question(code=party.room.code, player=party.host)
    question = RoomQuestion.objects.get(room=party.room, number=1)
    play = RoomRound.objects.get(question=question, player=party.host)
    assert play.round.started_at.date().isoformat() == "2026-11-23"  # the origin, as stored
    fake_clock.advance(5)
    rounds.vote_cast(round_id=play.round_id, player=party.host, false_claim=question.false_claim_index)
    fake_clock.advance(30)
    assert services.room_question_finish(question_id=question.pk)

    dataset_export(out_dir=tmp_path / "out", options=ExportOptions(splits=(1, 0, 0)), salt=b"a fixed salt for the tests, 32 bytes")
    votes = [json.loads(line) for line in (tmp_path / "out" / "votes.jsonl").read_text().splitlines()]
    assert {v["day"] for v in votes} == {"2026-11-24"}
