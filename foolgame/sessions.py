"""Sessions in the cache, backed by the database, that outlive a cache outage.

Django's cached_db engine already reads the database when the cache raises on a read, but
then raises on the write-back (and on ``exists`` and ``delete``): with Redis down, every
logged-in request failed with a 500. Here a cache error on a read or a write is a miss (the
database holds the truth, players stay logged in); deleting a session (logout, a new login)
touches the cache first, so an outage refuses it (503) rather than leave a cached copy that
would log the player back in once Redis returns.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.sessions.backends.cached_db import SessionStore as CachedDBStore
from django.contrib.sessions.backends.db import SessionStore as DBStore

from foolgame.core.caches import shared_cache

logger = logging.getLogger("django.contrib.sessions")


class SessionStore(CachedDBStore):
    def __init__(self, session_key: str | None = None) -> None:
        DBStore.__init__(self, session_key)
        self._cache = shared_cache(settings.SESSION_CACHE_ALIAS)  # one per process, not per socket

    def load(self):
        try:
            data = self._cache.get(self.cache_key)
        except Exception as error:  # one line per request while Redis is down, not a traceback
            logger.warning("Session cache unreadable; reading the database: %s", error)
            data = None
        if data is not None:
            return data
        stored = self._get_session_from_db()
        if not stored:
            return {}
        data = self.decode(stored.session_data)
        try:
            self._cache.set(self.cache_key, data, self.get_expiry_age(expiry=stored.expire_date))
        except Exception as error:
            logger.warning("Session cache unwritable: %s", error)
        return data

    def exists(self, session_key):
        if not session_key:
            return False
        try:
            if (self.cache_key_prefix + session_key) in self._cache:
                return True
        except Exception as error:
            logger.warning("Session cache unreadable; asking the database: %s", error)
        return super(CachedDBStore, self).exists(session_key)

    def delete(self, session_key=None):
        if session_key is None:
            if self.session_key is None:
                return
            session_key = self.session_key
        self._cache.delete(self.cache_key_prefix + session_key)  # raises while the cache is down
        super(CachedDBStore, self).delete(session_key)
