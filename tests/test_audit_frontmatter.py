"""The audit's frontmatter checks: what an unparsable or unclosed block still tells."""

from __future__ import annotations

from pathlib import Path

import pytest

from sagemem.audit.report import Finding, audit
from sagemem.store import MemoryStore
from tests.test_audit import clean_store


def findings_for(tmp_path: Path, text: str, file: str = "user_bob.md") -> list[Finding]:
    """The findings about ``file`` holding ``text``, in a clean folder that indexes it."""
    store = clean_store(tmp_path)
    (store.directory / file).write_text(text)
    with (store.directory / "MEMORY.md").open("a") as index:
        index.write(f"- [bob]({file})\n")
    return [f for f in audit(MemoryStore(store.directory, store.state_dir)).findings
            if f.file == file]


def test_an_unparsable_block_still_reports_empty_description_and_bad_dates(
        tmp_path: Path) -> None:
    text = "---\nname: [unclosed\ndescription:\nvalid_at: garbage\ntype: user\n---\nBob.\n"
    found = {(f.category, f.line) for f in findings_for(tmp_path, text)}
    assert found == {("frontmatter_unparsable", 3), ("missing_description", 3),
                     ("invalid_date", 4)}


@pytest.mark.parametrize("value", ["2026-02-30", "2026-13-45"])
def test_an_impossible_date_is_invalid_date_on_its_line(tmp_path: Path, value: str) -> None:
    text = f"---\nname: bob\ndescription: d\ntype: user\nvalid_at: {value}\n---\nBob.\n"
    [finding] = findings_for(tmp_path, text)
    assert (finding.category, finding.line, finding.data) == (
        "invalid_date", 5, {"field": "valid_at"})


def test_a_never_closed_block_lists_its_keys_as_fallback_fields(tmp_path: Path) -> None:
    text = ("---\nname: bob\ndescription: about bob\ntags:\n  - a\nmetadata:\n  type: user\n"
            "\nNote: body text, not a field\n")
    [finding] = findings_for(tmp_path, text)
    assert (finding.category, finding.line) == ("frontmatter_unparsable", 1)
    assert finding.data["fallback_fields"] == ["description", "metadata", "name", "tags"]


def test_a_missing_type_is_said_to_be_missing_not_mismatched(tmp_path: Path) -> None:
    text = "---\nname: x\ndescription: d\n---\nBody.\n"
    [finding] = findings_for(tmp_path, text, "project_x.md")
    assert (finding.category, finding.line, finding.message, finding.data) == (
        "type_prefix_mismatch", None, "no type (read as 'reference'); the file name says "
        "'project'", {"type": "reference", "prefix": "project"})


@pytest.mark.parametrize(("frontmatter", "line"), [
    ("type: project\nmetadata:\n  type: user\n", 6),  # metadata.type wins
    ("links:\n  type: project\ntype: user\n", 6),  # a nested type: of another key
    ("metadata: {type: user}\ntype: project\n", 4),  # flow style: the metadata line
])
def test_the_mismatch_points_at_the_type_in_effect(tmp_path: Path, frontmatter: str,
                                                   line: int) -> None:
    text = f"---\nname: x\ndescription: d\n{frontmatter}---\nBody.\n"
    [finding] = findings_for(tmp_path, text, "project_x.md")
    assert (finding.category, finding.line, finding.data["type"]) == (
        "type_prefix_mismatch", line, "user")


@pytest.mark.parametrize(("value", "kept"), [
    ("use C\t# for this", "use C"),  # a tab starts a YAML comment as a space does
    ("12 # items", "12"),  # read as a number, still cut
    ("2026-01-02 # the day", "2026-01-02"),
])
def test_a_value_cut_by_a_comment_is_swallowed_whatever_yaml_made_of_it(
        value: str, kept: str) -> None:
    from sagemem.audit.fix import quote_value
    from sagemem.audit.report import swallowed_values
    from sagemem.files.memory import parse

    text = f"---\ndescription: {value}\ntype: user\n---\nbody\n"
    [finding] = swallowed_values(parse(text.encode(), "user_x.md"))
    assert (finding.line, finding.data["raw"], finding.data["parsed"]) == (2, value, kept)
    assert parse(quote_value(text, finding).encode(), "user_x.md").description == value
