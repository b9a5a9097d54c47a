"""kill -9 at random instants of a real rollback and archive: afterwards ``recover`` leaves
the folder either untouched or fully done, with exactly one log line — never half done."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sagemem.history import journal
from sagemem.history.archive_log import read_log
from sagemem.history.recover import recover
from sagemem.history.rollback import rollback_history
from sagemem.history.snapshots import create_snapshot
from sagemem.store import MemoryStore

pytestmark = pytest.mark.stress
FILES = 300


def digests(store: MemoryStore) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in store.directory.iterdir() if p.is_file() and not p.name.startswith(".")}


def fill(store: MemoryStore, body: str) -> None:
    for i in range(FILES):
        (store.directory / f"project_{i:03}.md").write_text(f"---\nname: {i}\n---\n{body}\n")


def kill_nine_during(store: MemoryStore, *args: str, delay: float) -> None:
    process = subprocess.Popen([sys.executable, "-m", "sagemem", "--dir", str(store.directory),
                                "--state-dir", str(store.state_dir), *args],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    time.sleep(delay)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()


def test_kill_9_during_rollback_then_recover_is_all_or_nothing(tmp_path: Path) -> None:
    rng = random.Random(12)
    for round_ in range(6):
        memory = tmp_path / f"r{round_}" / "memory"
        memory.mkdir(parents=True)
        store = MemoryStore(memory, memory.parent / "state")
        fill(store, "old")
        snapshot = create_snapshot(store)
        before = digests(store)
        fill(store, "new")
        after = digests(store)
        kill_nine_during(store, "rollback", snapshot.id, "--yes", delay=rng.uniform(0.3, 1.5))
        recover(store)
        now, lines = digests(store), rollback_history(store)
        assert journal.pending(store.state_dir) == ([], [])
        assert (now, len(lines)) in ((before, 1), (after, 0)), (round_, len(lines))


def test_kill_9_during_archive_then_recover_keeps_memory_md_in_step(tmp_path: Path) -> None:
    rng = random.Random(4)
    memory = tmp_path / "memory"
    memory.mkdir()
    store = MemoryStore(memory, tmp_path / "state")
    names = [f"project_{i}.md" for i in range(12)]
    for name in names:
        (memory / name).write_text(f"---\nname: {name}\ndescription: d\n---\nbody\n")
    (memory / "MEMORY.md").write_text("# Memory index\n\n" + "".join(
        f"- [{n}]({n}) — d\n" for n in names))
    for name in names:
        kill_nine_during(store, "archive", name, "--reason", "r", "--yes",
                         delay=rng.uniform(0.2, 0.9))
        recover(store)
        archived = (store.archive_dir / name).exists()
        index = (memory / "MEMORY.md").read_text()
        logged = [e.file for e in read_log(store.state_dir)[0]].count(name)
        assert (archived, f"({name})" in index, logged) in ((True, False, 1), (False, True, 0))
