"""Readers of other tools' memories, each into a ``transfer.incoming.Batch`` (uses
``transfer`` and below); they read, never write: ``transfer`` applies the batch.

- ``claude_code``: Claude Code's CLAUDE.md hierarchy by section, its auto-memory folder
  copied as it is, and ``adopt`` (that folder used in place).
- ``claude_imports``: CLAUDE.md's ``@path`` imports, followed 5 deep, never out.
- ``claude_project``: the project's git root, Claude Code's project key and its
  auto-memory folder, and whether a folder is in sagemem's format.
- ``basic_memory``: a basic-memory project, one memory per entity note.
- ``openclaw``: an OpenClaw workspace: MEMORY.md by section, one memory per daily log.
- ``mem0``: a mem0 export (JSON), one memory per mem0 memory.
- ``classify``: the documented rules giving a section of instructions its type.
- ``sections``: a Markdown file cut at its ``#``/``##`` headings, never inside code.
- ``section_memories``: a file of instructions made memories, one per section (typed,
  named and sourced alike for every reader that splits by section).
- ``build``: an Incoming from a title, a type and a body: names, descriptions, text.
- ``source``: the bounded read path: no links followed, capped files and sizes.
"""
