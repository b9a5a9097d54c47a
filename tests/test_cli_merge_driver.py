"""sagemem merge-driver as git calls it: %O %A %B %P, the result in %A, exit 0 or 1."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from sagemem.gitsync import driver
from sagemem.gitsync.install import ATTRIBUTE, MARK, driver_command
from sagemem.gitsync.merge_text import MergeResult
from tests.git_clones import git_env

BASE = "---\nname: X\ndescription: old\n---\nbody\n"


def _driver(tmp_path: Path, base: bytes, ours: bytes, theirs: bytes, path: str = "mem/x.md",
            *options: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    (tmp_path / "home").mkdir(exist_ok=True)
    files = []
    for name, data in (("o", base), ("a", ours), ("b", theirs)):
        (tmp_path / name).write_bytes(data)
        files.append(str(tmp_path / name))
    done = subprocess.run([sys.executable, "-m", "sagemem", *options, "merge-driver", *files,
                           path], cwd=tmp_path, text=True, capture_output=True,
                          env=git_env(tmp_path / "home"), timeout=60, check=False)
    return done, tmp_path / "a"


def test_a_clean_merge_exits_0_with_the_result_in_ours(tmp_path: Path) -> None:
    done, ours = _driver(tmp_path, BASE.encode(), BASE.replace("old", "new").encode(),
                         BASE.replace("body", "body 2").encode())
    assert done.returncode == 0 and done.stderr == ""
    assert ours.read_text() == "---\nname: X\ndescription: new\n---\nbody 2\n"


def test_memory_md_by_its_path_merges_as_the_index(tmp_path: Path) -> None:
    base = "- [A](a.md) — a\n"
    done, ours = _driver(tmp_path, base.encode(), (base + "- [B](b.md) — b\n").encode(),
                         (base + "- [C](c.md) — c\n").encode(), "mem/MEMORY.md")
    assert done.returncode == 0
    assert ours.read_text() == base + "- [C](c.md) — c\n- [B](b.md) — b\n"


def test_a_conflict_exits_1_with_markers_and_one_line_saying_where(tmp_path: Path) -> None:
    (tmp_path / "mem").mkdir()
    done, ours = _driver(tmp_path, BASE.encode(), BASE.replace("old", "mine").encode(),
                         BASE.replace("old", "yours").encode(), "mem/x.md", "--dir", "mem")
    assert done.returncode == 1
    assert "conflict in field 'description'" in done.stderr
    assert "sagemem conflicts show" in done.stderr
    assert "<<<<<<< ours\ndescription: mine\n" in ours.read_text()


def test_bytes_that_are_not_utf8_fall_back_to_gits_merge(tmp_path: Path) -> None:
    base = b"one\n\xff two\nthree\n"
    done, ours = _driver(tmp_path, base, base.replace(b"one", b"1"),
                         base.replace(b"three", b"3"))
    assert done.returncode == 0
    assert "merged as plain text" in done.stderr and "Traceback" not in done.stderr
    assert ours.read_bytes() == b"1\n\xff two\n3\n"


def test_a_fallback_conflict_still_exits_1_with_markers(tmp_path: Path) -> None:
    base = b"\xff one\n"
    done, ours = _driver(tmp_path, base, b"\xff mine\n", b"\xff yours\n")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert b"<<<<<<< ours\n\xff mine\n=======\n\xff yours\n>>>>>>> theirs\n" in ours.read_bytes()


def test_a_conflict_with_no_folder_to_queue_in_is_still_marked(tmp_path: Path) -> None:
    done, ours = _driver(tmp_path, BASE.encode(), BASE.replace("old", "mine").encode(),
                         BASE.replace("old", "yours").encode(), "mem/x.md",
                         "--dir", "does-not-exist")
    assert done.returncode == 1
    assert "conflicts will not be queued" in done.stderr and "Traceback" not in done.stderr
    assert "<<<<<<< ours" in ours.read_text()


def test_a_conflict_outside_an_installed_folder_is_never_queued_elsewhere(
        tmp_path: Path) -> None:
    done, ours = _driver(tmp_path, BASE.encode(), BASE.replace("old", "mine").encode(),
                         BASE.replace("old", "yours").encode(), "notes/x.md")
    assert done.returncode == 1
    assert "conflicts will not be queued" in done.stderr
    assert not (tmp_path / "home" / ".sage-mem").exists()
    assert "<<<<<<< ours" in ours.read_text()


def test_the_folder_is_found_by_install_gits_gitattributes(tmp_path: Path) -> None:
    (tmp_path / "mem" / "archive").mkdir(parents=True)
    (tmp_path / "mem" / ".gitattributes").write_text(f"{MARK}\n{ATTRIBUTE}\n")
    done, _ = _driver(tmp_path, BASE.encode(), BASE.replace("old", "mine").encode(),
                      BASE.replace("old", "yours").encode(), "mem/archive/x.md")
    assert done.returncode == 1 and "sagemem conflicts show" in done.stderr
    listed = subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(tmp_path / "mem"),
                             "conflicts", "list"], text=True, capture_output=True,
                            env=git_env(tmp_path / "home"), check=False)
    assert "unresolved_merge archive/x.md" in listed.stdout


def _as_git_runs(tmp_path: Path, command: str, sides: tuple[bytes, bytes, bytes],
                 path: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``command`` (a driver line of git config) run as git runs it: placeholders
    replaced by shell-quoted paths, through ``sh -c``, at the repository's top."""
    (tmp_path / "home").mkdir(exist_ok=True)
    for name, data in zip(("o", "a", "b"), sides, strict=True):
        (tmp_path / name).write_bytes(data)
    for placeholder, value in (("%O", "o"), ("%A", "a"), ("%B", "b"), ("%P", path)):
        command = command.replace(placeholder, shlex.quote(value))
    done = subprocess.run(["sh", "-c", command], cwd=tmp_path, text=True, capture_output=True,
                          env=git_env(tmp_path / "home"), timeout=60, check=False)
    return done, tmp_path / "a"


