"""Claude Code, wired in: its hooks (the prompt hook over ``inject``, the write gate on
its own Write/Edit tools), ``install`` into its settings, ``doctor``, and the skill.
A room beside ``cli/``: it calls the library only (``inject`` among it; ``inject`` never
imports this room).

- ``hook``: ``claude_code``, ``run_claude_code_hook`` — ``sagemem hook claude-code``: one
  JSON payload in, one answer out, never a failure of the user's prompt or tool call.
- ``gate``: ``gate``, ``memory_target`` — the write gate: a Write/Edit/MultiEdit of a
  memory file that changed since the model last read it is denied (``inject.seen``
  holds what it read).
"""
