"""create_many: many new memories, each checked and written as one guarded create is —
the same files, the same MEMORY.md, each refusal alone — and a batch killed mid-way
finished by ``recover``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from sagemem.errors import (
    BodyTooLarge,
    InvalidName,
    LayerFull,
    MemoryExists,
    SagememError,
    UnfinishedOperation,
    UnresolvedMerge,
)
from sagemem.history import create_batch, journal
from sagemem.history.create_batch import create_many
from sagemem.history.recover import recover
from sagemem.store import MemoryStore
from sagemem.writes import changelog
from sagemem.writes.caps import DEFAULT_CAPS, Caps
from sagemem.writes.conflicts import list_conflicts

INDEX = "# Memory index\n\n- [A](project_a.md) — a\n- [Gone](project_gone.md) — a dangling line\n"
TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"


def memory_text(number: int) -> str:
    return (f"---\nname: Memory {number}\ndescription: the {number}th one\ntype: project\n"
            f"---\nbody {number}\n")


ITEMS = [
    *((f"project_{n:03}", memory_text(n)) for n in range(12)),
    ("user_plain.md", "no frontmatter at all\n"),
    ("reference_token.md", f"---\nname: Token\ndescription: where\n---\nuse {TOKEN}\n"),
    ("project_crlf.md", "---\r\nname: Crlf [x]\r\ndescription: windows\r\n---\r\nbody\r\n"),
    ("project_gone.md", "---\nname: Gone\ndescription: back again\n---\nits line is there\n"),
]


def folder(tmp_path: Path, name: str, caps: Caps = DEFAULT_CAPS) -> MemoryStore:
    memory = tmp_path / name / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text(INDEX)
    (memory / "project_a.md").write_text("---\nname: A\ndescription: a\n---\nbody a\n")
    return MemoryStore(memory, tmp_path / name / "state", caps=caps)


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return folder(tmp_path, "batch")


def files_of(store: MemoryStore) -> dict[str, bytes]:
    return {name: (store.directory / name).read_bytes()
            for name in sorted(os.listdir(store.directory))}


def test_a_batch_writes_what_single_creates_write(tmp_path: Path, store: MemoryStore) -> None:
    one_by_one = folder(tmp_path, "singles")
    singles = [one_by_one.write(file, text, None, reason="import") for file, text in ITEMS]
    report = create_many(store, ITEMS, reason="import")
    assert report.refused == () and report.warnings == ()
    assert files_of(store) == files_of(one_by_one)
    assert [replace(c.memory, mtime=None) for c in report.created] == [
        replace(m, mtime=None) for m in singles]
    assert [c.index for c in report.created] == list(range(len(ITEMS)))
    assert "- [Gone](project_gone.md) — a dangling line\n- [Memory 0]" in files_of(store)[
        "MEMORY.md"].decode()  # a line already pointing at a name is not repeated


def test_secrets_are_redacted_and_said(store: MemoryStore) -> None:
    report = create_many(store, ITEMS)
    token = next(c for c in report.created if c.memory.file == "reference_token.md")
    assert token.redacted and TOKEN not in token.memory.text
    assert "<REDACTED:" in (store.directory / "reference_token.md").read_text()
    assert [c.memory.file for c in report.created if c.redacted] == ["reference_token.md"]


def test_the_change_log_has_one_create_line_per_memory(store: MemoryStore) -> None:
    report = create_many(store, ITEMS, writer="cli", reason="import from x")
    entries = changelog.read(store.state_dir).entries
    assert sorted((e.file, e.after) for e in entries) == sorted(
        (c.memory.file, c.memory.revision) for c in report.created)
    assert {(e.op, e.writer, e.reason, e.before) for e in entries} == {
        ("create", "cli", "import from x", None)}


def test_many_intent_records_still_give_the_lines_of_single_creates(
        tmp_path: Path, store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(create_batch, "INTENT_BUDGET", 300)  # a record per two or three
    one_by_one = folder(tmp_path, "singles")
    for file, text in ITEMS:
        one_by_one.write(file, text, None)
    report = create_many(store, ITEMS)
    assert len(report.created) == len(ITEMS) and files_of(store) == files_of(one_by_one)
    assert journal.pending(store.state_dir) == ([], [])


def test_each_refusal_refuses_its_item_only(tmp_path: Path) -> None:
    store = folder(tmp_path, "batch", Caps(hard_memories=5, hard_body_bytes=100))
    items = [
        ("project_a", "---\nname: Taken\n---\nthe name exists\n"),
        ("PROJECT_A.md", "---\nname: Taken too\n---\nanother spelling of it\n"),
        (f"reference_{TOKEN}", "a secret in the name\n"),
        ("project_big", "x" * 101),
        ("project_merge", "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n"),
        ("project_one", "one\n"),
        ("Project_One.md", "the batch's own name, spelt otherwise\n"),
        ("project_two", "two\n"),
        ("project_three", "three\n"),
        ("project_four", "four\n"),
        ("project_five", "five: the layer is full\n"),
    ]
    report = create_many(store, items)
    refused = {r.index: type(r.error) for r in report.refused}
    assert refused == {0: MemoryExists, 1: MemoryExists, 2: InvalidName, 3: BodyTooLarge,
                       4: UnresolvedMerge, 6: MemoryExists, 10: LayerFull}
    assert [c.memory.file for c in report.created] == [
        "project_one.md", "project_two.md", "project_three.md", "project_four.md"]
    assert TOKEN not in str(report.refused[2].error)
    exists = report.refused[0].error
    assert isinstance(exists, MemoryExists) and exists.name == "project_a.md"
    assert report.refused[1].error.name == "project_a.md"  # type: ignore[attr-defined]
    # as a single create does, the refused texts are kept in the conflict queue
    assert len(list_conflicts(store.state_dir)) == 4
    assert (store.directory / "project_a.md").read_text().endswith("body a\n")
    index = (store.directory / "MEMORY.md").read_text()
    assert index.count("project_one.md") == 1 and "project_big" not in index


def test_the_refusals_are_the_ones_single_creates_raise(tmp_path: Path) -> None:
    caps = Caps(hard_memories=3, hard_body_bytes=100)
    items = [("project_a", "taken\n"), ("user_x", "x" * 101), ("user_y", "y\n"),
             ("user_z", "z\n"), ("con", "a device name\n")]
    singles: list[type[SagememError] | None] = []
    one_by_one = folder(tmp_path, "singles", caps)
    for file, text in items:
        try:
            one_by_one.write(file, text, None)
            singles.append(None)
        except SagememError as exc:
            singles.append(type(exc))
    report = create_many(folder(tmp_path, "batch", caps), items)
    refused = {r.index: type(r.error) for r in report.refused}
    assert [refused.get(n) for n in range(len(items))] == singles


def test_an_unfinished_operation_refuses_the_batch_before_anything_is_written(
        store: MemoryStore) -> None:
    journal.begin(store.state_dir, "archive", {"file": "project_a.md"})
    before = files_of(store)
    with pytest.raises(UnfinishedOperation):
        create_many(store, ITEMS)
    assert files_of(store) == before


KILLER = """
import importlib, json, os, sys
module, attribute, after = sys.argv[1], sys.argv[2], int(sys.argv[3])
owner = importlib.import_module(module)
original = getattr(owner, attribute)
calls = 0
def dying(*args, **kwargs):
    global calls
    calls += 1
    if calls > after:
        os._exit(9)  # kill -9 as far as the files can tell: no cleanup runs
    return original(*args, **kwargs)
