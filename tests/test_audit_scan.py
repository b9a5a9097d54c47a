"""Reading the folder for the audit: reserved files, and names the store refuses."""

from __future__ import annotations

import json
from pathlib import Path

from sagemem.audit import audit
from sagemem.audit_fix import fix
from sagemem.store import MemoryStore
from tests.test_audit import clean_store


def test_links_and_index_lines_to_reserved_files_are_not_missing(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    (store.directory / "session-log.md").write_text("log\n")
    (store.directory / "notes.md").write_text("notes kept by hand\n")
    store.state_dir.mkdir()
    (store.state_dir / "reserved.json").write_text(json.dumps(["notes.md"]))
    store = MemoryStore(store.directory, store.state_dir)
    with (store.directory / "MEMORY.md").open("a") as index:
        index.write("- [Log](session-log.md)\n- [Notes](notes.md)\n")
    with (store.directory / "user_alice.md").open("a") as memory:
        memory.write("See [index](MEMORY.md), [[MEMORY]], [[session-log]] and [[notes]].\n")
    assert audit(store).findings == ()


def test_fix_keeps_index_lines_to_reserved_files(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    (store.directory / "session-log.md").write_text("log\n")
    index = store.directory / "MEMORY.md"
    index.write_text(index.read_text() + "- [Log](session-log.md)\n")
    before = index.read_bytes()
    assert fix(store).changes == ()
    assert index.read_bytes() == before


def test_a_reserved_name_that_is_not_on_disk_is_still_missing(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    with (store.directory / "MEMORY.md").open("a") as index:
        index.write("- [Log](session-log.md)\n")
    [finding] = audit(store).findings
    assert (finding.category, finding.data["target"]) == ("dangling_index_entry",
                                                          "session-log.md")
