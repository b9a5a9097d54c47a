"""``write``, ``edit``, ``set`` and ``conflicts``: guarded writes from the shell."""

from __future__ import annotations

import errno
import io
import json
import os
import stat
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

import pytest

from sagemem.cli import base as cli
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


@pytest.mark.parametrize(("args", "says"), [
    pytest.param(["write", "user_alice", "--expect", "new"],
                 "--from: give the text as --from FILE or - (stdin), one of them", id="no-source"),
    pytest.param(["write", "user_alice", "-", "--from", "x", "--expect", "new"],
                 "--from: give the text as --from FILE or - (stdin), one of them", id="both"),
    pytest.param(["write", "user_alice", "-"], "Missing option --expect.", id="no-expect"),
    pytest.param(["write", "user_alice", "-", "--expect", "abc"],
                 "--expect: revision 'abc' is 3 characters; a prefix needs at least 8",
                 id="short-revision"),
    pytest.param(["write", "user_alice", "--from", "/nonexistent", "--expect", "new"],
                 "--from: cannot read /nonexistent", id="missing-file"),
    pytest.param(["set", "user_alice", "novalue"], "'novalue' is not key=value",
                 id="not-key-value"),
    pytest.param(["conflicts", "resolve", "x"],
                 "--keep: give --keep disk|mine or --invalidate NAME", id="no-decision"),
    pytest.param(["conflicts", "resolve", "x", "--keep", "both"],
                 "--keep: must be disk or mine", id="bad-keep"),
])
def test_usage_mistakes_are_one_line_exit_2(run: Run, store: MemoryStore, args: list[str],
                                            says: str) -> None:
    before = store.get("user_alice").revision
    err = one_line_error(run(*args), 2)
    assert says in err and err.endswith("; see `sagemem --help`\n")
    assert store.get("user_alice").revision == before


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


