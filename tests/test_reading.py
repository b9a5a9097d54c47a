"""Reading a memory's body a page at a time (``sagemem.search.reading``, sage-mem's read_memory).

Line numbers are the file's own (frontmatter lines counted), the same numbers search
results carry; pages cut at line boundaries, or inside an over-long line at a UTF-8
character boundary; a stale revision gives ``revision_changed`` and no content.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from sagemem.errors import InvalidRevision, MemoryNotFound
from sagemem.files.memory import file_lines
from sagemem.search.reading import InvalidReadRange, ReadResult, read
from sagemem.store import MemoryStore

DEPLOY = """\
---
name: Deploy process
description: How the web app is deployed to the kubernetes cluster with kubectl.
metadata:
  type: project
tags: [deploy]
---
# Deploy

Main is deployed to staging on every merge. Production needs a signed tag.

```bash
kubectl apply -f k8s/staging.yaml

kubectl rollout status deploy/web
```

The api_base for staging is https://staging.example.com and it listens on 8080.
Version v2.3 introduced the blue-green switch in src/app.py.

Rollbacks use `kubectl rollout undo`; never edit pods by hand.
"""
DEPLOY_BODY_LINE = 8
LONG_CHINESE_LINE = "部署前先在预发环境验证数据库迁移脚本，确认回滚方案可用之后再发布到生产。" * 3
EDITOR = f"""\
---
name: 编辑器偏好
description: 用户使用 Neovim 编辑代码，格式化用 ruff。
metadata:
  type: user
---
用户每天用 Neovim 写代码，终端是 tmux。

{LONG_CHINESE_LINE}

