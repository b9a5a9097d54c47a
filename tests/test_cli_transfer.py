"""``sagemem export`` and ``sagemem import FILE`` from the shell: the round trip into a
fresh folder is byte for byte, a merge never overwrites, --replace asks first."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sagemem.cli import base as cli
from sagemem.history.archive import archive_memory
from sagemem.history.locks import lock_memory
from sagemem.store import MemoryStore
from tests.cli_run import Run, one_line_error, sagemem, store_runner

SAMPLE = Path(__file__).parent.parent / "sample_memory"


def every_file(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.fixture
def sample(tmp_path: Path) -> MemoryStore:
    """sample_memory's memories, one archived and one locked."""
    shutil.copytree(SAMPLE, tmp_path / "sample", ignore=shutil.ignore_patterns("eval"))
    store = MemoryStore(tmp_path / "sample", tmp_path / "sample-state")
    archive_memory(store, "user_pets.md", "to travel archived")
    lock_memory(store, "user_timezone_schedule.md")
    return store


@pytest.fixture
def fresh(tmp_path: Path) -> MemoryStore:
    """A folder just made by ``sagemem init``."""
    store = MemoryStore(tmp_path / "fresh", tmp_path / "fresh-state")
    assert sagemem(store, "init").returncode == 0
    return store


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], fresh: MemoryStore) -> Run:
    return store_runner(capsys, fresh)


@pytest.fixture
def export_file(sample: MemoryStore, tmp_path: Path) -> Path:
    path = tmp_path / "backup.json"
    done = sagemem(sample, "export", str(path))
    assert done.returncode == 0, done.stderr
    return path


def test_an_export_imported_into_a_fresh_folder_gives_byte_identical_files(
        sample: MemoryStore, fresh: MemoryStore, export_file: Path) -> None:
    done = sagemem(fresh, "import", str(export_file))
    assert done.returncode == 0, done.stderr
    assert every_file(fresh.directory) == every_file(sample.directory)
    locks = sagemem(fresh, "locks", "--json")
    assert "user_timezone_schedule.md" in locks.stdout


def test_importing_the_same_export_twice_changes_nothing_the_second_time(
        fresh: MemoryStore, export_file: Path) -> None:
    sagemem(fresh, "import", str(export_file))
    before = every_file(fresh.directory)
    report = json.loads(sagemem(fresh, "import", str(export_file), "--json").stdout)
    assert (len(report["unchanged"]), report["created"], report["snapshot"]) == (21, [], None)
    assert every_file(fresh.directory) == before


def test_merge_records_a_conflict_for_another_text_and_keeps_the_file(
        run: Run, fresh: MemoryStore, export_file: Path) -> None:
    (fresh.directory / "user_pets.md").write_text("---\nname: Pets\n---\nno cat\n")
    report = json.loads(run("import", str(export_file), "--json").out)
    assert [c["file"] for c in report["conflicted"]] == ["user_pets.md"]
    assert (fresh.directory / "user_pets.md").read_text() == "---\nname: Pets\n---\nno cat\n"
    listed = json.loads(run("conflicts", "list", "--json").out)["conflicts"]
    assert [c["id"] for c in listed] == [report["conflicted"][0]["conflict_id"]]


def test_dry_run_prints_the_plan_and_writes_nothing(run: Run, fresh: MemoryStore,
                                                   export_file: Path) -> None:
    before = every_file(fresh.directory)
    result = run("import", "--dry-run", str(export_file))
    assert result.code == 0 and "would be created user_working_style.md" in result.out
    assert "dry run, nothing written" in result.out
    assert every_file(fresh.directory) == before
    assert not (fresh.state_dir / "snapshots").exists()


def test_replace_off_a_terminal_without_yes_refuses_and_changes_nothing(
        run: Run, fresh: MemoryStore, export_file: Path) -> None:
    (fresh.directory / "user_mine.md").write_text("---\nname: Mine\n---\nmine\n")
    before = every_file(fresh.directory)
    result = run("import", "--replace", str(export_file))
    assert result.code == 2 and "--yes" in result.err
    assert every_file(fresh.directory) == before


