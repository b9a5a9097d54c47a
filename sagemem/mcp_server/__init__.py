"""The MCP server (``sagemem mcp``): the library's search, read and guarded writes as
Model Context Protocol tools and resources, over stdio or loopback HTTP.

Needs the optional extra (``pip install 'sagemem[mcp]'``); ``import sagemem`` never
imports this room or the ``mcp`` SDK. A room beside ``cli/``: as thin as the CLI, it calls
the library only.

- ``server``: the SDK server, its store thread, watcher and resources; ``tools``: the
  tools, each a thin call into the library, with ``consolidation`` (dream_plan,
  dream_apply) and ``hints`` (their annotations); ``outputs``: their typed results and texts;
  ``answers``: the library's answers made into those results (a refusal, the warnings,
  listing entries).
- ``layered``: which layer a tool works on (the project's, or the global layer's
  habits), and what the model saw of each.
- ``aliases``: the argument names models guess; ``arguments``: what an argument must hold
  before the library sees it; ``views``: what the model was shown of each revision.
- ``address``: the loopback rule for ``--http``; ``stdio``: an answer to every line,
  even one the SDK cannot read.
"""
