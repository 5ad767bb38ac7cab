"""One error shape for the whole REST API: ``{"error": {"code": ..., "message": ...}}``.

Services raise :class:`ServiceError` with a stable code from :class:`ErrorCode`, the one
registry of codes; DRF's own exceptions (validation, authentication, permission, not found)
are mapped to the same shape so that scripts only ever parse one thing.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import OperationalError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def _service_down_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [OperationalError]
    try:
        import redis.exceptions

        errors += [redis.exceptions.ConnectionError, redis.exceptions.TimeoutError]
    except ImportError:  # pragma: no cover
        pass
    try:  # the PostgreSQL connection pool, when one is configured
        from psycopg_pool import PoolTimeout

        errors.append(PoolTimeout)
    except ImportError:  # pragma: no cover
        pass
    try:  # Celery's broker unreachable
        from kombu.exceptions import OperationalError as KombuOperationalError

        errors.append(KombuOperationalError)
    except ImportError:  # pragma: no cover
        pass
    return tuple(errors)


SERVICE_DOWN_ERRORS = _service_down_errors()
"""What a backing service down raises: the database, Redis, the connection pool, the broker.
REST answers them 503 (``foolgame.middleware``), sockets close 1013 (``core.sockets``)."""


# --- The registry of error codes ------------------------------------------------------------------


class ErrorCode(StrEnum):
    """Every code a client can meet in an error: ``{"error": {"code"}}`` over REST, an
    ``error`` frame's ``code`` on a socket, a refused claim's ``details[].code``. Each member
    is its code's string (raise sites may write the string: ``ServiceError("round_over", ...)``
    is ``ServiceError(ErrorCode.ROUND_OVER, ...)``), with the HTTP statuses it is answered with
    (the usual one first; none for a code only a socket sends), whether the socket base itself
    sends it in an ``error`` frame, and a one-line meaning.

    ``tests/core/test_error_codes.py`` reads every raise site under ``foolgame/`` and fails on
    a code that is not here or a status it does not list; the OpenAPI schema's error lists
    (``core.schema.errors``) and ``docs/errors.md`` are built or checked from it. A code is
    public: never rename one, add a new one."""

    statuses: tuple[int, ...]
    socket: bool
    meaning: str

    def __new__(cls, value: str, statuses: tuple[int, ...], meaning: str, socket: bool = False) -> "ErrorCode":
        member = str.__new__(cls, value)
        member._value_ = value
        member.statuses = statuses
        member.socket = socket
        member.meaning = meaning
        return member

    # Any request: the transport, the body, the session.
    INVALID = "invalid", (400,), "a field is missing or has the wrong type, or the body is not a JSON object (details names each field)"
    PARSE_ERROR = "parse_error", (400,), "the body is not valid JSON (or a multipart body that cannot be read)"
    TOO_DEEP = "too_deep", (400,), "JSON nested deeper than FM2_MAX_JSON_DEPTH (20 by default); it was not parsed", True
    BAD_REQUEST = "bad_request", (400,), "Django refused the request before the API saw it"
    NOT_AUTHENTICATED = "not_authenticated", (403,), "not logged in (send the session cookie)", True
    PERMISSION_DENIED = "permission_denied", (403,), "logged in without the role this needs, or the CSRF check failed (send X-CSRFToken)"
    FORBIDDEN = "forbidden", (403,), "/metrics without the bearer token or from outside the allowed networks"
    NOT_FOUND = "not_found", (404,), "nothing has this id or path (a page, an export, a check, a model version, a room or round on a socket)", True
    METHOD_NOT_ALLOWED = "method_not_allowed", (405,), "the endpoint does not answer this HTTP method (the Allow header lists those it does)"
    NOT_ACCEPTABLE = "not_acceptable", (406,), "the Accept header asks for a type the API does not answer (it answers JSON)"
    BODY_TOO_LARGE = "body_too_large", (413,), "the body is over FM2_MAX_BODY_BYTES (64 KiB by default); nothing was read"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type", (415,), "the body is not sent as application/json"
    SERVER_ERROR = "server_error", (500,), "the server failed to answer; the failure was logged", True
    SERVICE_UNAVAILABLE = "service_unavailable", (503,), "the database, Redis or the task broker is down; retry after Retry-After", True
    ERROR = "error", (), "an HTTP error status with no code of its own (none of the above)"

    # The socket base: frames it refuses, refusals it closes with.
    TEXT_ONLY = "text_only", (), "a binary frame; send JSON text", True
    FRAME_TOO_LARGE = "frame_too_large", (), "the frame is over FM2_WS_MAX_FRAME_BYTES (4,096 bytes by default)", True
    BAD_JSON = "bad_json", (), "the frame is not JSON, or not a JSON object", True
    BAD_NUMBER = "bad_number", (), "the frame holds NaN, Infinity or another non-finite number", True
    UNKNOWN_TYPE = "unknown_type", (), "the frame's type is missing or not one the socket answers", True
    INVALID_NOTE = "invalid_note", (), "a report's note is not text", True
    RATE_LIMITED = "rate_limited", (), "more than FM2_WS_MAX_FRAMES_PER_SECOND frames in a second; this one was ignored", True
    NOT_YOUR_ROUND = "not_your_round", (), "the round belongs to another player (close 4403)", True
    TOO_MANY_SOCKETS = "too_many_sockets", (), "the player holds FM2_WS_MAX_SOCKETS_PER_PLAYER sockets open already (close 4429)", True
    NOT_PLAYING = "not_playing", (), "a room member without a round in the question playing (they play from the next one)", True

    # Players and accounts.
    INVALID_CREDENTIALS = "invalid_credentials", (400,), "wrong user name or password (which of the two is not said)"
    INVALID_USERNAME = "invalid_username", (400,), "a user name or nickname that is empty, too long, or holds other than letters, digits and @ . + - _"
    WEAK_PASSWORD = "weak_password", (400,), "the password fails Django's password validators (the message says which)"
    INVALID_TUTORIAL = "invalid_tutorial", (400,), "tutorial is not new, done or skipped"
    USERNAME_TAKEN = "username_taken", (409,), "another account has this name (compared without case), or it is reserved"
    USERNAME_CONFUSABLE = "username_confusable", (409,), "the name looks like another account's (the same confusable skeleton)"
    NOT_A_GUEST = "not_a_guest", (403,), "the account has a password already"
    GUEST_NOT_ALLOWED = "guest_not_allowed", (403,), "a guest account does not do this until it is kept with a password", True
    USER_NOT_FOUND = "user_not_found", (404,), "no player has this user name (the role commands)"
    LOGIN_THROTTLED = "login_throttled", (429,), "too many failed logins for this name from this address, or from this address; see Retry-After"
    SIGNUP_THROTTLED = "signup_throttled", (429,), "too many accounts made from this address (FM2_SIGNUPS_PER_IP an hour); see Retry-After"
    GUEST_THROTTLED = "guest_throttled", (429,), "too many guests joined from this address lately; see Retry-After"

    # Writing claims: the task, the text, the gold sentences, the limits.
    UNKNOWN_PAGE = "unknown_page", (404,), "no page has this id"
    UNKNOWN_CATEGORY = "unknown_category", (404, 400), "no category has this slug or name (400 from a room's settings)"
    NO_PAGE = "no_page", (404,), "no page is ready for writing (in this category)"
    TOO_MANY_OPEN_TASKS = "too_many_open_tasks", (409,), "the player holds the maximum of open write tasks"
    PAGE_NOT_WRITABLE = "page_not_writable", (409,), "the chosen page has too few sentences to write about"
    TASK_NOT_FOUND = "task_not_found", (404,), "no write task has this id"
    TASK_NOT_YOURS = "task_not_yours", (403,), "the write task was given to another player"
    TASK_USED = "task_used", (409,), "the write task already has its claim"
    TASK_EXPIRED = "task_expired", (410,), "the write task's time (with the grace period) is over"
    TEXT_INVALID = "text_invalid", (400,), "the claim's text is not text"
    TEXT_EMPTY = "text_empty", (400,), "the claim's text is empty"
    TEXT_TOO_SHORT = "text_too_short", (400,), "the claim has fewer than FM2_CLAIM_MIN_WORDS (4) words"
    TEXT_TOO_LONG = "text_too_long", (400,), "the claim has more than FM2_CLAIM_MAX_WORDS (60) words or 600 characters"
    TEXT_NO_WORDS = "text_no_words", (400,), "the claim is not written in words (fewer than 3 real words)"
    TEXT_CONTROL_CHARACTERS = "text_control_characters", (400,), "the claim holds control characters"
    TEXT_OFF_PAGE = "text_off_page", (400,), "the claim names nothing of its page"
    NOT_A_SENTENCE = "not_a_sentence", (400,), "the claim's words read as well in any order (word salad)"
    NOT_FLUENT = "not_fluent", (400,), "the claim does not read as a claim (a template of page words)"
    GOLD_INVALID = "gold_invalid", (400,), "gold_sentence_ids is not a list of sentence ids"
    GOLD_COUNT = "gold_count", (400,), "not 1 or 2 gold sentences"
    GOLD_DUPLICATE = "gold_duplicate", (400,), "the same gold sentence is marked twice"
    GOLD_NOT_ON_PAGE = "gold_not_on_page", (400,), "a gold sentence is not a current sentence of the claim's page"
    GOLD_TOO_EASY = "gold_too_easy", (400,), "a gold sentence is the lexical retriever's top hit for the claim"
    COPIES_GOLD = "copies_gold", (400,), "the claim repeats a gold sentence nearly word for word"
    NEAR_DUPLICATE = "near_duplicate", (409,), "an active claim of the page is nearly the same, or one word away"
    CLAIM_RATE_LIMITED = "claim_rate_limited", (429,), "FM2_CLAIMS_PER_WINDOW claims in the window or FM2_CLAIMS_PER_DAY in a day; see Retry-After"
    CHECK_THROTTLED = "check_throttled", (429,), "too many draft checks this minute; see Retry-After"
    CHECK_DURING_ROUND = "check_during_round", (403,), "no draft checks on the page of a round the player is playing"

    # Evidence hints.
    INVALID_QUERY = "invalid_query", (400,), "the draft sent for hints is over its length limit"
    HINTS_DURING_ROUND = "hints_during_round", (403,), "no hints on the page of a round the player is in"
    HINTS_NEED_TASK = "hints_need_task", (403,), "no open write task of the player's on this page"
    HINTS_OFF = "hints_off", (403,), "the player's game offers no hints while writing (a study's arm)"
    INVALID_GOLD = "invalid_gold", (400,), "gold sentences that are not 1 or 2 different sentences of the claim's page"

    # Rounds: dealing, the clock, votes, likes, reports, lists.
    TOO_MANY_OPEN_ROUNDS = "too_many_open_rounds", (409,), "finish or give up one of the player's open rounds first"
    DEAL_RATE_LIMITED = "deal_rate_limited", (429,), "too many rounds dealt in the last hour; details has retry_after and retry_at"
    NO_PAIR_AVAILABLE = "no_pair_available", (404, 409), "no fair pair of claims is left (409: a parallel deal took it; try again)"
    ROUND_NOT_FOUND = "round_not_found", (404,), "no round of yours has this id (another player's round is not found either)", True
    ROUND_NOT_STARTED = "round_not_started", (409,), "start the round first"
    ROUND_OVER = "round_over", (409,), "the round already has its vote, timed out, was reported, voided or given up"
    ROUND_EXPIRED = "round_expired", (409,), "time ran out just now; the round is timed out"
    NO_MORE_CLUES = "no_more_clues", (409,), "every clue of this claim is revealed"
    NOT_ENOUGH_TIME = "not_enough_time", (409,), "the clue's cost would leave no time to vote"
    CLUES_OFF = "clues_off", (403,), "the round is played without clues (a study's arm)"
    VOTE_FIRST = "vote_first", (409,), "likes come after the vote"
    ALREADY_LIKED = "already_liked", (409,), "this round already has its like"
    ROUND_VOIDED = "round_voided", (409,), "a moderator already changed a claim of this round"
    REPORT_WINDOW_CLOSED = "report_window_closed", (409,), "reports are taken during a round and for a while after it ends"
    ALREADY_REPORTED = "already_reported", (409,), "the player already reported this claim"
    REPORT_RATE_LIMITED = "report_rate_limited", (429,), "too many reports in the last hour or day; details has retry_after and retry_at"
    FORFEIT_RATE_LIMITED = "forfeit_rate_limited", (429,), "too many rounds given up in the last hour; details has retry_after and retry_at"
    INVALID_CLAIM = "invalid_claim", (400,), "claim (or false_claim) is not 0 or 1, or not a claim id", True
    INVALID_REASON = "invalid_reason", (400,), "reason is not one of the listed reasons", True
    NOTE_TOO_LONG = "note_too_long", (400,), "a report's note is over 1,000 characters"
    OPEN_REQUIRED = "open_required", (400,), "the query lacks open=1"
    INVALID_OFFSET = "invalid_offset", (400,), "offset is not a whole number in range"
    INVALID_LIMIT = "invalid_limit", (400,), "limit is not a whole number in range"
    INVALID_KIND = "invalid_kind", (400,), "kind is not one of the leaderboard's kinds"

    # Live rooms.
    INVALID_QUESTIONS = "invalid_questions", (400,), "questions is outside 1 to the room's maximum"
    INVALID_SECONDS = "invalid_seconds", (400,), "seconds is outside the room's bounds"
    TRY_AGAIN = "try_again", (409,), "no free room code was found; try again"
    TOO_MANY_OPEN_ROOMS = "too_many_open_rooms", (409,), "the player hosts the maximum of rooms not ended; details.rooms lists them"
    ROOM_RATE_LIMITED = "room_rate_limited", (429,), "too many rooms made in the last hour; details has retry_after and retry_at"
    JOIN_LEAVE_RATE_LIMITED = "join_leave_rate_limited", (429,), "too many joins and leaves in a minute; details.retry_after"
    ROOM_NOT_FOUND = "room_not_found", (404,), "no room has this code"
    NOT_HOST = "not_host", (403,), "only the room's host does this"
    ROOM_OVER = "room_over", (409,), "the room has ended"
    ROOM_FULL = "room_full", (409,), "the room holds its maximum of players"
    NOT_A_MEMBER = "not_a_member", (403,), "the player is not in this room", True
    QUESTION_PLAYING = "question_playing", (409,), "the current question is still being played"
    NOBODY_PRESENT = "nobody_present", (409,), "no member is present to play"
    NO_QUESTION_PLAYING = "no_question_playing", (409,), "no question is playing now"
    ROOM_NOT_OVER = "room_not_over", (409,), "the room has not ended yet"
    ALREADY_LOGGED_IN = "already_logged_in", (409,), "the player has an account: join with POST /api/rooms/<code>/join"

    # Moderation.
    NOT_A_MODERATOR = "not_a_moderator", (403,), "only moderators do this"
    INVALID_ACTION = "invalid_action", (400,), "action is not one of the listed actions"
    REASON_REQUIRED = "reason_required", (400,), "every moderation action needs a reason"
    REASON_TOO_LONG = "reason_too_long", (400,), "the reason is over its length"
    UNEXPECTED_FIELD = "unexpected_field", (400,), "a field that goes only with another action"
    INVALID_LABEL = "invalid_label", (400,), "label is not one of the listed labels"
    INVALID_STATUS = "invalid_status", (400,), "status is not held, cleared or confirmed"
    CLAIM_NOT_FOUND = "claim_not_found", (404,), "no claim has this id"
    CLAIM_REMOVED = "claim_removed", (409,), "the claim was removed; removed claims stay as they are"
    LABEL_UNCHANGED = "label_unchanged", (400,), "the claim already has this label"
    GOLD_NOT_FOUND = "gold_not_found", (400,), "no sentence has this id (details.sentence_ids names them)"
    GOLD_RETIRED = "gold_retired", (400,), "the sentence is no longer part of the page (details.sentence_ids names them)"
    GOLD_UNCHANGED = "gold_unchanged", (400,), "those are already the claim's gold sentences"
    HOLD_NOT_FOUND = "hold_not_found", (404,), "this player is not held and never was"
    ALREADY_CLEARED = "already_cleared", (409,), "the hold is cleared already"
    HOLD_NOT_OPEN = "hold_not_open", (409,), "only a held player can be confirmed"

    # Checks (validating claims).
    CHECK_RATE_LIMITED = "check_rate_limited", (429,), "too many checks dealt in the last hour (FM2_CHECKS_PER_HOUR)"
    NOTHING_TO_CHECK = "nothing_to_check", (409,), "no claim is left that the player may check"
    CHECK_ANSWERED = "check_answered", (409,), "this check has its answer already"
    CHECK_EXPIRED = "check_expired", (409,), "the check's clock ran out; deal the next one"

    # Dataset exports.
    NOT_RESEARCHER = "not_researcher", (403,), "only researchers export the dataset"
    INVALID_OPTIONS = "invalid_options", (400,), "an export's options are invalid (the message says which)"

    # Studies: defining one, arriving, the participant's way through.
    NOT_A_STUDY_RUNNER = "not_a_study_runner", (403,), "only researchers (the run_study permission, staff) define studies"
    STUDY_NOT_FOUND = "study_not_found", (404,), "no study has this slug"
    CONSENT_REQUIRED = "consent_required", (400,), "consent is not true: nothing was stored"
    STUDY_PAUSED = "study_paused", (403,), "the study is paused: nobody new may start (participants who started may finish)"
    STUDY_CLOSED = "study_closed", (403,), "the study is closed, or every arm is full: nobody new may start"
    STUDY_ADDRESS_CAP = "study_address_cap", (429,), "the study's cap of participants from one address is reached"
    NOT_A_PARTICIPANT = "not_a_participant", (403,), "the account is not a participant of this study"
    PARTICIPANT_NOT_ALLOWED = "participant_not_allowed", (403,), "a study's participant account does not use rooms, moderation or exports"
    PARTICIPANT_NOT_FOUND = "participant_not_found", (404,), "the study has no participant with this platform id (manage.py study forget)"
    # Studies: the researcher's view (foolgame/studies/research.py).
    NOT_STUDY_OWNER = "not_study_owner", (403,), "only the study's owner may see its bonus file or participants, or pause, resume or close it (staff may read its figures)"
    STUDY_ALREADY_CLOSED = "study_already_closed", (409,), "the study is closed, and closing is final: it cannot be paused, resumed or closed again"

    # The model in the loop (the verifier command).
    ALREADY_ACTIVE = "already_active", (409,), "this model version is active already"
    NOTHING_ACTIVE = "nothing_active", (409,), "no model version is active"
    NOTHING_TO_ROLL_BACK_TO = "nothing_to_roll_back_to", (409,), "the active version is the first that was active"


class WarningCode(StrEnum):
    """The codes of a saved claim's ``warnings`` (and a draft check's): advice that did not
    stop the save, never a refusal."""

    NOT_STANDALONE = "not_standalone"
    CLOSE_TO_EXISTING_CLAIM = "close_to_existing_claim"
    GIVEAWAY = "giveaway"


class ServiceError(Exception):
    """A rule of the game was broken; nothing was written. Carries a stable code."""

    status_code = status.HTTP_400_BAD_REQUEST

    def __init__(self, code: str, message: str, *, status_code: int | None = None, details: Any = None, retry_after: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after
        self.code = code
        self.message = message
        self.details = details
        if status_code is not None:
            self.status_code = status_code


def _first_message(detail: Any) -> str:
    if isinstance(detail, dict):
        for field, value in detail.items():
            text = _first_message(value)
            return text if field in ("non_field_errors", "detail") else f"{field}: {text}"
        return "Invalid input."
    if isinstance(detail, list):
        return _first_message(detail[0]) if detail else "Invalid input."
    return str(detail)


def field_problems(detail: Any, field: str | None = None, where: str = "") -> list[dict[str, str]]:
    """A DRF validation error's detail as a list of ``{code, field, message}``, one for each
    message, the shape of a refused claim's ``details``: ``field`` is the top-level field
    (``non_field_errors`` for the body as a whole), a message about an item or a nested
    field starts with where it is (``gold_sentence_ids[1]: A valid integer is required.``)."""
    if isinstance(detail, dict):
        problems = []
        for key, value in detail.items():
            inner = f"{where}[{key}]" if field is not None and isinstance(key, int) else f"{where}.{key}" if field is not None else str(key)
            problems += field_problems(value, str(key) if field is None else field, inner)
        return problems
    if isinstance(detail, list):
        return [problem for item in detail for problem in field_problems(item, field, where)]
    prefix = f"{where}: " if field is not None and where != field else ""
    return [{"code": str(ErrorCode.INVALID), "field": field or "non_field_errors", "message": f"{prefix}{detail}"}]


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return {"error": error}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ServiceError):
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status_code, headers=headers)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        code, details = "invalid", exc.detail
        if getattr(context.get("view"), "validation_details", "fields") == "problems":
            details = field_problems(exc.detail)
    else:
        code, details = getattr(exc, "default_code", "error"), None
        if isinstance(exc.detail, exceptions.ErrorDetail):
            code = exc.detail.code or code
    response.data = error_body(str(code), _first_message(exc.detail), details)
    return response


# --- docs/errors.md --------------------------------------------------------------------------

DOC_BEGIN = "<!-- error codes: generated from foolgame.core.errors.ErrorCode by `python -m foolgame.core.errors`; do not edit -->"
DOC_END = "<!-- end of error codes -->"


def error_codes_markdown() -> str:
    """The table of every error code and warning code, as ``docs/errors.md`` shows it."""
    lines = ["| code | HTTP | socket frame | meaning |", "| --- | --- | --- | --- |"]
    for code in sorted(ErrorCode, key=str):
        http = ", ".join(str(status) for status in code.statuses) or ("other" if code is ErrorCode.ERROR else "—")
        lines.append(f"| `{code}` | {http} | {'yes' if code.socket else ''} | {code.meaning} |")
    lines += ["", "Warnings (in a saved claim's or a draft check's `warnings`; they never stop the save):", ""]
    lines += [", ".join(f"`{code}`" for code in WarningCode)]
    return "\n".join(lines)


def write_error_codes_doc(path: Any) -> bool:
    """Replace the generated table in ``path``; True when it changed."""
    from pathlib import Path

    text = Path(path).read_text(encoding="utf-8")
    head, _, rest = text.partition(DOC_BEGIN + "\n")
    _, _, tail = rest.partition(DOC_END)
    new = f"{head}{DOC_BEGIN}\n{error_codes_markdown()}\n{DOC_END}{tail}"
    Path(path).write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":  # python -m foolgame.core.errors: rewrite the table of docs/errors.md
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "errors.md"
    print(f"{doc}: {'updated' if write_error_codes_doc(doc) else 'up to date'}")
