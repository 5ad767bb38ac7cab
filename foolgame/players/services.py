"""Accounts: signing up with Django's password rules."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from foolgame.api.errors import ServiceError

RESERVED_USERNAMES = {settings.FM2["RELEASE_AUTHOR"]}


def player_create(*, username: str, password: str) -> AbstractBaseUser:
    User = get_user_model()
    username = (username or "").strip()
    if not username or len(username) > 150:
        raise ServiceError("invalid_username", "Choose a user name of 1 to 150 characters.")
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        raise ServiceError("invalid_username", "A user name may hold letters, digits and @ . + - _ only.") from None
    if username.lower() in RESERVED_USERNAMES or User.objects.filter(username__iexact=username).exists():
        raise ServiceError("username_taken", "That user name is taken.", status_code=409)
    user = User(username=username)
    try:
        password_validation.validate_password(password or "", user)
    except ValidationError as error:
        raise ServiceError("weak_password", " ".join(error.messages)) from None
    user.set_password(password)
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError:
        raise ServiceError("username_taken", "That user name is taken.", status_code=409) from None
    return user
