"""The audit: every category on the fixture folder, field for field, and its edge cases."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from golden_results import without_yaml_wording

from sagemem.audit.duplicates import (
    BANDS,
    BLOCK_TOKENS,
    MAX_BLOCK,
    candidate_pairs,
    near_duplicates,
)
from sagemem.audit.links import memory_links
from sagemem.audit.report import CHECKS, HINT, PROBLEM, audit, swallowed_values
from sagemem.files.memory import parse
from sagemem.store import MemoryStore

FIXTURE = Path(__file__).parent / "audit_fixture"
FIXTURE_MAX_BYTES = 2048  # the fixture's reference_too_large.md is over it
CLEAN = """---
name: {name}
description: {description}
metadata:
  type: {type}
---
{body}
"""


def fixture_store(tmp_path: Path) -> MemoryStore:
    """A copy of tests/audit_fixture (memory/ and state/), so fixes never touch the original."""
    shutil.copytree(FIXTURE / "memory", tmp_path / "memory")
    shutil.copytree(FIXTURE / "state", tmp_path / "state")
    return MemoryStore(tmp_path / "memory", tmp_path / "state", max_bytes=FIXTURE_MAX_BYTES)


def clean_store(tmp_path: Path, index: str = "# Memory index\n\n") -> MemoryStore:
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "MEMORY.md").write_text(index + "- [alice](user_alice.md) — about alice\n")
    (directory / "user_alice.md").write_text(CLEAN.format(
        name="alice", description="about alice", type="user", body="Alice likes tea."))
    return MemoryStore(directory, tmp_path / "state")


def categories(store: MemoryStore) -> list[str]:
    return [f.category for f in audit(store).findings]


def test_fixture_gets_exactly_the_expected_report(tmp_path: Path) -> None:
    report = audit(fixture_store(tmp_path)).to_json()
    expected = json.loads((FIXTURE / "expected.json").read_text())
    assert report["directory"] == str(tmp_path / "memory")
    assert without_yaml_wording({**report, "directory": "<memory>"}) == \
        without_yaml_wording(expected)  # ruamel.yaml's wording of a reason may change


def test_fixture_holds_every_category_and_clean_files(tmp_path: Path) -> None:
    report = audit(fixture_store(tmp_path))
    found = {f.category for f in report.findings}
    assert found == {
        "broken_link", "comment_swallowed", "crlf_line_endings", "dangling_index_entry",
        "field_problem", "file_too_large", "frontmatter_unparsable", "invalid_before_valid",
        "index_stale_hook", "invalid_date", "merge_markers", "missing_description",
        "missing_frontmatter", "not_in_index", "superseded_by_missing", "temporary_file",
        "type_prefix_mismatch",
        "unreadable", "empty_body", "link_to_archived", "near_duplicate", "open_conflict",
        "superseded_by_archived", "tags_over_limit", "secret", "redaction_opted_out"}
    flagged = {f.file for f in report.findings}
    assert "user_clean.md" not in flagged and "project_clean.md" not in flagged


def test_findings_are_sorted_by_category_file_and_line(tmp_path: Path) -> None:
    findings = audit(fixture_store(tmp_path)).findings
    assert [f.key for f in findings] == sorted(f.key for f in findings)


def test_severities_split_problems_from_hints(tmp_path: Path) -> None:
    report = audit(fixture_store(tmp_path))
    assert {f.severity for f in report.problems} == {PROBLEM}
    assert {f.severity for f in report.hints} == {HINT}
    assert len(report.problems) + len(report.hints) == len(report.findings)


def test_a_clean_folder_has_no_findings(tmp_path: Path) -> None:
    assert audit(clean_store(tmp_path)).findings == ()


def test_memory_md_is_neither_type_checked_nor_frontmatter_checked(tmp_path: Path) -> None:
    store = clean_store(tmp_path, index="plain list, no frontmatter\n")
    assert categories(store) == []


def test_auditing_changes_no_byte(tmp_path: Path) -> None:
    store = fixture_store(tmp_path)
    before = {p: p.read_bytes() for p in store.directory.rglob("*") if p.is_file()}
    audit(store)
    assert {p: p.read_bytes() for p in store.directory.rglob("*") if p.is_file()} == before


def test_checks_are_a_plain_tuple_of_functions() -> None:
    assert isinstance(CHECKS, tuple) and all(callable(c) for c in CHECKS)


def test_a_symlinked_memory_is_unreadable_and_never_followed(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    outside = tmp_path / "secret.md"
    outside.write_text("---\ndescription: outside\n---\n")
    os.symlink(outside, store.directory / "user_link.md")
    found = [f for f in audit(store).findings if f.file == "user_link.md"]
    assert [f.category for f in found] == ["not_in_index", "unreadable"]
    assert "symlink" in found[1].data["reason"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_file_without_read_permission_is_unreadable(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    os.chmod(store.directory / "user_alice.md", 0)
    assert categories(store) == ["unreadable"]


def test_permission_denied_is_unreadable_and_the_rest_still_audited(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sagemem.files.paths

    store = clean_store(tmp_path)
    (store.directory / "user_locked.md").write_text("---\ndescription: d\n---\nbody\n")
    real_open = os.open

    def refusing_open(path: object, *args: object, **kwargs: object) -> int:
        if str(path).endswith("user_locked.md"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sagemem.files.paths.os, "open", refusing_open)
    found = {(f.category, f.file): f for f in audit(store).findings}
    assert found[("unreadable", "user_locked.md")].data == {"reason": "Permission denied"}
    assert set(found) == {("unreadable", "user_locked.md"), ("not_in_index", "user_locked.md")}


def test_a_symlinked_archive_is_reported_not_followed(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / ".x.md.0000.sagemem-tmp").write_text("")
    os.symlink(elsewhere, store.directory / "archive")
    found = [(f.category, f.file) for f in audit(store).findings]
    assert found == [("unreadable", "archive/")]


def test_an_oversized_file_is_reported_and_never_read(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemoryStore(clean_store(tmp_path).directory, tmp_path / "state", max_bytes=100)
    (store.directory / "user_big.md").write_text("x" * 101)
    read: list[str] = []
    original = MemoryStore._read
    monkeypatch.setattr(MemoryStore, "_read", lambda self, name, archived:
                        read.append(name) or original(self, name, archived))
    found = {f.file: f for f in audit(store).findings if f.category == "file_too_large"}
    assert found["user_big.md"].data == {"size": 101, "limit": 100}
    assert "user_big.md" not in read


def test_a_yaml_alias_bomb_costs_bounded_time(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    bomb = "---\ndescription: bomb\ntags: *a9\n" + "\n".join(lines) + "\n---\nbody\n"
    (store.directory / "user_bomb.md").write_text(bomb)
    start = time.perf_counter()
    report = audit(store)
    assert time.perf_counter() - start < 2
    assert "user_bomb.md" in {f.file for f in report.findings}


def test_dangling_entry_points_at_an_archived_file_says_so(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    (store.directory / "archive").mkdir()
    shutil.move(store.directory / "user_alice.md", store.directory / "archive")
    [finding] = audit(store).findings
    assert finding.category == "dangling_index_entry" and "archive" in finding.message


def test_missing_index_file_means_every_memory_is_unindexed(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    (store.directory / "MEMORY.md").unlink()
    assert categories(store) == ["not_in_index"]


def test_not_in_index_message_does_not_repeat_the_file(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    (store.directory / "MEMORY.md").unlink()
    [finding] = audit(store).findings
    assert (finding.file, finding.message) == ("user_alice.md", "no line in MEMORY.md")


@pytest.mark.parametrize(("text", "line"), [
    pytest.param("---\nname: e\n---\n", 3, id="ends-on-delimiter-newline"),
    pytest.param("---\nname: e\n---", 3, id="ends-on-delimiter"),
    pytest.param("---\nname: e\n---\n\n\n", 4, id="blank-body-lines"),
])
def test_empty_body_is_reported_at_a_line_the_file_has(
    tmp_path: Path, text: str, line: int
) -> None:
    store = clean_store(tmp_path)
    (store.directory / "user_alice.md").write_text(text)
    [finding] = [f for f in audit(store).findings if f.category == "empty_body"]
    assert finding.line == line


def test_merge_markers_and_crlf_in_memory_md_are_reported(tmp_path: Path) -> None:
    store = clean_store(tmp_path, index="# i\r\n<<<<<<< HEAD\r\n>>>>>>> b\r\n")
    found = {(f.category, f.file, f.line) for f in audit(store).findings}
    assert found == {("crlf_line_endings", "MEMORY.md", 1), ("merge_markers", "MEMORY.md", 2)}


@pytest.mark.parametrize("line", [
    "type: user  # a deliberate comment on a typed field",
    'description: "quoted # is kept"',
    "description: 'single # quoted'",
    "description: no hash here",
    "description: trailing#hash-without-space",
])
def test_a_hash_that_yaml_kept_is_not_reported(line: str) -> None:
    memory = parse(f"---\n{line}\n---\nbody\n".encode(), "user_x.md")
    assert swallowed_values(memory) == []


def test_a_swallowed_hash_keeps_raw_and_parsed_text() -> None:
    memory = parse(b"---\nname: C# and F# notes\ndescription: Tabs #1 rule\n---\n", "x.md")
    [finding] = swallowed_values(memory)
    assert (finding.line, finding.data["raw"], finding.data["parsed"]) == (
        3, "Tabs #1 rule", "Tabs")


def test_links_skip_code_urls_and_subfolders() -> None:
    body = ("[[a]] [[b|alias]] [[c#heading]] [x](d.md#part) [y](<e f.md>) ![img](g.md)\n"
            "[web](https://example.com/h.md) [sub](notes/i.md) `[[j]]`\n"
            "~~~\n[[k]]\n~~~\n")
    memory = parse(f"---\ndescription: d\n---\n{body}".encode(), "x.md")
    assert [(link.target, link.line) for link in memory_links(memory)] == [
        ("a.md", 4), ("b.md", 4), ("c.md", 4), ("d.md", 4), ("e f.md", 4)]


def _memory(file: str, description: str, body: str = "body") -> object:
    return parse(CLEAN.format(name=file[:-3], description=description, type="user",
                              body=body).encode(), file)


def test_near_duplicates_are_reported_once_per_pair_with_their_score() -> None:
    text = "the deploy window closes at five on fridays"
    memories = [_memory("user_a.md", text), _memory("user_b.md", text + "!"),
                _memory("user_c.md", "something else entirely, about tea")]
    [pair] = near_duplicates(memories)  # type: ignore[arg-type]
    assert (pair.file, pair.other) == ("user_a.md", "user_b.md") and pair.score >= 90


def test_near_duplicate_candidates_grow_linearly_not_quadratically() -> None:
    common = "deploy staging production database migration cache"
    texts = [f"{common} note {n} id{n:05d}" for n in range(3000)]
    pairs = candidate_pairs(texts)
    assert len(pairs) <= len(texts) * (BLOCK_TOKENS + BANDS) * MAX_BLOCK // 2
    assert len(pairs) < len(texts) * 10


def test_identical_copies_are_reported_even_with_only_common_words() -> None:
    memories = [_memory(f"user_{n:03d}.md", "deploy staging cache", f"deploy {n}")
                for n in range(200)]
    copy = CLEAN.format(name="copy", description="deploy staging cache", type="user",
                        body="same").encode()
    copies = [parse(copy, "user_copy0.md"), parse(copy, "user_copy1.md")]
    found = near_duplicates([*memories, *copies])  # type: ignore[list-item]
    assert [(d.file, d.other, d.score) for d in found] == [
        ("user_copy1.md", "user_copy0.md", 100.0)]


def test_an_identical_copy_is_a_hint_with_the_number_of_copies(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    text = (store.directory / "user_alice.md").read_text()
    (store.directory / "user_alice2.md").write_text(text)
    (store.directory / "MEMORY.md").write_text("- [a](user_alice.md)\n- [b](user_alice2.md)\n")
    [finding] = audit(store).findings
    assert (finding.category, finding.file, finding.message, finding.data) == (
        "near_duplicate", "user_alice2.md", "identical to user_alice.md (score 100; 2 copies)",
        {"other": "user_alice.md", "score": 100.0, "copies": 2})


def test_identical_memories_give_one_hint_per_copy_naming_the_first() -> None:
    text = b"---\nname: same\ndescription: same words\n---\nthe same body\n"
    memories = [parse(text, f"user_{n:04d}.md") for n in range(2000)]
    near = parse(text.replace(b"body", b"body!"), "user_near.md")
    start = time.perf_counter()
    found = near_duplicates([*reversed(memories), near])
    assert time.perf_counter() - start < 2
    copies = [d for d in found if d.copies]
    assert len(copies) == 1999 and {(d.other, d.copies) for d in copies} == {
        ("user_0000.md", 2000)}
    assert [(d.file, d.other) for d in found if not d.copies] == [
        ("user_0000.md", "user_near.md")]


def test_open_conflicts_are_hints(tmp_path: Path) -> None:
    from sagemem.writes import conflicts

    store = clean_store(tmp_path)
    (store.directory / "user_bob.md").write_text(CLEAN.format(
        name="bob", description="about bob", type="user", body="Bob."))
    conflicts.contradict(store, "user_alice.md", "user_bob.md", "they disagree")
    found = [f for f in audit(store).findings if f.category == "open_conflict"]
    assert [(f.severity, f.file, f.data["memories"]) for f in found] == [
        (HINT, "user_alice.md", ["user_alice.md", "user_bob.md"])]


def test_a_missing_directory_is_an_error(tmp_path: Path) -> None:
    from sagemem.errors import DirectoryMissing

    with pytest.raises(DirectoryMissing):
        audit(MemoryStore(tmp_path / "nowhere", tmp_path / "state"))


def test_twenty_near_identical_notes_are_one_group_not_190_pairs(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    (store.directory / "user_alice.md").unlink()
    lines = []
    for n in range(20):
        text = CLEAN.format(name=f"n{n}", description="the deploy window closes at five",
                            type="user", body=f"friday deploys wait until monday {n:02d}")
        (store.directory / f"user_note{n:02d}.md").write_text(text)
        lines.append(f"- [n](user_note{n:02d}.md)")
    (store.directory / "MEMORY.md").write_text("\n".join(lines) + "\n")
    [finding] = [f for f in audit(store).findings if f.category == "near_duplicate"]
    assert finding.file == "user_note00.md" and len(finding.data["group"]) == 20
    assert finding.message.startswith("20 near-duplicates: with user_note01.md, ")
    assert " and 16 more (score " in finding.message


def test_files_that_are_one_name_are_a_name_collision_naming_each(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    alice = (store.directory / "user_alice.md").read_text()
    for variant in ("USER_ALICE.md", "ｕｓｅｒ_alice.md"):
        (store.directory / variant).write_text(alice.replace("tea", f"tea ({variant})"))
    [finding] = [f for f in audit(store).findings if f.category == "name_collision"]
    assert (finding.severity, finding.file) == (PROBLEM, "USER_ALICE.md")
    assert finding.data["files"] == ["USER_ALICE.md", "user_alice.md", "ｕｓｅｒ_alice.md"]
    assert "user_alice.md, ｕｓｅｒ_alice.md" in finding.message


def test_names_that_differ_otherwise_are_no_collision(tmp_path: Path) -> None:
    store = clean_store(tmp_path)
    (store.directory / "user_alice2.md").write_text(
        (store.directory / "user_alice.md").read_text().replace("tea", "coffee"))
    assert "name_collision" not in categories(store)
