"""A memory file and the folder that holds it — the ground floor every other room uses.

- ``memory``: ``parse`` a file leniently into a ``Memory``; ``split``.
- ``revision``: ``revision_of`` (a file's sha256), ``checked_revision`` (the prefix rule).
- ``fields``: the frontmatter fields, ``TYPES``, ``Problem``.
- ``edit`` / ``edit_spans``: round-trip edits (``set_fields``, ``render_new``) that change
  only what they mean to.
- ``paths``: the one safe read path (``safe_read``, ``read_regular``), name checks,
  ``INDEX_FILE``, ``STATE_DIR_NAME``, size limits.
- ``atomic``: ``atomic_write``, ``write_new``, ``append_line``, ``make_folder``,
  ``temp_name``, ``remove_temp_files``.
- ``ids``: ``resolve_id`` — an id, or the one id a prefix starts.
- ``keep``: ``keep_text`` — a text a write could not save, kept in a private file.
- ``indexfile``: the lines of ``MEMORY.md``. ``init``: ``init_directory``.
- ``controls``: ``visible``, ``json_safe`` (control characters). ``plural``: ``counted``.
- ``folder``: ``MemoryFolder`` — reading a directory, its lock, guarded ``MEMORY.md``
  edits, change notices.
- ``state``: which state directory belongs to which folder (``default_state_dir``, ``stray_states``,
  the ``folder.json`` owner file, ``claim``, ``check_owner``).
- ``gitroot``: the one walk up to ``.git``, read without git (``find_dot_git``,
  ``git_dir``, ``common_dir``, ``main_tree`` with git's back-link check,
  ``claude_project_key``).
- ``scopes``: which folder a git project has (``find_project``, ``choose_folder``,
  ``slug``, ``use_folder``, ``set_memory``) — docs/configuration.md, "Which folder".
- ``gitignore``: ``ignore_state_dir`` — the state directory kept out of git, in the
  right ``.gitignore``, whatever the layout.
- ``body``: ``with_body`` — a new body under the frontmatter kept byte for byte.

Imports only ``errors`` from outside itself.
"""
