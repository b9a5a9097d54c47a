"""Recall from past sessions: Claude Code's own transcripts of this project, searched
read-only when no memory answers (uses ``search``, ``writes``, ``files``, ``config``).

- ``locate``: ``project_folders`` — ``<claude home>/projects/<key>/`` for this project
  (``files/gitroot``'s ``claude_project_key``); ``newest_transcripts`` — the newest
  ``*.jsonl`` there, links refused.
- ``read``: ``read_turns`` — a transcript's tail read within byte, line and time bounds,
  each spoken line a ``Turn``; ``line_number`` counts where a turn sits in its file.
- ``turns``: ``spoken_text`` — which lines count: user and assistant text only, never a
  tool call or result, thinking, a meta or sidechain line, or injected context.
- ``search``: ``search_transcripts`` — the turns scored against a question (BM25 over
  ``search/text``'s tokens) into ``TranscriptHit`` excerpts with their citation.
- ``excerpt``: ``excerpt_of`` — a few hundred characters around the best sentence,
  redacted like a memory and with control characters made visible; ``quoted`` — the
  lines the injected block shows, marked as a transcript, never as a memory.

Nothing here writes anything, in the memory folder or anywhere else.
"""
