"""Evidence retrieval for Fool Me Twice: plain Python, no Django (tests/test_architecture.py checks it).

The game retrieves over one page's sentences at a time:

- ``LexicalRetriever`` (BM25 over unigrams and bigrams, title and header as context) for
  the authoring hints, with ``highlight`` showing which of the draft's words it matched;
- ``HybridRetriever`` (z-score fusion of BM25 and MiniLM embeddings) for a claim's clue
  list, built from vectors an ``EmbeddingStore`` keeps per (model, text hash);
- a ``Verifier`` that judges a claim against its evidence: ``HeadVerifier`` (the MiniLM
  encoder plus a small head trained with ``train_head_verifier``) by default, or any local
  NLI model folder through ``NliFolderVerifier``.

``retrieval.corpus`` searches every sentence of every page at once, and
``python -m retrieval.evaluate`` measures all of them on an FM2 file.

Heavy dependencies (torch, onnxruntime, sentence-transformers) are imported only when a
model is first used, so importing this package stays cheap for the web process.
"""

from retrieval.base import Doc, DocId, Hit, Retriever
from retrieval.dense import DenseRetriever, passage_text
from retrieval.encoder import Encoder, TextEncoder, export_onnx
from retrieval.game import Hint, clue_ids_for_claim, hints_for_draft
from retrieval.hybrid import HybridRetriever
from retrieval.lexical import LexicalRetriever
from retrieval.store import (
    EmbeddingStore,
    FileEmbeddingStore,
    MemoryEmbeddingStore,
    encode_with_store,
    text_key,
)
from retrieval.text import highlight
from retrieval.verifier import (
    HeadVerifier,
    NliFolderVerifier,
    Verdict,
    Verifier,
    train_head_verifier,
)

__all__ = [
    "DenseRetriever",
    "Doc",
    "DocId",
    "EmbeddingStore",
    "Encoder",
    "FileEmbeddingStore",
    "HeadVerifier",
    "Hint",
    "Hit",
    "HybridRetriever",
    "LexicalRetriever",
    "MemoryEmbeddingStore",
    "NliFolderVerifier",
    "Retriever",
    "TextEncoder",
    "Verdict",
    "Verifier",
    "clue_ids_for_claim",
    "encode_with_store",
    "export_onnx",
    "highlight",
    "hints_for_draft",
    "passage_text",
    "text_key",
    "train_head_verifier",
]
