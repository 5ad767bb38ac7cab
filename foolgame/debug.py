"""Debug pages that hide service URLs and credentials (DEFAULT_EXCEPTION_REPORTER_FILTER)."""

from __future__ import annotations

import re

from django.views.debug import SafeExceptionReporterFilter

URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^\s/@'\"]*@[^\s/'\"]*")


def mask_urls(value: str) -> str:
    """``redis://:secret@redis.internal:6380/0`` -> ``redis://********/0``."""
    return URL_CREDENTIALS.sub(lambda match: match.group("scheme") + SafeExceptionReporterFilter.cleansed_substitute, value)


class SafeReporterFilter(SafeExceptionReporterFilter):
    hidden_settings = re.compile(
        "API|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|URL|BROKER|BACKEND|LOCATION|CHANNEL_LAYERS|CACHES|DATABASES|HOST|DSN",
        flags=re.I,
    )

    def cleanse_setting(self, key, value):
        value = super().cleanse_setting(key, value)
        return mask_urls(value) if isinstance(value, str) else value

    def get_traceback_frame_variables(self, request, tb_frame):
        return [
            (name, mask_urls(value) if isinstance(value, str) else value)
            for name, value in super().get_traceback_frame_variables(request, tb_frame)
        ]