def test_a_failing_editor_is_named_as_the_problem(run: Run, store: MemoryStore,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDITOR", "false")
    monkeypatch.delenv("VISUAL", raising=False)
    err = one_line_error(run("edit", "user_alice"))
    assert err == "error: the editor (false) exited with status 1; nothing was changed\n"
    assert (store.directory / "user_alice.md").read_text() == ALICE


def test_edit_without_an_editor_off_a_terminal_refuses(run: Run, store: MemoryStore,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("an editor was run"))
    err = one_line_error(run("edit", "user_alice"), code=2)
    assert "set EDITOR" in err and "sagemem write" in err
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
    monkeypatch.setattr(cli, "interactive", lambda: True)
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


def test_conflicts_list_shows_a_contradiction_with_an_archived_side_as_moot(
    run: Run,
) -> None:
    record = json.loads(run("conflicts", "contradict", "user_bob", "user_alice", "--note",
                            "tea or coffee", "--json").out)
    assert json.loads(run("conflicts", "list", "--json").out)["conflicts"][0]["moot"] is False
    assert run("archive", "user_bob", "--reason", "Bob left", "--yes").code == 0
    listed = run("conflicts", "list")
    assert listed.out.startswith(f"{record['id']}  open     contradiction")
    assert "(moot: user_bob.md is no longer a live memory)" in listed.out
    [entry] = json.loads(run("conflicts", "list", "--json").out)["conflicts"]
    assert (entry["status"], entry["moot"]) == ("open", True)


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
    assert code == 1 and "your edited text is kept in" in err
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


# -- revision prefixes and read-only files ------------------------------------------------


def test_write_expect_with_seven_characters_says_eight_are_needed(run: Run,
                                                                 store: MemoryStore) -> None:
    revision = store.get("user_alice").revision
    err = one_line_error(run("write", "user_alice", "-", "--expect", revision[:7],
                             stdin=BOB), 2)
    assert "at least 8" in err


def test_set_on_a_read_only_file_is_refused_with_the_chmod_to_run(run: Run,
                                                                 store: MemoryStore) -> None:
    path = store.directory / "user_alice.md"
    path.chmod(0o444)
    err = one_line_error(run("set", "user_alice", "baseline=true"))
    assert "read-only (mode 0444)" in err and "chmod u+w" in err
    assert path.read_text() == ALICE


# -- set warnings and the MEMORY.md line ---------------------------------------------------


def test_set_warns_about_a_key_sagemem_does_not_know_and_names_the_one_meant(
        run: Run, store: MemoryStore) -> None:
    result = run("set", "user_alice", "baseline_priority=3", "tag=[tea]")
    assert result.code == 0, result
    assert result.err.splitlines() == [
        "warning: user_alice.md: baseline_priority is not a field sagemem knows; "
        "did you mean baselinePriority?",
        "warning: user_alice.md: tag is not a field sagemem knows; did you mean tags?"]


def test_set_warns_when_the_type_disagrees_with_the_file_name(run: Run) -> None:
    result = run("set", "user_alice", "type=project", "--json")
    assert result.code == 0, result
    [warning] = json.loads(result.out)["warnings"]
    assert "type project disagrees with the file-name prefix user_" in warning
    assert result.err.count("\n") == 1 and "disagrees" in result.err


def test_set_of_known_fields_warns_about_nothing(run: Run) -> None:
    result = run("set", "user_alice", "baselinePriority=3", "tags=[tea]", "type=user")
    assert result.code == 0 and result.err == "", result


@pytest.fixture
def indexed(store: MemoryStore) -> Path:
    index = store.directory / "MEMORY.md"
    index.write_text("# Memory index\n\n- [alice](user_alice.md) — about alice\n")
    return index


def test_set_description_off_a_terminal_says_how_to_update_the_index(
        run: Run, indexed: Path) -> None:
    result = run("set", "user_alice", "description=Alice, tea drinker")
    assert result.code == 0
    assert "--update-index" in result.err and "'about alice'" in result.err
    assert indexed.read_text().endswith("— about alice\n")


def test_set_description_with_update_index_rewrites_the_hook(run: Run, indexed: Path) -> None:
    assert run("set", "user_alice", "description=Alice, tea drinker",
               "--update-index").code == 0
    assert indexed.read_text() == ("# Memory index\n\n"
                                   "- [alice](user_alice.md) — Alice, tea drinker\n")


def test_set_description_at_a_terminal_asks_before_updating_the_index(
        run: Run, indexed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sagemem.cli import base

    monkeypatch.setattr(base, "interactive", lambda: True)
    monkeypatch.setattr("typer.confirm", lambda *a, **k: True)
    assert run("set", "user_alice", "description=Alice, tea drinker").code == 0
    assert indexed.read_text().endswith("— Alice, tea drinker\n")


def test_edit_of_the_description_offers_the_index_update(
        run: Run, store: MemoryStore, indexed: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "editor.py"
    script.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
                      "p.write_text(p.read_text().replace('about alice', 'Alice, tea'))\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    assert run("edit", "user_alice", "--update-index").code == 0
    assert indexed.read_text().endswith("— Alice, tea\n")


def _enospc(*_args: object, **_kwargs: object) -> int:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.fixture
def system_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "systemp"
    path.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    return path


@pytest.fixture
def edited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An editor that appends a line; the text it leaves."""
    monkeypatch.setenv("EDITOR", editor(tmp_path, "p.write_text(p.read_text() + 'Mine.\\n')"))
    monkeypatch.delenv("VISUAL", raising=False)
    return ALICE + "Mine.\n"


def test_edit_on_a_full_memory_disk_keeps_the_text_privately_and_says_where(
        run: Run, store: MemoryStore, edited: str, system_temp: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open

    def full_memory_disk(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if flags & os.O_CREAT and str(path).startswith(str(store.directory)):
            _enospc()
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", full_memory_disk)
    error = one_line_error(run("edit", "user_alice"))
    [kept] = (store.state_dir / "edits").iterdir()
    assert kept.read_text() == edited and stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert "No space left on device" in error and f"kept in {kept}" in error
    assert error.count("not changed") + error.count("nothing was changed") == 1
    assert (store.directory / "user_alice.md").read_text() == ALICE
    assert list(system_temp.iterdir()) == []


def test_edit_that_cannot_keep_the_text_anywhere_prints_it_and_says_so(
        run: Run, store: MemoryStore, edited: str, system_temp: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "write", _enospc)
    result = run("edit", "user_alice")
    assert result.code == 1 and result.out == ""
    text, error = result.err.rsplit("error: ", 1)
    assert text == edited and "could not be kept" in error and "kept in" not in error
    assert error.count("\n") == 1 and error.count("not changed") == 1
    assert list((store.state_dir / "edits").iterdir()) == []  # no 0-byte leftover
    assert list(system_temp.rglob("*")) == []
    assert (store.directory / "user_alice.md").read_text() == ALICE


def test_a_conflict_prefix_of_several_ids_says_so(run: Run, stale_id: str) -> None:
    run("conflicts", "contradict", "user_alice", "user_bob", "--note", "tea or coffee")
    error = one_line_error(run("conflicts", "show", stale_id[:4]))
    assert f"{stale_id[:4]} starts 2 conflict record ids" in error and "give more" in error
    assert "no conflict record" in one_line_error(run("conflicts", "show", "1999"))


def test_delete_all_resolved_removes_only_resolved_records(run: Run, stale_id: str) -> None:
    contradiction = json.loads(run("conflicts", "contradict", "user_alice", "user_bob",
                                   "--note", "tea or coffee", "--json").out)["id"]
    assert run("conflicts", "resolve", stale_id, "--keep", "disk").code == 0
    result = run("conflicts", "delete", "--all-resolved", "--yes")
    assert (result.code, result.out) == (0, f"deleted  {stale_id}\n1 record deleted\n")
    assert open_ids(run) == [contradiction]
    assert run("conflicts", "delete", "--all-resolved", "--yes").out == \
        "no conflict records match\n"


def test_delete_older_than_spares_recent_records(run: Run, stale_id: str) -> None:
    assert run("conflicts", "delete", "--older-than", "1", "--yes").out == \
        "no conflict records match\n"
    assert run("conflicts", "delete", "--older-than", "0", "--status", "open",
               "--yes").out.endswith("1 record deleted\n")
    assert open_ids(run) == []


@pytest.mark.parametrize("args", [
    pytest.param([], id="nothing"),
    pytest.param(["ID", "--all-resolved"], id="id-and-filter"),
    pytest.param(["--all-resolved", "--status", "open"], id="resolved-and-open"),
    pytest.param(["--status", "gone"], id="bad-status"),
    pytest.param(["--older-than", "-1"], id="negative-age"),
])
def test_delete_refuses_unclear_selections(run: Run, stale_id: str, args: list[str]) -> None:
    one_line_error(run("conflicts", "delete", *[stale_id if a == "ID" else a for a in args],
                       "--yes"), code=2)
    assert open_ids(run) == [stale_id]


def test_delete_json_lists_what_was_deleted(run: Run, stale_id: str) -> None:
    data = json.loads(run("conflicts", "delete", "--status", "open", "--yes", "--json").out)
    assert [c["id"] for c in data["deleted"]] == [stale_id]


def test_show_says_how_often_a_collapsed_refusal_happened(run: Run, store: MemoryStore,
                                                         tmp_path: Path) -> None:
    revision = store.get("user_alice").revision
    (store.directory / "user_alice.md").write_text(ALICE.replace("tea", "green tea"))
    for _ in range(3):
        run("write", "user_alice", "--from", str(new_text(tmp_path, ALICE + "Mine.\n")),
            "--expect", revision)
    [conflict_id] = open_ids(run)
    assert "refused  3 times, last at " in run("conflicts", "show", conflict_id).out


def test_reads_body_written_back_as_the_whole_file_is_refused_and_keeps_the_frontmatter(
        store: MemoryStore) -> None:
    # `sagemem read` prints the body alone; piped back into `write` it replaced the whole
    # file and the memory lost its name, description and type, with "written". The refusal
    # names a command that does the edit (review 4: "give the whole file" named none).
    sagemem = [sys.executable, "-m", "sagemem", "--dir", str(store.directory),
               "--state-dir", str(store.state_dir)]
    before = (store.directory / "user_alice.md").read_bytes()
    revision = store.get("user_alice").revision
    body = subprocess.run([*sagemem, "read", "user_alice"], capture_output=True, text=True,
                          check=True, timeout=60).stdout
    proc = subprocess.run([*sagemem, "write", "user_alice", "-", "--expect", revision],
                          input=body + "She also likes cake.\n", capture_output=True,
                          text=True, check=False, timeout=60)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        "error: user_alice.md: the new text has no frontmatter block, so name, description, "
        "metadata would be lost (`sagemem read` prints the body alone); nothing was written "
        "— change it with `sagemem edit user_alice.md` (the whole file), or give write the "
        "file as it is on disk, its frontmatter block first, or open the text with an "
        "empty '---' block to drop the fields\n")
    assert (store.directory / "user_alice.md").read_bytes() == before
    dropped = subprocess.run([*sagemem, "write", "user_alice", "-", "--expect", revision],
                             input="---\n---\n" + body, capture_output=True, text=True,
                             check=False, timeout=60)
    assert dropped.returncode == 0, dropped.stderr
    assert (store.directory / "user_alice.md").read_text() == "---\n---\n" + body
