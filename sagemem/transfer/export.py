"""The export: one versioned JSON document holding every memory of one layer, byte for
byte, so that importing it into an empty folder gives the same files.

Shape (``FORMAT_VERSION`` 1)::

    {"format": "sagemem-export", "format_version": 1, "sagemem_version": "0.1.0",
     "exported_at": "2026-12-02T06:00:00+00:00", "layer": "project",
     "index": {"text": "# Memory index\\n…"},                  # MEMORY.md, as it is
     "memories": [{"file": "user_role.md", "text": "---\\n…", "revision": "<sha256>",
                   "layer": "project", "archived": false, "locked": false,
                   "ledger": {"read": 3, "use": 1, "injected": 7}}, …],
     "conflicts": [<record>, …]}                               # only with conflicts=True

A file that is not UTF-8 text travels as ``"encoding": "base64"`` with its bytes in
``data`` instead of ``text``, so the document stays lossless; the revision is always the
sha256 of the file's bytes. A file that cannot be read safely (a symlink, no
permission) is left out and named under ``skipped`` with the reason. Readers ignore
keys they do not know; a newer ``format_version`` is refused (``read_export``).
"""

from __future__ import annotations

import base64
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import ExportTargetRefused, SagememError
from ..files.atomic import atomic_write
from ..files.paths import INDEX_FILE, MAX_INDEX_BYTES, safe_read
from ..files.revision import revision_of
from ..history import ledger
from ..history.locks import locked_names
from ..store import MemoryStore
from ..writes.conflicts import list_conflicts

FORMAT = "sagemem-export"
FORMAT_VERSION = 1
LAYERS = ("project", "global")


def export_folder(store: MemoryStore, *, layer: str = "project", conflicts: bool = False,
                  now: datetime | None = None) -> dict[str, Any]:
    """The export document of ``store`` (whose layer is ``layer``): live memories, then
    archived ones, each with its exact text, revision, lock and ledger counts; the
    conflict records only when asked (they hold both sides of every refused write)."""
    from .. import __version__

    if layer not in LAYERS:
        raise ValueError(f"layer must be one of {', '.join(LAYERS)}")
    store.require_directory()
    locked = locked_names(store)
    counts = ledger.load(store.state_dir)[0]
    memories: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for archived in (False, True):
        for file in store.files(archived):
            try:
                memories.append(_item(store, file, archived, layer, file in locked,
                                      counts.get(file)))
            except SagememError as exc:  # a symlink, an unreadable file: said, not fatal
                skipped.append({"file": file, "archived": archived,
                                "reason": str(exc)})
    document: dict[str, Any] = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "sagemem_version": __version__,
        "exported_at": (now or datetime.now(timezone.utc)).isoformat(), "layer": layer,
        "index": _index(store), "memories": memories, "skipped": skipped}
    if conflicts:
        document["conflicts"] = [dict(c.data) | {"id": c.id}
                                 for c in list_conflicts(store.state_dir)]
    return document


def _item(store: MemoryStore, file: str, archived: bool, layer: str, locked: bool,
          access: ledger.MemoryAccess | None) -> dict[str, Any]:
    data = safe_read(store.folder(archived), file, max_bytes=store.max_bytes).data
    item: dict[str, Any] = {"file": file, **_content(data), "revision": revision_of(data),
                            "layer": layer, "archived": archived, "locked": locked}
    if access is not None:
        item["ledger"] = {kind: getattr(access, kind).count
                          for kind in ledger.KINDS}
    return item


def _content(data: bytes) -> dict[str, str]:
    """``text`` for UTF-8, else the bytes in base64: the export never changes a byte."""
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"encoding": "base64", "data": base64.b64encode(data).decode("ascii")}


def _index(store: MemoryStore) -> dict[str, Any] | None:
    """MEMORY.md as it is on disk (None when the folder has none)."""
    try:
        data = safe_read(store.directory, INDEX_FILE, max_bytes=MAX_INDEX_BYTES).data
    except SagememError:
        if os.path.lexists(store.directory / INDEX_FILE):
            raise
        return None
    return {"file": INDEX_FILE, **_content(data), "revision": revision_of(data)}


def export_text(document: dict[str, Any]) -> str:
    """The document as written: indented JSON, non-ASCII kept readable, one final newline."""
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def write_export(document: dict[str, Any], path: Path, store: MemoryStore) -> int:
    """Write the export to ``path`` atomically (a killed export leaves no half document),
    never inside the memory folder or its state directory: an export there would be read
    as a memory, or be snapshotted and exported again. Returns the bytes written."""
    target = Path(os.path.abspath(path))
    for folder, what in ((store.directory, "memory folder"), (store.state_dir, "state directory")):
        if _inside(target, folder):
            raise ExportTargetRefused(path, f"it is inside the {what}; write the export "
                                            f"somewhere else")
    if target.is_dir():
        raise ExportTargetRefused(path, "it is a directory; name a file")
    data = export_text(document).encode("utf-8")
    atomic_write(target, data, create=False)
    return len(data)


def _inside(path: Path, folder: Path) -> bool:
    real_folder = os.path.realpath(folder)
    real_parent = os.path.realpath(path.parent)
    return os.path.commonpath([real_parent, real_folder]) == real_folder
