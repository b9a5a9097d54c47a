"""Moving memories in and out of a folder: the versioned JSON export and every import
(uses ``history``, ``writes``, ``store`` and below).

- ``incoming``: what an import brings (``Incoming``, ``Skipped``, ``Batch``), the one
  shape every source — an export file or another tool's notes — is read into.
- ``export``: ``export_folder``, the versioned JSON document of one layer (every file
  byte for byte, locks, ledger counts, MEMORY.md; conflict records on request), and
  ``write_export``, atomic and never inside the memory folder.
- ``read_export``: an export file back into a ``Batch`` (``NotAnExport`` for anything
  that is not one this version reads).
- ``plan``: ``plan_import``, what each item becomes (create, unchanged, conflict,
  overwrite) or why it is skipped, before anything is written.
- ``apply``: ``apply_batch``, the one apply path of every import: an ``auto`` snapshot,
  then the store's guarded creates; a merge never overwrites.
- ``report``: ``ImportReport`` and its text and JSON shapes.
"""
