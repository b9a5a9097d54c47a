"""MemoryStore: listing that never hides a memory, creating, atomic guarded writes, init."""

from __future__ import annotations

import errno
import os
import stat
from datetime import date
from pathlib import Path

import pytest
from conftest import MEMORY_TEXT, write_memory

from sagemem import (
    DirectoryMissing,
    FileTooLarge,
    InvalidName,
    MemoryExists,
    MemoryNotFound,
    MemoryStore,
    ReservedName,
    StaleRevision,
    UnreadableFile,
    UnsafeFile,
    WriteFailed,
    init_directory,
)
from sagemem.errors import InvalidRevision, ReadOnlyFile
from sagemem.files import folder as folder_mod
from sagemem.files.atomic import TMP_SUFFIX
from sagemem.files.paths import file_name_for, slugify

TODAY = date(2026, 11, 30)


@pytest.fixture
def empty_store(tmp_path: Path) -> MemoryStore:
    init_directory(tmp_path / "memory", tmp_path / "state")
    return MemoryStore(tmp_path / "memory", tmp_path / "state")


@pytest.fixture
def store(empty_store: MemoryStore) -> MemoryStore:
    for name, type_ in (("user_alice.md", "user"), ("project_deploy.md", "project")):
        write_memory(empty_store.directory, name,
                     MEMORY_TEXT.format(name=name[:-3], description=f"about {name}",
                                        type=type_, body="Body text."))
    return empty_store


def test_state_dir_defaults_beside_the_memory_dir(tmp_path: Path) -> None:
    assert MemoryStore(tmp_path / "memory").state_dir == tmp_path / ".sage-mem"


def test_list_reads_every_memory_and_skips_the_index(store: MemoryStore) -> None:
    listing = store.list()
    assert [m.file for m in listing.memories] == ["project_deploy.md", "user_alice.md"]
    assert listing.errors == ()


def test_broken_files_are_reported_and_hide_nothing(store: MemoryStore) -> None:
    (store.directory / "user_binary.md").write_bytes(b"\x00\xff\xfe binary")
    (store.directory / "user_link.md").symlink_to(store.directory / "user_alice.md")
    (store.directory / "user_broken.md").write_text("---\ndescription: [oops\n---\nbody\n")
    listing = store.list()
    assert {m.file for m in listing.memories} == {"project_deploy.md", "user_alice.md",
                                                  "user_broken.md"}
    errors = {e.file: type(e.error) for e in listing.errors}
    assert errors == {"user_binary.md": UnreadableFile, "user_link.md": UnsafeFile}


def test_temporary_and_hidden_files_are_not_memories(store: MemoryStore) -> None:
    (store.directory / f".user_alice.md.abcd{TMP_SUFFIX}").write_text("half")
    (store.directory / "notes.txt").write_text("not markdown")
    assert len(store.list().memories) == 2


def test_archived_memories_are_listed_and_marked(store: MemoryStore) -> None:
    store.archive_dir.mkdir()
    write_memory(store.archive_dir, "user_old.md", "---\ndescription: old\n---\n")
    archived = [m for m in store.list().memories if m.archived]
    assert [m.file for m in archived] == ["user_old.md"]
    assert [m.file for m in store.list(include_archived=False).memories] == [
        "project_deploy.md", "user_alice.md"]


def test_get_accepts_a_name_without_suffix(store: MemoryStore) -> None:
    assert store.get("user_alice").file == "user_alice.md"


def test_get_refuses_the_index(store: MemoryStore) -> None:
    with pytest.raises(ReservedName):
        store.get("MEMORY.md")


def test_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DirectoryMissing, match="sagemem init"):
        MemoryStore(tmp_path / "nope").list()


