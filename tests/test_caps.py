"""Per-layer caps (writes/caps.py, history/caps.py): soft caps warn, a body over the hard
cap is refused with nothing written, a create at the hard count archives the least
recently read memory of that store — never a locked or baseline one, never deleted."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from sagemem.config import load_settings
from sagemem.errors import BodyTooLarge, IllegalSetting, LayerFull, MemoryExists
from sagemem.history import ledger
from sagemem.history.archive_log import read_log
from sagemem.history.caps import enforce_caps, new_memory, write_memory
from sagemem.history.locks import lock_memory
from sagemem.store import MemoryStore
from sagemem.writes.caps import NO_CAPS, Caps, count_memories
from tests.cli_run import Run, one_line_error, store_runner

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
TEXT = "---\nname: {0}\ndescription: {0}\ntype: project\n---\n{1}\n"


def capped(tmp_path: Path, caps: Caps, name: str = "memory") -> MemoryStore:
    directory = tmp_path / name
    directory.mkdir()
    return MemoryStore(directory, tmp_path / f"{name}-state", caps=caps)


def fill(store: MemoryStore, *names: str, age_days: int = 10) -> None:
    """Memories written ``age_days`` ago, one second apart in the order given."""
    caps, store.caps = store.caps, NO_CAPS
    for i, name in enumerate(names):
        memory = store.new(type="project", name=name, description=name, body=name)
        moment = (NOW - timedelta(days=age_days, seconds=-i)).timestamp()
        os.utime(store.directory / memory.file, (moment, moment))
    store.caps = caps


def read_at(store: MemoryStore, file: str, days_ago: int) -> None:
    ledger.record(store.state_dir, "read", [file], NOW - timedelta(days=days_ago))


def tree(store: MemoryStore) -> dict[str, bytes]:
    return {str(p.relative_to(store.directory)): p.read_bytes()
            for p in sorted(store.directory.rglob("*")) if p.is_file()}


@pytest.fixture
def full_store(tmp_path: Path) -> MemoryStore:
    """Three memories at a hard cap of three: a, b, c (a written first)."""
    store = capped(tmp_path, Caps(soft_memories=0, hard_memories=3))
    fill(store, "a", "b", "c")
    return store


def test_creating_past_the_soft_cap_warns(tmp_path: Path) -> None:
    store = capped(tmp_path, Caps(soft_memories=2, hard_memories=0))
    fill(store, "a")
    _, quiet = new_memory(store, type="project", name="b", description="b")
    _, loud = new_memory(store, type="project", name="c", description="c")
    assert quiet.warnings == ()
    assert loud.warnings == ("the layer holds 3 memories, past the soft cap of 2 "
                             "(soft_cap_memories); archive what is no longer needed "
                             "(`sagemem archive candidates`)",)
    assert loud.archived == ()


def test_hard_cap_archives_the_least_recently_read(full_store: MemoryStore) -> None:
    read_at(full_store, "project_a.md", 1)
    read_at(full_store, "project_b.md", 5)  # read longest ago; c is never read (mtime 10d)
    read_at(full_store, "project_c.md", 2)
    memory, report = new_memory(full_store, type="project", name="d", description="d",
                                now=NOW)
    assert report.archived_files == ("project_b.md",)
    assert report.archived[0].event.reason == "hard cap of 3 memories reached (hard_cap_memories)"
    assert full_store.files() == ["project_a.md", "project_c.md", "project_d.md"]
    assert memory.file == "project_d.md"


def test_hard_cap_falls_back_to_the_file_mtime(full_store: MemoryStore) -> None:
    read_at(full_store, "project_a.md", 1)  # b and c never read: b's mtime is the older
    _, report = new_memory(full_store, type="project", name="d", description="d")
    assert report.archived_files == ("project_b.md",)


def test_hard_cap_skips_locked_and_baseline_memories(full_store: MemoryStore) -> None:
    lock_memory(full_store, "project_a")
    full_store.write("project_b", fields={"baseline": True})
    os.utime(full_store.directory / "project_b.md", (0, 0))  # oldest of all, yet kept
    _, report = new_memory(full_store, type="project", name="d", description="d")
    assert report.archived_files == ("project_c.md",)


def test_hard_cap_never_deletes(full_store: MemoryStore) -> None:
    before = (full_store.directory / "project_a.md").read_bytes()
    new_memory(full_store, type="project", name="d", description="d", now=NOW)
    assert (full_store.archive_dir / "project_a.md").read_bytes() == before
    events, _ = read_log(full_store.state_dir)
    assert [(e.action, e.file, e.reason) for e in events] == [
        ("archive", "project_a.md", "hard cap of 3 memories reached (hard_cap_memories)")]
    assert "project_a.md" not in full_store.read_index()[0]


def test_hard_cap_refuses_when_nothing_can_be_archived(full_store: MemoryStore) -> None:
    lock_memory(full_store, "project_a")
    lock_memory(full_store, "project_b")
    full_store.write("project_c", fields={"baseline": True})
    before = tree(full_store)
    with pytest.raises(LayerFull) as caught:
        new_memory(full_store, type="project", name="d", description="d")
    assert "locked or baseline: true" in str(caught.value)
    assert caught.value.count == 3 and caught.value.setting == "hard_cap_memories"
    assert tree(full_store) == before


def test_hard_cap_never_archives_the_memory_being_written(tmp_path: Path) -> None:
    store = capped(tmp_path, Caps(soft_memories=0, hard_memories=1))
    fill(store, "a")
    lock_memory(store, "project_a")
    with pytest.raises(LayerFull):
        write_memory(store, "project_b", TEXT.format("b", "b"), None)
    assert store.files() == ["project_a.md"]


def test_a_layer_over_its_hard_cap_is_archived_down_to_it(tmp_path: Path) -> None:
    store = capped(tmp_path, Caps(soft_memories=0, hard_memories=2))
    fill(store, "a", "b", "c", "d")  # a cap lowered below what the layer holds
    _, report = new_memory(store, type="project", name="e", description="e")
    assert report.archived_files == ("project_a.md", "project_b.md", "project_c.md")
    assert store.files() == ["project_d.md", "project_e.md"]


def test_a_write_that_creates_archives_for_room(full_store: MemoryStore) -> None:
    memory, report = write_memory(full_store, "project_d", TEXT.format("d", "body"), None)
    assert report.archived_files == ("project_a.md",) and memory.file == "project_d.md"


def test_a_create_refused_for_another_reason_archives_nothing(full_store: MemoryStore
                                                              ) -> None:
    before = tree(full_store)
    with pytest.raises(MemoryExists):
        new_memory(full_store, type="project", name="c", description="again")
    with pytest.raises(MemoryExists):
        write_memory(full_store, "project_c", TEXT.format("c", "again"), None)
    assert tree(full_store) == before


def test_the_store_refuses_a_create_at_the_hard_cap(full_store: MemoryStore) -> None:
    before = tree(full_store)
    with pytest.raises(LayerFull) as caught:
        full_store.new(type="project", name="d", description="d")
    assert "enforce_caps" in str(caught.value)
    with pytest.raises(LayerFull):
        full_store.write("project_d", TEXT.format("d", "body"), None)
    assert tree(full_store) == before
    assert not (full_store.state_dir / "conflicts").exists()


def test_editing_at_the_hard_cap_archives_nothing(full_store: MemoryStore) -> None:
    memory = full_store.get("project_a")
    saved, report = write_memory(full_store, "project_a", TEXT.format("a", "new"),
                                 memory.revision)
    assert report == type(report)() and "new" in saved.body
    assert len(full_store.files()) == 3


def test_a_body_past_the_soft_cap_warns(tmp_path: Path) -> None:
    store = capped(tmp_path, Caps(soft_body_bytes=10, hard_body_bytes=100))
    _, report = new_memory(store, type="project", name="a", description="a", body="x" * 11)
    assert report.warnings == ("the body is 11 bytes, past the soft cap of 10 "
                               "(soft_cap_body_bytes); consider splitting it",)
    memory = store.get("project_a")
    _, edited = write_memory(store, "project_a", memory.text + "more\n", memory.revision)
    assert edited.warnings and "past the soft cap of 10" in edited.warnings[0]


def test_a_body_over_the_hard_cap_is_refused_with_nothing_written(tmp_path: Path) -> None:
    store = capped(tmp_path, Caps(soft_body_bytes=0, hard_body_bytes=100))
    fill(store, "a")
    before = tree(store)
    with pytest.raises(BodyTooLarge) as caught:
        store.new(type="project", name="b", description="b", body="é" * 51)  # 102 bytes
    assert (caught.value.size, caught.value.cap) == (102, 100)
    assert "102 bytes" in str(caught.value) and "hard_cap_body_bytes" in str(caught.value)
    assert "split it" in str(caught.value)
    memory = store.get("project_a")
    with pytest.raises(BodyTooLarge):
        store.write("project_a", TEXT.format("a", "x" * 101), memory.revision)
    with pytest.raises(BodyTooLarge):
        write_memory(store, "project_c", TEXT.format("c", "x" * 101), None)
    assert tree(store) == before
    assert not (store.state_dir / "conflicts").exists()


def test_the_body_cap_measures_the_body_not_the_frontmatter(tmp_path: Path) -> None:
    store = capped(tmp_path, Caps(soft_body_bytes=0, hard_body_bytes=10))
    long_description = "d" * 200
    store.write("project_a", TEXT.format(long_description, "short"), None)
    store.write("project_a", fields={"description": "e" * 300})  # a set is not measured
    assert store.get("project_a").body == "short\n"


def test_caps_of_zero_are_off(tmp_path: Path) -> None:
    store = capped(tmp_path, NO_CAPS)
    fill(store, "a", "b")
    _, report = new_memory(store, type="project", name="c", description="c", body="x" * 300_000)
    assert report == type(report)() and len(store.files()) == 3


def test_an_illegal_count_cap_refuses_creating_but_not_editing(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    directory.mkdir()
    settings = load_settings({"SAGE_MEM_HARD_CAP_MEMORIES": "lots"}, memory_dir=directory)
    store = MemoryStore.from_settings(settings)
    store.caps, caps = NO_CAPS, store.caps
    fill(store, "a")
    store.caps = caps
    with pytest.raises(IllegalSetting) as caught:
        new_memory(store, type="project", name="b", description="b")
    assert caught.value.name == "SAGE_MEM_HARD_CAP_MEMORIES"
    with pytest.raises(IllegalSetting):
        store.new(type="project", name="b", description="b")
    memory = store.get("project_a")
    write_memory(store, "project_a", TEXT.format("a", "edited"), memory.revision)
    assert store.files() == ["project_a.md"]


def test_caps_come_from_settings(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    directory.mkdir()
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "settings.json").write_text(json.dumps({"hard_cap_memories": 7}))
    settings = load_settings({"SAGE_MEM_SOFT_CAP_BODY_BYTES": "99"}, memory_dir=directory,
                             state_dir=tmp_path / "state")
    assert MemoryStore.from_settings(settings).caps == Caps(1000, 7, 99, 65536)


def test_caps_are_per_store(tmp_path: Path) -> None:
    project = capped(tmp_path, Caps(soft_memories=0, hard_memories=1), "project")
    global_ = capped(tmp_path, Caps(soft_memories=0, hard_memories=3), "global")
    fill(project, "a")
    fill(global_, "a")
    _, in_project = new_memory(project, type="project", name="b", description="b")
    _, in_global = new_memory(global_, type="project", name="b", description="b")
    assert in_project.archived_files == ("project_a.md",) and in_global.archived == ()
    assert project.files() == ["project_b.md"]
    assert global_.files() == ["project_a.md", "project_b.md"]


def test_count_memories_scans_only_the_top_level_memories(full_store: MemoryStore) -> None:
    (full_store.directory / "notes.txt").write_text("not a memory")
    (full_store.directory / ".hidden.md").write_text("editor swap")
    new_memory(full_store, type="project", name="d", description="d")  # one into archive/
    assert count_memories(full_store) == 3  # MEMORY.md and archive/ do not count
    (full_store.directory / "Projet_e\u0301te\u0301.MD").write_text("---\n---\n")
    assert count_memories(full_store) == len(full_store.files()) == 4


def test_enforce_caps_alone_measures_without_writing(full_store: MemoryStore) -> None:
    before = tree(full_store)
    report = enforce_caps(full_store, "project_a.md", body=5, creating=False)
    assert report == type(report)() and tree(full_store) == before


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], full_store: MemoryStore) -> Run:
    return store_runner(capsys, full_store)


@pytest.fixture
def cli_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI builds its store from settings: the full store's caps, by environment."""
    monkeypatch.setenv("SAGE_MEM_HARD_CAP_MEMORIES", "3")
    monkeypatch.setenv("SAGE_MEM_SOFT_CAP_MEMORIES", "2")
    monkeypatch.setenv("SAGE_MEM_SOFT_CAP_BODY_BYTES", "4")


