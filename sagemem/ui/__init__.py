"""The memory panel (``sagemem ui``): the folder seen and fixed in a browser; needs the
ui extra (``pip install 'sagemem[ui]'``). A room beside ``mcp_server/``: as thin as the
CLI, it calls the library only.

- ``app``: ``build_app``, the Starlette routes and the one store thread (``Panel``);
  ``guard``: loopback, the run's token, same-origin writes, the content policy;
  ``serve``: ``serve_panel`` on a loopback port.
- ``health``: the audit and open conflicts kept for the badges (re-run when the folder
  changes); ``files``: the Files screen.
"""
