"""Authoring: write tasks, claim creation with the server's guardrails, and the giveaway detector."""
