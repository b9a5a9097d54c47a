"""Round-trip edits: one field changes, every other byte of the file stays."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
from golden_results import GOLDEN
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemem import Memory, UneditableFrontmatter, parse, render_new, set_fields
from sagemem.files.memory import load_frontmatter, split

UNEDITABLE = ("broken_line.md", "unclosed.md", "bad_values.md", "duplicate_key.md",
              "tab_separator.md", "complex_key.md")
EDITABLE = [p for p in sorted(GOLDEN.glob("*.md")) if p.name not in UNEDITABLE]


def changed_lines(before: str, after: str) -> list[str]:
    """The lines removed or added between two texts (line endings included)."""
    diff = difflib.ndiff(before.splitlines(keepends=True), after.splitlines(keepends=True))
    return [line for line in diff if line[:1] in "+-"]


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


@pytest.mark.parametrize("path", EDITABLE, ids=lambda p: p.name)
def test_setting_a_field_to_its_current_value_changes_nothing(path: Path) -> None:
    text = read(path)
    memory = parse(text.encode(), path.name)
    same: dict[str, object] = {"type": memory.type} if "type:" in text else {}
    if memory.description:
        same["description"] = memory.description
    if memory.tags:
        same["tags"] = list(memory.tags)
    assert set_fields(text, same) == text


@pytest.mark.parametrize("path", [p for p in EDITABLE if p.name != "no_frontmatter.md"],
                         ids=lambda p: p.name)
def test_changing_description_touches_only_its_line(path: Path) -> None:
    text = read(path)
    edited = set_fields(text, {"description": "A new description, with: colons # and a hash"})
    assert parse(edited.encode(), path.name).description == (
        "A new description, with: colons # and a hash")
    changes = changed_lines(text, edited)
    assert all("description" in line for line in changes), changes
    assert len([c for c in changes if c.startswith("+")]) == 1


@pytest.mark.parametrize("path", EDITABLE, ids=lambda p: p.name)
def test_changing_type_keeps_everything_else(path: Path) -> None:
    text = read(path)
    before = parse(text.encode(), path.name)
    new_type = "user" if before.type != "user" else "feedback"
    edited = set_fields(text, {"type": new_type})
    after = parse(edited.encode(), path.name)
    assert after.type == new_type
    assert (after.body, after.description, after.tags) == (before.body, before.description,
                                                           before.tags)
    assert len([c for c in changed_lines(text, edited) if c.startswith("-")]) <= 1


def test_trailing_comment_survives_a_value_change() -> None:
    text = "---\nname: a   # keep me\nmetadata:\n  type: user  # and me\n---\nbody\n"
    edited = set_fields(text, {"name": "b", "type": "project"})
    assert edited == "---\nname: b   # keep me\nmetadata:\n  type: project  # and me\n---\nbody\n"


def test_crlf_file_stays_crlf_when_a_field_is_added() -> None:
    text = read(GOLDEN / "crlf_windows.md")
    edited = set_fields(text, {"invalid_at": date(2026, 1, 2), "superseded_by": "other.md"})
    assert "\n" not in edited.replace("\r\n", "")
    assert edited.startswith(text[: text.index("---\r\nFirst")])
    assert edited.endswith(text[text.index("---\r\nFirst"):])
    memory = parse(edited.encode(), "crlf.md")
    assert memory.invalid_at == date(2026, 1, 2) and memory.superseded_by == "other.md"


def test_chinese_text_round_trips() -> None:
    text = read(GOLDEN / "chinese_aliases.md")
    edited = set_fields(text, {"aliases": ["上线流程", "发布步骤"]})
    assert parse(edited.encode(), "x.md").aliases == ("上线流程", "发布步骤")
    assert [c for c in changed_lines(text, edited) if c.startswith("+")] == [
        "+ aliases: [上线流程, 发布步骤]\n"]


def test_removing_a_field_removes_only_its_lines() -> None:
    text = read(GOLDEN / "chinese_aliases.md")
    edited = set_fields(text, {"tags": None})
    assert changed_lines(text, edited) == ["- tags:\n", "-   - 部署\n", "-   - 上线\n"]


def test_setting_twice_is_the_same_as_once() -> None:
    text = read(GOLDEN / "plain_english.md")
    once = set_fields(text, {"invalid_at": date(2026, 12, 1)})
    assert set_fields(once, {"invalid_at": date(2026, 12, 1)}) == once


def test_yaml_keywords_are_quoted_so_they_read_back_as_text() -> None:
    text = "---\nname: a\n---\n"
    for word in ("yes", "no", "null", "123", "2026-01-01", "on"):
        edited = set_fields(text, {"name": word})
        assert parse(edited.encode(), "x.md").name == word, edited


def test_file_without_frontmatter_gets_a_block() -> None:
    edited = set_fields("# Note\n\nbody\n", {"type": "user"})
    assert edited == "---\nmetadata:\n  type: user\n---\n# Note\n\nbody\n"


def test_top_level_type_is_edited_where_it_lives() -> None:
    edited = set_fields("---\ntype: user\n---\n", {"type": "project"})
    assert edited == "---\ntype: project\n---\n"


def test_unparseable_frontmatter_is_not_edited_blind() -> None:
    with pytest.raises(UneditableFrontmatter):
        set_fields(read(GOLDEN / "broken_line.md"), {"name": "x"})
    with pytest.raises(UneditableFrontmatter):
        set_fields(read(GOLDEN / "unclosed.md"), {"name": "x"})


def test_render_new_reads_back_every_field() -> None:
    text = render_new({"name": "部署", "description": "d: x # y", "type": "user",
                       "tags": ["a", "b"], "aliases": ["yes"], "updated": date(2026, 11, 30)},
                      "hello\n\nworld")
    memory = parse(text.encode(), "user_x.md")
    assert (memory.name, memory.description, memory.type) == ("部署", "d: x # y", "user")
    assert (memory.tags, memory.aliases, memory.updated) == (("a", "b"), ("yes",),
                                                             date(2026, 11, 30))
    assert memory.body == "\nhello\n\nworld\n" and memory.problems == ()


def test_quote_inside_a_plain_value_does_not_hide_the_comment() -> None:
    text = "---\ndescription: rock 'n roll  # keep me\n---\n"
    assert set_fields(text, {"description": "jazz"}) == "---\ndescription: jazz  # keep me\n---\n"
    text = "---\ntags: [rock 'n roll]  # keep\n---\n"
    assert set_fields(text, {"tags": ["jazz"]}) == "---\ntags: [jazz]  # keep\n---\n"


@pytest.mark.parametrize(("value", "expected"), [
    ("new", "---\ndescription: new\nname: n\n---\n"),
    (None, "---\nname: n\n---\n"),
])
def test_hash_line_inside_a_block_scalar_goes_with_its_field(value: str | None,
                                                            expected: str) -> None:
    text = "---\ndescription: |\n  step 1\n  # step 2 is a heading\nname: n\n---\n"
    assert set_fields(text, {"description": value}) == expected


def test_comment_before_the_next_key_stays_with_that_key() -> None:
    text = "---\ntags:\n- a\n\n# about the name\nname: n\n---\n"
    assert set_fields(text, {"tags": None}) == "---\n\n# about the name\nname: n\n---\n"
    assert set_fields(text, {"tags": ["b"]}) == "---\ntags: [b]\n\n# about the name\nname: n\n---\n"


def test_complex_key_is_refused_not_rewritten() -> None:
    with pytest.raises(UneditableFrontmatter) as refused:
        set_fields("---\n? description\n: d\nname: n\n---\n", {"description": "c"}, "x.md")
    assert refused.value.name == "x.md"


@pytest.mark.parametrize(("metadata", "expected"), [
    ("metadata:\n  other: 1\n", "metadata:\n  other: 1\n  type: user\n"),
    ("metadata:\n    other: 1\n", "metadata:\n    other: 1\n    type: user\n"),
    ("metadata:\n", "metadata:\n  type: user\n"),
    ("metadata: {}\n", "metadata:\n  type: user\n"),
    ("metadata: {other: 1}\n", "metadata: {other: 1, type: user}\n"),
], ids=["last-key", "four-spaces", "null", "empty-flow", "flow"])
def test_type_is_added_to_a_metadata_without_one(metadata: str, expected: str) -> None:
    edited = set_fields(f"---\ndescription: d\n{metadata}---\nbody\n", {"type": "user"})
    assert edited == f"---\ndescription: d\n{expected}---\nbody\n"


def test_field_from_a_merge_key_is_refused() -> None:
    text = "---\nbase: &b\n  description: d\n<<: *b\n---\n"
    with pytest.raises(UneditableFrontmatter) as refused:
        set_fields(text, {"description": "x"}, "merged.md")
    assert refused.value.name == "merged.md"


@pytest.mark.parametrize("text", [
    "---\nmetadata: [a]\n---\n",
    "---\nmetadata:\n  ? type\n  : user\n---\n",
    "---\ndescription:\tx\n---\n",
])
def test_refusal_names_the_real_file(text: str) -> None:
    with pytest.raises(UneditableFrontmatter) as refused:
        set_fields(text, {"type": "project"}, "user_x.md")
    assert refused.value.name == "user_x.md"


@pytest.mark.parametrize("text", [
    "---\ndescription:\tx\n---\n",
    "---\ndescription: x\t# c\n---\n",
    "---\nname: a\nname: b\n---\n",
    "---\n? description\n: d\n---\n",
    "---\n  description: c\nname: n\n---\n",
])
def test_what_the_editor_refuses_the_reader_reports(text: str) -> None:
    """``sagemem show`` lists parse problems: a refusal must have one there to explain it."""
    problems = parse(text.encode(), "x.md").problems
    assert problems
    with pytest.raises(UneditableFrontmatter) as refused:
        set_fields(text, {"description": "y"}, "x.md")
    assert problems[0].message in refused.value.reason


def test_empty_crlf_frontmatter_gets_crlf_fields() -> None:
    edited = set_fields("---\r\n---\r\nbody\r\n", {"description": "d", "type": "user"})
    assert edited == "---\r\ndescription: d\r\nmetadata:\r\n  type: user\r\n---\r\nbody\r\n"
    assert "\n" not in render_new({"description": "d"}, "b", "\r\n").replace("\r\n", "")


def test_deleting_a_field_a_keep_block_would_absorb_is_refused() -> None:
    """``|+`` keeps trailing blank lines: deleting the field between would hand it the
    blank line after that field, so the edit would change the description too."""
    text = "---\ndescription: |+\n  a\ninvalid_at: 2026-03-01\n\n---\n"
    with pytest.raises(UneditableFrontmatter):
        set_fields(text, {"invalid_at": None})


values = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1,
                 max_size=60).map(str.strip).filter(bool)


@settings(max_examples=150, deadline=None)
@given(value=values)
def test_any_description_reads_back_exactly(value: str) -> None:
    text = read(GOLDEN / "chinese_aliases.md")
    edited = set_fields(text, {"description": value})
    after = parse(edited.encode(), "x.md")
    assert after.description == value
    assert after.body == parse(text.encode(), "x.md").body
    assert after.aliases == ("上线流程", "release steps")


# Structure fuzzing ---------------------------------------------------------------------
# Frontmatter built from the pieces real memory files are made of, so the editor meets
# comments, block scalars, nested mappings and odd quoting, not just odd values.

PLAIN = ["deploy steps", "rock 'n roll", "a#b is no comment", "部署流程，先 staging",
         "colon:inside", "it's fine", "x - y", "上线"]
QUOTED = ["'single: quoted'", '"double # quoted"', "'it''s'", '"部署: 流程"']
COMMENT = ["# a comment", "# 注释", "#"]
TYPES = ["user", "feedback", "project", "reference"]


@dataclass(frozen=True)
class Field:
    """One top-level entry of a generated block: its key and its lines."""

    key: str
    lines: tuple[str, ...]


def _trailing(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(["", "  # keep me", "   # 保留", "   "]))


@st.composite
def name_fields(draw: st.DrawFn) -> Field:
    key = draw(st.sampled_from(["name", "'name'", '"name"', "name "]))
    value = draw(st.sampled_from(PLAIN + QUOTED + ['""']))
    more = draw(st.sampled_from([(), ("  # an indented comment belongs to the field",)]))
    return Field("name", (f"{key}: {value}{_trailing(draw)}", *more))


@st.composite
def description_fields(draw: st.DrawFn) -> Field:
    key = draw(st.sampled_from(["description", '"description"']))
    shape = draw(st.sampled_from(["plain", "quoted", "block", "folded", "continued", "below"]))
    if shape in ("plain", "quoted"):
        value = draw(st.sampled_from(PLAIN if shape == "plain" else QUOTED))
        return Field("description", (f"{key}: {value}{_trailing(draw)}",))
    if shape == "continued":
        first, second = draw(st.sampled_from([(p, p) for p in PLAIN] + [('"one', 'two"')]))
        return Field("description", (f"{key}: {first}", f"  {second}"))
    if shape == "below":
        return Field("description", (f"{key}:", f"  {draw(st.sampled_from(PLAIN))}"))
    indicator = draw(st.sampled_from(["", "-"]))  # "|+" can own blank lines of others
    content = draw(st.lists(st.sampled_from([*PLAIN, "# step 2 is a heading", ""]),
                            min_size=1, max_size=4).filter(lambda lines: lines[0] and lines[-1]))
    head = f"{key}: {'|' if shape == 'block' else '>'}{indicator}{_trailing(draw)}"
    return Field("description", (head, *(f"  {line}" if line else "" for line in content)))


@st.composite
def tags_fields(draw: st.DrawFn) -> Field:
    tags = draw(st.lists(st.sampled_from(["deploy", "rock 'n roll", "部署", "a#b", "x"]),
                         min_size=1, max_size=3, unique=True))
    shape = draw(st.sampled_from(["flow", "below", "wrapped", "block"]))
    if shape == "flow":
        return Field("tags", (f"tags: [{', '.join(tags)}]{_trailing(draw)}",))
    if shape == "below":
        return Field("tags", ("tags:", f"  [{', '.join(tags)}]{_trailing(draw)}"))
    if shape == "wrapped":
        return Field("tags", (f"tags: [{tags[0]},", f"  {', '.join(tags[1:])}]"))
    indent = draw(st.sampled_from(["", "  "]))
    return Field("tags", (f"tags:{_trailing(draw)}", *(f"{indent}- {tag}" for tag in tags)))


@st.composite
def metadata_fields(draw: st.DrawFn) -> Field:
    shape = draw(st.sampled_from(["block", "flow", "null", "empty"]))
    if shape == "null":
        return Field("metadata", (draw(st.sampled_from(["metadata:", "metadata: ~"])),))
    if shape == "empty":
        return Field("metadata", ("metadata: {}",))
    kind = draw(st.sampled_from([*TYPES, '"user"', "'project'"]))
    entries = draw(st.lists(st.sampled_from([f"type: {kind}", "other: 1"]), min_size=1,
                            max_size=2, unique=True))
    if shape == "flow":
        return Field("metadata", (f"metadata: {{{', '.join(entries)}}}",))
    indent = draw(st.sampled_from(["  ", "    "]))
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), "# nested comment")
    entries = [entry + (_trailing(draw) if entry.startswith("type") else "")
               for entry in entries]
    head = "metadata:" + _trailing(draw)
    return Field("metadata", (head, *(indent + entry for entry in entries)))


OTHER_FIELDS = [
    Field("type", ("type: feedback",)),
    Field("invalid_at", ("invalid_at: 2026-03-01",)),
    Field("custom_field", ("custom_field: {nested: [1, 2]}",)),
    Field("note", ('note: "a: b"  # 注释',)),
]


@dataclass(frozen=True)
class Generated:
    """A generated memory file and the line range [start, end) of each top-level field."""

    text: str
    spans: dict[str, tuple[int, int]]


@st.composite
def memory_files(draw: st.DrawFn) -> Generated:
    makers = [name_fields(), description_fields(), tags_fields(), metadata_fields(),
              *(st.just(field) for field in OTHER_FIELDS)]
    chosen = draw(st.lists(st.sampled_from(range(len(makers))), unique=True, max_size=7))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines, spans = ["---"], {}
    for index in chosen:
        lines += draw(st.lists(st.sampled_from(["", *COMMENT]), max_size=2))
        field = draw(makers[index])
        spans[field.key] = (len(lines), len(lines) + len(field.lines))
        lines += field.lines
    lines += draw(st.lists(st.sampled_from(["", *COMMENT]), max_size=1))
    lines += [draw(st.sampled_from(["---", "..."])), "", draw(st.sampled_from(["body", "正文"]))]
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return Generated(bom + newline.join(lines) + newline, spans)


edit_values = {
    "description": st.lists(values, min_size=1, max_size=3).map("\n".join),
    "name": values,
    "type": st.sampled_from(TYPES),
    "tags": st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Z")),
                             min_size=1, max_size=40), max_size=20),
    "invalid_at": st.dates(),
}
edits = st.one_of(
    *(strategy.map(lambda v, k=key: (k, v)) for key, strategy in edit_values.items()),
    st.sampled_from(["name", "description", "tags", "invalid_at", "custom_field", "note"])
      .map(lambda key: (key, None)),
)
FIELD_OF = {"description": "description", "type": "type", "tags": "tags",
            "invalid_at": "invalid_at", "name": "name", "custom_field": None, "note": None}
COMPARED = ("name", "description", "type", "tags", "aliases", "baseline", "baseline_priority",
            "updated", "valid_at", "invalid_at", "superseded_by", "body")


def lines_of(text: str) -> list[str]:
    """Lines split on "\\n" only, as a person (and difflib here) sees them."""
    return re.findall(r"[^\n]*\n|[^\n]+", text)


def raw_fields(text: str) -> dict[str, object]:
    parts = split(text)
    return load_frontmatter(parts.frontmatter or "", 1, [])


def assert_only_region_changed(before: str, after: str, region: tuple[int, int] | None) -> None:
    """Every line outside ``region`` (all lines when None: a pure insertion) is unchanged."""
    old, new = lines_of(before), lines_of(after)
    diff = "".join(difflib.unified_diff(old, new))
    if region is None:
        pairs = zip(old, new, strict=False)
        prefix = next((i for i, (a, b) in enumerate(pairs) if a != b), len(old))
        assert new[:prefix] + new[len(new) - (len(old) - prefix):] == old, diff
        return
    start, end = region
    assert new[:start] == old[:start], diff
    assert new[len(new) - (len(old) - end):] == old[end:] and len(new) >= len(old) - end, diff


def without(generated: Generated, key: str) -> list[str]:
    """The lines of the generated file with one field's lines removed."""
    start, end = generated.spans.get(key, (0, 0))
    old = lines_of(generated.text)
    return old[:start] + old[end:]


