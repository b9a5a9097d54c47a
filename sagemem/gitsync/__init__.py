"""A memory folder kept in git: the merge driver, ``install git`` and ``sync`` (uses
``history``, ``writes``, ``store`` and below).

- ``merge_text``: MergeResult, git merge-file, the three-way rule for one unit of text
- ``merge_memory``: a memory merged field by field, its body by git's line merge
- ``merge_index``: MEMORY.md merged line by line, each line known by its file and place
- ``driver``: what git runs: %O %A %B %P in, the result in %A, conflicts queued
- ``repo``: the repository that holds a folder, and git run as a subprocess
- ``install``: install git and --undo: the folder's .gitattributes, the git config
- ``git``: sync's git runs (``run_git``, ``open_repo``): one subprocess each, no prompt
- ``upstream``: where a sync pulls from and pushes to (``upstream_of``), a stopped rebase
- ``outgoing``: what a push would carry (memory commits only, no merge flattened), the push
- ``keepout``: state never travels (``keep_state_out``, ``refuse_staged_state``)
- ``message``: ``commit_message`` from the change journal and the hand edits
- ``record``: ``<state>/gitsync.json`` (the journal position) and the sync journal line
- ``sync``: ``sync`` and the ``SyncReport``
- ``stops``: how a sync's rebase stops, and the conflict records it closes
- ``resume``: ``continue_sync`` and ``abort_sync``
"""