def test_new_writes_the_file_and_its_index_line(empty_store: MemoryStore) -> None:
    memory = empty_store.new(type="feedback", name="Run tests first",
                             description="Always run the tests before committing",
                             tags=["testing"], body="Why: CI is slow.", today=TODAY)
    assert memory.file == "feedback_run_tests_first.md"
    assert (memory.type, memory.tags, memory.updated) == ("feedback", ("testing",), TODAY)
    index = (empty_store.directory / "MEMORY.md").read_text(encoding="utf-8")
    assert index.endswith(
        "- [Run tests first](feedback_run_tests_first.md) — "
        "Always run the tests before committing\n")


def test_new_never_overwrites(store: MemoryStore) -> None:
    before = (store.directory / "user_alice.md").read_bytes()
    index_before = (store.directory / "MEMORY.md").read_bytes()
    with pytest.raises(MemoryExists):
        store.new(type="user", name="alice", description="another alice", today=TODAY)
    assert (store.directory / "user_alice.md").read_bytes() == before
    assert (store.directory / "MEMORY.md").read_bytes() == index_before


def test_new_creates_the_index_when_missing(store: MemoryStore) -> None:
    (store.directory / "MEMORY.md").unlink()
    store.new(type="user", name="bob", description="Bob", today=TODAY)
    assert "- [bob](user_bob.md) — Bob" in (store.directory / "MEMORY.md").read_text()


def test_index_memory_keeps_a_line_spelt_another_way(store: MemoryStore) -> None:
    memory = store.new(type="user", name="bob", description="Bob", today=TODAY)
    index = store.directory / "MEMORY.md"
    index.write_text("- [Bob](./User_Bob.md) — by hand\n", encoding="utf-8")
    store.index_memory(memory)
    assert index.read_text(encoding="utf-8") == "- [Bob](./User_Bob.md) — by hand\n"


def test_new_accepts_an_index_larger_than_one_memory_may_be(store: MemoryStore) -> None:
    index = store.directory / "MEMORY.md"
    lines = "".join(f"- [m{i}](project_m{i}.md) — a memory of a large folder\n"
                    for i in range(12_000))
    index.write_text(lines, encoding="utf-8")
    assert index.stat().st_size > store.max_bytes
    store.new(type="user", name="bob", description="Bob", today=TODAY)
    assert index.read_text(encoding="utf-8") == lines + "- [bob](user_bob.md) — Bob\n"


def test_new_refuses_an_oversized_body(empty_store: MemoryStore) -> None:
    with pytest.raises(FileTooLarge):
        empty_store.new(type="user", name="huge", description="d", body="x" * 600_000)
    assert empty_store.list().memories == ()


def test_new_refuses_a_reserved_file_name(empty_store: MemoryStore) -> None:
    with pytest.raises(ReservedName):
        empty_store.new(type="user", name="x", description="d", file="Session-Log.md")


@pytest.mark.parametrize("name,expected", [
    ("Run tests first!", "run_tests_first"), ("部署 流程", "部署_流程"),
    ("  --weird__name-- ", "weird__name"), ("Ünïcödé", "ünïcödé"),
])
def test_slugify(name: str, expected: str) -> None:
    assert slugify(name) == expected


def test_file_name_does_not_repeat_the_type() -> None:
    assert file_name_for("user", "user prefs") == "user_prefs.md"
    with pytest.raises(InvalidName):
        file_name_for("user", "!!!")


def test_unchanged_save_is_byte_identical(store: MemoryStore) -> None:
    path = store.directory / "user_alice.md"
    before = path.read_bytes()
    memory = store.get("user_alice.md")
    saved = store.write(memory.file, memory.text, memory.revision)
    assert path.read_bytes() == before and saved.revision == memory.revision


def test_write_refuses_a_stale_revision(store: MemoryStore) -> None:
    memory = store.get("user_alice.md")
    (store.directory / "user_alice.md").write_text("edited by a person\n")
    with pytest.raises(StaleRevision) as info:
        store.write(memory.file, memory.text + "agent edit\n", memory.revision)
    assert info.value.expected == memory.revision
    assert (store.directory / "user_alice.md").read_text() == "edited by a person\n"


