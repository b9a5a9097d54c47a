"""The memory panel (``sagemem ui``): the folder seen and fixed in a browser; needs the
ui extra (``pip install 'sagemem[ui]'``). A room beside ``mcp_server/``: as thin as the
CLI, it calls the library only.

- ``app``: ``build_app``, the Starlette routes and the one store thread (``Panel``);
  ``guard``: loopback, the run's token, same-origin writes, the content policy;
  ``serve``: ``serve_panel`` on a loopback port.
- ``health``: the audit, open conflicts and parsed memories kept between requests.
- The screens: ``files`` (every memory, filters, hybrid search, marks), ``memory`` (one
  memory: fields, the edit form, lock, archive, history, revert), ``timeline`` (the
  change journal and its diffs), ``checkup`` (the Health screen: the audit, conflict
  cards and their resolutions, ``audit --fix`` behind a preview), ``undo`` (snapshots,
  rollback, recover, consolidation runs), ``injection`` (what was injected and why, the
  settings in effect), ``map`` with ``layout`` (the folder as a deterministic picture);
  ``live``: ``/events``, the folder's changes pushed to open pages.
"""
