"""The server's clock, in one replaceable place (tests move time by patching ``now``)."""

from datetime import datetime

from django.utils import timezone


def now() -> datetime:
    return timezone.now()
