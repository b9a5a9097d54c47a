"""Guarded writes and the conflict queue (uses ``files``).

- ``guard``: ``guarded_write`` — replace a memory only if it is still at the revision
  its writer read; ``REQUIRED``.
- ``conflicts``: the records of refused writes and contradictions in
  ``<state>/conflicts/`` (``record_write_conflict``, ``contradict``, ``load``,
  ``list_conflicts``).
- ``contradictions``: what an open contradiction keeps out of injection (``disputed``)
  and which records are moot, one side no longer a live memory (``moot_sides``).
- ``resolve``: settling a recorded conflict (``resolve_keep``, ``resolve_invalidate``,
  and undoing a resolution).
- ``remember``: saving by title — update the memory a title already names, write nothing
  over one only similar (``decide``, ``remember``, ``RememberResult``, ``SIMILAR_AT``).
- ``close_titles``: the cheap pass before ``decide`` scores a memory (``TitleCard``,
  ``candidates``); ``title_cache``: every live memory's card from
  ``<state>/titles.json``, re-read only for files that changed (``live_cards``).
- ``changelog``: ``<state>/journal.jsonl``, one line per change sagemem made (``record``,
  ``record_write``, ``read``, ``parse_since``); never a memory's text.
- ``versions``: ``<state>/versions/<sha256>``, the bytes each write replaced, bounded,
  checked by hash when read (``keep``, ``load``, ``kept``, ``prune``).
- ``redact``: secrets become ``<REDACTED:kind>`` before any write (``redact``,
  ``redact_memory``, ``refuse_secret_name``); its rules: ``secret_shapes`` (a provider's
  token by its prefix and length) and ``secret_places`` (the value of a key, header, flag
  or URL parameter that names a secret).
- ``similar``: how close two titles are (0-100); ``former_names``: a renamed memory keeps
  its old title in ``former_names:``.
- ``caps``: a layer's caps measured and refused (``Caps``, ``BodyTooLarge``, ``LayerFull``).
"""
