from foolgame.moderation.actions import moderator_set
from foolgame.players.roles import role_command

Command = role_command(
    role="moderator",
    group="moderators",
    what="who may work the moderation queue",
    role_set=lambda username, member: moderator_set(username=username, moderator=member),
)
