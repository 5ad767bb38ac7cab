"""Error reports: sentry-sdk for Django and Celery, turned on by ``SENTRY_DSN`` (the settings
call ``sentry_init``; nothing here imports Django, so the settings module may)."""

from __future__ import annotations


def sentry_init(dsn: str, *, environment: str, traces_sample_rate: float) -> None:
    """No personal data is sent (``send_default_pii`` off: no user name, address or cookie), nor
    any request body (claims, labels, passwords)."""
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        send_default_pii=False,
        max_request_body_size="never",
        traces_sample_rate=traces_sample_rate,
    )
