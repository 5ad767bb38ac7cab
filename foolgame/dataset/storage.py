"""Where finished export files live: Django's ``exports`` storage (``STORAGES["exports"]``).

By default the files stay on the disk of the host that ran the export, under ``EXPORTS_DIR``
(one folder per export), as they always did: that serves one host. With several hosts the web
process that serves a download is rarely the worker that wrote it, so the settings put the
exports in an S3-compatible object store instead (django-storages, ``FM2_EXPORTS_S3_*``); the
worker then writes into a scratch folder under ``EXPORTS_DIR``, uploads, and removes it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages

from foolgame.dataset.models import Export


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


def export_publish(*, export: Export, work_dir: Path, names: Sequence[str]) -> None:
    """Put a finished run's files where downloads read them. The caller holds the export's row
    lock and still owns the job, so no other run publishes meanwhile.

    On this host's disk the run's folder is renamed into place (a half-written file never
    shows). In an object store each file is uploaded under its name (files an earlier run left
    are deleted first) and the run's scratch folder is removed; the export turns done only after
    the last upload, in the caller's transaction."""
    storage = exports_storage()
    out_dir = export.directory
    if isinstance(storage, ExportsFileSystemStorage):
        if out_dir.exists():
            shutil.rmtree(out_dir)
        work_dir.rename(out_dir)
        return
    prefix = out_dir.name
    _, leftovers = storage.listdir(prefix)
    for name in leftovers:
        if name not in names:
            storage.delete(f"{prefix}/{name}")
    for name in names:
        with open(work_dir / name, "rb") as handle:
            stored = storage.save(export_key(export, name), File(handle, name=name))
        if stored != export_key(export, name):
            raise RuntimeError(f"the exports storage stored {name} as {stored}: it must overwrite (file_overwrite)")
    shutil.rmtree(work_dir, ignore_errors=True)
