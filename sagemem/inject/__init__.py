"""What the model is handed before it answers (uses ``search``, ``transcripts``,
``history``, ``store``…).

- ``block``: ``inject`` — the memory block for one question, within budgets; ``Injection``.
- ``card``: ``status_card`` — the few lines saying what was left out and how to find it.
- ``session``: per-session state and budgets (``load_session``, ``Budget``).
- ``tasks``: task checkpoints (``ensure_checkpoint``, ``load_checkpoint``).
- ``printed``: ``printed_injection`` — what ``sagemem inject QUESTION`` prints, made
  once for the CLI and the hook server (``serve/``).
- ``seen``: ``record_seen``, ``seen_revision`` — per session, the revision of each file
  the model of that session last saw (Claude Code's write gate reads it).

The Claude Code hook over ``inject`` is in ``claude_code/``, the room above this one.
"""
