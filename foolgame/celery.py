"""The Celery app: tasks on Redis when REDIS_URL is set, in-process (eager) otherwise."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foolgame.settings")

app = Celery("foolgame")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
