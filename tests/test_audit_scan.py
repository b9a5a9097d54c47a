"""Reading the folder for the audit: reserved files, and names the store refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sagemem.audit.fix import fix
from sagemem.audit.report import audit
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


BAD_NAMES = [
    pytest.param("user_t\tab.md", "user_t\tab.md", id="tab"),
    pytest.param("user_\u202eevil.md", "user_\u202eevil.md", id="bidi-override"),
    pytest.param(os.fsdecode(b"user_\xff.md"), "user_\ufffd.md", id="not-utf8"),
]


@pytest.mark.parametrize(("on_disk", "reported"), BAD_NAMES)
def test_a_badly_named_file_is_unreadable_and_the_rest_still_audited(
        tmp_path: Path, on_disk: str, reported: str) -> None:
    store = clean_store(tmp_path)
    (store.directory / on_disk).write_text("---\ndescription: d\n---\nbody\n")
    (store.directory / "user_bob.md").write_text("---\ndescription: bob\ntype: user\n---\nBob.\n")
    found = {(f.category, f.file) for f in audit(store).findings}
    assert found == {("unreadable", reported), ("not_in_index", reported),
                     ("not_in_index", "user_bob.md")}
    [bad] = [f for f in audit(store).findings if f.category == "unreadable"]
    assert bad.data["reason"].startswith("bad file name: ")


@pytest.mark.parametrize(("on_disk", "reported"), BAD_NAMES)
def test_fix_and_the_json_report_go_on_past_a_badly_named_file(
        tmp_path: Path, on_disk: str, reported: str) -> None:
    store = clean_store(tmp_path)
    (store.directory / on_disk).write_text("---\ndescription: d\n---\nbody\n")
    (store.directory / "user_bob.md").write_text("---\ndescription: bob\ntype: user\n---\nBob.\n")
    result = fix(store, snapshot=False)  # the snapshot itself refuses such names (snapshots.py)
    assert [c.detail for c in result.changes] == ["add index line for user_bob.md"]
    assert result.after is not None
    assert reported in {f["file"] for f in result.after.to_json()["findings"]}
    result.after.dumps().encode("utf-8")  # printable: no lone surrogate left in
