"""Lock order between a moderator's action and a quality refresh, on PostgreSQL (SQLite
serialises writers). Every writer takes the claim's row before its quality row: a refresh
that inserted the quality row first, while the moderator held the claim, deadlocked."""

from __future__ import annotations

import threading

import pytest
from django.db import close_old_connections, connection, transaction

from foolgame.claims.models import Claim
from foolgame.moderation import actions, quality
from foolgame.moderation.models import AuditRecord, ClaimQuality
from tests.moderation.conftest import claim_pair
from tests.waiting import wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("postgresql_only")]


def refresh_waits_for(*, claim_held_by, seconds: float = 10.0) -> None:
    """Until another backend of this database waits on a lock (the refresh, queued behind the
    claim row this connection holds): the condition, not a guess at how long the refresh
    takes to get there. (Inside a transaction pg_stat_activity is a snapshot: cleared before
    each look.)"""
    with claim_held_by.cursor() as cursor:

        def another_backend_waits_on_a_lock() -> bool:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
            )
            return bool(cursor.fetchone()[0])

        wait_for(another_backend_waits_on_a_lock, what="the refresh to queue behind the moderator's claim lock", seconds=seconds, every=0.02)


def test_a_refresh_waits_for_a_moderator_who_holds_a_claim_without_a_quality_row(moderator) -> None:
    claim, partner = claim_pair()
    ClaimQuality.objects.filter(claim_id__in=[claim.pk, partner.pk]).delete()
    holding, errors = threading.Event(), []

    def moderate() -> None:
        try:
            with transaction.atomic():
                # The action's first lock, held a while: the refresh arrives meanwhile.
                Claim.objects.select_for_update(of=("self",)).get(pk=claim.pk)
                holding.set()
                refresh_waits_for(claim_held_by=connection)
                checked = actions.check_claim_action(claim_id=claim.pk, action="keep", reason="Checked it.")
                actions.do_claim_action(checked, moderator=moderator)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            close_old_connections()
            connection.close()

    def refresh() -> None:
        holding.wait(10)
        try:
            quality.quality_refresh(claim_ids=[claim.pk, partner.pk])
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=moderate), threading.Thread(target=refresh)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert AuditRecord.objects.filter(claim=claim, action="keep").count() == 1
    assert ClaimQuality.objects.filter(claim_id__in=[claim.pk, partner.pk]).count() == 2
