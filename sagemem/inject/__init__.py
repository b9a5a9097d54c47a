"""What the model is handed before it answers (uses ``search``, ``history``, ``store``…).

- ``block``: ``inject`` — the memory block for one question, within budgets; ``Injection``.
- ``card``: ``status_card`` — the few lines saying what was left out and how to find it.
- ``session``: per-session state and budgets (``load_session``, ``Budget``).
- ``tasks``: task checkpoints (``ensure_checkpoint``, ``load_checkpoint``).
- ``hooks``: ``run_claude_code_hook`` — the Claude Code prompt hook over ``inject``.
"""