def edited_region(generated: Generated, key: str) -> tuple[int, int] | None:
    """The lines the edit may touch: its field's; for ``type``, where the type is in effect."""
    if key == "type":
        raw = raw_fields(generated.text)
        nested = isinstance(raw.get("metadata"), dict) and "type" in raw["metadata"]
        key = "type" if "type" in raw and not nested else "metadata"
    return generated.spans.get(key)


def assert_reads_as_requested(after: Memory, key: str, value: object) -> None:
    field = FIELD_OF[key]
    if field is None:
        return
    expected = {"description": "", "tags": ()}.get(field) if value is None else value
    assert getattr(after, field) == (tuple(expected) if isinstance(expected, list) else expected)


def assert_others_unchanged(before: str, after: str, key: str) -> None:
    """Every typed field but the edited one reads the same, and so does every raw field."""
    old, new = parse(before.encode(), "fuzz.md"), parse(after.encode(), "fuzz.md")
    others = [name for name in COMPARED if name != FIELD_OF.get(key)]
    assert [getattr(new, n) for n in others] == [getattr(old, n) for n in others]
    raw_before, raw_after = raw_fields(before), raw_fields(after)
    for name in raw_before.keys() - {key, "metadata", "type"}:
        assert raw_after.get(name) == raw_before[name]


