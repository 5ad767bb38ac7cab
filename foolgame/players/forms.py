from __future__ import annotations

from django import forms
from django.contrib.auth.models import AbstractBaseUser

from foolgame.api.errors import ServiceError
from foolgame.players.services import player_create


class SignupForm(forms.Form):
    username = forms.CharField(max_length=150, widget=forms.TextInput(attrs={"autocomplete": "username", "autofocus": True}))
    password = forms.CharField(widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}), help_text="At least 8 characters, not all digits, not a common password.")

    user: AbstractBaseUser | None = None

    def clean(self) -> dict:
        data = super().clean()
        if self.errors:
            return data
        try:
            self.user = player_create(username=data["username"], password=data["password"])
        except ServiceError as error:
            field = "password" if error.code == "weak_password" else "username"
            self.add_error(field, error.message)
        return data