@pytest.mark.usefixtures("cli_caps")
def test_cli_new_prints_what_it_archived_and_its_warnings(run: Run) -> None:
    result = run("new", "--type", "project", "--name", "d", "--description", "d",
                 "--body", "hello")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0] == ("archived  project_a.md  (hard cap of 3 memories reached "
                        "(hard_cap_memories))")
    assert lines[1].startswith("created  project_d.md")
    assert result.err.splitlines() == [
        "warning: project_d.md: the body is 5 bytes, past the soft cap of 4 "
        "(soft_cap_body_bytes); consider splitting it",
        "warning: project_d.md: the layer holds 3 memories, past the soft cap of 2 "
        "(soft_cap_memories); archive what is no longer needed (`sagemem archive candidates`)"]


@pytest.mark.usefixtures("cli_caps")
def test_cli_write_json_carries_what_it_archived(run: Run) -> None:
    result = run("write", "project_d", "-", "--expect", "new", "--json",
                 stdin=TEXT.format("d", "hi"))
    data = json.loads(result.out)
    assert result.code == 0 and data["cap_archived"] == ["project_a.md"]
    assert data["archived"] is False  # the written memory itself is live
    assert [w.split(",")[0] for w in data["warnings"]] == [
        "the layer holds 3 memories"]


