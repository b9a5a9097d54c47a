"""``write``, ``edit``, ``set`` and ``conflicts``: guarded writes from the shell."""

from __future__ import annotations

import io
import json
import stat
import sys
from datetime import date
from pathlib import Path

import pytest

from sagemem.cli import main
from sagemem.cli.write import parse_value
from sagemem.store import MemoryStore
from tests.cli_run import Run, one_line_error, store_runner

ALICE = """---
name: alice
description: about alice
metadata:
  type: user
---
Alice likes tea.
"""
BOB = ALICE.replace("alice", "bob").replace("tea", "coffee")




@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    path = tmp_path / "memory"
    path.mkdir()
    (path / "MEMORY.md").write_text("# Memory index\n\n")
    (path / "user_alice.md").write_text(ALICE)
    (path / "user_bob.md").write_text(BOB)
    return path


@pytest.fixture
def store(memory_dir: Path, tmp_path: Path) -> MemoryStore:
    return MemoryStore(memory_dir, tmp_path / "state")


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], store: MemoryStore) -> Run:
    return store_runner(capsys, store)



def open_ids(run: Run) -> list[str]:
    listed = json.loads(run("conflicts", "list", "--json").out)["conflicts"]
    return [c["id"] for c in listed if c["status"] == "open"]


def new_text(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "new.md"
    path.write_text(text)
    return path


# -- write --------------------------------------------------------------------------------


def test_write_from_a_file_at_the_current_revision(run: Run, store: MemoryStore,
                                                   tmp_path: Path) -> None:
    revision = store.get("user_alice").revision
    result = run("write", "user_alice", "--from", str(new_text(tmp_path, BOB)),
                 "--expect", revision[:12])
    assert result.code == 0 and result.out.startswith("written  user_alice.md")
    assert (store.directory / "user_alice.md").read_text() == BOB


def test_write_from_stdin_creates_with_expect_new(run: Run, store: MemoryStore,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(ALICE.encode())))
    assert run("write", "user_carol", "-", "--expect", "new").code == 0
    assert (store.directory / "user_carol.md").read_text() == ALICE


def test_write_from_dash_reads_stdin(run: Run, store: MemoryStore,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(ALICE.encode())))
    assert run("write", "user_carol", "--from", "-", "--expect", "new").code == 0
    assert (store.directory / "user_carol.md").read_text() == ALICE


def test_stale_write_exits_1_naming_the_conflict(run: Run, store: MemoryStore,
                                                 tmp_path: Path) -> None:
    revision = store.get("user_alice").revision
    (store.directory / "user_alice.md").write_text("by hand\n")
    err = one_line_error(run("write", "user_alice", "--from", str(new_text(tmp_path, BOB)),
                             "--expect", revision, "--reason", "test"))
    [conflict_id] = open_ids(run)
    assert "stale_version" in err and conflict_id in err
    assert (store.directory / "user_alice.md").read_text() == "by hand\n"


@pytest.mark.parametrize("args", [
    pytest.param(["write", "user_alice", "--expect", "new"], id="no-source"),
    pytest.param(["write", "user_alice", "-", "--from", "x", "--expect", "new"], id="both"),
    pytest.param(["write", "user_alice", "-"], id="no-expect"),
    pytest.param(["write", "user_alice", "-", "--expect", "abc"], id="short-revision"),
    pytest.param(["write", "user_alice", "--from", "/nonexistent", "--expect", "new"],
                 id="missing-file"),
    pytest.param(["set", "user_alice", "novalue"], id="not-key-value"),
    pytest.param(["conflicts", "resolve", "x"], id="no-decision"),
    pytest.param(["conflicts", "resolve", "x", "--keep", "both"], id="bad-keep"),
])
def test_usage_mistakes_are_one_line_exit_2(run: Run, args: list[str]) -> None:
    one_line_error(run(*args), 2)


def test_create_over_an_existing_memory_is_refused(run: Run, tmp_path: Path) -> None:
    err = one_line_error(run("write", "user_alice", "--from", str(new_text(tmp_path, BOB)),
                             "--expect", "new"))
    assert "already exists" in err and len(open_ids(run)) == 1


def test_merge_markers_are_refused(run: Run, store: MemoryStore, tmp_path: Path) -> None:
    revision = store.get("user_alice").revision
    text = ALICE + "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n"
    err = one_line_error(run("write", "user_alice", "--from", str(new_text(tmp_path, text)),
                             "--expect", revision))
    assert err.startswith("error: unresolved_merge")


# -- set ----------------------------------------------------------------------------------


def test_set_changes_only_those_fields(run: Run, store: MemoryStore) -> None:
    result = run("set", "user_alice", "tags=[tea, green]", "baseline=true",
                 "valid_at=2026-01-02", "baselinePriority=3")
    assert result.code == 0, result
    assert (store.directory / "user_alice.md").read_text() == ALICE.replace(
        "---\nAlice", "tags: [tea, green]\nbaseline: true\nvalid_at: 2026-01-02\n"
                      "baselinePriority: 3\n---\nAlice")


