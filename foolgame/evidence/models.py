"""Sentence embeddings, stored once per model and text."""

from __future__ import annotations

from django.db import models


class SentenceEmbedding(models.Model):
    """The vector a model made for one passage text (``retrieval.passage_text`` of a sentence).

    Keyed by the SHA-256 of the exact text encoded rather than by sentence id: a re-import
    that recreates a sentence with the same text finds its vector again, sentences sharing a
    text share one row, and an edited sentence gets a new key, so a stale vector is never
    used. Rows whose text no sentence has any more are harmless (and few); nothing prunes them.
    """

    model_name = models.CharField(max_length=200)
    text_key = models.CharField(max_length=64, help_text="SHA-256 (hex) of the UTF-8 passage text.")
    dim = models.PositiveSmallIntegerField()
    vector = models.BinaryField(help_text="dim float32 values, little-endian.")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["model_name", "text_key"], name="sentence_embedding_unique")
        ]

    def __str__(self) -> str:
        return f"{self.model_name} {self.text_key[:12]}"
