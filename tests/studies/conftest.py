"""Researchers, studies and participants arriving over the API, for the studies tests."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from foolgame.studies.apps import _ensure_researchers_run_studies
from tests.authoring.conftest import api_client, post
from tests.factories import UserFactory  # noqa: F401


def study_spec(**overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "Clue cost",
        "consent": "You will write, vote and check claims for about 20 minutes.\nYour answers are used for research.",
        "tasks": {"write": 1, "vote": 1, "check": 1},
        "arms": [{"name": "ten", "settings": {"clue_seconds": 10}}, {"name": "twenty", "settings": {"clue_seconds": 20}}],
        "participants": 4,
        "completion_code": "C0MPLETE",
        "screen_out_code": "SCREENED",
        "address_cap": 1000,
    }
    spec.update(overrides)
    return spec


def researcher_client(username: str = "rita") -> Client:
    client = api_client(username)
    _ensure_researchers_run_studies()
    Group.objects.get(name="researchers").user_set.add(client.session["_auth_user_id"])
    return client


@pytest.fixture
def researcher(db) -> Client:
    return researcher_client()


def create_study(client: Client, **overrides: Any) -> dict[str, Any]:
    response = post(client, "/api/studies", study_spec(**overrides))
    assert response.status_code == 201, response.content
    return response.json()


def visitor(address: str = "203.0.113.7") -> Client:
    """A browser arriving from a platform's link: nobody signed in, its own address."""
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR=address)
    client.get("/api/auth/csrf")
    return client


def enter(client: Client, slug: str, pid: str, *, platform: str = "prolific", consent: Any = True, extra: dict | None = None):
    body: dict[str, Any] = {"participant": pid, "platform": platform, "consent": consent}
    if extra is not None:
        body["extra"] = extra
    return post(client, f"/api/studies/{slug}/enter", body)


def participant_client(slug: str, pid: str, address: str = "203.0.113.7") -> Client:
    client = visitor(address)
    response = enter(client, slug, pid)
    assert response.status_code in (200, 201), response.content
    # The session changed at login: the next unsafe request needs the new CSRF token.
    client.get("/api/auth/csrf")
    return client
