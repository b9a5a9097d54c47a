"""Claude Code, wired in: its hooks (the prompt hook over ``inject``, the write gate on
its own Write/Edit tools), ``install`` into its settings, ``doctor``, and the skill.
A room beside ``cli/``: it calls the library only (``inject`` among it; ``inject`` never
imports this room).

- ``hook``: ``claude_code``, ``run_claude_code_hook`` — ``sagemem hook claude-code``: one
  JSON payload in, one answer out, never a failure of the user's prompt or tool call.
- ``gate``: ``gate``, ``memory_target`` — the write gate: a Write/Edit/MultiEdit of a
  memory file that changed since the model last read it is denied (``inject.seen``
  holds what it read); ``after_write``: the upkeep of the model's own writes (kept
  version, redaction, journal line) and Reads (the access ledger); ``bash_guard``: a
  Bash command that clearly writes into the folder is denied.
- ``install``: ``plan_install``, ``plan_undo`` — the hooks, the MCP server and the skill
  written into Claude Code's files; ``changes``: each file's diff, backup and record;
  ``owned``: the hook objects sagemem owns, exactly those its record names; ``wiring``:
  what those entries run and how it is spelt; ``settings_file``: JSON edited span by
  span; ``skill``: the shipped ``SKILL.md`` and where it goes.
- ``doctor``: ``diagnose`` — what is wired and whether it works, changing nothing;
  ``findings``: what it found; ``probe``: one hook run as Claude Code runs it, over a
  throwaway copy of the state directory (``sandbox``); ``folder_health``: the folder,
  its index, its embedder.
"""