def test_replace_with_yes_archives_what_the_export_lacks_after_a_snapshot(
        run: Run, fresh: MemoryStore, sample: MemoryStore, export_file: Path) -> None:
    (fresh.directory / "user_mine.md").write_text("---\nname: Mine\n---\nmine\n")
    report = json.loads(run("import", "--replace", "--yes", "--json", str(export_file)).out)
    assert report["archived"] == ["user_mine.md"] and report["snapshot"]
    assert (fresh.directory / "archive" / "user_mine.md").exists()
    assert (fresh.directory / "MEMORY.md").read_bytes() == \
        (sample.directory / "MEMORY.md").read_bytes()
    listed = json.loads(run("snapshot", "list", "--json").out)
    assert [s["id"] for s in listed] == [report["snapshot"]]


def test_replace_asks_on_a_terminal_and_no_cancels(run: Run, fresh: MemoryStore,
                                                    export_file: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "interactive", lambda: True)
    before = every_file(fresh.directory)
    result = run("import", "--replace", str(export_file), stdin="n\n")
    assert result.code == 1 and "cancelled" in result.err
    assert every_file(fresh.directory) == before


def test_merge_and_replace_together_are_a_usage_error(run: Run, export_file: Path) -> None:
    assert run("import", "--merge", "--replace", str(export_file)).code == 2


@pytest.mark.parametrize(("text", "says"), [
    ('{"format": "sagemem-export", "format_version": 7, "memories": []}', "newer"),
    ('{"format": "sagemem-export", "format_version": 1, "memories": [', "cut short"),
    ("42", "not an object"),
])
def test_a_file_that_is_no_readable_export_is_one_error_line(run: Run, fresh: MemoryStore,
                                                             tmp_path: Path, text: str,
                                                             says: str) -> None:
    (tmp_path / "bad.json").write_text(text)
    before = every_file(fresh.directory)
    assert says in one_line_error(run("import", str(tmp_path / "bad.json")))
    assert every_file(fresh.directory) == before


def test_a_file_named_like_a_tool_is_reached_with_a_dot_slash(
        fresh: MemoryStore, export_file: Path, tmp_path: Path) -> None:
    shutil.copy(export_file, tmp_path / "claude-code")
    done = subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(fresh.directory),
                           "--state-dir", str(fresh.state_dir), "import", "./claude-code",
                           "--dry-run"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "import from export: 21 created" in done.stdout


def test_export_to_stdout_is_the_document(sample: MemoryStore) -> None:
    done = sagemem(sample, "export")
    document = json.loads(done.stdout)
    assert document["format"] == "sagemem-export" and len(document["memories"]) == 21
    assert {m["file"]: m["archived"] for m in document["memories"]}["user_pets.md"] is True


def test_export_refuses_a_file_inside_the_memory_folder(sample: MemoryStore) -> None:
    done = sagemem(sample, "export", str(sample.directory / "backup.json"))
    assert done.returncode == 1 and done.stderr.startswith("error: ")
    assert "inside the memory folder" in done.stderr and "Traceback" not in done.stderr
    assert not (sample.directory / "backup.json").exists()


def test_export_conflicts_only_on_request(sample: MemoryStore, tmp_path: Path) -> None:
    refused = sagemem(sample, "write", "user_background.md", "-", "--expect", "0" * 64,
                      stdin="x")
    assert refused.returncode == 1
    plain = json.loads(sagemem(sample, "export").stdout)
    with_records = json.loads(sagemem(sample, "export", "--conflicts").stdout)
    assert "conflicts" not in plain and len(with_records["conflicts"]) == 1


def test_the_snapshot_an_import_names_rolls_it_back(run: Run, fresh: MemoryStore,
                                                    export_file: Path) -> None:
    before = every_file(fresh.directory)
    report = json.loads(run("import", "--json", str(export_file)).out)
    result = run("rollback", report["snapshot"], "--scope", "all", "--yes")
    now = every_file(fresh.directory)
    # the memory the import locked is left alone, as rollback leaves every locked one
    assert "user_timezone_schedule.md" in result.out
    assert {f: b for f, b in now.items() if not f.startswith("archive/")
            and f != "user_timezone_schedule.md"} == before


