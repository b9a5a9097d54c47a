"""The access ledger: kinds kept apart, atomic cross-process counting, corrupt files moved aside."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from sagemem.errors import WriteFailed
from sagemem.files.atomic import TMP_SUFFIX
from sagemem.history import ledger
from sagemem.history.ledger import ACCESS_FILE, NEVER, Access, MemoryAccess, load, record

NOW = datetime(2026, 11, 30, 1, 2, 3, tzinfo=timezone.utc)
LATER = NOW + timedelta(days=2, hours=3)
ASIDE = f"{ACCESS_FILE}.corrupt-20261130T010203Z"


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """A state directory that does not exist yet: the first update creates it."""
    return tmp_path / "state"


@pytest.fixture
def ledger_file(state_dir: Path) -> Path:
    state_dir.mkdir()
    return state_dir / ACCESS_FILE


def write_ledger(path: Path, memories: object, **extra: object) -> None:
    path.write_text(json.dumps({"version": 1, "memories": memories, **extra}), encoding="utf-8")


def test_missing_ledger_is_empty(state_dir: Path) -> None:
    assert load(state_dir) == ({}, [])
    assert not state_dir.exists()


def test_counts_per_kind_are_kept_apart(state_dir: Path) -> None:
    record(state_dir, "injected", ["user_cat.md", "project_deploy.md"], NOW)
    record(state_dir, "injected", ["user_cat.md"], NOW)
    record(state_dir, "read", ["user_cat.md"], NOW)
    record(state_dir, "use", ["project_deploy.md"], NOW)
    stamp = "2026-11-30T01:02:03Z"
    assert load(state_dir) == ({
        "user_cat.md": MemoryAccess("user_cat.md", injected=Access(2, stamp),
                                    read=Access(1, stamp), use=NEVER),
        "project_deploy.md": MemoryAccess("project_deploy.md", injected=Access(1, stamp),
                                          read=NEVER, use=Access(1, stamp)),
    }, [])


def test_record_updates_only_the_last_time_of_its_kind(state_dir: Path) -> None:
    record(state_dir, "injected", ["user_cat.md"], NOW)
    record(state_dir, "read", ["user_cat.md"], NOW)
    record(state_dir, "read", ["user_cat.md"], LATER)
    entry = load(state_dir)[0]["user_cat.md"]
    assert entry.read == Access(2, "2026-12-02T04:02:03Z")
    assert entry.injected == Access(1, "2026-11-30T01:02:03Z")


def test_last_time_is_stored_in_utc(state_dir: Path) -> None:
    beijing = timezone(timedelta(hours=8))
    record(state_dir, "use", ["user_cat.md"], datetime(2026, 11, 30, 9, 2, 3, tzinfo=beijing))
    assert load(state_dir)[0]["user_cat.md"].use.last == "2026-11-30T01:02:03Z"


def test_naive_time_is_refused(state_dir: Path) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        record(state_dir, "use", ["user_cat.md"], datetime(2026, 11, 30))


def test_unknown_kind_raises_value_error(state_dir: Path) -> None:
    with pytest.raises(ValueError, match="unknown access kind"):
        record(state_dir, "score", ["user_cat.md"], NOW)
    assert not state_dir.exists()


def test_a_file_listed_twice_counts_once(state_dir: Path) -> None:
    record(state_dir, "injected", ["user_cat.md", "user_cat.md"], NOW)
    assert load(state_dir)[0]["user_cat.md"].injected.count == 1


def test_recording_nothing_writes_nothing(state_dir: Path) -> None:
    assert record(state_dir, "injected", [], NOW) == []
    assert not state_dir.exists()


def test_ledger_file_has_the_documented_format(state_dir: Path) -> None:
    record(state_dir, "read", ["user_cat.md"], NOW)
    assert json.loads((state_dir / ACCESS_FILE).read_text(encoding="utf-8")) == {
        "version": 1,
        "memories": {"user_cat.md": {"read": {"count": 1, "last": "2026-11-30T01:02:03Z"}}},
    }
    assert [p.name for p in state_dir.iterdir() if p.name.endswith(TMP_SUFFIX)] == []


def test_corrupt_ledger_is_moved_aside_with_one_warning(ledger_file: Path) -> None:
    ledger_file.write_bytes(b'{"version": 1, "memories": {')
    warnings = record(ledger_file.parent, "injected", ["user_cat.md"], NOW)
    assert len(warnings) == 1
    assert "\n" not in warnings[0]
    assert f"moved it to {ASIDE}" in warnings[0]
    assert (ledger_file.parent / ASIDE).read_bytes() == b'{"version": 1, "memories": {'
    assert load(ledger_file.parent)[0]["user_cat.md"].injected == Access(1, "2026-11-30T01:02:03Z")


def test_second_corruption_in_the_same_second_keeps_the_first(ledger_file: Path) -> None:
    for garbage in (b"first", b"second"):
        ledger_file.write_bytes(garbage)
        record(ledger_file.parent, "use", ["user_cat.md"], NOW)
    kept = sorted(p.read_bytes() for p in ledger_file.parent.glob(f"{ACCESS_FILE}.corrupt-*"))
    assert kept == [b"first", b"second"]


def test_load_reports_a_corrupt_ledger_but_leaves_it_in_place(ledger_file: Path) -> None:
    ledger_file.write_bytes(b"\xff\xfe not json")
    entries, warnings = load(ledger_file.parent)
    assert entries == {}
    assert len(warnings) == 1
    assert "unreadable" in warnings[0]
    assert ledger_file.read_bytes() == b"\xff\xfe not json"


@pytest.mark.parametrize("content", [
    {"version": 2, "memories": {}},
    {"version": True, "memories": {}},
    {"version": 1, "memories": ["user_cat.md"]},
    ["not", "an", "object"],
])
def test_a_ledger_of_another_shape_or_version_is_moved_aside(ledger_file: Path,
                                                             content: object) -> None:
    ledger_file.write_text(json.dumps(content), encoding="utf-8")
    assert len(record(ledger_file.parent, "use", ["user_cat.md"], NOW)) == 1
    assert json.loads((ledger_file.parent / ASIDE).read_text(encoding="utf-8")) == content


def test_symlinked_ledger_is_not_followed(ledger_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    write_ledger(target, {"user_cat.md": {"use": {"count": 5, "last": None}}})
    before = target.read_bytes()
    ledger_file.symlink_to(target)
    assert load(ledger_file.parent)[0] == {}
    warnings = record(ledger_file.parent, "use", ["user_cat.md"], NOW)
    assert len(warnings) == 1
    assert target.read_bytes() == before
    assert (ledger_file.parent / ASIDE).is_symlink()
    assert not ledger_file.is_symlink()
    assert load(ledger_file.parent)[0]["user_cat.md"].use.count == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_ledger_never_hangs(ledger_file: Path) -> None:
    os.mkfifo(ledger_file)
    assert load(ledger_file.parent)[0] == {}
    assert len(record(ledger_file.parent, "read", ["user_cat.md"], NOW)) == 1
    assert load(ledger_file.parent)[0]["user_cat.md"].read.count == 1


def test_wrong_shaped_entries_are_skipped(ledger_file: Path) -> None:
    good = {"count": 2, "last": "2026-11-01T00:00:00Z"}
    write_ledger(ledger_file, {
        "user_junk.md": "lots",
        "user_half.md": {"read": {"count": "three"}, "use": good, "injected": {"count": -1}},
        "user_ok.md": {"injected": good},
    })
    entries, warnings = load(ledger_file.parent)
    assert sorted(entries) == ["user_half.md", "user_ok.md"]
    assert entries["user_half.md"] == MemoryAccess("user_half.md", use=Access(2, good["last"]))
    assert entries["user_ok.md"].injected == Access(2, good["last"])
    assert warnings == ["access.json: skipped 1 malformed entry (user_junk.md)"]


def test_many_skipped_entries_make_one_short_warning(ledger_file: Path) -> None:
    write_ledger(ledger_file, {f"user_{n}.md": [] for n in range(9)})
    assert load(ledger_file.parent)[1] == [
        "access.json: skipped 9 malformed entries "
        "(user_0.md, user_1.md, user_2.md, user_3.md, user_4.md, …)"]


def test_record_replaces_a_wrong_shaped_entry_and_keeps_the_rest(ledger_file: Path) -> None:
    write_ledger(ledger_file, {"user_junk.md": "lots", "user_half.md": {"read": {"count": "x"}}})
    assert record(ledger_file.parent, "read", ["user_junk.md", "user_half.md"], NOW) == []
    entries, warnings = load(ledger_file.parent)
    assert entries["user_junk.md"].read.count == 1
    assert entries["user_half.md"].read.count == 1
    assert warnings == []


def test_unknown_keys_survive_an_update(ledger_file: Path) -> None:
    write_ledger(ledger_file, {"user_cat.md": {"pinned": True,
                                               "use": {"count": 1, "last": None, "first": "x"}}},
                 written_by="sagemem 9")
    record(ledger_file.parent, "use", ["user_cat.md"], NOW)
    saved = json.loads(ledger_file.read_text(encoding="utf-8"))
    assert saved["written_by"] == "sagemem 9"
    assert saved["memories"]["user_cat.md"] == {
        "pinned": True, "use": {"count": 2, "last": "2026-11-30T01:02:03Z", "first": "x"}}


def test_a_held_lock_times_out_as_write_failed(state_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from filelock import FileLock

    record(state_dir, "use", ["user_cat.md"], NOW)
    monkeypatch.setattr(ledger, "LOCK_TIMEOUT_SECONDS", 0.05)
    with FileLock(str(state_dir / ledger.LOCK_FILE)), pytest.raises(WriteFailed, match="lock"):
        record(state_dir, "use", ["user_cat.md"], LATER)
    assert load(state_dir)[0]["user_cat.md"].use.count == 1


RECORDER = """
import sys
from datetime import datetime, timezone
from pathlib import Path
from sagemem.history.ledger import record
for _ in range(25):
    for warning in record(Path(sys.argv[1]), "injected", ["user_cat.md"],
                          datetime.now(timezone.utc)):
        print(warning, file=sys.stderr)
"""


def test_concurrent_processes_lose_no_count(state_dir: Path) -> None:
    processes = [subprocess.Popen([sys.executable, "-c", RECORDER, str(state_dir)],
                                  stderr=subprocess.PIPE, text=True) for _ in range(4)]
    errors = [p.communicate(timeout=120)[1] for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0, 0]
    assert errors == ["", "", "", ""]
    assert load(state_dir)[0]["user_cat.md"].injected.count == 100
    assert sorted(p.name for p in state_dir.iterdir()) == [ACCESS_FILE, "locks"]
