"""The MCP server (``sagemem mcp``): the library's search, read and guarded writes as
Model Context Protocol tools and resources, over stdio or loopback HTTP.

Needs the optional extra (``pip install 'sagemem[mcp]'``); ``import sagemem`` never
imports this room or the ``mcp`` SDK. A room beside ``cli/``: as thin as the CLI, it calls
the library only.
"""
