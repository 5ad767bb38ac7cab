"""The claim admin: every field read-only; label, gold and status change only through the
moderation actions, audited like the queue's actions."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from foolgame.claims.models import Claim
from foolgame.moderation.actions import moderator_set
from foolgame.moderation.models import AuditRecord
from tests.factories import SentenceFactory, UserFactory
from tests.moderation.conftest import claim_pair

pytestmark = pytest.mark.django_db


def admin_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def change_url(claim: Claim) -> str:
    return f"/admin/claims/claim/{claim.pk}/change/"


def form_data(client: Client, claim: Claim, **fields: str) -> dict[str, str]:
    """What the change page's form posts, the inline's management form included."""
    page = client.get(change_url(claim))
    assert page.status_code == 200
    data = {}
    for formset in page.context["inline_admin_formsets"]:
        management = formset.formset.management_form
        data.update({management.add_prefix(name): value for name, value in management.initial.items()})
        for form in formset.formset.forms:
            data.update({form.add_prefix(name): value for name, value in form.initial.items() if value is not None})
    data.update({"moderation_action": "", "new_label": "", "gold_sentence_ids": "", "reason": "", **fields})
    return data


@pytest.fixture
def superuser(db):
    return UserFactory(username="root", is_staff=True, is_superuser=True)


def test_an_admin_relabel_goes_through_the_service_and_shows_in_the_audit_log(superuser) -> None:
    claim, _ = claim_pair()
    client = admin_client(superuser)
    response = client.post(
        change_url(claim), form_data(client, claim, moderation_action="relabel", new_label="REFUTES", reason="The gold says otherwise."), follow=True
    )
    assert response.status_code == 200
    claim.refresh_from_db()
    assert claim.label == "REFUTES"
    record = AuditRecord.objects.get()
    assert (record.moderator, record.action, record.reason) == (superuser, "relabel", "The gold says otherwise.")
    assert (record.before["label"], record.after["label"]) == ("SUPPORTS", "REFUTES")
    assert claim.quality.kept and claim.quality.reviewed_by == superuser
    audit = client.get(f"/moderation/audit/?claim={claim.pk}").content.decode()
    assert f'id="audit-{record.pk}"' in audit and "The gold says otherwise." in audit


def test_admin_remove_and_edit_evidence_are_audited_too(superuser) -> None:
    claim, other = claim_pair()
    new_gold = SentenceFactory(page=claim.page, text="A fresh decisive sentence.")
    client = admin_client(superuser)
    client.post(change_url(claim), form_data(client, claim, moderation_action="edit_evidence", gold_sentence_ids=f"{new_gold.pk}", reason="Better evidence."))
    assert list(claim.gold_links.values_list("sentence_id", flat=True)) == [new_gold.pk]
    client.post(change_url(other), form_data(client, other, moderation_action="remove", reason="Spam."))
    other.refresh_from_db()
    assert (other.status, other.removed_reason) == ("removed", "Spam.")
    assert list(AuditRecord.objects.order_by("id").values_list("action", flat=True)) == ["edit_evidence", "remove"]


def test_fields_posted_directly_change_nothing(superuser) -> None:
    claim, _ = claim_pair()
    client = admin_client(superuser)
    data = form_data(client, claim, text="Rewritten behind the log's back.", label="REFUTES", status="removed")
    client.post(change_url(claim), data)
    claim.refresh_from_db()
    assert (claim.text, claim.label, claim.status) == ("Saturn is true about itself.", "SUPPORTS", "active")
    assert not AuditRecord.objects.exists()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"moderation_action": "relabel", "new_label": "REFUTES"}, "every moderation action needs a reason"),
        ({"moderation_action": "relabel", "new_label": "SUPPORTS", "reason": "x"}, "already labelled SUPPORTS"),
        ({"moderation_action": "edit_evidence", "gold_sentence_ids": "1,a", "reason": "x"}, "whole numbers"),
        ({"new_label": "REFUTES", "reason": "x"}, "Choose a moderation action"),
    ],
)
def test_a_refused_action_shows_the_service_message_and_writes_nothing(superuser, fields: dict, message: str) -> None:
    claim, _ = claim_pair()
    client = admin_client(superuser)
    response = client.post(change_url(claim), form_data(client, claim, **fields))
    assert response.status_code == 200 and message in response.content.decode()
    claim.refresh_from_db()
    assert claim.label == "SUPPORTS" and not AuditRecord.objects.exists()


def test_staff_who_are_not_moderators_only_read_claims(db) -> None:
    claim, _ = claim_pair()
    staff = UserFactory(username="stan", is_staff=True)
    staff.user_permissions.add(*Permission.objects.filter(content_type__app_label="claims", codename__in=["view_claim", "change_claim"]))
    client = admin_client(staff)
    page = client.get(change_url(claim))
    assert page.status_code == 200 and b"moderation_action" not in page.content
    response = client.post(change_url(claim), {"moderation_action": "remove", "reason": "Not mine to do."})
    assert response.status_code == 403
    claim.refresh_from_db()
    assert claim.status == "active" and not AuditRecord.objects.exists()


def test_a_staff_moderator_moderates_in_the_admin_but_cannot_add_or_delete(db) -> None:
    claim, _ = claim_pair()
    UserFactory(username="mona", is_staff=True)
    moderator = moderator_set(username="mona")
    client = admin_client(moderator)
    assert b"moderation_action" in client.get(change_url(claim)).content
    client.post(change_url(claim), form_data(client, claim, moderation_action="keep", reason="Fine as it is."))
    assert AuditRecord.objects.get().moderator.username == "mona"
    assert client.get("/admin/claims/claim/add/").status_code == 403
    assert client.get(f"/admin/claims/claim/{claim.pk}/delete/").status_code == 403


def test_the_claim_admin_records_the_claims_it_shows_as_seen(superuser) -> None:
    from foolgame.moderation.models import Sighting

    shown, other = claim_pair()
    client = admin_client(superuser)
    assert client.get(change_url(shown)).status_code == 200
    assert set(Sighting.objects.filter(moderator=superuser).values_list("claim_id", flat=True)) == {shown.pk}
    assert client.get("/admin/claims/claim/").status_code == 200  # the list shows both labels
    assert set(Sighting.objects.filter(moderator=superuser).values_list("claim_id", flat=True)) == {shown.pk, other.pk}
