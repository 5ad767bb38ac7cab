from django.apps import AppConfig


class VerifierConfig(AppConfig):
    name = "foolgame.verifier"
    label = "verifier"
    verbose_name = "The model in the loop"

    def ready(self) -> None:
        """Authoring asks this app for the model's verdicts; checks, votes and the skill board
        tell it what happened (foolgame/core/hooks.py)."""
        from foolgame.core import hooks
        from foolgame.verifier import receivers

        hooks.model_verdicts.set(receivers.Verdicts())
        hooks.check_answered.connect(receivers.check_answered)
        hooks.claims_voted.connect(receivers.claims_voted)
        hooks.skill_board_machines.connect(receivers.skill_board_rows)
