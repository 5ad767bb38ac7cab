"""Accounts: signing up with Django's password rules; logging in, throttled; roles (groups)."""

from __future__ import annotations

import hashlib
import hmac
import re

from django.conf import settings
from django.contrib.auth import authenticate, get_user_model, password_validation
from django.contrib.auth.models import AbstractBaseUser, Group, Permission
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from foolgame.claims.models import Claim
from foolgame.core import hooks
from foolgame.core.errors import ServiceError
from foolgame.core.queries import prepared_rows
from foolgame.core.throttle import throttle_bump, throttle_count, throttle_reset
from foolgame.players.models import Guest, PlayerName, SignupOrigin, TutorialProgress
from foolgame.players.tr39 import skeleton_digest, username_skeleton
from foolgame.players.selectors import player_tutorial
from foolgame.players.validators import has_invisible_characters, is_reserved_username

TAKEN = ("username_taken", "That user name is taken.")
CONFUSABLE = ("username_confusable", "That user name looks like one already taken (letters from other alphabets or look-alike letters count as the same); choose another.")


def _username_in_use(username: str) -> bool:
    return get_user_model().objects.filter(username__iexact=username).exists()


def _confusable_holder(username: str, *, exclude_user_id: int | None = None) -> str | None:
    """The name of another account whose name has this name's TR39 skeleton (case-insensitively), if any."""
    taken = PlayerName.objects.filter(digest=skeleton_digest(username_skeleton(username)))
    if exclude_user_id is not None:
        taken = taken.exclude(user_id=exclude_user_id)
    return taken.values_list("user__username", flat=True).first()


def username_confusable_in_use(username: str, *, exclude_user_id: int | None = None) -> bool:
    return _confusable_holder(username, exclude_user_id=exclude_user_id) is not None


def _name_conflict(username: str) -> tuple[str, str]:
    """The refusal of a name that clashes with another account's: the same name in another
    case (the database's rule, as its unique index on lower(username)) is taken, any other
    look-alike is confusable."""
    same = get_user_model().objects.filter(username__iexact=username).exists()
    return TAKEN if same else CONFUSABLE


def player_name_record(*, user: AbstractBaseUser) -> None:
    """Store the skeleton of the account's name (on every save that may change it: the
    ``post_save`` receiver of ``PlayersConfig``). A name that looks like another account's
    raises IntegrityError from the unique index, which decides between two racing signups;
    the caller's transaction rolls the account back with it."""
    skeleton = username_skeleton(user.get_username())
    digest = skeleton_digest(skeleton)
    row = PlayerName.objects.filter(user_id=user.pk).first()
    if row is None:
        with transaction.atomic():
            PlayerName.objects.create(user_id=user.pk, skeleton=skeleton, digest=digest)
    elif row.digest != digest:  # renamed: a grandfathered twin that takes a new name joins the index
        with transaction.atomic():
            PlayerName.objects.filter(user_id=user.pk).update(skeleton=skeleton, digest=digest, grandfathered=False)


# --- Throttling: fixed windows of cache counters (foolgame.core.throttle) ------------------------


def _throttled(message: str, retry_after: int, code: str) -> ServiceError:
    return ServiceError(code, message, status_code=429, retry_after=retry_after)


def player_authenticate(*, request, username: str, password: str, ip: str | None) -> AbstractBaseUser:
    """The account for these credentials, or ServiceError: invalid_credentials (400) or
    login_throttled (429, even for the right password while over the limit)."""
    limits = settings.FM2_SIGNUP
    ip = ip or "unknown"
    name = (username or "").casefold()
    pair = (name, ip)
    for kind, parts, limit, window in (
        ("login-user-ip", pair, limits["LOGIN_FAILURES_PER_USERNAME_IP"], limits["LOGIN_USERNAME_IP_WINDOW_SECONDS"]),
        ("login-ip", (ip,), limits["LOGIN_FAILURES_PER_IP"], limits["LOGIN_IP_WINDOW_SECONDS"]),
    ):
        failures, retry_after = throttle_count(kind, parts, window)
        if failures >= limit:
            raise _throttled("Too many failed logins; try again later.", retry_after, "login_throttled")
    user = authenticate(request, username=username, password=password)
    if user is None:
        throttle_bump("login-user-ip", pair, limits["LOGIN_USERNAME_IP_WINDOW_SECONDS"])
        throttle_bump("login-ip", (ip,), limits["LOGIN_IP_WINDOW_SECONDS"])
        raise ServiceError("invalid_credentials", "Wrong user name or password.", status_code=400)
    throttle_reset("login-user-ip", pair, limits["LOGIN_USERNAME_IP_WINDOW_SECONDS"])
    return user