def test_an_export_of_two_memories_with_one_body_comes_back_whole(
        tmp_path: Path, fresh: MemoryStore) -> None:
    twins = MemoryStore(tmp_path / "twins", tmp_path / "twins-state")
    assert sagemem(twins, "init").returncode == 0
    for name, type_ in (("user_alpha.md", "user"), ("project_beta.md", "project")):
        (twins.directory / name).write_text(
            f"---\nname: {name[:-3]}\ndescription: one of two\ntype: {type_}\n---\n"
            "Same body.\n")
    (twins.directory / "MEMORY.md").write_text(
        "# Memory index\n\n- [alpha](user_alpha.md) — one\n- [beta](project_beta.md) — two\n")
    path = tmp_path / "twins.json"
    assert sagemem(twins, "export", str(path)).returncode == 0
    report = json.loads(sagemem(fresh, "import", str(path), "--json").stdout)
    assert (len(report["created"]), report["skipped"]) == (2, [])
    assert every_file(fresh.directory) == every_file(twins.directory)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_named_as_the_export_is_one_error_line_not_a_hang(fresh: MemoryStore,
                                                                tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    before = every_file(fresh.directory)
    done = subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(fresh.directory),
                           "--state-dir", str(fresh.state_dir), "import",
                           str(tmp_path / "pipe.json")],
                          capture_output=True, text=True, timeout=20, check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "not a regular file" in done.stderr
    assert every_file(fresh.directory) == before


def test_an_export_over_the_size_cap_is_refused_unread(run: Run, fresh: MemoryStore,
                                                       tmp_path: Path) -> None:
    from sagemem.transfer.read_export import MAX_EXPORT_BYTES

    with open(tmp_path / "huge.json", "wb") as sparse:  # no disk used: a sparse file
        sparse.truncate(MAX_EXPORT_BYTES + 1)
    error = one_line_error(run("import", str(tmp_path / "huge.json")))
    assert f"over the {MAX_EXPORT_BYTES // 1024 ** 2} MiB" in error


def test_a_cut_short_export_says_where_in_plain_words(fresh: MemoryStore,
                                                      export_file: Path) -> None:
    text = export_file.read_text()
    cut = export_file.with_name("cut.json")
    cut.write_text(text[:text.index('"text": "') + 12])
    done = sagemem(fresh, "import", str(cut))
    assert done.returncode == 1
    assert "it is not complete JSON, cut short or damaged: unterminated string at line " \
        in done.stderr
    assert ", column " in done.stderr and "at at" not in done.stderr


def test_replace_resolves_the_conflict_record_an_earlier_merge_left_open(
        fresh: MemoryStore, export_file: Path) -> None:
    from sagemem.writes.conflicts import list_conflicts

    (fresh.directory / "user_pets.md").write_text("---\nname: Pets\n---\nno cat\n")
    merged = json.loads(sagemem(fresh, "import", str(export_file), "--json").stdout)
    record = merged["conflicted"][0]["conflict_id"]
    done = sagemem(fresh, "import", "--replace", "--yes", str(export_file))
    assert done.returncode == 0, done.stderr
    assert f"note: user_pets.md: conflict record {record} resolved (keep_mine): --replace " \
           "wrote the imported text" in done.stdout
    assert list_conflicts(fresh.state_dir, "open") == []
    assert list_conflicts(fresh.state_dir)[0].decision == "keep_mine"


def test_export_warns_when_it_is_larger_than_import_reads(
        run: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # in-process, so the limit can be made small: an export over 256 MiB costs minutes
    from sagemem.transfer import read_export

    monkeypatch.setattr(read_export, "MAX_EXPORT_BYTES", 100)
    for target in (str(tmp_path / "out.json"), "-"):
        result = run("export", target)
        assert result.code == 0
        warning = [li for li in result.err.splitlines() if li.startswith("warning: ")]
        assert len(warning) == 1 and "over the 0 MiB `sagemem import` reads" in warning[0]
    monkeypatch.undo()
    assert "warning" not in run("export", str(tmp_path / "small.json")).err


def test_the_undo_line_names_this_runs_folders_and_needs_no_terminal(
        run: Run, fresh: MemoryStore, export_file: Path) -> None:
    undo = run("import", str(export_file)).out.splitlines()[-1]
    assert undo.endswith(" --scope all --yes")
    assert undo.startswith(f"undo: sagemem --dir {fresh.directory} --state-dir "
                           f"{fresh.state_dir} rollback ")
