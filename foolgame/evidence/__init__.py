"""Evidence retrieval for the game: authoring hints, clue lists and stored sentence embeddings.

Thin Django adapters around the plain-Python ``retrieval`` package: sentences become
``retrieval.Doc`` values, embeddings live in the database, and pages' indexes are built by
a Celery task after each import.
"""