@pytest.mark.usefixtures("cli_caps")
def test_cli_new_refuses_a_body_over_the_hard_cap(run: Run, monkeypatch: pytest.MonkeyPatch,
                                                  full_store: MemoryStore) -> None:
    monkeypatch.setenv("SAGE_MEM_HARD_CAP_BODY_BYTES", "8")
    before = tree(full_store)
    result = run("new", "--type", "project", "--name", "d", "--description", "d",
                 "--body", "123456789")
    assert one_line_error(result).startswith(
        "error: project_d.md: the body is 9 bytes, over the hard cap of 8 bytes")
    assert tree(full_store) == before


def test_cli_config_shows_the_caps(run: Run) -> None:
    rows = {line.split()[0]: line.split() for line in run("config").out.splitlines()[1:]}
    assert rows["hard_cap_memories"][1:] == ["default", "20000"]
    assert rows["hard_cap_body_bytes"][1:] == ["default", "65536"]


def test_remember_the_mcp_tools_and_the_memory_tool_make_room_at_the_hard_cap(
        tmp_path: Path) -> None:
    from sagemem.memory_tool import MemoryToolHandler
    from sagemem.writes.caps import Caps

    folder = tmp_path / "memory"
    folder.mkdir()
    store = MemoryStore(folder, tmp_path / "state",
                        caps=Caps(soft_memories=0, hard_memories=2))
    first = store.new(type="user", name="oldest", description="the first one", body="a")
    store.new(type="user", name="newer", description="the second one", body="b")
    os.utime(folder / first.file, (1_000_000, 1_000_000))  # least recently read: by mtime
    from sagemem.history.caps import with_room

    result, report = with_room(store, lambda: store.remember(
        type="project", title="Third", body="c"), by="library")
    assert result.action == "created"
    assert report.archived_files == (first.file,)
    assert (folder / "archive" / first.file).exists()
    answer = MemoryToolHandler(store).handle({"command": "create",
                                             "path": "/memories/reference_x.md",
                                             "file_text": "A fourth.\n"})
    assert "File created successfully" in answer and "archived to make room" in answer
    assert len(list(folder.glob("*_*.md"))) == 2
