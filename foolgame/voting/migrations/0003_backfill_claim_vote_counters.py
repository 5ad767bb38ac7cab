"""Fill ``Claim.game_votes`` (issue 14) from the voted rounds already played."""

from django.db import migrations


def backfill(apps, schema_editor) -> None:
    from foolgame.voting.counters import claim_counters_backfill

    claim_counters_backfill(claim_model=apps.get_model("claims", "Claim"), seen_model=apps.get_model("voting", "SeenClaim"))


class Migration(migrations.Migration):
    dependencies = [
        ("claims", "0002_claim_vote_counters"),
        ("voting", "0002_round_answer_voided_report_weight"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
