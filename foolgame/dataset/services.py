"""Dataset exports: the services the researchers' pages, the API and the command call.

The export itself is :mod:`foolgame.dataset.release` (the command and the background job run
the same code) and the background job :mod:`foolgame.dataset.jobs`; this module queues the
job's task (:mod:`foolgame.dataset.tasks`), which sits between the two.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser, Group
from django.core.files import File

from foolgame.core import events
from foolgame.core.errors import ServiceError
from foolgame.dataset import jobs
from foolgame.dataset.jobs import export_job_run, export_options_from
from foolgame.dataset.models import Export
from foolgame.dataset.records import BASELINE_MAX_CLAIMS, FORMATS, ExportError, ExportOptions
from foolgame.dataset.release import ExportResult, dataset_export
from foolgame.dataset.storage import export_key, exports_storage
from foolgame.dataset.tasks import run_export
from foolgame.players.roles import is_researcher
from foolgame.players.services import player_role_set, role_group_ensure

RESEARCHERS_GROUP = "researchers"
RESEARCHER_PERMISSION = ("dataset", "export_dataset")


def researchers_group_ensure() -> Group:
    """The ``researchers`` group with the export permission (migration 0003 makes it; this
    makes it again after a flushed test database, like the moderators group)."""
    return role_group_ensure(name=RESEARCHERS_GROUP, permissions=[RESEARCHER_PERMISSION])


def researcher_set(*, username: str, researcher: bool = True) -> AbstractBaseUser:
    """Add a player to the researchers group (or take them out of it)."""
    return player_role_set(username=username, group=researchers_group_ensure(), member=researcher)


def export_request(
    *,
    user: AbstractBaseUser,
    seed: int = 0,
    splits: str = "0.8,0.1,0.1",
    formats: Sequence[str] = FORMATS,
    include_removed: bool = False,
    resplit_release: bool = False,
    exclusive_test_authors: Sequence[str] = (),
    baseline_max_claims: int = BASELINE_MAX_CLAIMS,
    certify: bool = False,
) -> Export:
    """Queue an export for a researcher; the job starts once this transaction commits."""
    if not is_researcher(user):
        raise ServiceError("not_researcher", "Only researchers may export the dataset.", status_code=403)
    options = {
        "seed": seed,
        "splits": splits,
        "formats": list(formats),
        "include_removed": include_removed,
        "resplit_release": resplit_release,
        "exclusive_test_authors": sorted(set(exclusive_test_authors)),
        "baseline_max_claims": baseline_max_claims,
        "certify": certify,
    }
    try:
        export_options_from(options)
    except ValueError as error:
        raise ServiceError("invalid_options", str(error)) from None
    export = Export.objects.create(requested_by=user, options=options)
    events.task_on_commit(run_export, export.pk)  # a send lost with the broker: the reaper queues it again
    return export


def export_jobs_reap() -> dict[str, int]:
    """Queue again the exports whose worker died, and fail those out of attempts
    (:func:`foolgame.dataset.jobs.export_jobs_reap`; the beat task runs the same sweep)."""
    return jobs.export_jobs_reap(requeue=run_export.delay)


def export_file_open(*, export: Export, name: str) -> File:
    """One of a finished export's files, opened for reading from the exports storage (this
    host's disk, or the object store); 404 for any other name."""
    keys = {f["name"]: f.get("key") or export_key(export, f["name"]) for f in export.files}  # exports before runs had keys
    if export.status != Export.Status.DONE or name not in keys:
        raise ServiceError("not_found", "No such file in this export.", status_code=404)
    return exports_storage().open(keys[name], "rb")


__all__ = [
    "ExportError",
    "ExportOptions",
    "ExportResult",
    "dataset_export",
    "export_file_open",
    "export_job_run",
    "export_jobs_reap",
    "export_options_from",
    "export_request",
    "researcher_set",
    "researchers_group_ensure",
]
