from django.apps import AppConfig


class VotingConfig(AppConfig):
    name = "foolgame.voting"
    verbose_name = "Voting rounds"
