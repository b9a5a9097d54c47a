"""``audit --fix``: only deterministic, lossless repairs, guarded by the revision read."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sagemem.audit.fix import FIXABLE, fix, quote_value, to_lf
from sagemem.audit.report import audit, swallowed_values
from sagemem.errors import WriteFailed
from sagemem.files.memory import parse
from sagemem.history.snapshots import list_snapshots, load_snapshot, read_copy
from sagemem.store import MemoryStore
from tests.test_audit import fixture_store


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return fixture_store(tmp_path)


def snapshot_bytes(store: MemoryStore) -> dict[str, bytes]:
    return {str(p.relative_to(store.directory)): p.read_bytes()
            for p in store.directory.rglob("*") if p.is_file()}


def changed_lines(before: bytes, after: bytes) -> list[str]:
    diff = difflib.ndiff(before.decode().splitlines(keepends=True),
                         after.decode().splitlines(keepends=True))
    return [line for line in diff if line[:1] in "+-"]


def test_fix_repairs_exactly_the_fixable_findings(store: MemoryStore) -> None:
    before = snapshot_bytes(store)
    result = fix(store)
    assert sorted(c.category for c in result.changes) == sorted(FIXABLE)
    assert result.skipped == () and result.after is not None
    assert not {f.category for f in result.after.findings} & set(FIXABLE)
    after = snapshot_bytes(store)
    changed = {name for name in before if before[name] != after.get(name)}
    assert changed == {"MEMORY.md", "reference_crlf.md", "reference_hash.md",
                       "reference_pasted_token.md"}


def test_a_pasted_secret_is_redacted_after_a_snapshot_and_an_opted_out_one_kept(
        store: MemoryStore) -> None:
    token = store.directory / "reference_pasted_token.md"
    kept = store.directory / "reference_fixture_keys.md"
    before, kept_before = token.read_bytes(), kept.read_bytes()
    result = fix(store)
    assert result.snapshot is not None
    assert changed_lines(before, token.read_bytes()) == [
        "- Push the docs with `GH_TOKEN=ghp_8fK2mQ9xL4vB7nR3tW6zY1cH5jD0sA9eG2kP make "
        "publish`.\n",
        "+ Push the docs with `GH_TOKEN=<REDACTED:github_token> make publish`.\n"]
    assert kept.read_bytes() == kept_before
    snapshot = store.state_dir / "snapshots" / result.snapshot / "reference_pasted_token.md"
    assert snapshot.read_bytes() == before  # the snapshot keeps what was there
    versions = store.state_dir / "versions"  # the kept copy of what was fixed is dropped
    assert not versions.is_dir() or all(b"ghp_" not in p.read_bytes()
                                        for p in versions.iterdir())


def test_crlf_fix_changes_only_line_endings(store: MemoryStore) -> None:
    path = store.directory / "reference_crlf.md"
    before = path.read_bytes()
    fix(store)
    assert path.read_bytes() == before.replace(b"\r\n", b"\n")


def test_quoting_changes_only_the_swallowed_value(store: MemoryStore) -> None:
    path = store.directory / "reference_hash.md"
    before = path.read_bytes()
    fix(store)
    after = path.read_bytes()
    assert changed_lines(before, after) == [
        "- description: Use C #include guards in every header\n",
        '+ description: "Use C #include guards in every header"\n']
    assert parse(after, "reference_hash.md").description == "Use C #include guards in every header"


def test_index_fix_drops_the_dangling_line_and_appends_the_missing_one(store: MemoryStore
                                                                        ) -> None:
    path = store.directory / "MEMORY.md"
    before = path.read_bytes()
    fix(store)
    assert changed_lines(before, path.read_bytes()) == [
        "- - [gone](reference_gone.md) — this file was deleted\n",
        "+ - [not indexed](feedback_not_indexed.md) — A memory nobody added to the index\n"]


def test_quoting_and_crlf_in_one_file_make_one_lossless_write(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "MEMORY.md").write_text("- [x](user_x.md)\n")
    text = "---\r\ndescription: Keep #1 rule\r\nmetadata:\r\n  type: user\r\n---\r\nbody\r\n"
    (directory / "user_x.md").write_bytes(text.encode())
    store = MemoryStore(directory, tmp_path / "state")
    result = fix(store)
    assert len(result.changes) == 2 and result.after is not None and not result.after.findings
    expected = text.replace("\r\n", "\n").replace("Keep #1 rule", '"Keep #1 rule"')
    assert (directory / "user_x.md").read_text() == expected


def test_dry_run_changes_nothing_and_takes_no_snapshot(store: MemoryStore) -> None:
    before = snapshot_bytes(store)
    result = fix(store, dry_run=True)
    assert result.dry_run and len(result.changes) == len(FIXABLE) and result.after is None
    assert result.snapshot is None and list_snapshots(store).snapshots == ()
    assert snapshot_bytes(store) == before


def test_a_snapshot_of_the_unfixed_files_is_taken_first_and_reported(
    store: MemoryStore,
) -> None:
    before = (store.directory / "reference_crlf.md").read_bytes()
    result = fix(store)
    assert result.snapshot is not None
    taken = load_snapshot(store, result.snapshot)
    assert (taken.kind, taken.reason) == ("auto", "audit --fix")
    entry = next(f for f in taken.files if f.name == "reference_crlf.md")
    assert read_copy(taken, entry) == before and b"\r\n" in before
    assert b"\r\n" not in (store.directory / "reference_crlf.md").read_bytes()


def test_nothing_to_fix_takes_no_snapshot(tmp_path: Path) -> None:
    from tests.test_audit import clean_store

    clean = clean_store(tmp_path)
    result = fix(clean)
    assert result.changes == () and result.snapshot is None
    assert list_snapshots(clean).snapshots == ()


def test_a_file_changed_since_the_audit_is_skipped_not_overwritten(store: MemoryStore) -> None:
    report = audit(store)
    path = store.directory / "reference_crlf.md"
    path.write_bytes(path.read_bytes() + b"edited meanwhile\r\n")
    edited = path.read_bytes()
    records = sorted((store.state_dir / "conflicts").iterdir())
    result = fix(store, report)
    assert [s.file for s in result.skipped] == ["reference_crlf.md"]
    assert path.read_bytes() == edited
    assert sorted((store.state_dir / "conflicts").iterdir()) == records  # a skip records nothing


def test_an_index_changed_since_the_audit_is_skipped(store: MemoryStore) -> None:
    report = audit(store)
    path = store.directory / "MEMORY.md"
    path.write_text(path.read_text() + "- [note](a_person_added.md)\n")
    edited = path.read_bytes()
    result = fix(store, report)
    assert "MEMORY.md" in [s.file for s in result.skipped]
    assert path.read_bytes() == edited


def test_a_file_with_merge_markers_is_not_rewritten(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "MEMORY.md").write_text("- [x](user_x.md)\n")
    text = b"---\r\ndescription: d\r\n---\r\n<<<<<<< HEAD\r\na\r\n=======\r\nb\r\n>>>>>>> x\r\n"
    (directory / "user_x.md").write_bytes(text)
    result = fix(MemoryStore(directory, tmp_path / "state"))
    assert [s.file for s in result.skipped] == ["user_x.md"]
    assert (directory / "user_x.md").read_bytes() == text


def test_no_repair_is_made_when_the_snapshot_cannot_be_taken(tmp_path: Path) -> None:
    store = fixture_store(tmp_path)
    (store.state_dir / "locks").write_text("a file where the lock folder should be")
    before = snapshot_bytes(store)
    with pytest.raises(WriteFailed):
        fix(store)
    assert snapshot_bytes(store) == before


def test_an_unwritable_state_dir_skips_every_write_with_its_reason(tmp_path: Path) -> None:
    store = fixture_store(tmp_path)
    (store.state_dir / "locks").write_text("a file where the lock folder should be")
    before = snapshot_bytes(store)
    result = fix(store, snapshot=False)
    assert result.changes == () and len(result.skipped) == 4
    assert snapshot_bytes(store) == before


def test_a_missing_index_is_created_with_the_missing_lines(tmp_path: Path) -> None:
    from tests.test_audit import clean_store

    store = clean_store(tmp_path)
    (store.directory / "MEMORY.md").unlink()
    fix(store)
    assert (store.directory / "MEMORY.md").read_text().endswith(
        "- [alice](user_alice.md) — about alice\n")


_VALUE = st.text(alphabet=st.sampled_from(list("ab Z9#:'\"\\-_.,!?é中\t")), min_size=1,
                 max_size=30)


@settings(max_examples=150, deadline=None)
@given(head=st.text(alphabet="abcXYZ é中", min_size=1, max_size=10).map(str.strip)
       .filter(bool), tail=_VALUE, crlf=st.booleans())
def test_quoting_any_swallowed_value_restores_exactly_the_raw_text(head: str, tail: str,
                                                                    crlf: bool) -> None:
    newline = "\r\n" if crlf else "\n"
    value = f"{head} #{tail}".rstrip()
    text = newline.join(["---", f"description: {value}", "type: user", "---", "body", ""])
    found = swallowed_values(parse(text.encode(), "user_x.md"))
    if not found:  # YAML refused the line or kept the text: nothing to fix
        return
    fixed = quote_value(text, found[0])
    assert parse(fixed.encode(), "user_x.md").description == found[0].data["raw"]
    before, after = text.splitlines(keepends=True), fixed.splitlines(keepends=True)
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [1]
    assert to_lf(fixed) == fixed.replace("\r\n", "\n") and "\r" not in to_lf(fixed)


@pytest.mark.parametrize("file", ["A_swallow.md", "user_swallow.md"])  # before/after MEMORY.md
def test_an_added_index_line_holds_the_description_as_repaired(tmp_path: Path, file: str
                                                               ) -> None:
    from tests.test_audit import clean_store

    store = clean_store(tmp_path)
    (store.directory / file).write_text(
        "---\nname: Swallow\ndescription: use C # for this\ntype: user\n---\nbody\n")
    fix(store)
    assert (store.directory / "MEMORY.md").read_text().endswith(
        f"- [Swallow]({file}) — use C # for this\n")


def test_fix_confirmed_repairs_only_once_the_plan_is_accepted(store: MemoryStore) -> None:
    from sagemem.audit.fix import fix_confirmed

    before = snapshot_bytes(store)
    seen = []
    declined = fix_confirmed(store, confirm=lambda plan: seen.append(plan) or False)
    assert declined.dry_run and len(seen[0].changes) == len(FIXABLE)
    assert snapshot_bytes(store) == before
    accepted = fix_confirmed(store, confirm=lambda plan: True)
    assert not accepted.dry_run and accepted.changes == seen[0].changes
    assert snapshot_bytes(store) != before


def test_fix_confirmed_asks_nothing_when_nothing_needs_repair(tmp_path: Path) -> None:
    from sagemem.audit.fix import fix_confirmed
    from tests.test_audit import clean_store

    def never(_: object) -> bool:
        raise AssertionError("asked")

    result = fix_confirmed(clean_store(tmp_path), confirm=never)
    assert result.changes == () and not result.dry_run and result.after is not None


def test_a_read_only_file_is_skipped_with_the_reason(store: MemoryStore) -> None:
    path = store.directory / "reference_crlf.md"
    before = path.read_bytes()
    path.chmod(0o444)
    result = fix(store)
    assert path.read_bytes() == before
    [skip] = [s for s in result.skipped if s.file == "reference_crlf.md"]
    assert "read-only (mode 0444)" in skip.reason


def test_fix_is_refused_while_an_interrupted_operation_is_pending(store: MemoryStore) -> None:
    from sagemem.errors import UnfinishedOperation
    from sagemem.history.journal import begin

    before = snapshot_bytes(store)
    begin(store.state_dir, "archive", {"file": "project_gone.md"})
    with pytest.raises(UnfinishedOperation, match="sagemem recover"):
        fix(store)
    assert snapshot_bytes(store) == before
