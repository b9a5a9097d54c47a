"""Finding memories: tokens, the derived index, ranking, paging and reading (uses ``files``).

- ``text``: ``tokens`` (CJK bigrams included), ``paragraphs`` (numbered by ``file_lines``);
  ``words``: a question's words weighed (function words, IDF).
- ``index``: ``SearchIndex``, the rebuildable SQLite cache; ``sync`` keeps it in step
  with the files, ``scoring`` holds its BM25 queries; ``watch``: ``DirectoryWatcher``.
- ``retrieve``: ``search`` — two-stage retrieval; ``passage``: the paragraphs of the
  first results that answer, quoted; ``results``: ``SearchResponse``, ``SearchResult``,
  ``Coverage`` and the paging cursor.
- ``vectors``: ``VectorStore`` — one embedding per distinct text, its SQLite item table
  over ``matrix``'s int8 rows file; ``vector_sync`` keeps it in step; ``hybrid``: modes.
- ``reading``: ``read`` — a page of a memory by line or byte, revision-checked.
- ``evaluate``: ``evaluate`` — recall and spurious rates on an evaluation set.
- ``schema``: the index's tables; ``degraded``: searching when the state directory
  cannot be written; ``gate``: does a question concern the memories at all, measured
  against ``background``'s generic questions and ``vocabulary``, the folder's own
  words; ``superseded``: a replaced memory never ranks above its replacement;
  ``progress``: ``Progress``, the callback long work (indexing, embedding, importing,
  consolidating) reports to.

Works on a ``MemoryFolder``; never writes a memory.
"""
