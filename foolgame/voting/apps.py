from django.apps import AppConfig


class VotingConfig(AppConfig):
    name = "foolgame.voting"
    verbose_name = "Voting rounds"

    def ready(self) -> None:
        from foolgame.core import hooks
        from foolgame.voting.selectors import player_has_open_round_on_page, player_voted_a_round

        hooks.page_in_play.connect(player_has_open_round_on_page)
        hooks.rounds_voted.connect(player_voted_a_round)
