"""kill -9 in the middle of a real rollback and archive: afterwards ``recover`` leaves
the folder either untouched or fully done, with exactly one log line — never half done.

Each kill waits for the operation's own moves (its intent record, a file restored or
moved, MEMORY.md edited) rather than for the clock: a kill after a sleep lands wherever
the machine's speed puts it, and an archive finishes in a few milliseconds, so most such
kills came after the operation had ended and proved nothing. Each test also checks that
its kills did land mid-operation (the intent still pending when the process died)."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
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
GIVE_UP = 60.0  # seconds: a moment that never comes must not hang the suite


def digests(store: MemoryStore) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in store.directory.iterdir() if p.is_file() and not p.name.startswith(".")}


def fill(store: MemoryStore, body: str) -> None:
    for i in range(FILES):
        (store.directory / f"project_{i:03}.md").write_text(f"---\nname: {i}\n---\n{body}\n")


def intent_written(store: MemoryStore) -> Callable[[], bool]:
    """The operation's first move: its intent record linked into ``<state>/journal/``."""
    folder = journal.journal_dir(store.state_dir)

    def seen() -> bool:
        try:
            return any(n.endswith(".json") for n in os.listdir(folder))
        except FileNotFoundError:
            return False

    return seen


def kill_nine_at(store: MemoryStore, *args: str, moment: Callable[[], bool]) -> bool:
    """Run ``sagemem ARGS`` and kill -9 it as soon as ``moment()`` holds; True when the
    kill came while the process still ran."""
    process = subprocess.Popen([sys.executable, "-m", "sagemem", "--dir", str(store.directory),
                                "--state-dir", str(store.state_dir), *args],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + GIVE_UP
    while process.poll() is None and not moment() and time.monotonic() < deadline:
        pass  # busy: a sleep between looks would let a short operation slip past
    killed = process.poll() is None
    if killed:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()
    return killed


def test_kill_9_during_rollback_then_recover_is_all_or_nothing(tmp_path: Path) -> None:
    rng = random.Random(12)
    mid_operation = 0
    for round_ in range(6):
        memory = tmp_path / f"r{round_}" / "memory"
        memory.mkdir(parents=True)
        store = MemoryStore(memory, memory.parent / "state")
        fill(store, "old")
        snapshot = create_snapshot(store)
        before = digests(store)
        fill(store, "new")
        after = digests(store)
        # Round 0 dies right after the intent, the others once a chosen file is restored.
        target = memory / f"project_{rng.randrange(FILES):03}.md"
        moment = intent_written(store) if round_ == 0 else (
            lambda target=target: target.read_bytes().endswith(b"old\n"))
        kill_nine_at(store, "rollback", snapshot.id, "--yes", moment=moment)
        mid_operation += bool(journal.pending(store.state_dir)[0])
        recover(store)
        now, lines = digests(store), rollback_history(store)
        assert journal.pending(store.state_dir) == ([], [])
        assert (now, len(lines)) in ((before, 1), (after, 0)), (round_, len(lines))
    assert mid_operation >= 5, f"only {mid_operation} of 6 kills landed mid-rollback"


def test_kill_9_during_archive_then_recover_keeps_memory_md_in_step(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    store = MemoryStore(memory, tmp_path / "state")
    names = [f"project_{i}.md" for i in range(12)]
    for name in names:
        (memory / name).write_text(f"---\nname: {name}\ndescription: d\n---\nbody\n")
    (memory / "MEMORY.md").write_text("# Memory index\n\n" + "".join(
        f"- [{n}]({n}) — d\n" for n in names))

    def state(name: str) -> tuple[bool, bool, int]:
        """(moved into archive/, MEMORY.md still lists it, archive.jsonl lines for it)."""
        logged = [e.file for e in read_log(store.state_dir)[0]].count(name)
        return ((store.archive_dir / name).exists(),
                f"({name})" in (memory / "MEMORY.md").read_text(), logged)

    mid_operation = 0
    moved_but_listed = 0  # the half state only recover's MEMORY.md step repairs
    for i, name in enumerate(names):
        # Die just after the intent record, the move, or the MEMORY.md edit, in turn.
        moment = (intent_written(store),
                  lambda name=name: (store.archive_dir / name).exists(),
                  lambda name=name: f"({name})" not in (memory / "MEMORY.md").read_text())[i % 3]
        kill_nine_at(store, "archive", name, "--reason", "r", "--yes", moment=moment)
        mid_operation += bool(journal.pending(store.state_dir)[0])
        moved_but_listed += state(name)[:2] == (True, True)
        recover(store)
        assert journal.pending(store.state_dir) == ([], [])
        assert state(name) in ((True, False, 1), (False, True, 0)), (name, state(name))
    assert mid_operation >= 7, f"only {mid_operation} of 12 kills landed mid-archive"
    assert moved_but_listed >= 1, "no kill landed between the move and the MEMORY.md edit"
