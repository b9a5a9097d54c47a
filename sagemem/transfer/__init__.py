"""Moving memories in and out of a folder: the versioned JSON export and every import
(uses ``history``, ``writes``, ``store`` and below).

- ``incoming``: what an import brings (``Incoming``, ``Skipped``, ``Batch``), the one
  shape every source — an export file or another tool's notes — is read into.
"""
