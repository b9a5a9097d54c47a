"""The structural audit: checks, safe fixes, watching (uses ``files``, ``writes``, ``search``,
``store``, and ``history`` for the snapshot before a fix).

- ``report``: ``audit`` runs every check into an ``AuditReport``; ``scan``: ``Scan``
  (what the checks read, once) and ``Finding``; ``frontmatter``, ``links``,
  ``duplicates``: the checks that need more than a few lines; ``names``: two files that
  are one name (case, Unicode form); ``index_hooks``: a MEMORY.md hook left behind by a
  description change.
- ``fix``: ``fix`` — the safe fixes, after a snapshot.
- ``watch``: ``follow``, ``LiveAudit`` — the audit kept live while files change.
"""
