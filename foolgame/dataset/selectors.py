"""Reads of the dataset exports."""

from __future__ import annotations

from django.db.models import QuerySet

from foolgame.dataset.models import Export


def export_list() -> QuerySet[Export]:
    """Every export, newest first, with who asked for it."""
    return Export.objects.select_related("requested_by").order_by("-created", "-id")
