"""Reads of the dataset exports."""

from __future__ import annotations

import json
import logging
from typing import Any

from django.db.models import QuerySet

from foolgame.core.errors import ServiceError
from foolgame.dataset.models import Export
from foolgame.dataset.services import export_file_open

logger = logging.getLogger(__name__)


def export_list() -> QuerySet[Export]:
    """Every export, newest first, with who asked for it."""
    return Export.objects.select_related("requested_by").order_by("-created", "-id")


def latest_stats() -> tuple[Export, dict[str, Any]] | None:
    """The newest finished export with a readable ``stats.json``, and its statistics: what the
    research page plots. Read through the download's own lookup of a file, so it reads
    wherever exports are kept."""
    for export in export_list().filter(status=Export.Status.DONE)[:5]:
        try:
            with export_file_open(export=export, name="stats.json") as handle:
                return export, json.loads(handle.read().decode("utf-8"))
        except (ServiceError, OSError, ValueError):
            logger.warning("export %s: no readable stats.json to plot", export.pk)
    return None
