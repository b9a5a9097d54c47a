"""``title_cache``: the titles ``new`` compares come from a cache that is never trusted
blindly (``sagemem/writes/title_cache.py``), through the CLI as a shell runs it."""

from __future__ import annotations

import os
import time
from datetime import date
from pathlib import Path

import pytest

from sagemem.store import MemoryStore
from sagemem.writes.remember import decide
from sagemem.writes.title_cache import CACHE_FILE, RACY_SECONDS, live_cards
from tests.cli_run import sagemem

DAY = date(2026, 12, 1)
OLD = 1_700_000_000  # a past mtime: files older than RACY_SECONDS are cached


def note(store: MemoryStore, file: str, name: str, *, mtime: int = OLD) -> Path:
    path = store.directory / file
    path.write_text(f"---\nname: {name}\ndescription: about {name}\nmetadata:\n"
                    f"  type: project\n---\nbody\n", encoding="utf-8")
    os.utime(path, ns=(mtime * 10**9, mtime * 10**9))
    return path


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    folder, state = tmp_path / "memory", tmp_path / "state"
    folder.mkdir()
    state.mkdir()
    (folder / "MEMORY.md").write_text("# Memory index\n\n")
    made = MemoryStore(folder, state)
    note(made, "project_tea.md", "Tea preference")
    note(made, "project_deploy.md", "Deploy checklist")
    return made


def titles(store: MemoryStore) -> dict[str, str]:
    return {c.file: c.title for c in live_cards(store, DAY)}


def same_decision(store: MemoryStore, title: str) -> None:
    """The cards give the decision the parsed listing gives."""
    listed = store.list(active=True, today=DAY).memories
    by_cards = decide(live_cards(store, DAY), title)
    by_listing = decide(listed, title)
    assert (by_cards.kind, by_cards.score) == (by_listing.kind, by_listing.score)
    assert (by_cards.memory and by_cards.memory.file) == \
        (by_listing.memory and by_listing.memory.file)


def test_the_cards_are_cached_and_give_the_listings_decision(store: MemoryStore) -> None:
    assert titles(store) == {"project_deploy.md": "Deploy checklist",
                             "project_tea.md": "Tea preference"}
    assert (store.state_dir / CACHE_FILE).is_file()
    for title in ("Deploy check-list", "Coffee preference", "Tea preference", "Other"):
        same_decision(store, title)


def test_an_outside_edit_keeping_the_size_is_seen(store: MemoryStore) -> None:
    titles(store)  # cached
    note(store, "project_tea.md", "Tee preference", mtime=OLD + 60)  # same size
    assert titles(store)["project_tea.md"] == "Tee preference"
    same_decision(store, "Tee preference")


def test_a_file_replaced_with_the_same_size_and_mtime_is_seen(store: MemoryStore) -> None:
    titles(store)
    path = store.directory / "project_tea.md"
    other = store.directory / "other.tmp"
    other.write_text(path.read_text().replace("Tea", "Tee"))
    os.utime(other, ns=(OLD * 10**9, OLD * 10**9))
    os.replace(other, path)  # another inode, the same size and mtime
    assert titles(store)["project_tea.md"] == "Tee preference"


def test_a_file_changed_in_the_scans_clock_tick_is_not_cached(store: MemoryStore) -> None:
    note(store, "project_new.md", "Fresh note", mtime=int(time.time()))
    assert RACY_SECONDS > 0 and "project_new.md" in titles(store)
    assert "project_new.md" not in (store.state_dir / CACHE_FILE).read_text()


@pytest.mark.parametrize("junk", [b"\x00\xff not json", b"[" * 100_000, b'{"format": 1}',
                                  b'{"format": 1, "words": 1, "files": {"project_tea.md":'
                                  b' [1, 2, 3, 4, [null, 5, [], {}, 7, 8, 9]]}}'])
def test_a_corrupt_cache_is_ignored_without_a_traceback(store: MemoryStore, junk: bytes
                                                        ) -> None:
    (store.state_dir / CACHE_FILE).write_bytes(junk)
    result = sagemem(store, "new", "--type", "project", "--name", "Tea preferences",
                     "--description", "x")
    assert result.returncode == 1 and "project_tea.md" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert sagemem(store, "new", "--type", "project", "--name", "Quokka care",
                   "--description", "x").returncode == 0
    assert b"Tea preference" in (store.state_dir / CACHE_FILE).read_bytes()  # rebuilt


def test_the_cache_never_follows_a_symlink(store: MemoryStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("keep")
    (store.state_dir / CACHE_FILE).symlink_to(outside)
    result = sagemem(store, "new", "--type", "project", "--name", "Quokka care",
                     "--description", "x")
    assert result.returncode == 0, result.stderr
    assert outside.read_text() == "keep"
    assert (store.state_dir / CACHE_FILE).is_symlink()
    assert titles(store)["project_tea.md"] == "Tea preference"


def test_a_symlinked_memory_is_not_a_card(store: MemoryStore, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("---\nname: Outside title\n---\n")
    (store.directory / "project_link.md").symlink_to(outside)
    assert "project_link.md" not in titles(store)


def test_new_reads_only_the_files_that_changed(store: MemoryStore,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The check behind ``new`` at 10,000 memories parsed all 10,000 (2.4 s): with the
    cache, a second ``new`` parses only what changed since the first."""
    from sagemem.cli import main
    from sagemem.files import folder, memory
    from sagemem.writes import title_cache

    for n in range(40):
        note(store, f"project_note_{n}.md", f"Note number {n} about {'abcdefghij'[n % 10]}")
    at = ["--dir", str(store.directory), "--state-dir", str(store.state_dir)]
    assert main([*at, "new", "--type", "project", "--name", "Quokka care",
                 "--description", "x"]) == 0  # fills the cache
    parsed: list[str] = []

    def counting(data: bytes, file: str, **kwargs: object) -> memory.Memory:
        parsed.append(file)
        return memory.parse(data, file, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(folder, "parse", counting)
    monkeypatch.setattr(title_cache, "parse", counting)
    assert main([*at, "new", "--type", "project", "--name", "Walrus diet",
                 "--description", "y"]) == 0
    assert set(parsed) <= {"project_quokka_care.md", "project_walrus_diet.md"}, parsed