def test_write_with_no_revision_only_creates(store: MemoryStore) -> None:
    with pytest.raises(MemoryExists):
        store.write("user_alice.md", "new text", None)
    created = store.write("user_new.md", "---\ndescription: n\n---\n", None)
    assert created.description == "n"


def test_write_refuses_oversized_content(store: MemoryStore) -> None:
    memory = store.get("user_alice.md")
    with pytest.raises(FileTooLarge):
        store.write(memory.file, "x" * (512 * 1024 + 1), memory.revision)
    assert store.get("user_alice.md").revision == memory.revision


def test_full_disk_leaves_the_old_file_and_no_temporary(store: MemoryStore, monkeypatch) -> None:
    memory = store.get("user_alice.md")

    def disk_full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(folder_mod.os, "write", disk_full)
    with pytest.raises(WriteFailed, match="No space left"):
        store.write(memory.file, memory.text + "more\n", memory.revision)
    monkeypatch.undo()
    assert store.get("user_alice.md").revision == memory.revision
    assert not [p for p in os.listdir(store.directory) if p.endswith(TMP_SUFFIX)]


def test_read_only_directory_gives_a_clear_error(store: MemoryStore, monkeypatch) -> None:
    real_open = os.open

    def refuse_create(path: object, flags: int, *args: object) -> int:
        if flags & os.O_CREAT:  # chmod cannot stop root, so the refusal is simulated
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args)

    index_before = (store.directory / "MEMORY.md").read_bytes()
    monkeypatch.setattr(folder_mod.os, "open", refuse_create)
    with pytest.raises(WriteFailed, match="Permission denied"):
        store.new(type="user", name="ro", description="d")
    monkeypatch.undo()
    assert (store.directory / "MEMORY.md").read_bytes() == index_before
    assert not (store.directory / "user_ro.md").exists()


def test_init_creates_and_never_overwrites(tmp_path: Path) -> None:
    report = init_directory(tmp_path / "m", tmp_path / "s")
    assert set(report.created) == {tmp_path / "m", tmp_path / "s", tmp_path / "m" / "MEMORY.md"}
    (tmp_path / "m" / "MEMORY.md").write_text("mine\n")
    again = init_directory(tmp_path / "m", tmp_path / "s")
    assert again.created == () and len(again.existed) == 3
    assert (tmp_path / "m" / "MEMORY.md").read_text() == "mine\n"


def test_init_on_a_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "m").write_text("a file")
    with pytest.raises(WriteFailed, match="not a directory"):
        init_directory(tmp_path / "m", tmp_path / "s")


def test_revision_of_missing_memory_is_none(store: MemoryStore) -> None:
    assert store.revision("user_nobody.md") is None
    with pytest.raises(MemoryNotFound):
        store.get("user_nobody.md")


