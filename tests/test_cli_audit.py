"""``sagemem audit`` and ``sagemem watch`` from the shell: exit codes, JSON, --fix, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sagemem.store import MemoryStore
from tests.cli_run import Run, store_runner
from tests.test_audit import FIXTURE, clean_store, fixture_store

ROOT = Path(__file__).resolve().parents[1]




def runner(capsys: pytest.CaptureFixture[str], store: MemoryStore) -> Run:
    return store_runner(capsys, store)


@pytest.fixture
def fixture_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Run:
    """The fixture folder at the default size limit: its too-large file is then fine."""
    store = fixture_store(tmp_path)
    return runner(capsys, MemoryStore(store.directory, store.state_dir))


@pytest.fixture
def clean_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Run:
    return runner(capsys, clean_store(tmp_path))


def test_audit_reports_grouped_by_category_and_exits_0(fixture_run: Run) -> None:
    result = fixture_run("audit")
    assert result.code == 0 and result.err == ""
    lines = result.out.splitlines()
    assert lines[0] == "problems" and "hints" in lines
    assert "  dangling_index_entry (1)" in lines
    assert "    MEMORY.md:15  index line points at missing reference_gone.md" in lines
    assert lines[-1] == "18 problems, 8 hints in 23 memories"


def test_audit_json_is_the_documented_shape(fixture_run: Run) -> None:
    data = json.loads(fixture_run("audit", "--json").out)
    assert list(data) == ["version", "directory", "memories", "problems", "hints", "findings"]
    assert data["version"] == 1 and data["problems"] == 18 and data["hints"] == 8
    assert set(data["findings"][0]) == {"category", "severity", "file", "line", "message",
                                         "data"}


def test_strict_exits_1_on_problems(fixture_run: Run) -> None:
    # Exit 1 is every error's code too: what tells --strict's is the whole report on
    # stdout and no error line.
    text = fixture_run("audit", "--strict")
    assert (text.code, text.err) == (1, "")
    assert text.out.splitlines()[-1] == "18 problems, 8 hints in 23 memories"
    data = fixture_run("audit", "--strict", "--json")
    assert (data.code, data.err) == (1, "")
    assert json.loads(data.out)["problems"] == 18


def test_strict_exits_0_on_a_clean_folder(clean_run: Run) -> None:
    result = clean_run("audit", "--strict")
    assert (result.code, result.out) == (0, "0 problems, 0 hints in 1 memory\n")


def test_strict_passes_when_only_hints_remain(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    (store.directory / "user_alice.md").write_text(
        "---\nname: alice\ndescription: about alice\nmetadata:\n  type: user\n---\n")
    result = runner(capsys, store)("audit", "--strict")
    assert result.code == 0 and "empty_body" in result.out


def test_a_badly_named_file_is_reported_escaped_not_an_error(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    (store.directory / "user_\u202eevil.md").write_text("---\ndescription: d\n---\nbody\n")
    result = runner(capsys, store)("audit")
    assert result.code == 0 and result.err == ""
    assert "    'user_\\u202eevil.md'  cannot be read: bad file name: no control characters" \
        in result.out.splitlines()


@pytest.mark.parametrize("option", ["--dry-run", "--yes"])
def test_fix_options_without_fix_are_a_usage_error(clean_run: Run, option: str) -> None:
    result = clean_run("audit", option)
    assert result.code == 2 and result.err.startswith("error: ") and result.out == ""


def test_fix_names_the_snapshot_and_the_command_that_undoes_it(fixture_run: Run) -> None:
    result = fixture_run("audit", "--fix", "--yes")
    line = next(ln for ln in result.out.splitlines() if ln.startswith("snapshot "))
    snapshot_id = line.split()[1]
    assert line.endswith(f" rollback {snapshot_id}") and " --state-dir " in line


def test_a_missing_directory_is_a_one_line_error(capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    result = runner(capsys, MemoryStore(tmp_path / "nowhere", tmp_path / "s"))("audit")
    assert result.code == 1 and result.err.startswith("error: ") and result.err.count("\n") == 1


def test_fix_dry_run_prints_every_change_and_writes_nothing(fixture_run: Run,
                                                            tmp_path: Path) -> None:
    before = (tmp_path / "memory" / "MEMORY.md").read_bytes()
    result = fixture_run("audit", "--fix", "--dry-run")
    assert result.code == 0
    assert "would  MEMORY.md:15  drop index line 15 (points at missing reference_gone.md)" \
        in result.out.splitlines()
    assert (tmp_path / "memory" / "MEMORY.md").read_bytes() == before


def test_fix_applies_then_reaudits(fixture_run: Run) -> None:
    result = fixture_run("audit", "--fix", "--yes")
    lines = result.out.splitlines()
    assert result.code == 0 and "fixed  reference_crlf.md:1  convert CRLF line endings to LF" \
        in lines
    # quoting gives reference_hash.md its whole description: its hook "Use C" is stale now
    assert "after fixing:" in lines and lines[-1] == "13 problems, 9 hints in 23 memories"


def test_fix_json_holds_changes_and_the_audit_after(fixture_run: Run) -> None:
    data = json.loads(fixture_run("audit", "--fix", "--yes", "--json").out)
    assert list(data) == ["version", "dry_run", "snapshot", "rotated", "changes", "skipped",
                          "audit"]
    assert len(data["changes"]) == 5 and data["audit"]["problems"] == 13
    assert data["rotated"] == []
    assert fixture_run("audit", "--fix", "--yes", "--json").out.count('"detail"') == 0


def test_both_commands_have_help(clean_run: Run) -> None:
    for command in ("audit", "watch"):
        result = clean_run(command, "--help")
        assert result.code == 0 and "Usage" in result.out


def test_pre_commit_hook_runs_audit_strict() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "id: sagemem-audit" in text and "audit --strict" in text


def test_fixture_is_present() -> None:
    assert (FIXTURE / "expected.json").is_file()


def _read_line(stream: object, timeout: float) -> str:
    found: list[str] = []
    reader = threading.Thread(target=lambda: found.append(stream.readline()))  # type: ignore[attr-defined]
    reader.daemon = True
    reader.start()
    reader.join(timeout)
    return found[0] if found else ""


def test_watch_prints_json_lines_and_exits_0_on_ctrl_c(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
            [sys.executable, "-m", "sagemem", "--dir", str(store.directory), "--state-dir",
             str(store.state_dir), "watch", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as process:
        try:
            assert "watching" in _read_line(process.stderr, 20)
            (store.directory / "user_alice.md").unlink()
            batch = json.loads(_read_line(process.stdout, 20) or "{}")
            assert [f["category"] for f in batch["added"]] == ["dangling_index_entry"]
            assert batch["index"]["removed"] == 1
            time.sleep(0.2)
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=20) == 0
        finally:
            if process.poll() is None:
                process.kill()


def test_watch_ctrl_c_during_startup_exits_0_quietly(
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sagemem.audit.watch
    from tests.test_audit_watch import interrupt

    monkeypatch.setattr(sagemem.audit.watch, "audit", interrupt)
    result = runner(capsys, clean_store(tmp_path))("watch")
    assert (result.code, result.out, result.err) == (0, "", "")


def test_watch_ready_line_counts_in_singular_and_plural(tmp_path: Path) -> None:
    from sagemem.audit.report import AuditReport, hint, problem
    from sagemem.cli.audit import ready_line

    store = clean_store(tmp_path)
    one = AuditReport(store.directory, 1, (problem("x", "a.md", None, "m"),))
    two = AuditReport(store.directory, 1, (hint("y", "a.md", None, "m"),) * 2)
    assert ready_line(store, one) == f"watching {store.directory}: 1 problem, 0 hints; " \
        "Ctrl-C to stop"
    assert ready_line(store, two).endswith(": 0 problems, 2 hints; Ctrl-C to stop")


def test_the_json_version_is_defined_once_for_the_package() -> None:
    import re

    import sagemem

    package = Path(sagemem.__file__).parent
    defining = sorted(p.name for p in package.glob("*.py")
                      if re.search(r"^JSON_VERSION\s*=", p.read_text(encoding="utf-8"), re.M))
    assert defining == ["config.py"]


def test_watch_text_lines_say_new_and_fixed() -> None:
    from sagemem.audit.report import problem
    from sagemem.cli.audit import diff_line

    finding = problem("dangling_index_entry", "MEMORY.md", 12, "index line points at x.md")
    assert diff_line("+", finding) == \
        "+ problem  dangling_index_entry  MEMORY.md:12  index line points at x.md"
    assert diff_line("-", finding) == \
        "- fixed    dangling_index_entry  MEMORY.md:12  index line points at x.md"


def test_fix_names_the_snapshots_its_rotation_removed(
        fixture_run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGE_MEM_SNAPSHOT_KEEP", "1")
    first = fixture_run("snapshot", "create", "--json")
    older = json.loads(first.out)["id"]
    result = fixture_run("audit", "--fix", "--yes")
    assert f"rotated away 1 older snapshot(s): {older}" in result.out


def test_fix_refuses_an_illegal_snapshot_keep_and_snapshots_nothing(
        fixture_run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    before = fixture_run("audit", "--json").out
    monkeypatch.setenv("SAGE_MEM_SNAPSHOT_KEEP", "-5")
    result = fixture_run("audit", "--fix", "--yes")
    assert result.code == 1 and result.out == ""
    assert result.err.splitlines()[-1].startswith("error: SAGE_MEM_SNAPSHOT_KEEP = '-5'")
    monkeypatch.delenv("SAGE_MEM_SNAPSHOT_KEEP")
    assert json.loads(fixture_run("snapshot", "list", "--json").out) == []
    assert fixture_run("audit", "--json").out == before
