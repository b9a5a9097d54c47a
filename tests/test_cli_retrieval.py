"""The retrieval commands of ``sagemem``: search, read, index and eval.

Each test calls ``sagemem.cli.main(argv)`` — the one place errors become exit codes —
and reads stdout/stderr with capsys. Every run passes ``--state-dir`` under tmp_path.
The ``--json`` shapes are pinned: tools are built on those field names.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from sagemem.cli import main
from sagemem.files.memory import file_lines

SEARCH_KEYS = {"version", "query", "results", "coverage"}
RESULT_KEYS = {"file", "name", "description", "type", "score", "start_line", "end_line",
               "paragraph", "invalid", "invalid_at", "superseded_by", "revision", "archived",
               "valid_at", "not_yet_valid", "layer"}
COVERAGE_KEYS = {"files_scanned", "candidates", "paragraphs_filtered", "next_cursor",
                 "files_without_vectors"}
EVAL_KEYS = {"recall@5", "mrr@10", "passage_hit", "spurious_unrelated", "spurious_injected",
             "inject_recall", "by_kind", "worst_misses", "mode", "modes"}

DEPLOY = """\
---
name: Deploy process
description: How the web app is deployed to the kubernetes cluster with kubectl.
metadata:
  type: project
tags: [deploy]
aliases: [release steps, 发布流程]
---
# Deploy

Main is deployed to staging on every merge. Production needs a signed tag.

```bash
kubectl apply -f k8s/staging.yaml

kubectl rollout status deploy/web
```

Rollbacks use `kubectl rollout undo`; never edit pods by hand.
"""
EDITOR = """\
---
name: 编辑器偏好
description: 用户使用 Neovim 编辑代码，格式化用 ruff。
metadata:
  type: user
tags: [editor]
---
用户每天用 Neovim 写代码，终端是 tmux。

格式化统一使用 ruff，提交前必须运行 ruff check。
"""
PETS = """\
---
name: Pets
description: The user's cat is called Zhima and eats salmon.
metadata:
  type: user
---
The cat is called Zhima (芝麻), a grey tabby.

She eats salmon twice a day and hates the vacuum cleaner.
"""
LIBRARY = """\
---
name: Library card
description: 图书馆借书证在抽屉里，到期日是三月。
metadata:
  type: reference
---
借书证放在书桌左边的抽屉里。

续借要在三月之前去前台办理。
"""
OLD_DEPLOY = """\
---
name: Old deploy
description: Manual SSH deploys to the bare-metal host, retired in favour of kubernetes.
metadata:
  type: project