def assert_comment_kept(generated: Generated, edited: str, key: str) -> None:
    """A one-line field that stays one line keeps the comment after its value."""
    start, end = generated.spans.get(key, (0, 0))
    old, new = lines_of(generated.text), lines_of(edited)
    if end - start != 1 or len(new) != len(old) or "#" not in old[start]:
        return
    comment = old[start][old[start].rindex("  #"):] if "  #" in old[start] else ""
    assert new[start].endswith(comment), (old[start], new[start])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated=memory_files(), edit=edits)
def test_any_edit_of_any_structure_changes_only_its_field(generated: Generated,
                                                         edit: tuple[str, object]) -> None:
    """Every generated file is valid and editable, so a refusal is a failure here too.

    Checks: the field reads as requested, every other field as before, no new problem,
    only the field's own lines change, a comment after a one-line value survives, and
    deleting the field afterwards leaves exactly the other lines (nothing left behind).
    """
    text, (key, value) = generated.text, edit
    before = parse(text.encode(), "fuzz.md")
    assert before.problems == (), text
    edited = set_fields(text, {key: value}, "fuzz.md")
    after = parse(edited.encode(), "fuzz.md")
    assert_reads_as_requested(after, key, value)
    assert_others_unchanged(text, edited, key)
    assert set(after.problems) <= set(before.problems), after.problems
    assert_only_region_changed(text, edited, edited_region(generated, key))
    if "\r\n" in text:
        assert "\n" not in edited.replace("\r\n", ""), edited
    if key == "type":
        return
    assert_comment_kept(generated, edited, key)
    removed = edited if value is None else set_fields(edited, {key: None}, "fuzz.md")
    assert lines_of(removed) == without(generated, key), removed
