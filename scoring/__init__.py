"""The game's scoring brain, as plain Python (no Django, Channels or Celery).

- ``scoring.rounds``: a voting round's clock, voter points and zero-sum awards.
- ``scoring.filters``: smoothed claim scores, a fitted Beta prior, too-hard/too-easy flags.
- ``scoring.ratings``: Glicko-2 (vote by vote) and Rasch (batch) ratings of players' skill
  and claims' difficulty, each with its uncertainty, and a too-hard flag from them.
- ``scoring.validation``: checkers' weights from hidden gold items, a claim's weighted
  gold label (MultiNLI's 3 of 5), Fleiss' kappa and MultiNLI's validation table.
- ``scoring.artifacts``: LMI/PMI artifacts, claim-only baseline and split statistics for
  the researchers' export (imports scikit-learn lazily, inside the baseline only).

Submodules are not imported here, so ``import scoring.rounds`` stays free of scipy.
"""
