"""The inject, session, ledger and use commands, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagemem.cli import main

MEMORY = """---
name: Cat
description: The user's cat Zhima, a three-year-old British shorthair.
metadata:
  type: user
aliases: [猫, pet]
---
The cat is called Zhima and is afraid of the vacuum cleaner.
"""


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "user_cat.md").write_text(MEMORY, encoding="utf-8")
    return memory, tmp_path / "state"


def run(capsys: pytest.CaptureFixture[str], dirs: tuple[Path, Path], *args: str
        ) -> tuple[int, str, str]:
    code = main(["--dir", str(dirs[0]), "--state-dir", str(dirs[1]), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_inject_prints_the_block(capsys, dirs) -> None:
    code, out, _ = run(capsys, dirs, "inject", "what is the cat called", "--session", "a")
    assert code == 0 and "### user_cat.md:8-8" in out and out.startswith("<sagemem-memory>")


def test_inject_json_has_the_documented_keys(capsys, dirs) -> None:
    _, out, _ = run(capsys, dirs, "inject", "what is the cat called", "--json")
    data = json.loads(out)
    assert set(data) == {"version", "text", "items", "suppressed", "status_card", "budget"}
    assert set(data["items"][0]) == {"file", "start_line", "end_line", "reason", "chars",
                                     "layer"}
    assert set(data["budget"]) == {"used", "body_pool", "card_reserve"}


def test_explain_goes_to_stderr(capsys, dirs) -> None:
    code, out, err = run(capsys, dirs, "inject", "what is the cat called", "--explain")
    assert code == 0 and "injected" in err and "user_cat.md:8-8" in err
    assert "injected" not in out.split("</sagemem-memory>")[-1]


def test_batch_gives_each_line_a_fresh_session(capsys, dirs, tmp_path: Path) -> None:
    batch = tmp_path / "b.jsonl"
    batch.write_text('{"id": 1, "query": "what is the cat called"}\n'
                     '{"id": 2, "query": "what is the cat called"}\n', encoding="utf-8")
    code, out, _ = run(capsys, dirs, "inject", "--batch", str(batch), "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [line["id"] for line in lines] == [1, 2]
    assert all(line["items"] for line in lines)  # no dedupe across fresh sessions


def test_session_show_and_reset(capsys, dirs) -> None:
    run(capsys, dirs, "inject", "what is the cat called", "--session", "s")
    code, out, _ = run(capsys, dirs, "session", "show", "s", "--json")
    assert code == 0 and json.loads(out)["steps"] == 1
    assert run(capsys, dirs, "session", "reset", "s")[0] == 0
    assert json.loads(run(capsys, dirs, "session", "show", "s", "--json")[1])["steps"] == 0


def test_ledger_counts_injected_read_and_use_apart(capsys, dirs) -> None:
    run(capsys, dirs, "inject", "what is the cat called", "--session", "l")
    run(capsys, dirs, "read", "user_cat")
    assert run(capsys, dirs, "use", "user_cat")[1] == "used  user_cat.md\n"
    data = json.loads(run(capsys, dirs, "ledger", "--json")[1])
    counts = {kind: value["count"] for kind, value in data["memories"]["user_cat.md"].items()}
    assert counts == {"injected": 1, "read": 1, "use": 1}


def test_use_of_a_missing_memory_is_one_line_error(capsys, dirs) -> None:
    code, out, err = run(capsys, dirs, "use", "user_nobody")
    assert code == 1 and out == "" and err.count("\n") == 1 and err.startswith("error: ")


def test_inject_without_a_question_is_a_usage_error(capsys, dirs) -> None:
    code, _, err = run(capsys, dirs, "inject")
    assert code == 2 and err.startswith("error: ")


def test_a_repeated_question_says_why_nothing_was_printed(capsys, dirs) -> None:
    run(capsys, dirs, "inject", "what is the cat called", "--session", "r")
    code, out, err = run(capsys, dirs, "inject", "what is the cat called", "--session", "r")
    assert code == 0 and out == "" and "same question as the last one" in err


def test_read_accepts_a_revision_prefix(capsys, dirs) -> None:
    revision = json.loads(run(capsys, dirs, "show", "user_cat", "--json")[1])["revision"]
    code, out, _ = run(capsys, dirs, "read", "user_cat", "--revision", revision[:12])
    assert code == 0 and "Zhima" in out
    code, _, err = run(capsys, dirs, "read", "user_cat", "--revision", revision[:5])
    assert code == 2 and "revision_changed" not in err and "at least 8" in err


def test_my_cat_asked_twice_in_chinese_gives_no_false_no_match_card(capsys, dirs) -> None:
    (dirs[0] / "user_cat.md").write_text(MEMORY.replace(
        "The cat is called Zhima", "我的猫叫芝麻，它"), encoding="utf-8")
    first = run(capsys, dirs, "inject", "我的猫叫什么名字", "--session", "zh")[1]
    code, out, err = run(capsys, dirs, "inject", "我的猫叫什么名字", "--session", "zh")
    assert "### user_cat.md:8-8" in first and "No saved memory matches" not in first
    assert code == 0 and out == "" and "same question as the last one" in err
