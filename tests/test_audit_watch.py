"""Watching: the audit's difference after each change, and a watch that always stops."""

from __future__ import annotations

import threading
from pathlib import Path

from sagemem.audit.watch import AuditDiff, LiveAudit, follow
from tests.test_audit import clean_store

WAIT = 10.0  # generous: a loaded CI machine; every wait below ends as soon as it can


def test_update_reports_new_and_fixed_findings(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    live = LiveAudit(store)
    (store.directory / "user_alice.md").unlink()
    diff = live.update()
    assert [f.category for f in diff.added] == ["dangling_index_entry"] and diff.fixed == ()
    assert diff.removed == 1 and diff.index_error is None
    (store.directory / "user_alice.md").write_text("---\ndescription: back\n---\nbody\n")
    diff = live.update()
    assert [f.category for f in diff.fixed] == ["dangling_index_entry"]
    assert diff.reindexed == 1


def test_update_rereads_only_changed_files(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from sagemem.store import MemoryStore

    store = clean_store(tmp_path)
    (store.directory / "user_bob.md").write_text("---\ndescription: bob\n---\nBob.\n")
    live = LiveAudit(store, refresh_index=False)
    read: list[str] = []
    original = MemoryStore._read
    monkeypatch.setattr(MemoryStore, "_read", lambda self, name, archived:
                        read.append(name) or original(self, name, archived))
    (store.directory / "user_bob.md").write_text("---\ndescription: bob, edited\n---\nBob!\n")
    live.update()
    assert read == ["user_bob.md"]


def test_follow_sees_a_change_and_stops_when_asked(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    ready, stop, seen = threading.Event(), threading.Event(), []

    def changed(diff: AuditDiff) -> None:
        seen.append(diff)
        if diff.added:
            stop.set()

    thread = threading.Thread(target=follow, args=(store, changed),
                              kwargs={"stop": stop, "on_ready": lambda _: ready.set(),
                                      "debounce": 0.05})
    thread.start()
    try:
        assert ready.wait(WAIT)
        new = "---\ndescription: new\ntype: user\n---\nNew.\n"
        (store.directory / "user_new.md").write_text(new)
        thread.join(WAIT)
    finally:
        stop.set()
        thread.join(WAIT)
    assert not thread.is_alive()
    added = [f for diff in seen for f in diff.added]
    assert [(f.category, f.file) for f in added] == [("not_in_index", "user_new.md")]


def interrupt(*_: object, **__: object) -> None:
    raise KeyboardInterrupt


def test_ctrl_c_during_the_first_audit_ends_the_watch_quietly(tmp_path: Path,
                                                               monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import sagemem.audit.watch

    monkeypatch.setattr(sagemem.audit.watch, "audit", interrupt)
    ready: list[object] = []
    assert follow(clean_store(tmp_path), ready.append, on_ready=ready.append) is None
    assert ready == []
