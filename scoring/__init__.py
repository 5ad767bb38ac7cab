"""The game's scoring brain, as plain Python (no Django, Channels or Celery).

- ``scoring.rounds``: a voting round's clock, voter points and zero-sum awards.
- ``scoring.filters``: smoothed claim scores, a fitted Beta prior, too-hard/too-easy flags.
- ``scoring.artifacts``: LMI/PMI artifacts, claim-only baseline and split statistics for
  the researchers' export (imports scikit-learn lazily, inside the baseline only).

Submodules are not imported here, so ``import scoring.rounds`` stays free of scipy.
"""
