"""The other agent hosts — Cursor, VS Code, Codex, Gemini CLI — wired in by one command,
``sagemem install <host>``: sagemem's MCP server in each host's documented file, and its
prompt hook where the host has hooks (Codex, Gemini CLI). A room above ``claude_code``:
it reuses that room's span-by-span JSON editor, its backups and records and its hook, so
every host has Claude Code's guarantees (and its memories) from one implementation.

- ``spec``: ``Host``, ``Hooks`` — what a host reads where, and the entries we write.
- ``cursor``, ``vscode``, ``codex``, ``gemini``: one ``Host`` each, from its docs;
  ``registry``: ``HOSTS``, by the name on the command line.
- ``plan``: ``plan_install``, ``plan_undo`` — every change planned before any is made;
  ``json_entries``: the server and hook entries in a JSON file, owned and taken out;
  ``toml_file``: Codex's ``config.toml`` edited as text, proved by ``tomllib``.
- ``hook``: ``gemini``, ``codex`` — each host's payload to the Claude Code hook and back.
- ``doctor``: ``host_findings`` — one line per host for ``sagemem doctor``.
"""