def _checked_new_username(username: str, *, max_length: int = 150, what: str = "user name") -> str:
    """The name, normalised, if a new account may take it: 1 to ``max_length`` characters of
    Django's username alphabet, no invisible characters, not reserved, not taken and not a
    look-alike of a name taken (its TR39 skeleton). ServiceError otherwise."""
    username = get_user_model().normalize_username((username or "").strip())
    if not username or len(username) > max_length:
        raise ServiceError("invalid_username", f"Choose a {what} of 1 to {max_length} characters.")
    if " " in username:  # the common case, said plainly (a class types "Kim Lee")
        raise ServiceError("invalid_username", f"A {what} may not hold spaces: use letters, digits and @ . + - _ (no spaces).")
    if has_invisible_characters(username):
        raise ServiceError("invalid_username", f"A {what} may not hold invisible or control characters.")
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        raise ServiceError("invalid_username", f"A {what} may hold letters, digits and @ . + - _ only (no spaces).") from None
    if is_reserved_username(username) or _username_in_use(username):
        raise ServiceError(*TAKEN, status_code=409)
    if _confusable_holder(username) is not None:
        raise ServiceError(*_name_conflict(username), status_code=409)
    return username


def player_create(*, username: str, password: str, ip: str | None = None) -> AbstractBaseUser:
    User = get_user_model()
    username = _checked_new_username(username)
    user = User(username=username)
    try:
        password_validation.validate_password(password or "", user)
    except ValidationError as error:
        raise ServiceError("weak_password", " ".join(error.messages)) from None
    limits = settings.FM2_SIGNUP
    if ip is not None:
        signups, retry_after = throttle_count("signup-ip", (ip,), limits["SIGNUP_IP_WINDOW_SECONDS"])
        if signups >= limits["SIGNUPS_PER_IP"]:
            raise _throttled("Too many accounts created from here; try again later.", retry_after, "signup_throttled")
    user.set_password(password)
    try:
        with transaction.atomic():
            user.save()  # and its PlayerName row (player_name_record), in this transaction
    except (IntegrityError, ValidationError):
        # A racing signup: the unique index on lower(username), or on the skeleton; or the
        # other one committed between our look and our save, and the save's own skeleton
        # check (``signals.refuse_confusable_name``) refused the name.
        raise ServiceError(*_name_conflict(username), status_code=409) from None
    if ip is not None:
        throttle_bump("signup-ip", (ip,), limits["SIGNUP_IP_WINDOW_SECONDS"])
        signup_origin_record(player=user, ip=ip)
    return user


def address_digest(ip: str) -> str:
    """A keyed digest of a client address: equal for equal addresses on this server, and
    nothing a reader of the database can turn back into the address without the secret key."""
    return hmac.new(settings.SECRET_KEY.encode(), b"signup-address:" + ip.encode(), hashlib.sha256).hexdigest()


def signup_origin_record(*, player: AbstractBaseUser, ip: str) -> None:
    """Keep where (as ``address_digest``) and when an account was made."""
    SignupOrigin.objects.update_or_create(player=player, defaults={"address": address_digest(ip), "created": timezone.now()})


# --- Roles: a role is a group with its permissions (moderators, researchers) ----------------


def role_group_ensure(*, name: str, permissions: list[tuple[str, str]]) -> Group:
    """The role's group with these ``(app_label, codename)`` permissions, created when missing.

    Runs after ``migrate`` (and after a test database is flushed), once the permissions exist."""
    group, _ = Group.objects.get_or_create(name=name)
    wanted = Q()
    for app_label, codename in permissions:
        wanted |= Q(content_type__app_label=app_label, codename=codename)
    group.permissions.add(*Permission.objects.filter(wanted))
    return group


def player_role_set(*, username: str, group: Group, member: bool) -> AbstractBaseUser:
    """Put a player in a role's group, or take them out of it."""
    try:
        user = get_user_model().objects.get(username=username)
    except get_user_model().DoesNotExist:
        raise ServiceError("user_not_found", f"No player is called {username!r}.", status_code=404) from None
    if member:
        user.groups.add(group)
    else:
        user.groups.remove(group)
    return user


