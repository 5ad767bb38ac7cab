"""The fm2 Django project. The Celery app is loaded with Django so shared tasks bind to it."""

from foolgame.celery import app as celery_app

__all__ = ["celery_app"]