@pytest.mark.parametrize(("raw", "value"), [
    ("true", True), ("false", False), ("12", 12), ("-3", -3), ("2026-01-02", date(2026, 1, 2)),
    ("[a, b]", ["a", "b"]), ("[]", []), ("", None), ("some text", "some text"),
    ("2026-13-40", "2026-13-40"), ("[1, true]", ["1", "true"]),
])
def test_set_values_are_parsed(raw: str, value: object) -> None:
    assert parse_value(raw) == value


# -- edit ---------------------------------------------------------------------------------


def editor(tmp_path: Path, script: str) -> str:
    path = tmp_path / "editor.py"
    path.write_text(f"import sys, pathlib\np = pathlib.Path(sys.argv[1])\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return f"{sys.executable} {path}"


def test_edit_writes_back_what_the_editor_saved(run: Run, store: MemoryStore, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDITOR", editor(tmp_path, "p.write_text(p.read_text() + 'More.\\n')"))
    monkeypatch.delenv("VISUAL", raising=False)
    assert run("edit", "user_alice").code == 0
    assert (store.directory / "user_alice.md").read_text() == ALICE + "More.\n"


def test_edit_records_an_external_change_instead_of_clobbering(
        run: Run, store: MemoryStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = store.directory / "user_alice.md"
    script = (f"pathlib.Path({str(target)!r}).write_text('changed meanwhile\\n')\n"
              "p.write_text('from the editor\\n')")
    monkeypatch.setenv("EDITOR", editor(tmp_path, script))
    monkeypatch.delenv("VISUAL", raising=False)
    one_line_error(run("edit", "user_alice"))
    assert target.read_text() == "changed meanwhile\n"
    record = json.loads(run("conflicts", "show", open_ids(run)[0], "--json").out)
    assert (record["kind"], record["mine"]["text"]) == ("external_change", "from the editor\n")


def test_edit_with_a_failing_editor_writes_nothing(run: Run, store: MemoryStore,
                                                   tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDITOR", editor(tmp_path, "p.write_text('x')\nsys.exit(3)"))
    monkeypatch.delenv("VISUAL", raising=False)
    assert "status 3" in one_line_error(run("edit", "user_alice"))
    monkeypatch.setenv("EDITOR", "/nonexistent/editor")
    assert "set EDITOR" in one_line_error(run("edit", "user_alice"))
    assert (store.directory / "user_alice.md").read_text() == ALICE


# -- conflicts ----------------------------------------------------------------------------


@pytest.fixture
def stale_id(run: Run, store: MemoryStore, tmp_path: Path) -> str:
    revision = store.get("user_alice").revision
    (store.directory / "user_alice.md").write_text(ALICE.replace("tea", "green tea"))
    run("write", "user_alice", "--from", str(new_text(tmp_path, ALICE + "Mine.\n")),
        "--expect", revision)
    return open_ids(run)[0]


def test_show_puts_the_sides_side_by_side_with_a_diff(run: Run, stale_id: str) -> None:
    out = run("conflicts", "show", stale_id).out
    assert "Alice likes green tea." in out and " | Alice likes tea." in out
    assert "--- disk\n+++ mine\n" in out and "+Mine." in out


def test_list_json_leaves_out_the_texts(run: Run, stale_id: str) -> None:
    [record] = json.loads(run("conflicts", "list", "--json").out)["conflicts"]
    assert record["mine"].keys() == {"based_on"} and record["kind"] == "stale_version"


def test_resolve_keep_mine_from_the_shell(run: Run, store: MemoryStore, stale_id: str) -> None:
    result = run("conflicts", "resolve", stale_id[:14], "--keep", "mine")
    assert result.out.startswith(f"resolved  {stale_id}  (keep_mine")
    assert (store.directory / "user_alice.md").read_text() == ALICE + "Mine.\n"
    assert open_ids(run) == []
    assert "already resolved" in one_line_error(run("conflicts", "resolve", stale_id,
                                                    "--keep", "disk"))


def test_contradict_then_invalidate_then_undo(run: Run, store: MemoryStore) -> None:
    result = run("conflicts", "contradict", "user_alice", "user_bob", "--note", "tea or coffee")
    assert result.code == 0
    [conflict_id] = open_ids(run)
    assert run("conflicts", "resolve", conflict_id, "--invalidate", "user_alice",
               "--superseded-by", "user_bob").code == 0
    assert store.get("user_alice").superseded_by == "user_bob.md"
    assert store.get("user_alice").body == "Alice likes tea.\n"
    assert run("conflicts", "resolve", conflict_id, "--invalidate", "user_alice",
               "--undo").code == 0
    assert (store.directory / "user_alice.md").read_text() == ALICE


def test_resolution_errors_are_one_line(run: Run, stale_id: str) -> None:
    assert "no conflict record" in one_line_error(run("conflicts", "show", "nope"))
    assert "--keep" in one_line_error(run("conflicts", "resolve", stale_id,
                                          "--invalidate", "user_alice"))
    assert "no memory named" in one_line_error(run("conflicts", "contradict", "user_alice",
                                                   "user_nobody", "--note", "x"))


def test_delete_asks_first(run: Run, stale_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    assert run("conflicts", "delete", stale_id).code == 1
    assert open_ids(run) == [stale_id]
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    assert run("conflicts", "delete", stale_id).code == 0
    assert open_ids(run) == []


def test_delete_yes_does_not_ask(run: Run, stale_id: str) -> None:
    assert run("conflicts", "delete", stale_id, "--yes").out == f"deleted  {stale_id}\n"
    assert open_ids(run) == []


def test_refused_write_in_a_real_process_is_one_line(store: MemoryStore, tmp_path: Path) -> None:
    import subprocess

    source = new_text(tmp_path, BOB)
    proc = subprocess.run(
        [sys.executable, "-m", "sagemem", "--dir", str(store.directory), "--state-dir",
         str(store.state_dir), "write", "user_alice", "--from", str(source), "--expect",
         "0" * 64], capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("error: stale_version: user_alice.md changed")
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_write_json_prints_the_memory_written(run: Run, store: MemoryStore,
                                              tmp_path: Path) -> None:
    revision = store.get("user_alice").revision
    result = run("write", "user_alice", "--from", str(new_text(tmp_path, BOB)), "--expect",
                 revision, "--json")
    data = json.loads(result.out)
    assert (data["file"], data["revision"]) == ("user_alice.md", store.get("user_alice").revision)


def test_contradiction_shows_both_names_and_the_note(run: Run) -> None:
    record = json.loads(run("conflicts", "contradict", "user_bob", "user_alice", "--note",
                            "tea or coffee", "--json").out)
    assert (record["memories"], record["reason"]) == (["user_alice.md", "user_bob.md"],
                                                      "tea or coffee")
    out = run("conflicts", "show", record["id"]).out
    assert "about    user_alice.md <> user_bob.md" in out and "reason   tea or coffee" in out
    assert run("conflicts", "list").out.startswith(f"{record['id']}  open     contradiction")


def test_empty_queue_says_so(run: Run) -> None:
    assert run("conflicts", "list").out == "no conflicts\n"


def test_failed_edit_keeps_the_edited_text(tmp_path, monkeypatch, capsys) -> None:
    memory = tmp_path / "m"
    memory.mkdir()
    (memory / "user_tea.md").write_text("---\ndescription: tea\n---\nGreen tea.\n")
    editor = tmp_path / "grow.sh"
    editor.write_text('#!/bin/sh\nhead -c 600000 /dev/zero | tr "\\\\0" x >> "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))

    code = main(["--dir", str(memory), "--state-dir", str(tmp_path / "s"), "edit", "user_tea"])
    err = capsys.readouterr().err
    assert code == 1 and "your edited text is kept here" in err
    kept = list((tmp_path / "s" / "edits").glob("*-user_tea.md"))
    assert len(kept) == 1 and kept[0].read_text().startswith("---\ndescription: tea")
    assert (memory / "user_tea.md").read_text() == "---\ndescription: tea\n---\nGreen tea.\n"


@pytest.mark.parametrize("assignment", ["invalid_at=2024-02-30", "type=wizard", "tags=solo"])
def test_set_refuses_values_the_reader_would_ignore(tmp_path, capsys, assignment) -> None:
    memory = tmp_path / "m"
    memory.mkdir()
    (memory / "user_tea.md").write_text("---\ndescription: tea\n---\nGreen tea.\n")

    code = main(["--dir", str(memory), "--state-dir", str(tmp_path / "s"), "set", "user_tea",
                 assignment])
    assert code == 2 and capsys.readouterr().err.startswith("error: ")


def test_write_to_a_missing_name_is_not_found_and_records_nothing(tmp_path, capsys,
                                                                  monkeypatch) -> None:
    memory = tmp_path / "m"
    memory.mkdir()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"text\n")))

    code = main(["--dir", str(memory), "--state-dir", str(tmp_path / "s"), "write",
                 "user_nope", "-", "--expect", "deadbeefdead"])
    assert code == 1 and "no memory named user_nope.md" in capsys.readouterr().err
    assert not (tmp_path / "s" / "conflicts").exists()


def test_write_expect_new_indexes_the_new_memory(tmp_path, capsys, monkeypatch) -> None:
    memory = tmp_path / "m"
    memory.mkdir()
    text = b"---\ndescription: brand new\nmetadata:\n  type: user\n---\nbody\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text)))

    code = main(["--dir", str(memory), "--state-dir", str(tmp_path / "s"), "write",
                 "user_brand", "-", "--expect", "new"])
    assert code == 0
    assert "- [user_brand](user_brand.md) — brand new" in (memory / "MEMORY.md").read_text()