# --- Guests: an account made with a nickname alone, for live rooms ---------------------------


def _guest_options() -> dict:
    return settings.FM2_GUESTS


def guest_create(*, nickname: str, ip: str | None) -> AbstractBaseUser:
    """A guest account (``Guest``) named ``nickname``, checked as a user name is (length,
    alphabet, invisible characters, reserved, taken, look-alikes), without a password: its
    session is its only key until its player claims it (``guest_claim``). At most
    ``GUESTS_PER_IP`` are made per client address and window (429 ``guest_throttled``; a class
    behind one address shares them). The caller's transaction holds the account, so a join
    refused after it leaves none."""
    options = _guest_options()
    # A class types its names as it says them ("Dave K"): a space, which no account name may
    # hold, becomes "_" ("Dave_K"), and the room shows the name so made.
    nickname = _checked_new_username(re.sub(r" +", "_", (nickname or "").strip()), max_length=options["NICKNAME_MAX_LENGTH"], what="nickname")
    address = ip or "unknown"
    # Counted before the account is made (an atomic increment), so a burst of joins at once
    # cannot all pass a count read before any of them wrote; a join refused later counts too.
    made, retry_after = throttle_bump("guest-ip", (address,), options["GUEST_IP_WINDOW_SECONDS"])
    if made > options["GUESTS_PER_IP"]:
        raise _throttled("Too many guests joined from here lately; try again later, or log in.", retry_after, "guest_throttled")
    User = get_user_model()
    user = User(username=nickname)
    user.set_unusable_password()
    try:
        with transaction.atomic():
            user.save()  # and its PlayerName row, as any account
            Guest.objects.create(user=user, created=timezone.now())
            if ip is not None:
                signup_origin_record(player=user, ip=ip)
    except (IntegrityError, ValidationError):
        raise ServiceError(*_name_conflict(nickname), status_code=409) from None
    return user


def guest_claim(*, user: AbstractBaseUser, password: str) -> AbstractBaseUser:
    """The guest's player keeps the account: with a password (Django's validators) it becomes
    an ordinary one, its name, rooms, votes and points kept, and from then on it may do
    everything a player does and shows on the leaderboards. Anyone else: 403 ``not_a_guest``."""
    with transaction.atomic():
        guest = Guest.objects.select_for_update().filter(user_id=user.pk).first()
        if guest is None:
            raise ServiceError("not_a_guest", "This account is not a guest account; it has a password already.", status_code=403)
        try:
            password_validation.validate_password(password or "", user)
        except ValidationError as error:
            raise ServiceError("weak_password", " ".join(error.messages)) from None
        user.set_password(password)
        user.save(update_fields=["password"])
        guest.delete()
    return user

# --- The first-run tutorial -------------------------------------------------------------------

TUTORIAL_STATES = tuple(TutorialProgress.State.values)


def player_tutorial_set(*, player: AbstractBaseUser, state: str) -> str:
    """Record that the player finished (``done``) or skipped the tutorial, or asked for it
    again (``new``: kept, so it stays until they finish or skip it once more, even though
    they have played and written). Returns the state now stored."""
    if state not in TUTORIAL_STATES:
        raise ServiceError("invalid_tutorial", f"tutorial must be one of: {', '.join(TUTORIAL_STATES)}.")
    TutorialProgress.objects.update_or_create(player_id=player.pk, defaults={"state": state})
    return state


def player_tutorial_get(*, player_id: int) -> str:
    """The player's first-run tutorial (``player_tutorial``), finished by itself once they
    have learned the game: a round finished with a vote (``hooks.rounds_voted``: voting
    answers) and a claim saved. Stored then (``done``), so each page after it reads one row.
    A player who asked for it again (a ``new`` row) keeps it until they finish or skip it."""
    state = player_tutorial(player_id=player_id, stored=True)
    if state is not None:
        return state
    wrote = prepared_rows("player_wrote_a_claim", lambda player: Claim.objects.filter(author_id=player).values_list("pk")[:1], player=player_id)
    if wrote and any(hooks.rounds_voted.send(player_id=player_id)):
        TutorialProgress.objects.get_or_create(player_id=player_id, defaults={"state": TutorialProgress.State.DONE})
        return TutorialProgress.State.DONE.value
    return TutorialProgress.State.NEW.value
