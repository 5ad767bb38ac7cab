"""A dataset export run as a background job, with its progress and the files it wrote."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import models


class Export(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    options = models.JSONField(default=dict, blank=True, help_text="seed, splits, formats, include_removed, ...")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True)
    stage = models.CharField(max_length=30, blank=True, help_text="What the job is doing now.")
    progress = models.FloatField(default=0.0, help_text="0 to 1 over the whole job.")
    files = models.JSONField(default=list, blank=True, help_text="[{name, size}] once done.")
    split_summary = models.JSONField(
        null=True, blank=True, help_text="Once done: how the pages were split (stats.json's split_summary)."
    )
    quality = models.JSONField(
        null=True, blank=True, help_text="Once done, when certified: each gate's name, figure, threshold and pass (quality.json)."
    )
    error = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Crash recovery: the running job beats; a redelivery or the reaper takes over (or
    # fails) one whose heartbeat is stale. ``owner`` is the run that holds the job.
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life of the running job.")
    attempts = models.PositiveIntegerField(default=0, help_text="Runs started, the first included.")
    owner = models.CharField(max_length=100, blank=True, help_text="The worker run that holds the job.")

    class Meta:
        ordering = ["-created", "-id"]
        permissions = [("export_dataset", "Can export the dataset and download its files")]

    def __str__(self) -> str:
        return f"export {self.pk} ({self.status})"

    @property
    def directory(self) -> Path:
        return Path(settings.EXPORTS_DIR) / f"export-{self.pk}"