def test_symlinked_archive_is_refused_and_hides_nothing(store: MemoryStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    write_memory(outside, "user_secret.md", "---\ndescription: secret\n---\n")
    store.archive_dir.symlink_to(outside)
    listing = store.list()
    assert [m.file for m in listing.memories] == ["project_deploy.md", "user_alice.md"]
    assert [type(e.error) for e in listing.errors] == [UnsafeFile]
    with pytest.raises(UnsafeFile):
        store.get("user_secret.md", archived=True)


def test_new_refuses_a_name_differing_only_in_case(store: MemoryStore) -> None:
    with pytest.raises(MemoryExists, match=r"user_alice\.md"):
        store.new(type="user", name="x", description="d", file="User_Alice.md")
    with pytest.raises(MemoryExists):
        store.write("USER_ALICE.md", "text", None)


def test_decomposed_unicode_file_name_is_listed_and_readable(empty_store: MemoryStore) -> None:
    nfd = "user_cafe\u0301.md"
    write_memory(empty_store.directory, nfd, "---\ndescription: coffee\n---\n")
    listing = empty_store.list()
    assert [m.file for m in listing.memories] == [nfd] and listing.errors == ()
    assert empty_store.get("user_caf\u00e9.md").description == "coffee"


def test_index_failure_takes_the_new_memory_back(store: MemoryStore, monkeypatch) -> None:
    real_replace = os.replace

    def fail_index(src: object, dst: object) -> None:
        if str(dst).endswith("MEMORY.md"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(folder_mod.os, "replace", fail_index)
    with pytest.raises(WriteFailed, match=r"was not kept"):
        store.new(type="user", name="half", description="d")
    monkeypatch.undo()
    assert not (store.directory / "user_half.md").exists()
    assert not [p for p in os.listdir(store.directory) if p.endswith(TMP_SUFFIX)]


def test_list_filters_by_type_tag_and_activity(store: MemoryStore) -> None:
    write_memory(store.directory, "user_old.md",
                 "---\ndescription: old\ntype: user\ninvalid_at: 2020-01-01\ntags: [Deploy]\n---\n")
    assert {m.file for m in store.list(type="user").memories} == {"user_alice.md", "user_old.md"}
    assert [m.file for m in store.list(tag="deploy").memories] == ["user_old.md"]
    assert "user_old.md" not in {m.file for m in store.list(active=True, today=TODAY).memories}


def test_update_index_refuses_when_memory_md_changed_meanwhile(
        store: MemoryStore) -> None:
    index = store.directory / "MEMORY.md"

    def edit(text: str) -> str:
        index.write_text("# an editor saved this\n", encoding="utf-8")
        return text + "- [X](project_x.md)\n"

    with store.locked(), pytest.raises(StaleRevision):
        store.update_index(edit)
    assert index.read_text(encoding="utf-8") == "# an editor saved this\n"


# -- revision prefixes (one rule: the full revision or its first 8+ hex characters) ------


def test_write_accepts_an_eight_character_revision_prefix(store: MemoryStore) -> None:
    memory = store.get("user_alice.md")
    saved = store.write(memory.file, memory.text + "more\n", memory.revision[:8])
    assert saved.text == memory.text + "more\n"


def test_write_refuses_a_revision_prefix_under_eight_characters(store: MemoryStore) -> None:
    memory = store.get("user_alice.md")
    with pytest.raises(InvalidRevision, match="at least 8"):
        store.write(memory.file, memory.text + "more\n", memory.revision[:4])
    assert store.get("user_alice.md").revision == memory.revision
    assert not (store.state_dir / "conflicts").exists() or not list(
        (store.state_dir / "conflicts").iterdir())


def test_write_refuses_a_revision_that_is_not_hexadecimal(store: MemoryStore) -> None:
    memory = store.get("user_alice.md")
    with pytest.raises(InvalidRevision, match="hexadecimal"):
        store.write(memory.file, memory.text, "not-a-revision")


# -- read-only files (the owner's write bit is respected) -----------------------------


def test_write_refuses_a_file_its_owner_made_read_only(store: MemoryStore) -> None:
    path = store.directory / "user_alice.md"
    memory = store.get("user_alice.md")
    path.chmod(0o444)
    with pytest.raises(ReadOnlyFile, match=r"read-only \(mode 0444\).*chmod u\+w"):
        store.write(memory.file, memory.text + "more\n", memory.revision)
    assert path.read_text() == memory.text and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert not [p for p in os.listdir(store.directory) if p.endswith(TMP_SUFFIX)]


def test_set_refuses_a_read_only_file(store: MemoryStore) -> None:
    path = store.directory / "user_alice.md"
    before = path.read_bytes()
    path.chmod(0o444)
    with pytest.raises(ReadOnlyFile):
        store.write("user_alice.md", fields={"baseline": True})
    assert path.read_bytes() == before


def test_read_only_is_a_write_failure(store: MemoryStore) -> None:
    assert issubclass(ReadOnlyFile, WriteFailed)
