"""The global layer beside the project folder (``sagemem/layers/``): search and injection
read both and say which layer each memory came from, a project memory shadows a global
one of the same title, ``--global`` writes land in the global folder and its own state."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest
from cli_run import Result

from sagemem.claude_code.hook import claude_code
from sagemem.cli import main
from sagemem.config import load_settings
from sagemem.files.state import default_state_dir
from sagemem.inject.block import inject
from sagemem.layers import Layers
from sagemem.layers.merge import merged
from sagemem.search.results import Coverage, SearchResponse, SearchResult
from sagemem.store import MemoryStore

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"
QUESTIONS = ("who approves deploys", "how do we run database migrations",
             "what language should replies be in", "which editor")


def memory_text(name: str, description: str, body: str, type_: str = "user") -> str:
    return (f"---\nname: {name}\ndescription: {description}\nmetadata:\n  type: {type_}\n"
            f"---\n{body}\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "work" / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("# Memory index\n\n")
    (folder / "project_deploys.md").write_text(memory_text(
        "Deploy approvals", "Deploys of ledgerly are approved by Dana in #ops.",
        "Every production deploy of ledgerly needs Dana's approval in #ops.", "project"))
    return folder


@pytest.fixture
def global_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home" / "global"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("# Memory index\n\n")
    (folder / "user_language.md").write_text(memory_text(
        "Reply language", "The user wants replies in English, code comments too.",
        "Reply in English, and write code comments in English."))
    monkeypatch.setenv("SAGE_MEM_GLOBAL_DIR", str(folder))
    return folder


def run(capsys: pytest.CaptureFixture[str], folder: Path, *args: str) -> Result:
    code = main(["--dir", str(folder), *args])
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def layers_of(folder: Path) -> Layers:
    return Layers.from_settings(load_settings(memory_dir=folder))


def test_search_reads_both_layers_and_names_each_results_layer(
        project: Path, global_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with layers_of(project) as layers:
        found = layers.search("deploy approval and reply language")
    assert {(r.file, r.layer) for r in found.results} == {
        ("project_deploys.md", "project"), ("user_language.md", "global")}
    text = run(capsys, project, "search", "what language should replies be in")
    assert text.code == 0 and "[global] user_language.md:" in text.out
    data = json.loads(run(capsys, project, "search", "reply language", "--json").out)
    assert [(r["file"], r["layer"]) for r in data["results"]] == [
        ("user_language.md", "global")]


def test_a_project_memory_shadows_a_global_one_of_the_same_title(
        project: Path, global_dir: Path) -> None:
    (project / "user_language_here.md").write_text(memory_text(
        "REPLY LANGUAGE", "In this project replies are in Chinese.", "Reply in Chinese."))
    with layers_of(project) as layers:
        found = layers.search("reply language English Chinese")
    assert [(r.file, r.layer) for r in found.results] == [("user_language_here.md", "project")]


def test_a_global_memory_of_a_project_file_name_is_shadowed_even_unasked(
        project: Path, global_dir: Path) -> None:
    (project / "user_language.md").write_text(memory_text(
        "Tooling", "The linters of this repository.", "ruff and mypy, strict."))
    with layers_of(project) as layers:
        found = layers.search("reply in English")
    assert found.results == ()  # the project overrides that habit, asked or not


def test_merge_interleaves_by_each_layers_own_scale_project_first_on_a_tie() -> None:
    def response(*scores: tuple[str, float]) -> SearchResponse:
        return SearchResponse("q", tuple(result(f, s) for f, s in scores),
                              Coverage(3, len(scores), 1, None))

    project = response(("p1.md", 20.0), ("p2.md", 5.0))  # raw BM25: its best is 20
    global_ = response(("g1.md", 2.0), ("g2.md", 1.5))  # a small folder's best is 2
    both = merged(project, global_, frozenset(), offset=0, limit=10, paged_as="", cap=10)
    assert [(r.file, r.layer, r.score) for r in both.results] == [
        ("p1.md", "project", 1.0), ("g1.md", "global", 1.0), ("g2.md", "global", 0.75),
        ("p2.md", "project", 0.25)]
    assert both.coverage == Coverage(6, 4, 2, None)
    page = merged(project, global_, frozenset(), offset=0, limit=3, paged_as="", cap=10)
    assert len(page.results) == 3 and page.coverage.next_cursor is not None


def result(file: str, score: float) -> SearchResult:
    return SearchResult(file, None, "", "user", score, 1, 1, "", False, None, None)


def test_inject_reads_both_layers_and_names_the_global_ones(
        project: Path, global_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = load_settings(memory_dir=project)
    with Layers.from_settings(settings) as layers:
        injection = inject(layers, "who approves deploys, and in which language do I reply",
                           "s1", settings)
    assert {(i.file, i.layer) for i in injection.items} == {
        ("project_deploys.md", "project"), ("user_language.md", "global")}
    assert "### [global] user_language.md:" in injection.text
    assert "### project_deploys.md:" in injection.text
    block = run(capsys, project, "inject", "what language should replies be in")
    assert block.code == 0 and "### [global] user_language.md:" in block.out


def test_global_baselines_join_the_projects_and_share_max_baseline(
        project: Path, global_dir: Path) -> None:
    (global_dir / "user_style.md").write_text(
        "---\nname: Style\ndescription: Short answers.\nbaseline: true\nmetadata:\n"
        "  type: user\n---\nKeep answers short.\n")
    settings = load_settings(memory_dir=project)
    with Layers.from_settings(settings) as layers:
        injection = inject(layers, "", "s1", settings)
    assert [(i.file, i.reason, i.layer) for i in injection.items] == [
        ("user_style.md", "baseline", "global")]


def test_the_hook_injects_the_global_layer_too(project: Path, global_dir: Path) -> None:
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "h1",
                          "prompt": "what language should replies be in"}).encode()
    output = claude_code(payload, memory_dir=project)
    assert "### [global] user_language.md:" in json.loads(output)[
        "hookSpecificOutput"]["additionalContext"]


def test_global_writes_land_in_the_global_folder_and_its_own_state(
        project: Path, global_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    made = run(capsys, project, "new", "--global", "--type", "feedback", "--name", "Tabs",
               "--description", "Indent with tabs everywhere.")
    assert made.code == 0, made
    assert (global_dir / "feedback_tabs.md").exists()
    assert not (project / "feedback_tabs.md").exists()
    stale = run(capsys, project, "write", "--global", "feedback_tabs", "--from",
                str(global_dir / "user_language.md"), "--expect", "0" * 12)
    assert stale.code != 0
    global_state, project_state = default_state_dir(global_dir), default_state_dir(project)
    assert list((global_state / "conflicts").glob("*.json"))
    assert not (project_state / "conflicts").exists()
    assert run(capsys, project, "set", "--global", "feedback_tabs", "tags=[style]").code == 0
    archived = run(capsys, project, "archive", "--global", "feedback_tabs",
                   "--reason", "moved on", "--yes")
    assert archived.code == 0, archived
    assert (global_dir / "archive" / "feedback_tabs.md").exists()
    assert (global_state / "archive.jsonl").exists()
    assert not (project_state / "archive.jsonl").exists()
    assert global_state != project_state


def test_list_prints_the_global_layer_after_the_projects(
        project: Path, global_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = run(capsys, project, "list")
    head, _, tail = listed.out.partition(f"[global] {global_dir}")
    assert "project_deploys.md" in head and "user_language.md" in tail
    data = json.loads(run(capsys, project, "list", "--json").out)
    assert [(m["file"], m["layer"]) for m in data["memories"]] == [
        ("project_deploys.md", "project"), ("user_language.md", "global")]


def test_global_flag_with_no_global_layer_is_a_one_line_error_saying_how_to_make_one(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SAGE_MEM_GLOBAL_DIR", str(tmp_path / "nowhere"))
    refused = run(capsys, project, "new", "--global", "--type", "user", "--name", "x",
                  "--description", "y")
    assert refused.code == 1 and refused.out == ""
    error = [line for line in refused.err.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and f"mkdir -p {tmp_path / 'nowhere'}" in error[0]
    assert not (tmp_path / "nowhere").exists()


def test_a_missing_global_dir_named_explicitly_is_a_notice_not_a_crash(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SAGE_MEM_GLOBAL_DIR", str(tmp_path / "typo"))
    found = run(capsys, project, "search", "who approves deploys")
    assert found.code == 0 and "project_deploys.md" in found.out
    assert f"notice: the global layer is off: {tmp_path / 'typo'} does not exist" in found.err


@pytest.mark.parametrize("kind", ["file", "project"])
def test_a_global_dir_that_a_new_folder_cannot_fix_gets_no_mkdir_advice(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], kind: str) -> None:
    target = project if kind == "project" else tmp_path / "global.md"
    if kind == "file":
        target.write_text("a file, not a folder\n", encoding="utf-8")
    monkeypatch.setenv("SAGE_MEM_GLOBAL_DIR", str(target))
    refused = run(capsys, project, "new", "--global", "--type", "user", "--name", "x",
                  "--description", "y")
    error = [line for line in refused.err.splitlines() if line.startswith("error:")]
    assert refused.code == 1 and len(error) == 1
    said = "is not a folder" if kind == "file" else "is the project folder itself"
    assert f"no global layer: {target} {said}" in error[0]
    assert "mkdir -p" not in refused.err
    assert "set SAGE_MEM_GLOBAL_DIR to a folder of its own, or to off" in error[0]


def test_the_global_dir_equal_to_the_project_dir_is_off(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGE_MEM_GLOBAL_DIR", str(project))
    with layers_of(project) as layers:
        assert layers.global_ is None and layers.notices == ()
        found = layers.search("who approves deploys")
    assert [(r.file, r.layer) for r in found.results] == [("project_deploys.md", "project")]


@pytest.mark.parametrize("setting", ["off", "", "missing"])
def test_with_no_global_layer_results_are_those_of_the_project_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        setting: str) -> None:
    folder = tmp_path / "sample"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("eval"))
    with MemoryStore(folder) as store:
        before = [asdict(store.search(q)) for q in QUESTIONS]
    cli_before = [run(capsys, folder, "search", q).out for q in QUESTIONS]
    monkeypatch.setenv("SAGE_MEM_GLOBAL_DIR", str(tmp_path / "absent") if setting == "missing"
                       else setting)
    with layers_of(folder) as layers:
        assert [asdict(layers.search(q)) for q in QUESTIONS] == before
    assert [run(capsys, folder, "search", q).out for q in QUESTIONS] == cli_before
    blocks = [run(capsys, folder, "inject", q, "--session", f"s{i}").out
              for i, q in enumerate(QUESTIONS)]
    monkeypatch.setenv("SAGE_MEM_GLOBAL_DIR", "off")
    shutil.rmtree(default_state_dir(folder) / "sessions")
    assert [run(capsys, folder, "inject", q, "--session", f"s{i}").out
            for i, q in enumerate(QUESTIONS)] == blocks


def test_config_shows_the_global_dir_and_where_it_came_from(
        project: Path, global_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = json.loads(run(capsys, project, "config", "--json").out)["settings"]
    assert rows["global_dir"] == {"value": str(global_dir), "source": "env",
                                  "env": "SAGE_MEM_GLOBAL_DIR"}


def test_a_global_snapshot_is_kept_in_the_global_layers_state(
        project: Path, global_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, project, "snapshot", "create", "--global").code == 0
    assert list((default_state_dir(global_dir) / "snapshots").iterdir())
    assert not (default_state_dir(project) / "snapshots").exists()
    listed = run(capsys, project, "snapshot", "list", "--global", "--json")
    assert listed.code == 0 and len(json.loads(listed.out)) == 1


def test_log_and_revert_global_read_and_undo_the_global_layers_changes(
        project: Path, global_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (global_dir / "user_language.md").read_bytes()
    assert run(capsys, project, "set", "--global", "user_language", "tags=[style]").code == 0
    logged = run(capsys, project, "log", "--global", "--json")
    assert [e["op"] for e in json.loads(logged.out)["entries"]] == ["set"]
    assert json.loads(run(capsys, project, "log", "--json").out)["entries"] == []
    reverted = run(capsys, project, "revert", "--global", "user_language", "--yes")
    assert reverted.code == 0, reverted
    assert (global_dir / "user_language.md").read_bytes() == before


def test_remember_global_saves_into_the_global_layer_and_updates_it_there(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from sagemem.cli import main

    project, global_dir = tmp_path / "project", tmp_path / "global"
    project.mkdir()
    global_dir.mkdir()
    args = ["--dir", str(project), "remember", "--global", "--type", "user", "--title",
            "Reply language", "--body"]
    monkeypatch.setenv("SAGE_MEM_GLOBAL_DIR", str(global_dir))
    assert main([*args, "Reply in English."]) == 0
    assert main([*args, "Reply in Chinese."]) == 0
    capsys.readouterr()
    saved = list(global_dir.glob("user_*.md"))
    assert len(saved) == 1 and "Reply in Chinese." in saved[0].read_text()
    assert not list(project.glob("user_*.md"))


def test_remember_in_the_project_never_updates_a_global_memory_of_that_title(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from sagemem.cli import main

    project, global_dir = tmp_path / "project", tmp_path / "global"
    project.mkdir()
    global_dir.mkdir()
    monkeypatch.setenv("SAGE_MEM_GLOBAL_DIR", str(global_dir))
    base = ["--dir", str(project), "remember", "--type", "user", "--title", "Reply language",
            "--body"]
    assert main([base[0], base[1], "remember", "--global", *base[3:], "English."]) == 0
    before = {p.name: p.read_bytes() for p in global_dir.glob("*.md")}
    assert main([*base, "Chinese, in this project."]) == 0  # same title, another layer
    capsys.readouterr()
    assert {p.name: p.read_bytes() for p in global_dir.glob("*.md")} == before
    created = list(project.glob("user_*.md"))
    assert len(created) == 1 and "Chinese" in created[0].read_text()


def test_open_global_makes_a_missing_global_folder_and_opens_its_store(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "home" / ".sage-mem" / "global"
    monkeypatch.setenv("SAGE_MEM_GLOBAL_DIR", str(folder))
    settings = load_settings(memory_dir=project)
    with Layers.from_settings(settings) as layers:
        assert layers.global_ is None and not folder.exists()
        store = layers.open_global(settings)
        assert folder.is_dir() and store.directory == folder
        assert [layer for layer, _ in layers.stores()] == ["project", "global"]
        assert layers.open_global(settings) is store
        assert store.state_dir == default_state_dir(folder) != layers.project.state_dir


@pytest.mark.parametrize("value", ["off", "a_file", "project"])
def test_open_global_refuses_a_layer_a_new_folder_cannot_fix(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    from sagemem.errors import NoGlobalLayer

    a_file = tmp_path / "not_a_folder"
    a_file.write_text("x")
    named = {"off": "off", "a_file": str(a_file), "project": str(project)}[value]
    monkeypatch.setenv("SAGE_MEM_GLOBAL_DIR", named)
    settings = load_settings(memory_dir=project)
    with Layers.from_settings(settings) as layers, pytest.raises(NoGlobalLayer):
        layers.open_global(settings)
    assert a_file.read_text() == "x" and layers.global_ is None
