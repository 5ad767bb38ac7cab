from django.apps import AppConfig


class RoomsConfig(AppConfig):
    name = "foolgame.rooms"
    verbose_name = "Live rooms"

    def ready(self) -> None:
        """A room's rounds are played with the round services: rooms tells voting how their
        answers wait for the question (``RoomGroups``), ends a question when a round
        service settles its last round (``round_settled``), and keeps from a host who ran a
        room without playing the claims whose answers they saw (``claims_kept_from``)."""
        from foolgame.core import hooks
        from foolgame.rooms.rounds import RoomGroups, room_round_settled
        from foolgame.rooms.selectors import claims_shown_to_hosts

        hooks.round_groups.set(RoomGroups())
        hooks.round_settled.connect(room_round_settled)
        hooks.claims_kept_from.connect(claims_shown_to_hosts)