@pytest.mark.parametrize("command", [driver_command(sys.executable),
                                     f"{sys.executable} -m sagemem merge-driver %O %A %B %P"],
                         ids=["installed", "installed-before-the-dashes"])
def test_a_memory_named_like_an_option_is_merged(tmp_path: Path, command: str) -> None:
    sides = (BASE.encode(), BASE.replace("old", "new").encode(),
             BASE.replace("body", "body 2").encode())
    done, ours = _as_git_runs(tmp_path, command, sides, "-x.md")
    assert done.returncode == 0, done.stderr
    assert ours.read_text() == "---\nname: X\ndescription: new\n---\nbody 2\n"


def test_a_conflict_that_cannot_be_queued_stands_marked_once(tmp_path: Path) -> None:
    (tmp_path / "mem").mkdir()
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "conflicts").write_text("not a directory\n")
    done, ours = _driver(tmp_path, BASE.encode(), BASE.replace("old", "mine").encode(),
                         BASE.replace("old", "yours").encode(), "mem/x.md",
                         "--dir", "mem", "--state-dir", "state")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "conflicts will not be queued" in done.stderr
    assert "merged as plain text" not in done.stderr
    assert ours.read_text() == ("---\nname: X\n<<<<<<< ours\ndescription: mine\n=======\n"
                                "description: yours\n>>>>>>> theirs\n---\nbody\n")


def test_a_fault_of_the_merge_falls_back_on_ours_as_git_gave_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object) -> MergeResult:
        raise RuntimeError("a bug")

    monkeypatch.setattr(driver, "merge_texts", broken)
    sides = [tmp_path / name for name in ("o", "a", "b")]
    for side, text in zip(sides, ("one\ntwo\nthree\n", "1\ntwo\nthree\n",
                                       "one\ntwo\n3\n"), strict=True):
        side.write_text(text)
    outcome = driver.run_driver(*sides, "x.md", lambda: None)
    assert outcome.clean and outcome.plain == "RuntimeError: a bug"
    assert sides[1].read_text() == "1\ntwo\n3\n"


def test_git_merges_a_memory_named_like_an_option_in_a_folder_at_the_top(
        tmp_path: Path) -> None:
    env = git_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    top = tmp_path / "repo"

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=top, env=env, text=True, capture_output=True,
                              timeout=60, check=False)

    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", str(top)],
                   env=env, check=True)
    assert run(sys.executable, "-m", "sagemem", "--dir", ".", "--state-dir",
               str(tmp_path / "state"), "install", "git").returncode == 0
    (top / "-x.md").write_text(BASE)
    run("git", "add", "-A")
    run("git", "commit", "-qm", "x")
    run("git", "checkout", "-qb", "theirs")
    (top / "-x.md").write_text(BASE.replace("body", "body 2"))
    run("git", "commit", "-qam", "body")
    run("git", "checkout", "-q", "main")
    (top / "-x.md").write_text(BASE.replace("old", "new"))
    run("git", "commit", "-qam", "description")
    done = run("git", "merge", "-q", "--no-edit", "theirs")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (top / "-x.md").read_text() == "---\nname: X\ndescription: new\n---\nbody 2\n"