invalid_at: 2000-01-01
superseded_by: project_deploy.md
---
ssh into the bare-metal host and run the deploy script by hand.
"""


def dashboard(topic: str, detail: str) -> str:
    return (f"---\nname: {topic} dashboard\ndescription: The Grafana dashboard for {detail}.\n"
            f"metadata:\n  type: reference\ntags: [monitoring]\n---\n"
            f"Grafana dashboard \"{topic}\" shows {detail}.\n\n"
            f"Page the on-call engineer when it turns red.\n")


MEMORIES = {
    "project_deploy.md": DEPLOY,
    "user_editor.md": EDITOR,
    "user_pets.md": PETS,
    "reference_library.md": LIBRARY,
    "project_old_deploy.md": OLD_DEPLOY,
    "reference_grafana_api.md": dashboard("API", "API latency per endpoint"),
    "reference_grafana_db.md": dashboard("Postgres", "replication lag and connections"),
    "reference_grafana_queue.md": dashboard("Queues", "job queue depth per worker pool"),
}
DASHBOARDS = {"reference_grafana_api.md", "reference_grafana_db.md",
              "reference_grafana_queue.md"}


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


Run = Callable[..., Result]


@pytest.fixture(autouse=True)
def isolated_cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No SAGE_MEM_* from the real environment, a fake HOME, an 80-column terminal."""
    for key in list(os.environ):
        if key.startswith("SAGE_MEM_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("SAGE_MEM_SEMANTIC", "off")  # expectations are lexical (conftest)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("COLUMNS", "80")


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    """Eight memories: English, Chinese, a code fence, an invalid one, three dashboards."""
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "MEMORY.md").write_text("# Memory index\n\n", encoding="utf-8")
    for name, text in MEMORIES.items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], state_dir: Path, memory_dir: Path) -> Run:
    """Run ``sagemem --state-dir <tmp> --dir <memory_dir> ARGS…`` and capture its output."""

    def run(*args: str, directory: Path | None = memory_dir) -> Result:
        argv = ["--state-dir", str(state_dir)]
        if directory is not None:
            argv += ["--dir", str(directory)]
        code = main([*argv, *args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def assert_one_line_error(result: Result, code: int) -> str:
    """The error contract: exit code, nothing on stdout, one ``error: …`` line on stderr."""
    assert result.code == code, result
    assert result.out == ""
    assert result.err.startswith("error: ")
    assert result.err.endswith("\n") and result.err.count("\n") == 1, result.err
    assert "Traceback" not in result.err
    return result.err


def search_json(run: Run, *args: str) -> dict[str, object]:
    result = run("search", *args, "--json")
    assert result.code == 0, result
    data: dict[str, object] = json.loads(result.out)
    return data


def results_of(data: dict[str, object]) -> list[dict[str, object]]:
    results = data["results"]
    assert isinstance(results, list)
    return results


# -- search -----------------------------------------------------------------------------


def test_search_text_names_the_file_and_its_line_range(run: Run, memory_dir: Path) -> None:
    result = run("search", "kubectl rollout status")
    assert result.code == 0, result
    match = re.search(r"^project_deploy\.md:(\d+)-(\d+)  \[project\]", result.out, re.MULTILINE)
    assert match, result.out
    start, end = int(match.group(1)), int(match.group(2))
    lines = file_lines((memory_dir / "project_deploy.md").read_text(encoding="utf-8"))
    assert "kubectl rollout status deploy/web" in lines[start - 1:end]
    assert "How the web app is deployed" in result.out
    assert "scanned 8 files" in result.out


def test_search_text_says_when_nothing_matches(run: Run) -> None:
    result = run("search", "how do I bake sourdough bread")
    assert result.code == 0
    assert "(no memory matches)" in result.out


def test_search_json_has_exactly_the_documented_keys(run: Run) -> None:
    data = search_json(run, "what is my cat called")
    assert set(data) == SEARCH_KEYS
    assert data["query"] == "what is my cat called"
    results = results_of(data)
    assert results, data
    for item in results:
        assert set(item) == RESULT_KEYS
    coverage = data["coverage"]
    assert isinstance(coverage, dict) and set(coverage) == COVERAGE_KEYS
    assert coverage["files_scanned"] == len(MEMORIES)


def test_search_json_result_carries_the_files_own_line_range(
    run: Run, memory_dir: Path
) -> None:
    top = results_of(search_json(run, "what is my cat called"))[0]
    assert top["file"] == "user_pets.md"
    assert (top["name"], top["type"], top["invalid"]) == ("Pets", "user", False)
    lines = file_lines((memory_dir / "user_pets.md").read_text(encoding="utf-8"))
    assert isinstance(top["start_line"], int) and isinstance(top["end_line"], int)
    assert top["paragraph"] == "\n".join(lines[top["start_line"] - 1:top["end_line"]])
    assert "Zhima" in str(top["paragraph"])


def test_search_finds_chinese_text(run: Run) -> None:
    results = results_of(search_json(run, "借书证在哪里"))
    assert [r["file"] for r in results] == ["reference_library.md"]
    assert "抽屉" in str(results[0]["paragraph"])


def test_search_marks_an_invalid_memory_without_hiding_it(run: Run) -> None:
    results = results_of(search_json(run, "manual ssh bare-metal deploys"))
    old = next(r for r in results if r["file"] == "project_old_deploy.md")
    assert old["invalid"] is True
    assert old["invalid_at"] == "2000-01-01"
    assert old["superseded_by"] == "project_deploy.md"


def test_search_marks_a_memory_not_yet_valid_without_hiding_it(run: Run,
                                                               memory_dir: Path) -> None:
    (memory_dir / "project_next_deploy.md").write_text(
        OLD_DEPLOY.replace("invalid_at: 2000-01-01", "valid_at: 2999-01-01")
        .replace("Old deploy", "Next deploy").replace("ssh into", "blue-green switch of"),
        encoding="utf-8")
    later = next(r for r in results_of(search_json(run, "blue-green switch deploy"))
                 if r["file"] == "project_next_deploy.md")
    assert (later["not_yet_valid"], later["valid_at"], later["invalid"]) == (
        True, "2999-01-01", False)
    assert "project_next_deploy.md:9-9  [project]" in run("search", "blue-green switch").out
    assert "(valid from 2999-01-01)" in run("search", "blue-green switch").out


def test_search_type_limits_results_to_that_type(run: Run) -> None:
    everything = {r["file"] for r in results_of(search_json(run, "grafana dashboard"))}
    assert everything == DASHBOARDS
    assert results_of(search_json(run, "grafana dashboard", "--type", "user")) == []
    only = {r["file"] for r in results_of(
        search_json(run, "grafana dashboard", "--type", "reference"))}
    assert only == DASHBOARDS


def test_search_tag_limits_results_to_that_tag(run: Run) -> None:
    assert results_of(search_json(run, "grafana dashboard", "--tag", "deploy")) == []
    tagged = {r["file"] for r in results_of(
        search_json(run, "grafana dashboard", "--tag", "monitoring"))}
    assert tagged == DASHBOARDS


def test_limit_and_cursor_page_through_results_without_repeats(run: Run) -> None:
    seen: list[str] = []
    cursor: object = None
    for _ in range(len(DASHBOARDS) + 1):
        args = ["grafana dashboard", "--limit", "1"]
        if cursor is not None:
            args += ["--cursor", str(cursor)]
        data = search_json(run, *args)
        page = results_of(data)
        assert len(page) == 1
        seen.append(str(page[0]["file"]))
        coverage = data["coverage"]
        assert isinstance(coverage, dict)
        cursor = coverage["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == len(DASHBOARDS)
    assert set(seen) == DASHBOARDS
    everything = [r["file"] for r in results_of(search_json(run, "grafana dashboard"))]
    assert seen == everything


def test_search_text_shows_the_cursor_for_the_next_page(run: Run) -> None:
    result = run("search", "grafana dashboard", "--limit", "1")
    assert result.code == 0
    assert re.fullmatch(r'more: sagemem search "grafana dashboard" --limit 1 --cursor \S+\n',
                        result.err)


def test_batch_skips_blank_lines_and_a_bad_line_costs_only_itself(
    run: Run, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_bytes(b'{"id": "a", "query": "grafana dashboard"}\n\n\xff\xfe\n'
                      b'{"id": "b", "query": "grafana dashboard"}\n')
    result = run("search", "--batch", str(batch), "--json")
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert [line.get("id") for line in lines] == ["a", None, "b"]
    assert lines[1] == {"id": None, "line": 3, "error": "not UTF-8 text"}
    assert result.code == 1


def test_cursor_from_another_query_exits_1_with_one_line(run: Run) -> None:
    data = search_json(run, "grafana dashboard", "--limit", "1")
    coverage = data["coverage"]
    assert isinstance(coverage, dict) and coverage["next_cursor"]
    result = run("search", "what is my cat called", "--cursor", str(coverage["next_cursor"]))
    err = assert_one_line_error(result, 1)
    assert "cursor" in err


def test_garbage_cursor_exits_1_with_one_line(run: Run) -> None:
    err = assert_one_line_error(
        run("search", "grafana dashboard", "--cursor", "!!not-a-cursor"), 1)
    assert err == "error: this cursor does not belong to this query; search again without it\n"


def test_search_with_no_query_and_no_batch_exits_2(run: Run) -> None:
    err = assert_one_line_error(run("search"), 2)
    assert "--batch" in err


def test_search_with_a_blank_query_exits_2(run: Run) -> None:
    err = assert_one_line_error(run("search", "   "), 2)
    assert err.startswith("error: Missing argument QUERY. Give a question, or --batch FILE")


def test_search_in_a_missing_directory_exits_1_naming_it(run: Run, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    err = assert_one_line_error(run("search", "cat", directory=missing), 1)
    assert str(missing) in err


def test_search_in_a_directory_of_one_memory_finds_it(run: Run, tmp_path: Path) -> None:
    directory = tmp_path / "first"
    directory.mkdir()
    (directory / "user_pets.md").write_text(PETS, encoding="utf-8")
    result = run("search", "Zhima", "--json", directory=directory)
    assert [r["file"] for r in json.loads(result.out)["results"]] == ["user_pets.md"]


# -- search --batch ---------------------------------------------------------------------


def test_batch_prints_one_json_line_per_input_line_in_order(run: Run, tmp_path: Path) -> None:
    batch = tmp_path / "queries.jsonl"
    lines = [{"id": "q1", "query": "grafana dashboard"},
             {"id": 2, "query": "what is my cat called"},
             {"id": "q3", "query": "借书证在哪里"},
             {"query": "how do I bake sourdough bread"}]
    batch.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
                     encoding="utf-8")
    result = run("search", "--batch", str(batch), "--json")
    assert result.code == 0, result
    out = [json.loads(line) for line in result.out.splitlines()]
    assert [o["id"] for o in out] == ["q1", 2, "q3", None]
    assert [o["query"] for o in out] == [line["query"] for line in lines]
    for item in out:
        assert set(item) == SEARCH_KEYS | {"id"}
    assert out[1]["results"][0]["file"] == "user_pets.md"
    assert out[2]["results"][0]["file"] == "reference_library.md"
    assert out[3]["results"] == []


def test_batch_malformed_line_gives_an_error_object_and_exit_1(
    run: Run, tmp_path: Path
) -> None:
    batch = tmp_path / "queries.jsonl"
    batch.write_text('{"id": "a", "query": "what is my cat called"}\n'
                     "{not json\n"
                     '{"id": "c", "text": "no query field"}\n'
                     '{"id": "d", "query": "kubectl rollout status"}\n', encoding="utf-8")
    result = run("search", "--batch", str(batch), "--json")
    assert result.code == 1
    out = [json.loads(line) for line in result.out.splitlines()]
    assert len(out) == 4
    assert out[0]["id"] == "a" and out[0]["results"]
    assert out[1]["line"] == 2 and "error" in out[1]
    assert out[2]["line"] == 3 and "error" in out[2]
    assert out[3]["id"] == "d" and out[3]["results"][0]["file"] == "project_deploy.md"


def test_batch_file_that_cannot_be_opened_exits_2(run: Run, tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    err = assert_one_line_error(run("search", "--batch", str(missing)), 2)
    assert f"--batch: cannot open {missing}: " in err


# -- read -------------------------------------------------------------------------------


def test_read_text_prints_the_body_lines(run: Run) -> None:
    result = run("read", "user_pets")
    assert result.code == 0, result
    assert result.out == ("The cat is called Zhima (芝麻), a grey tabby.\n\n"
                          "She eats salmon twice a day and hates the vacuum cleaner.\n")


def test_read_text_from_a_search_line_range(run: Run) -> None:
    top = results_of(search_json(run, "what is my cat called"))[0]
    result = run("read", str(top["file"]), "--start-line", str(top["start_line"]))
    assert result.out.startswith(str(top["paragraph"]))


def test_read_text_says_how_to_read_the_next_page(run: Run) -> None:
    result = run("read", "project_deploy", "--max-bytes", "40")
    assert result.code == 0
    assert result.out == "# Deploy\n\n"
    assert result.err == "more: sagemem read project_deploy.md --start-line 11\n"


def test_read_json_has_status_content_and_next_start_line(run: Run) -> None:
    result = run("read", "project_deploy", "--max-bytes", "40", "--json")
    assert result.code == 0, result
    data = json.loads(result.out)
    assert data["status"] == "ok"
    assert data["content"] == "# Deploy\n"
    assert data["start_line"] == 9
    assert data["next_start_line"] == 11
    assert data["next_start_byte"] is None
    assert data["file"] == "project_deploy.md"
    assert len(data["revision"]) == 64


def test_read_with_the_current_revision_prints_the_content(run: Run) -> None:
    revision = json.loads(run("read", "user_pets", "--json").out)["revision"]
    result = run("read", "user_pets", "--revision", revision)
    assert result.code == 0
    assert "Zhima" in result.out


def test_read_with_a_wrong_revision_exits_1_with_revision_changed(run: Run) -> None:
    result = run("read", "user_pets", "--revision", "0" * 12)
    err = assert_one_line_error(result, 1)
    assert "revision_changed" in err


def test_read_json_with_a_wrong_revision_has_no_content(run: Run) -> None:
    result = run("read", "user_pets", "--revision", "0" * 12, "--json")
    assert result.code == 1
    data = json.loads(result.out)
    assert data["status"] == "revision_changed"
    assert data["content"] is None
    assert "revision_changed" in result.err


def test_read_with_a_short_real_prefix_is_a_usage_error_not_a_change(run: Run) -> None:
    revision = json.loads(run("read", "user_pets", "--json").out)["revision"]
    err = assert_one_line_error(run("read", "user_pets", "--revision", revision[:4]), 2)
    assert "revision_changed" not in err and "at least 8" in err


def test_read_with_an_eight_character_prefix_prints_the_content(run: Run) -> None:
    revision = json.loads(run("read", "user_pets", "--json").out)["revision"]
    result = run("read", "user_pets", "--revision", revision[:8])
    assert result.code == 0 and "Zhima" in result.out


def test_read_with_start_line_and_start_byte_exits_1_with_one_line(run: Run) -> None:
    err = assert_one_line_error(
        run("read", "user_pets", "--start-line", "7", "--start-byte", "0"), 1)
    assert "start_line" in err


def test_read_of_a_missing_memory_exits_1_with_one_line(run: Run) -> None:
    err = assert_one_line_error(run("read", "user_nobody"), 1)
    assert "user_nobody" in err


# -- index ------------------------------------------------------------------------------


def index_file(state_dir: Path) -> Path:
    (path,) = (state_dir / "index").glob("search-*.sqlite3")
    return path


def test_index_prints_counts(run: Run, state_dir: Path) -> None:
    first = run("index")
    assert first.code == 0, first
    assert first.out.startswith(f"{len(MEMORIES)} files scanned, {len(MEMORIES)} indexed, "
                                "0 removed")
    assert str(index_file(state_dir)) in first.out
    again = run("index")
    assert again.out.startswith(f"{len(MEMORIES)} files scanned, 0 indexed, 0 removed")


def test_index_counts_a_removed_file(run: Run, memory_dir: Path) -> None:
    run("index")
    (memory_dir / "user_pets.md").unlink()
    result = run("index")
    assert result.out.startswith(f"{len(MEMORIES) - 1} files scanned, 0 indexed, 1 removed")


def test_index_rebuild_reindexes_every_file(run: Run) -> None:
    run("index")
    result = run("index", "--rebuild")
    assert result.code == 0, result
    assert result.out.startswith(f"{len(MEMORIES)} files scanned, {len(MEMORIES)} indexed, "
                                 "0 removed")
    assert result.err == ""


def test_corrupt_index_prints_one_notice_and_search_still_works(
    run: Run, state_dir: Path
) -> None:
    run("index")
    index_file(state_dir).write_bytes(b"\x00this is no database\xff" * 100)
    result = run("search", "what is my cat called", "--json")
    assert result.code == 0, result
    assert result.err.startswith("notice: ")
    assert result.err.count("\n") == 1
    assert json.loads(result.out)["results"][0]["file"] == "user_pets.md"
    assert run("search", "what is my cat called").err == ""


# -- eval -------------------------------------------------------------------------------


@pytest.fixture
def eval_set(tmp_path: Path) -> Path:
    """A tiny evaluation set: four memories and four queries, one of them unrelated."""
    root = tmp_path / "tiny"
    memory = root / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("# Memory index\n\n", encoding="utf-8")
    for name in ("project_deploy.md", "user_editor.md", "user_pets.md",
                 "reference_library.md"):
        (memory / name).write_text(MEMORIES[name], encoding="utf-8")
    queries = [
        {"id": "q1", "query": "what is my cat called", "lang": "en", "kind": "summary",
         "relevant": ["user_pets.md"], "answer": "Zhima"},
        {"id": "q2", "query": "how do I roll back with kubectl rollout undo", "lang": "en",
         "kind": "body", "relevant": ["project_deploy.md"], "answer": "kubectl rollout undo"},
        {"id": "q3", "query": "借书证放在哪里", "lang": "zh", "kind": "summary",
         "relevant": ["reference_library.md"], "answer": "抽屉"},
        {"id": "q4", "query": "今天天气怎么样", "lang": "zh", "kind": "unrelated",
         "relevant": [], "answer": None},
    ]
    (root / "queries.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries), encoding="utf-8")
    return root


def test_eval_prints_the_metrics_table(run: Run, eval_set: Path) -> None:
    result = run("eval", str(eval_set), directory=None)
    assert result.code == 0, result
    lines = result.out.splitlines()
    assert lines[0] == "set tiny: 4 queries (3 answerable, 1 unrelated)"
    assert lines[2].split() == ["search", "recall@5", "mrr@10", "passage"]
    assert lines[3].split() == ["lex"] * 3  # semantic off: the lexical mode alone
    assert lines[4].split() == ["all", "1.00", "1.00", "1.00"]
    assert [line.split()[0] for line in lines[5:8]] == ["body", "summary", "unrelated"]
    assert lines[9].split() == ["inject", "inj.recall", "spur.unrel", "spur.inj"]
    assert lines[11].split() == ["all", "1.00", ".000", ".000"]


def test_eval_json_has_every_metric(run: Run, eval_set: Path) -> None:
    result = run("eval", str(eval_set), "--json", directory=None)
    assert result.code == 0, result
    data = json.loads(result.out)
    assert set(data) >= EVAL_KEYS
    assert (data["queries"], data["answerable"], data["unrelated"]) == (4, 3, 1)
    assert data["recall@5"] == 1.0
    assert data["mrr@10"] == 1.0
    assert data["passage_hit"] == 1.0
    assert data["spurious_unrelated"] == 0.0
    assert data["spurious_injected"] == 0.0
    assert set(data["by_kind"]) == {"summary", "body", "unrelated"}
    assert data["by_kind"]["unrelated"]["recall@5"] is None
    assert data["worst_misses"] == []


def test_eval_lists_a_miss_among_the_worst(run: Run, eval_set: Path) -> None:
    with (eval_set / "queries.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "q5", "query": "what is my cat called", "lang": "en",
                                 "kind": "summary", "relevant": ["user_editor.md"],
                                 "answer": None}) + "\n")
    data = json.loads(run("eval", str(eval_set), "--json", directory=None).out)
    assert [m["id"] for m in data["worst_misses"]] == ["q5"]
    assert data["worst_misses"][0]["returned"] == ["user_pets.md"]
    assert data["recall@5"] == 0.75
    text = run("eval", str(eval_set), directory=None).out
    assert "worst misses (lexical):" in text and "q5" in text


def test_eval_on_a_folder_without_queries_exits_1_with_one_line(
    run: Run, tmp_path: Path
) -> None:
    folder = tmp_path / "not-a-set"
    (folder / "memory").mkdir(parents=True)
    err = assert_one_line_error(run("eval", str(folder), directory=None), 1)
    assert "queries.jsonl" in err


def test_eval_of_a_queries_file_runs_over_the_dir_folder(run: Run) -> None:
    sample = Path(__file__).resolve().parents[1] / "sample_memory"
    result = run("eval", str(sample / "eval" / "queries.jsonl"), "--json", directory=sample)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["queries"] == 50 and data["set"] == "queries.jsonl"
    assert "paraphrase" in data["by_kind"]


@pytest.mark.parametrize("scope", [["--tag", "monitoring"], ["--type", "reference"]])
def test_the_cursor_hint_keeps_type_and_tag_and_pasting_it_gives_the_next_page(
        run: Run, scope: list[str]) -> None:
    first = run("search", "grafana dashboard", "--limit", "1", *scope, "--json")
    hint = run("search", "grafana dashboard", "--limit", "1", *scope).err.splitlines()[-1]
    assert " ".join(scope) in hint
    second = run(*shlex.split(hint.removeprefix("more: sagemem ")), "--json")
    assert second.code == 0, second.err
    everything = [r["file"] for r in results_of(search_json(run, "grafana dashboard", *scope))]
    pages = [[r["file"] for r in results_of(json.loads(p.out))] for p in (first, second)]
    assert len(everything) >= 2 and pages == [everything[:1], everything[1:2]]
