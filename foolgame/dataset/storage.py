"""Where finished export files live: Django's ``exports`` storage (``STORAGES["exports"]``).

By default the files stay on the disk of the host that ran the export, under ``EXPORTS_DIR``
(one folder per export), as they always did: that serves one host. With several hosts the web
process that serves a download is rarely the worker that wrote it, so the settings put the
exports in an S3-compatible object store instead (django-storages, ``FM2_EXPORTS_S3_*``); the
worker then writes into a scratch folder under ``EXPORTS_DIR``, uploads, and removes it.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages

from foolgame.dataset.models import Export

logger = logging.getLogger(__name__)


class ExportsFileSystemStorage(FileSystemStorage):
    """The exports on this host's disk under ``settings.EXPORTS_DIR``, read each time it is
    used (so a test or a command that moves EXPORTS_DIR moves the storage with it)."""

    @property  # type: ignore[override]
    def base_location(self) -> str:
        return str(settings.EXPORTS_DIR)

    @property  # type: ignore[override]
    def location(self) -> str:
        return os.path.abspath(self.base_location)


def exports_storage() -> Storage:
    return storages["exports"]


def export_key(export: Export, name: str) -> str:
    """The storage name of one file of an export: ``export-<id>/<name>``."""
    return f"{export.directory.name}/{name}"


def export_run_prefix(export: Export) -> str:
    """Where one run of an export uploads its files in an object store:
    ``export-<id>/run-<attempt>``. Each run has its own, so a run uploads with no lock held
    and a run that loses the job never overwrites the winner's files."""
    return f"{export.directory.name}/run-{export.attempts}"


def export_upload(*, export: Export, work_dir: Path, names: Sequence[str]) -> dict[str, str]:
    """Upload a finished run's files to the object store under the run's own prefix
    (:func:`export_run_prefix`), before the export's row is locked: an upload of hundreds of
    megabytes holds no transaction and no lock. Returns each file's storage name, which
    :func:`export_publish` records; on this host's disk it does nothing (the rename under the
    lock is instant) and returns the names downloads have always read."""
    storage = exports_storage()
    if isinstance(storage, ExportsFileSystemStorage):
        return {name: export_key(export, name) for name in names}
    prefix = export_run_prefix(export)
    keys = {}
    for name in names:
        key = f"{prefix}/{name}"
        with open(work_dir / name, "rb") as handle:
            stored = storage.save(key, File(handle, name=name))
        if stored != key:
            raise RuntimeError(f"the exports storage stored {name} as {stored}: it must overwrite (file_overwrite)")
        keys[name] = key
    return keys


def export_publish(*, export: Export, work_dir: Path) -> None:
    """Put a finished run's files where downloads read them. The caller holds the export's row
    lock and still owns the job, so no other run publishes meanwhile.

    On this host's disk the run's folder is renamed into place (a half-written file never
    shows). In an object store the files are already uploaded under the run's prefix
    (:func:`export_upload`, which ran with no lock held); the caller records their keys in the
    same transaction that turns the export done, and its scratch folder is removed."""
    storage = exports_storage()
    out_dir = export.directory
    if isinstance(storage, ExportsFileSystemStorage):
        if out_dir.exists():
            shutil.rmtree(out_dir)
        work_dir.rename(out_dir)
        return
    shutil.rmtree(work_dir, ignore_errors=True)


def export_sweep(*, export: Export, keep: Sequence[str]) -> int:
    """Delete an export's files in the object store other than ``keep`` (the keys of the run
    that published): earlier runs' prefixes and files written before runs had prefixes. Run
    after the commit that turned the export done; returns how many went."""
    storage = exports_storage()
    if isinstance(storage, ExportsFileSystemStorage):
        return 0
    kept = set(keep)
    gone = 0
    # Another run of this export cannot be uploading: the export is done and only a running
    # export is taken over.
    top = export.directory.name
    folders, files = storage.listdir(top)
    stale = [f"{top}/{name}" for name in files]
    for folder in folders:
        _, inner = storage.listdir(f"{top}/{folder}")
        stale += [f"{top}/{folder}/{name}" for name in inner]
    for key in stale:
        if key not in kept:
            storage.delete(key)
            gone += 1
    return gone


def export_discard(*, export: Export) -> None:
    """Delete what this run (``export.attempts``) uploaded to the object store, whole or in
    part, after it failed or lost the job; best effort."""
    storage = exports_storage()
    if isinstance(storage, ExportsFileSystemStorage):
        return
    prefix = export_run_prefix(export)
    try:
        for name in storage.listdir(prefix)[1]:
            storage.delete(f"{prefix}/{name}")
    except Exception:  # the store is down: the next run's sweep deletes them
        logger.warning("export %s: could not delete run %s's uploads", export.pk, prefix, exc_info=True)
