"""sagemem merge-driver as git calls it: %O %A %B %P, the result in %A, exit 0 or 1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sagemem.gitsync.install import ATTRIBUTE, MARK
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