格式化统一使用 ruff，提交前必须运行 ruff check。
"""
EDITOR_BODY_LINE = 7
PETS_CRLF = (
    "---\r\nname: Pets\r\ndescription: The user's cat is called Zhima and eats salmon.\r\n"
    "metadata:\r\n  type: user\r\n---\r\nThe cat is called Zhima (芝麻), a grey tabby.\r\n"
    "\r\nShe eats salmon twice a day and hates the vacuum cleaner.\r\n"
)
NO_FRONTMATTER = "Plain notes with no frontmatter.\n\nSecond paragraph.\n"
MEMORIES = {
    "project_deploy.md": DEPLOY,
    "user_editor.md": EDITOR,
    "user_pets.md": PETS_CRLF,
    "reference_plain.md": NO_FRONTMATTER,
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    """A store of four memories: English with a code fence, Chinese with a long line,
    a CRLF file, and one without frontmatter."""
    directory = tmp_path / "memory"
    directory.mkdir()
    for name, text in MEMORIES.items():
        (directory / name).write_bytes(text.encode("utf-8"))
    with MemoryStore(directory, tmp_path / "state") as opened:
        yield opened


def body_lines(text: str, body_line: int) -> list[str]:
    return file_lines(text)[body_line - 1:]


def line_offset(text: str, line: int) -> int:
    """The byte offset of a 1-based line of ``text``."""
    data = text.encode("utf-8")
    offset = 0
    for _ in range(line - 1):
        offset = data.index(b"\n", offset) + 1
    return offset


def all_pages(store: MemoryStore, name: str, max_bytes: int) -> list[ReadResult]:
    pages = [read(store, name, max_bytes=max_bytes)]
    while pages[-1].next_start_line is not None or pages[-1].next_start_byte is not None:
        last = pages[-1]
        if last.next_start_line is not None:
            pages.append(read(store, name, start_line=last.next_start_line,
                              max_bytes=max_bytes))
        else:
            pages.append(read(store, name, start_byte=last.next_start_byte,
                              max_bytes=max_bytes))
        assert len(pages) < 1000, "paging does not advance"
    return pages


# -- by line ----------------------------------------------------------------------------


def test_read_starts_at_the_first_body_line_by_default(store: MemoryStore) -> None:
    result = read(store, "project_deploy.md")
    assert result.status == "ok"
    assert result.start_line == DEPLOY_BODY_LINE
    assert result.content == "\n".join(body_lines(DEPLOY, DEPLOY_BODY_LINE))
    assert result.end_line == len(file_lines(DEPLOY))
    assert result.total_lines == len(file_lines(DEPLOY))
    assert result.next_start_line is None and result.next_start_byte is None


def test_read_accepts_a_name_without_md(store: MemoryStore) -> None:
    assert read(store, "project_deploy") == read(store, "project_deploy.md")


@pytest.mark.parametrize("start_line", [1, 3, DEPLOY_BODY_LINE - 1])
def test_start_line_within_the_frontmatter_moves_to_the_body_start(
    store: MemoryStore, start_line: int
) -> None:
    result = read(store, "project_deploy.md", start_line=start_line)
    assert result.start_line == DEPLOY_BODY_LINE
    assert result.content == read(store, "project_deploy.md").content


def test_start_line_in_the_body_reads_from_that_line_of_the_file(store: MemoryStore) -> None:
    result = read(store, "project_deploy.md", start_line=18)
    lines = file_lines(DEPLOY)
    assert result.start_line == 18
    assert result.content == "\n".join(lines[17:])
    assert result.content.startswith("The api_base for staging")


def test_file_without_frontmatter_is_read_from_line_1(store: MemoryStore) -> None:
    result = read(store, "reference_plain.md")
    assert result.start_line == 1
    assert result.content == "Plain notes with no frontmatter.\n\nSecond paragraph."


def test_crlf_file_is_read_with_the_lines_an_editor_shows(store: MemoryStore) -> None:
    result = read(store, "user_pets.md")
    assert result.start_line == 7
    assert result.content == ("The cat is called Zhima (芝麻), a grey tabby.\n\n"
                              "She eats salmon twice a day and hates the vacuum cleaner.")
    assert "\r" not in result.content


def test_start_line_past_the_end_gives_empty_content(store: MemoryStore) -> None:
    result = read(store, "project_deploy.md", start_line=500)
    assert result.status == "ok"
    assert result.content == ""
    assert result.next_start_line is None and result.next_start_byte is None


# -- pages ------------------------------------------------------------------------------


def test_max_bytes_cuts_a_page_at_a_line_boundary(store: MemoryStore) -> None:
    result = read(store, "project_deploy.md", max_bytes=120)
    lines = file_lines(DEPLOY)
    assert result.content is not None
    assert len(result.content.encode("utf-8")) <= 120
    assert result.end_line is not None
    assert result.content == "\n".join(lines[DEPLOY_BODY_LINE - 1:result.end_line])
    assert result.next_start_line == result.end_line + 1


def test_next_start_line_continues_exactly_where_the_page_ended(store: MemoryStore) -> None:
    first = read(store, "project_deploy.md", max_bytes=120)
    assert first.next_start_line is not None and first.end_line is not None
    second = read(store, "project_deploy.md", start_line=first.next_start_line, max_bytes=120)
    assert second.start_line == first.end_line + 1
    lines = file_lines(DEPLOY)
    assert second.content is not None and second.end_line is not None
    assert second.content == "\n".join(lines[second.start_line - 1:second.end_line])


@pytest.mark.parametrize("max_bytes", [90, 120, 200, 400])
def test_reading_all_pages_reassembles_the_body(store: MemoryStore, max_bytes: int) -> None:
    # The longest line of DEPLOY is shorter than 90 bytes, so no line is ever cut.
    pages = all_pages(store, "project_deploy.md", max_bytes)
    assert all(p.next_start_byte is None for p in pages)
    for before, after in itertools.pairwise(pages):
        assert before.end_line is not None
        assert after.start_line == before.end_line + 1
    assert "\n".join(p.content or "" for p in pages) == "\n".join(
        body_lines(DEPLOY, DEPLOY_BODY_LINE))


def test_page_never_exceeds_max_bytes(store: MemoryStore) -> None:
    for page in all_pages(store, "user_editor.md", 50):
        assert page.content is not None
        assert len(page.content.encode("utf-8")) <= 50


# -- a line longer than a page ----------------------------------------------------------


def test_line_longer_than_max_bytes_is_cut_at_a_character_boundary(store: MemoryStore) -> None:
    long_line = EDITOR_BODY_LINE + 2
    result = read(store, "user_editor.md", start_line=long_line, max_bytes=40)
    assert result.content is not None
    assert len(result.content.encode("utf-8")) <= 40
    assert len(result.content.encode("utf-8")) > 40 - 3  # as much as fits: 13 characters
    assert LONG_CHINESE_LINE.startswith(result.content)
    assert result.start_line == result.end_line == long_line
    assert result.next_start_line is None
    assert result.next_start_byte == (line_offset(EDITOR, long_line)
                                      + len(result.content.encode("utf-8")))


def test_reading_on_from_next_start_byte_continues_the_cut_line(store: MemoryStore) -> None:
    long_line = EDITOR_BODY_LINE + 2
    first = read(store, "user_editor.md", start_line=long_line, max_bytes=40)
    second = read(store, "user_editor.md", start_byte=first.next_start_byte, max_bytes=40)
    assert first.content is not None and second.content is not None
    assert LONG_CHINESE_LINE.startswith(first.content + second.content)
    assert second.start_byte == first.next_start_byte


def test_reading_every_page_of_chinese_text_reassembles_the_body(store: MemoryStore) -> None:
    # Pages by line, and by byte once a line is cut: the text comes back whole, every
    # character intact (line pages are joined by the newline they end on).
    pages = all_pages(store, "user_editor.md", 40)
    assert len(pages) > 3
    text = ""
    for page in pages:
        assert page.content is not None
        text += page.content
        if page.next_start_line is not None:
            text += "\n"
    assert text.rstrip("\n") == "\n".join(body_lines(EDITOR, EDITOR_BODY_LINE))


# -- by byte ----------------------------------------------------------------------------


def test_read_by_byte_returns_the_bytes_from_that_offset(store: MemoryStore) -> None:
    start = line_offset(DEPLOY, 19)
    result = read(store, "project_deploy.md", start_byte=start, max_bytes=30)
    assert result.start_byte == start
    assert result.content == DEPLOY.encode("utf-8")[start:start + 30].decode("utf-8")
    assert result.end_byte == start + 30
    assert result.next_start_byte == start + 30
    assert result.start_line == 19


@pytest.mark.parametrize("into_character", [1, 2])
def test_read_by_byte_never_starts_inside_a_character(
    store: MemoryStore, into_character: int
) -> None:
    start = line_offset(EDITOR, EDITOR_BODY_LINE)  # "用户每天…": 3-byte characters
    result = read(store, "user_editor.md", start_byte=start + into_character, max_bytes=12)
    assert result.start_byte == start + 3
    assert result.content == "户每天用"


def test_read_by_byte_never_ends_inside_a_character(store: MemoryStore) -> None:
    start = line_offset(EDITOR, EDITOR_BODY_LINE)
    result = read(store, "user_editor.md", start_byte=start, max_bytes=10)
    assert result.content == "用户每"
    assert result.next_start_byte == start + 9


def test_read_by_byte_within_the_frontmatter_moves_to_the_body(store: MemoryStore) -> None:
    result = read(store, "project_deploy.md", start_byte=0, max_bytes=8)
    assert result.start_byte == line_offset(DEPLOY, DEPLOY_BODY_LINE)
    assert result.content == "# Deploy"
    assert result.start_line == DEPLOY_BODY_LINE


def test_read_by_byte_reaching_the_end_has_no_next_page(store: MemoryStore) -> None:
    size = len(DEPLOY.encode("utf-8"))
    result = read(store, "project_deploy.md", start_byte=size - 10, max_bytes=100)
    assert result.end_byte == size
    assert result.next_start_byte is None


def test_read_by_byte_always_advances_or_refuses_a_page_too_small(store: MemoryStore) -> None:
    start = line_offset(EDITOR, EDITOR_BODY_LINE)
    try:
        result = read(store, "user_editor.md", start_byte=start, max_bytes=2)
    except InvalidReadRange:
        return
    assert result.next_start_byte is None or result.next_start_byte > start


# -- revision ---------------------------------------------------------------------------


def test_read_with_the_current_revision_gives_content(store: MemoryStore) -> None:
    revision = store.get("project_deploy.md").revision
    result = read(store, "project_deploy.md", revision=revision)
    assert result.status == "ok"
    assert result.revision == revision
    assert result.content == read(store, "project_deploy.md").content


def test_read_with_another_revision_gives_revision_changed_and_no_content(
    store: MemoryStore,
) -> None:
    before = store.get("project_deploy.md").revision
    (store.directory / "project_deploy.md").write_text(DEPLOY.replace("8080", "9090"),
                                                       encoding="utf-8")
    result = read(store, "project_deploy.md", start_line=19, revision=before)
    assert result.status == "revision_changed"
    assert result.content is None
    assert result.revision == store.get("project_deploy.md").revision != before
    assert result.next_start_line is None and result.next_start_byte is None


def test_revision_check_applies_to_reads_by_byte(store: MemoryStore) -> None:
    result = read(store, "project_deploy.md", start_byte=0, revision="0" * 64)
    assert result.status == "revision_changed"
    assert result.content is None


def test_read_accepts_an_eight_character_revision_prefix(store: MemoryStore) -> None:
    revision = store.get("project_deploy.md").revision
    assert read(store, "project_deploy.md", revision=revision[:8].upper()).status == "ok"


def test_a_short_real_prefix_is_refused_not_reported_as_changed(store: MemoryStore) -> None:
    revision = store.get("project_deploy.md").revision
    with pytest.raises(InvalidRevision, match="at least 8"):
        read(store, "project_deploy.md", revision=revision[:4])


# -- errors -----------------------------------------------------------------------------


def test_start_line_and_start_byte_together_are_refused(store: MemoryStore) -> None:
    with pytest.raises(InvalidReadRange) as caught:
        read(store, "project_deploy.md", start_line=9, start_byte=0)
    assert "start_line" in str(caught.value) and "start_byte" in str(caught.value)


@pytest.mark.parametrize("kwargs", [
    pytest.param({"start_line": 0}, id="line-0"),
    pytest.param({"start_byte": -1}, id="negative-byte"),
    pytest.param({"max_bytes": 0}, id="empty-page"),
])
def test_out_of_range_arguments_are_refused(store: MemoryStore, kwargs: dict[str, int]) -> None:
    with pytest.raises(InvalidReadRange):
        read(store, "project_deploy.md", **kwargs)


def test_missing_memory_raises_memory_not_found(store: MemoryStore) -> None:
    with pytest.raises(MemoryNotFound):
        read(store, "user_nobody.md")


def test_store_read_is_the_same_as_read(store: MemoryStore) -> None:
    assert store.read("user_editor", max_bytes=40) == read(store, "user_editor", max_bytes=40)


# -- search results point at the lines read gives back -----------------------------------


@pytest.mark.parametrize(("query", "file"), [
    pytest.param("blue-green switch src/app.py", "project_deploy.md", id="english"),
    pytest.param("kubectl rollout status", "project_deploy.md", id="code-fence"),
    pytest.param("数据库迁移脚本", "user_editor.md", id="chinese"),
    pytest.param("vacuum cleaner salmon", "user_pets.md", id="crlf"),
])
def test_search_result_lines_read_back_exactly_its_paragraph(
    store: MemoryStore, query: str, file: str
) -> None:
    results = store.search(query).results
    assert results and results[0].file == file
    hit = results[0]
    page = read(store, hit.file, start_line=hit.start_line,
                max_bytes=len(hit.paragraph.encode("utf-8")) + 1)
    assert (page.start_line, page.end_line) == (hit.start_line, hit.end_line)
    assert page.content == hit.paragraph
