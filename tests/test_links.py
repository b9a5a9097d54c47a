"""Links between memories: only prose links count, never examples in code or comments."""

from __future__ import annotations

import pytest

from sagemem.audit.links import memory_links
from sagemem.files.memory import parse


def targets(body: str) -> list[tuple[str, int]]:
    memory = parse(f"---\ndescription: d\n---\n{body}".encode(), "x.md")
    return [(link.target, link.line) for link in memory_links(memory)]


@pytest.mark.parametrize("body", [
    "Text.\n\n    [[in_code]]\n\n    [[still_code]]\nafter [[a]]\n",
    "Text.\n\n\t[[in_code]]\nafter [[a]]\n",
    "<!-- [[commented]] -->after [[a]]\n",
    "<!-- a comment\n[[commented]]\n-->after [[a]]\n",
    "before <!-- [[commented]] --> [[a]] <!-- [[open]]\n[[closed_later]] -->\n",
])
def test_links_in_indented_code_and_html_comments_are_not_links(body: str) -> None:
    assert [target for target, _ in targets(body)] == ["a.md"]


def test_an_indented_continuation_of_a_paragraph_still_holds_links() -> None:
    assert targets("A paragraph\n    continued with [[a]]\n") == [("a.md", 5)]


def test_line_numbers_count_lines_taken_out() -> None:
    assert targets("<!--\n\n-->\n\n    [[code]]\n\n[[a]]\n") == [("a.md", 10)]
