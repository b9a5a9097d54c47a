"""The task checkpoint commands: path --create, show, the task id and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagemem.cli import main


def run(capsys: pytest.CaptureFixture[str], state: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--state-dir", str(state), "--dir", str(state / "mem"), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_task_path_create_then_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, tmp_path, "task", "path", "--task", "t1", "--create")
    assert code == 0 and Path(out.strip()).is_file()
    code, out, _ = run(capsys, tmp_path, "task", "show", "--task", "t1", "--json")
    data = json.loads(out)
    assert code == 0 and data["counts"] == {"open": 1, "done": 1, "done_without_evidence": 0}
    assert set(data) == {"version", "task_id", "directory", "path", "readable", "revision",
                         "handle", "counts", "items", "problems"}


def test_task_id_comes_from_the_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGE_MEM_TASK_ID", "env-task")
    code, out, _ = run(capsys, tmp_path, "task", "path")
    assert code == 0 and out.strip().endswith("tasks/env-task/WORKING.md")


def test_no_task_id_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SAGE_MEM_TASK_ID", raising=False)
    code, _, err = run(capsys, tmp_path, "task", "show")
    assert code == 2 and "no task id: pass --task or set SAGE_MEM_TASK_ID" in err


def test_show_without_checkpoint_says_how_to_create(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, tmp_path, "task", "show", "--task", "t1")
    assert code == 1 and "sagemem task path --create" in err


def test_show_flags_unproven_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, tmp_path, "task", "path", "--task", "t1", "--create")
    with (tmp_path / "tasks" / "t1" / "WORKING.md").open("a", encoding="utf-8") as f:
        f.write("- [x] trust me\n")
    code, out, _ = run(capsys, tmp_path, "task", "show", "--task", "t1")
    assert code == 0 and "(no evidence)" in out and "1 done without evidence" in out


def test_show_of_a_symlink_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tasks" / "t1").mkdir(parents=True)
    (tmp_path / "tasks" / "t1" / "WORKING.md").symlink_to("/etc/hostname")
    code, _, err = run(capsys, tmp_path, "task", "show", "--task", "t1")
    assert code == 1 and "symlink" in err