setattr(owner, attribute, dying)
from sagemem.history.create_batch import create_many
from sagemem.store import MemoryStore
store = MemoryStore(sys.argv[4], sys.argv[5])
create_many(store, [tuple(item) for item in json.loads(sys.argv[6])], reason="import")
"""


def killed(store: MemoryStore, module: str, attribute: str, *, after: int) -> None:
    """Run create_many(ITEMS) in a process that dies at the ``after+1``-th call of
    ``module.attribute``."""
    done = subprocess.run([sys.executable, "-c", KILLER, module, attribute, str(after),
                           str(store.directory), str(store.state_dir), json.dumps(ITEMS)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 9, done.stderr


def test_a_batch_killed_mid_way_is_finished_by_recover(store: MemoryStore) -> None:
    killed(store, "sagemem.files.atomic", "_link_temp", after=5)
    made = sorted(n for n in os.listdir(store.directory) if n.startswith("project_0"))
    assert made == [f"project_{n:03}.md" for n in range(5)]
    assert (store.directory / "MEMORY.md").read_text() == INDEX  # not yet edited
    [intent] = journal.pending(store.state_dir)[0]
    assert intent.operation == "create_batch"
    [done] = recover(store)
    assert done.outcome == "finished" and done.detail.startswith("5 of 16 memories")
    index = (store.directory / "MEMORY.md").read_text()
    assert index == INDEX + "".join(f"- [Memory {n}](project_{n:03}.md) — the {n}th one\n"
                                    for n in range(5))
    assert sorted(e.file for e in changelog.read(store.state_dir).entries) == made
    assert journal.pending(store.state_dir) == ([], [])
    assert not [n for n in os.listdir(store.directory) if n.endswith(".sagemem-tmp")]
    report = create_many(store, ITEMS)  # run again: the made ones are refused, never doubled
    assert [r.index for r in report.refused] == list(range(5))
    assert len(report.created) == len(ITEMS) - 5


def test_a_batch_killed_after_its_index_edit_is_not_logged_twice(store: MemoryStore) -> None:
    killed(store, "sagemem.history.journal", "finish", after=0)
    lines = len(changelog.read(store.state_dir).entries)
    assert lines == len(ITEMS)
    index = (store.directory / "MEMORY.md").read_text()
    [done] = recover(store)
    assert done.outcome == "finished" and "already in step" in done.detail
    assert len(changelog.read(store.state_dir).entries) == lines
    assert (store.directory / "MEMORY.md").read_text() == index


def test_a_batch_killed_before_any_file_changed_nothing(store: MemoryStore) -> None:
    before = files_of(store)
    killed(store, "sagemem.files.atomic", "_link_temp", after=0)
    [done] = recover(store)
    assert done.outcome == "not_started"
    assert files_of(store) == before  # its temporary files removed too
