"""The way through a study: the server counts claims saved, rounds voted and checks answered,
made through the game's own endpoints, and gives the completion code only then; attention
checks screen a participant out; the time limit times one out; the pages show each state."""

from __future__ import annotations

import pytest

from foolgame.evidence.services import page_top_lexical_hit
from foolgame.studies.models import AttentionCheck, Participant
from foolgame.voting.models import Round
from tests.authoring.conftest import eiffel, post, sentence_ids  # noqa: F401  (eiffel is a fixture)
from tests.checks.conftest import open_claim, settled_claim
from tests.factories import PageFactory, UserFactory
from tests.studies.conftest import create_study, participant_client
from tests.voting.conftest import fake_clock, make_claim  # noqa: F401  (fake_clock is a fixture)

pytestmark = pytest.mark.django_db

CLAIM = "For four decades nothing humans built was higher than the Eiffel Tower."


def me(client, slug: str) -> dict:
    response = client.get(f"/api/studies/{slug}/me")
    assert response.status_code == 200, response.content
    return response.json()


def write_a_claim(client, page) -> None:
    task = post(client, "/api/write-tasks").json()
    top = page_top_lexical_hit(page=page, query=CLAIM)
    gold = next(pk for pk in sentence_ids(page)[2:] if pk != top)
    response = post(client, "/api/claims", {"task": task["id"], "text": CLAIM, "gold_sentence_ids": [gold]})
    assert response.status_code == 201, response.content


def vote_a_round(client, *, correct: bool = True) -> None:
    round_id = post(client, "/api/rounds").json()["id"]
    assert post(client, f"/api/rounds/{round_id}/start").status_code == 200
    false_index = Round.objects.get(pk=round_id).false_index
    response = post(client, f"/api/rounds/{round_id}/vote", {"false_claim": false_index if correct else 1 - false_index})
    assert response.status_code == 200, response.content


def answer_a_check(client, label: str = "SUPPORTS") -> None:
    check = post(client, "/api/checks")
    assert check.status_code == 201, check.content
    assert post(client, f"/api/checks/{check.json()['id']}", {"label": label}).status_code == 200


@pytest.fixture
def pair(db) -> None:
    """A pair of claims of other authors for the participant's round."""
    page = PageFactory(title="Saturn")
    make_claim(page, label="SUPPORTS", author=UserFactory(username="tina"), text="Saturn is the sixth planet from the Sun.")
    make_claim(page, label="REFUTES", author=UserFactory(username="fred"), text="Saturn has no rings at all.")


def test_the_completion_code_comes_only_after_the_servers_count_of_the_work(researcher, eiffel, pair) -> None:
    slug = create_study(researcher, tasks={"write": 1, "vote": 1, "check": 1})["slug"]
    open_claim("Jupiter")
    client = participant_client(slug, "worker-1")
    state = me(client, slug)
    assert state["completion_code"] is None and state["next"] == "write" and state["done"] == 0 and state["total"] == 3

    write_a_claim(client, eiffel)
    state = me(client, slug)
    assert state["completion_code"] is None and state["next"] == "vote"
    assert state["progress"][0] == {"kind": "write", "done": 1, "needed": 1}

    vote_a_round(client)
    state = me(client, slug)
    assert state["completion_code"] is None and state["next"] == "check"

    answer_a_check(client)
    state = me(client, slug)
    assert state["completion_code"] == "C0MPLETE" and state["status"] == "finished" and state["next"] is None
    assert state["return_url"] == "https://app.prolific.com/submissions/complete?cc=C0MPLETE"
    assert Participant.objects.get().status == Participant.Status.FINISHED
    page = client.get(f"/s/{slug}/").content.decode()
    assert "C0MPLETE" in page and "Back to Prolific" in page


def test_a_given_up_round_is_not_counted_as_a_vote(researcher, pair) -> None:
    slug = create_study(researcher, tasks={"vote": 1})["slug"]
    client = participant_client(slug, "worker-1")
    round_id = post(client, "/api/rounds").json()["id"]
    post(client, f"/api/rounds/{round_id}/start")
    assert post(client, f"/api/rounds/{round_id}/forfeit").status_code == 200
    state = me(client, slug)
    assert state["progress"] == [{"kind": "vote", "done": 0, "needed": 1}] and state["completion_code"] is None


def test_the_progress_page_names_the_step_and_links_the_games_page(researcher) -> None:
    slug = create_study(researcher, tasks={"vote": 2, "write": 1})["slug"]
    client = participant_client(slug, "worker-1")
    page = client.get(f"/s/{slug}/").content.decode()
    assert "1 of 3</strong>: spot the false claim" in page
    assert 'href="/play/"' in page
    assert "C0MPLETE" not in page


def test_the_consent_page_shows_the_consent_text_and_keeps_the_platforms_ids(researcher) -> None:
    slug = create_study(researcher)["slug"]
    from django.test import Client

    page = Client().get(f"/s/{slug}/?PROLIFIC_PID=pp1&STUDY_ID=st&SESSION_ID=se").content.decode()
    assert "Your answers are used for research." in page
    assert 'data-platform="prolific"' in page and 'value="pp1"' in page and 'name="extra:SESSION_ID" value="se"' in page
    mturk = Client().get(f"/s/{slug}/?workerId=W1&assignmentId=A1&hitId=H1").content.decode()
    assert 'data-platform="mturk"' in mturk and 'value="W1"' in mturk
    preview = Client().get(f"/s/{slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1").content.decode()
    assert "Accept the task" in preview and "study-consent-form" not in preview
    plain = Client().get(f"/s/{slug}/").content.decode()
    assert 'data-platform="link"' in plain and 'id="study-participant"' in plain


def test_failing_the_attention_checks_screens_the_participant_out(researcher) -> None:
    slug = create_study(researcher, tasks={"check": 2}, attention_checks=1, attention_max_failures=0)["slug"]
    settled_claim("Neptune", label="REFUTES")
    client = participant_client(slug, "worker-1")
    answer_a_check(client, "SUPPORTS")
    attention = AttentionCheck.objects.get()
    assert attention.passed is False and attention.position == 1
    state = me(client, slug)
    assert state["status"] == "screened_out" and state["screen_out_code"] == "SCREENED" and state["completion_code"] is None
    assert "SCREENED" in client.get(f"/s/{slug}/").content.decode()


def test_passing_an_attention_check_keeps_the_participant_going(researcher) -> None:
    slug = create_study(researcher, tasks={"check": 2}, attention_checks=1, attention_max_failures=0)["slug"]
    settled_claim("Neptune", label="REFUTES")
    client = participant_client(slug, "worker-1")
    answer_a_check(client, "REFUTES")
    assert AttentionCheck.objects.get().passed is True
    state = me(client, slug)
    assert state["status"] == "active" and state["screen_out_code"] is None


def test_past_the_time_limit_without_the_work_there_is_no_code(researcher, pair, fake_clock) -> None:
    slug = create_study(researcher, tasks={"vote": 1}, time_limit_minutes=30)["slug"]
    client = participant_client(slug, "worker-1")
    assert me(client, slug)["deadline"] is not None
    fake_clock.advance(31 * 60)
    state = me(client, slug)
    assert state["status"] == "timed_out" and state["completion_code"] is None
    assert "time ran out" in client.get(f"/s/{slug}/").content.decode()
