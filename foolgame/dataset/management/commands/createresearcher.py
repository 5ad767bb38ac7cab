from foolgame.dataset.services import researcher_set
from foolgame.players.roles import role_command

Command = role_command(
    role="researcher",
    group="researchers",
    what="who may export the dataset and download its files",
    role_set=lambda username, member: researcher_set(username=username, researcher=member),
)
