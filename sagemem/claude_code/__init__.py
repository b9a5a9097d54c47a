"""Claude Code, wired in: its hooks (the prompt hook over ``inject``, the write gate on
its own Write/Edit tools), ``install`` into its settings, ``doctor``, and the skill.
A room beside ``cli/``: it calls the library only."""
