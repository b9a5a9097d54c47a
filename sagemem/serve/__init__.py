"""A long-lived process answers the prompt hook, so a prompt costs a small client
instead of a whole CLI: ``paths.py`` (where the socket lives and what makes it safe),
``protocol.py`` (the frames), ``server.py`` (the listener ``sagemem serve`` and the MCP
server run), ``client.py`` (the fast paths ``launch.py`` calls). docs/serve.md.
"""
