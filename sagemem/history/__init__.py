"""What happened to the memories, and undoing it (uses ``files``, ``writes``, ``store``).

- ``snapshots``: ``create_snapshot``, ``list_snapshots``, ``load_snapshot``, rotation;
  ``manifest``: ``Snapshot`` and checking copies (``verify_snapshot``);
  ``snapshot_diff``: ``snapshot_diff``, ``compare``; ``githead``: the HEAD beside them.
- ``rollback``: ``plan_rollback``, ``apply_rollback``, ``rollback``;
  ``rollback_log``: ``RollbackReport`` and ``<state>/rollbacks.jsonl``.
- ``archive``: ``archive_memory``, ``restore_memory``, ``purge_memory``;
  ``archive_batch``: ``archive_many`` — many memories, one MEMORY.md edit;
  ``create_batch``: ``create_many`` — many new memories checked as one create is,
  MEMORY.md edited once per batch;
  ``archive_log``: ``<state>/archive.jsonl``; ``locks``: ``lock_memory``…;
  ``candidates``: ``archive_candidates`` by idle days.
- ``journal``: an intent record per multi-file operation in flight;
  ``recover``: ``recover`` finishes the ones a killed process left half done.
- ``revisions``: one memory's held versions (``versions_of``: snapshots' copies and
  kept versions) and ``revert`` to one, as a guarded write.
- ``rename``: ``rename_memory`` — a file and its MEMORY.md line moved together.
- ``caps``: room made under a layer's cap (``enforce_caps``: archive the least read).
- ``ledger``: the access ledger (reads, uses, injections per memory) the candidates and
  the injection rely on.

Nothing here deletes a memory except ``purge_memory`` of an archived one.
"""
