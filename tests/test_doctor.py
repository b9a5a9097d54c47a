"""``sagemem doctor``: passes on a wired setup, names what is broken and how to fix it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from sagemem.claude_code.changes import apply_install
from sagemem.claude_code.doctor import Finding, diagnose, healthy
from sagemem.claude_code.install import Wiring, plan_install, targets
from sagemem.cli import main

# The hook as this test's Python runs it: the real `sagemem hook claude-code` command.
SAGEMEM = (sys.executable, "-m", "sagemem")


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    folder = tmp_path / "memory"
    assert main(["init", str(folder)]) == 0
    return folder


def wire(home: Path, memory: Path, command: tuple[str, ...] = SAGEMEM) -> None:
    where = targets("user", home=home, project=home)
    plan = plan_install(where, Wiring(command, {"SAGE_MEM_DIR": str(memory)}),
                        mcp=True, skill=True)
    apply_install(plan.changes, where.records)


def problems(findings: list[Finding]) -> list[str]:
    return [f"{f.topic}: {f.message}" for f in findings if f.level == "problem"]


def test_doctor_passes_on_a_wired_setup(tmp_path: Path, memory: Path) -> None:
    home = tmp_path / "home"
    wire(home, memory)
    assert main(["--dir", str(memory), "index"]) == 0
    findings = diagnose(home=home, project=home, env=dict(os.environ))
    assert healthy(findings), problems(findings)
    topics = {f.topic for f in findings if f.level == "ok"}
    assert {"hooks", "hook", "skill", "memory", "index"} <= topics


def test_doctor_reports_a_hook_pointing_at_a_missing_executable(
        tmp_path: Path, memory: Path) -> None:
    home = tmp_path / "home"
    wire(home, memory, command=(str(tmp_path / "gone" / "sagemem"),))
    findings = diagnose(home=home, project=home, env=dict(os.environ))
    [hook] = [f for f in findings if f.topic == "hook"]
    assert hook.level == "problem" and "exits 127" in hook.message
    assert hook.fix.startswith("sagemem install claude-code --user")  # the scope it is in


def test_doctor_reports_a_missing_memory_directory(tmp_path: Path, memory: Path) -> None:
    home = tmp_path / "home"
    wire(home, tmp_path / "nowhere")
    findings = diagnose(home=home, project=home, env=dict(os.environ), run_hook=False)
    [found] = [f for f in findings if f.topic == "memory"]
    assert found.level == "problem" and "does not exist" in found.message
    assert found.fix.startswith("sagemem init")


def test_doctor_reports_nothing_wired(tmp_path: Path) -> None:
    findings = diagnose(home=tmp_path, project=tmp_path, env={})
    assert not healthy(findings)
    assert any("install claude-code" in f.fix for f in findings if f.topic == "hooks")


def test_doctor_reports_an_unindexed_folder(tmp_path: Path, memory: Path) -> None:
    home = tmp_path / "home"
    wire(home, memory)
    findings = diagnose(home=home, project=home, env=dict(os.environ), run_hook=False)
    [index] = [f for f in findings if f.topic == "index"]
    assert index.level == "problem" and index.fix == "sagemem index"


def test_doctor_reports_malformed_settings(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{oops")
    findings = diagnose(home=tmp_path, project=tmp_path, env={})
    assert any("not valid JSON" in p for p in problems(findings))
    assert settings.read_text() == "{oops"



def test_malformed_settings_are_one_problem_not_also_unwired(tmp_path: Path) -> None:
    """install refuses such a file too, so "run install" would only fail again."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {}, // mine\n}')
    hooks = [f for f in diagnose(home=tmp_path, project=tmp_path, env={})
             if f.topic == "hooks"]
    assert [(f.level, f.fix) for f in hooks] == [("problem", "fix the file by hand")]
    assert "has a comment at line 1" in hooks[0].message
    assert "nothing was changed" not in hooks[0].message  # doctor changes nothing anyway

def test_doctor_reports_hooks_wired_twice(tmp_path: Path, memory: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    wire(home, memory)
    where = targets("project", home=home, project=project)
    apply_install(plan_install(where, Wiring(SAGEMEM, {"SAGE_MEM_DIR": str(memory)}),
                               mcp=False, skill=False).changes, where.records)
    findings = diagnose(home=home, project=project, env=dict(os.environ), run_hook=False)
    assert any("runs the hook twice" in p for p in problems(findings))


def test_doctor_command_exits_1_with_json_when_broken(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["doctor", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["version"] == 1 and data["ok"] is False
    assert {"level", "topic", "message", "fix"} <= set(data["findings"][0])


def test_doctor_command_prints_a_fix_under_each_problem(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["doctor"]) == 1
    lines = capsys.readouterr().out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("problem"))
    assert lines[first + 1].split()[:2] == ["fix:", "sagemem"]


# -- through the real CLI, in a subprocess with a throwaway HOME (issue 20, item 7) -------

def doctor(home: Path, **env: str) -> tuple[int, list[dict[str, str]]]:
    """``sagemem doctor --json`` as a user runs it, in their home."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("SAGE_MEM_")}
    done = subprocess.run([sys.executable, "-m", "sagemem", "doctor", "--json"], cwd=home,
                          env={**base, "HOME": str(home), **env}, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)["findings"]


def every_byte(*folders: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for f in folders for p in sorted(f.rglob("*")) if p.is_file()}


def test_doctor_changes_nothing_it_looks_at(tmp_path: Path, memory: Path) -> None:
    """Its probe runs the hook as a prompt would, which records what it injected: in a
    copy of the state directory, so the ledger and every other byte stay as they were."""
    home = tmp_path / "home"
    (memory / "project_doctor.md").write_text(
        "---\nname: Doctor prompt hook\ndescription: sagemem doctor checks the prompt hook "
        "answers\ntype: project\n---\n\nsagemem doctor runs the prompt hook to see it "
        "answers.\n")
    wire(home, memory)
    assert main(["--dir", str(memory), "index"]) == 0
    state = tmp_path / ".sage-mem"
    before = every_byte(state, memory, home)
    _, findings = doctor(home, SAGE_MEM_SEMANTIC="off")
    [hook] = [f for f in findings if f["topic"] == "hook"]
    assert hook["level"] == "ok", findings  # the probe did run, and answered
    assert every_byte(state, memory, home) == before


def test_doctor_on_a_never_indexed_folder_says_so_and_that_search_ranks_by_words(
        tmp_path: Path, memory: Path) -> None:
    home = tmp_path / "home"
    wire(home, memory)
    code, findings = doctor(home)
    by_topic = {f["topic"]: f for f in findings if f["topic"] in ("index", "embeddings")}
    assert code == 1
    assert by_topic["index"]["level"] == "problem" and "never built" in \
        by_topic["index"]["message"]
    assert by_topic["embeddings"]["level"] == "problem"
    assert "rank by words alone" in by_topic["embeddings"]["message"]
    assert by_topic["embeddings"]["fix"] == "sagemem index"
    assert not list((tmp_path / ".sage-mem").rglob("search-*.sqlite3"))  # still never built


def test_doctor_names_a_broken_sagemem_hook_with_the_edit_that_fixes_it(
        tmp_path: Path, memory: Path) -> None:
    """`hook claude-cod` exits 2, which blocks every prompt. Install cannot rewrite an
    entry it did not write, so doctor's fix is the edit itself — and after it, doctor
    is satisfied, while after install alone it is not."""
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    typo = {"type": "command", "command": f"{shlex.join(SAGEMEM)} hook claude-cod"}
    settings.write_text(json.dumps({"env": {"SAGE_MEM_DIR": str(memory)}, "hooks": {
        "UserPromptSubmit": [{"hooks": [typo]}]}}, indent=2))
    env = {"SAGE_MEM_SEMANTIC": "off"}
    assert main(["--dir", str(memory), "index"]) == 0
    code, findings = doctor(home, **env)
    [broken] = [f for f in findings if f["topic"] == "hook" and f["level"] == "problem"]
    assert code == 1 and "exits 2 — exit 2 blocks every prompt" in broken["message"]
    assert broken["fix"] == (f"delete hooks.UserPromptSubmit[0].hooks[0] from {settings}; "
                             "then sagemem install claude-code --user")
    installed = subprocess.run(
        [sys.executable, "-m", "sagemem", "install", "claude-code", "--yes"], cwd=home,
        env={**os.environ, "HOME": str(home), "SAGE_MEM_DIR": str(memory)},
        capture_output=True, text=True, timeout=60)
    assert installed.returncode == 0, installed.stderr
    code, findings = doctor(home, **env)
    assert code == 1 and any("hooks.UserPromptSubmit[0].hooks[0]" in f["fix"]
                             for f in findings if f["level"] == "problem")
    data = json.loads(settings.read_text())
    del data["hooks"]["UserPromptSubmit"][0]["hooks"][0]  # the edit doctor named
    settings.write_text(json.dumps(data, indent=2))
    code, findings = doctor(home, **env)
    assert code == 0, [f for f in findings if f["level"] == "problem"]


def test_a_hand_written_user_hook_beside_a_project_install_gets_one_fix_that_works(
        tmp_path: Path, memory: Path) -> None:
    """Found by review 4: with the project installed and a typo'd hook left by hand in
    the user's settings, doctor said "lacks …; fix: install --user", "both scopes …;
    fix: --undo --project (or --user)" and "delete …; then install --user": an install
    that makes the hook run twice, and an undo that leaves the hand-written entry. The
    one fix is deleting that entry, and after it doctor is satisfied."""
    home, project = tmp_path / "home", tmp_path / "project"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    project.mkdir()
    typo = {"type": "command", "command": f"{shlex.join(SAGEMEM)} hook claude-cod"}
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [typo]}]}}))
    base = {k: v for k, v in os.environ.items() if not k.startswith("SAGE_MEM_")}
    env = {**base, "HOME": str(home), "SAGE_MEM_DIR": str(memory), "SAGE_MEM_SEMANTIC": "off"}
    installed = subprocess.run(
        [sys.executable, "-m", "sagemem", "install", "claude-code", "--project", "--yes"],
        cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert installed.returncode == 0, installed.stderr
    assert main(["--dir", str(memory), "index"]) == 0

    def run_doctor() -> tuple[int, list[dict[str, str]]]:
        done = subprocess.run([sys.executable, "-m", "sagemem", "doctor", "--json"],
                              cwd=project, env=env, capture_output=True, text=True,
                              timeout=120)
        assert "Traceback" not in done.stderr, done.stderr
        return done.returncode, json.loads(done.stdout)["findings"]

    code, findings = run_doctor()
    fixes = [f["fix"] for f in findings if f["level"] == "problem"]
    assert code == 1 and fixes
    delete = f"delete hooks.UserPromptSubmit[0].hooks[0] from {settings}"
    assert all(fix == delete for fix in fixes), fixes
    data = json.loads(settings.read_text())
    del data["hooks"]["UserPromptSubmit"][0]["hooks"][0]  # the edit doctor named
    settings.write_text(json.dumps(data))
    code, findings = run_doctor()
    assert code == 0, [f for f in findings if f["level"] == "problem"]


@pytest.mark.parametrize("spelling", ["SAGE_MEM_STATE_DIR={state} {sagemem} hook claude-code",
                                      "env SAGE_MEM_STATE_DIR={state} {sagemem} hook claude-code",
                                      "{sagemem} --state-dir={state} hook claude-code"])
def test_a_hook_naming_its_own_state_dir_is_not_run_however_spelt(
        tmp_path: Path, memory: Path, spelling: str) -> None:
    """The probe's copy stands in for the state the settings name, not for one the
    command picks itself: running that one would write its ledger and index."""
    home, state = tmp_path / "home", tmp_path / "own-state"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    command = spelling.format(state=state, sagemem=shlex.join(SAGEMEM))
    settings.write_text(json.dumps({"env": {"SAGE_MEM_DIR": str(memory)}, "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}}))
    _, findings = doctor(home, SAGE_MEM_SEMANTIC="off")
    [hook] = [f for f in findings if f["topic"] == "hook"]
    assert hook["level"] == "note" and "names its own state directory" in hook["message"]
    assert not state.exists()


def test_a_matcher_that_leaves_out_a_gated_tool_is_a_problem_with_the_edit(
        tmp_path: Path, memory: Path) -> None:
    """Install's PreToolUse group edited to ``Write`` never gates an Edit, and a
    PostToolUse one without ``Read`` never records a read (so the gate allows every
    write): every entry still looks wired, and install, finding its hooks, changes
    nothing. Doctor names the matcher and the edit; after the edit it is satisfied."""
    home = tmp_path / "home"
    wire(home, memory)
    assert main(["--dir", str(memory), "index"]) == 0
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["PreToolUse"][0]["matcher"] = "Write"
    data["hooks"]["PostToolUse"][0]["matcher"] = "Write|Edit|MultiEdit"
    settings.write_text(json.dumps(data, indent=2))
    code, findings = doctor(home, SAGE_MEM_SEMANTIC="off")
    wrong = {f["message"]: f["fix"] for f in findings if f["level"] == "problem"}
    assert code == 1
    assert wrong == {
        f'{settings}: hooks.PreToolUse[0] matches "Write", so sagemem never runs on Edit, '
        "MultiEdit, Bash: the write gate (the Bash guard, for Bash) never checks those "
        "writes":
            f'set hooks.PreToolUse[0].matcher to "Write|Edit|MultiEdit|Bash" in {settings}',
        f'{settings}: hooks.PostToolUse[0] matches "Write|Edit|MultiEdit", so sagemem never '
        "runs on Read: what the model reads and writes there is never recorded, so the "
        "write gate lets every write through":
            f'set hooks.PostToolUse[0].matcher to "Read|Write|Edit|MultiEdit" in {settings}'}
    data["hooks"]["PreToolUse"][0]["matcher"] = "Write|Edit|MultiEdit|Bash"  # the edits named
    data["hooks"]["PostToolUse"][0]["matcher"] = "Read|Write|Edit|MultiEdit"
    settings.write_text(json.dumps(data, indent=2))
    code, findings = doctor(home, SAGE_MEM_SEMANTIC="off")
    assert code == 0, [f for f in findings if f["level"] == "problem"]


@pytest.mark.parametrize("matcher", [None, "", "*", "Read|Write|Edit|MultiEdit|Glob",
                                     "Read|Write|(Multi)?Edit", ".*"])
def test_a_matcher_that_covers_every_tool_passes(matcher: str | None) -> None:
    from sagemem.claude_code.doctor import _matches

    assert all(_matches(matcher, tool) for tool in ("Read", "Write", "Edit", "MultiEdit"))
    assert not _matches("Write|Edit", "MultiEdit") and not _matches("Edit(", "Edit")


def test_doctor_changes_nothing_in_the_global_layer(tmp_path: Path, memory: Path) -> None:
    """The prompt hook injects from the global layer too, and records that in the global
    layer's own state: the probe runs on a copy of that layer, as of the project's."""
    home = tmp_path / "home"
    global_dir = home / ".sage-mem" / "global"
    global_dir.mkdir(parents=True)
    (global_dir / "feedback_commits.md").write_text(
        "---\nname: Small commits\ndescription: Commit in small steps with imperative "
        "subjects.\ntype: feedback\nbaseline: true\n---\n\nCommit in small steps.\n")
    wire(home, memory)
    for folder in (memory, global_dir):
        assert main(["--dir", str(folder), "index"]) == 0
    before = every_byte(home, tmp_path / ".sage-mem")
    _, findings = doctor(home, SAGE_MEM_SEMANTIC="off")
    [hook] = [f for f in findings if f["topic"] == "hook"]
    assert hook["level"] == "ok", findings
    assert every_byte(home, tmp_path / ".sage-mem") == before


def test_disable_all_hooks_is_a_problem_though_every_entry_is_wired(
        tmp_path: Path, memory: Path) -> None:
    home = tmp_path / "home"
    wire(home, memory)
    assert main(["--dir", str(memory), "index"]) == 0
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}\n')
    done = subprocess.run([sys.executable, "-m", "sagemem", "doctor"], cwd=project,
                          env={**os.environ, "HOME": str(home), "SAGE_MEM_SEMANTIC": "off"},
                          capture_output=True, text=True, timeout=120)
    settings = project / ".claude" / "settings.local.json"
    assert done.returncode == 1, done.stdout
    assert f"problem  hooks: {settings} sets disableAllHooks: Claude Code runs no hook " \
           "at all, sagemem's included" in done.stdout
    assert f"fix: remove disableAllHooks from {settings}" in done.stdout


@pytest.mark.parametrize("server", [{"command": "/old/venv/bin/sagemem", "args": ["mcp"]},
                                    {"args": [1, None]}])
def test_an_mcp_server_that_cannot_start_is_a_problem_that_install_fixes(
        tmp_path: Path, memory: Path, server: dict[str, object]) -> None:
    """The server's sagemem moved with an old virtual environment: Claude Code shows it
    failed, and doctor said ok (an ``args`` of odd values was a traceback)."""
    home = tmp_path / "home"
    wire(home, memory)
    config = home / ".claude.json"
    data = json.loads(config.read_text())
    data["mcpServers"]["sagemem"] = server
    config.write_text(json.dumps(data))
    code, findings = doctor(home, SAGE_MEM_SEMANTIC="off")
    [mcp] = [f for f in findings if f["topic"] == "mcp" and f["level"] == "problem"]
    assert code == 1 and mcp["fix"] == "sagemem install claude-code --user"
    installed = subprocess.run(
        [sys.executable, "-m", "sagemem", "install", "claude-code", "--yes"], cwd=home,
        env={**os.environ, "HOME": str(home), "SAGE_MEM_DIR": str(memory)},
        capture_output=True, text=True, timeout=60)
    assert installed.returncode == 0, installed.stderr
    _, findings = doctor(home, SAGE_MEM_SEMANTIC="off")
    assert not [f for f in findings if f["topic"] == "mcp" and f["level"] == "problem"]


def test_a_global_layer_that_cannot_be_copied_is_off_for_the_probe(
        tmp_path: Path, memory: Path) -> None:
    """Its state directory a file: the hook runs without that layer, and so does the
    probe — doctor still reports everything else."""
    home = tmp_path / "home"
    (home / ".sage-mem" / "global").mkdir(parents=True)
    (home / ".sage-mem" / ".sage-mem").write_text("not a folder")
    wire(home, memory)
    _, findings = doctor(home, SAGE_MEM_SEMANTIC="off")
    [hook] = [f for f in findings if f["topic"] == "hook"]
    assert hook["level"] == "ok", findings


def test_a_server_entry_without_the_mcp_extra_is_a_problem(
        tmp_path: Path, memory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed with the extra, which has gone since: the entry starts a server that
    cannot start, which is not the note "no MCP server"."""
    import importlib.util

    home = tmp_path / "home"
    wire(home, memory)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mcp" else real(name, *a))
    findings = diagnose(home=home, project=home, env=dict(os.environ), run_hook=False)
    [extra] = [f for f in findings if f.topic == "mcp" and "extra" in f.message]
    assert (extra.level, extra.fix) == ("problem", "pip install 'sagemem[mcp]'")
    (home / ".claude.json").unlink()
    findings = diagnose(home=home, project=home, env=dict(os.environ), run_hook=False)
    [extra] = [f for f in findings if f.topic == "mcp" and "extra" in f.message]
    assert extra.level == "note"


def test_sagemem_hooks_in_settings_local_json_beside_an_install_run_twice(
        tmp_path: Path, memory: Path) -> None:
    """Claude Code runs a project's settings.local.json hooks too; doctor read only the
    two files install writes, so a hand-written hook there beside an install (every
    prompt injects twice) was ok."""
    home, project = tmp_path / "home", tmp_path / "project"
    wire(home, memory)
    assert main(["--dir", str(memory), "index"]) == 0
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir(parents=True)
    command = f"{shlex.join(SAGEMEM)} hook claude-code"
    local.write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": command}]}]}}))
    done = subprocess.run([sys.executable, "-m", "sagemem", "doctor", "--json"], cwd=project,
                          env={**os.environ, "HOME": str(home), "SAGE_MEM_SEMANTIC": "off"},
                          capture_output=True, text=True, timeout=120)
    wrong = [f for f in json.loads(done.stdout)["findings"] if f["level"] == "problem"]
    assert done.returncode == 1 and [f["fix"] for f in wrong] == [
        f"delete hooks.UserPromptSubmit[0].hooks[0] from {local}"]
    assert "every prompt runs the hook twice" in wrong[0]["message"]
    local.write_text("{}")  # the edit doctor named
    done = subprocess.run([sys.executable, "-m", "sagemem", "doctor"], cwd=project,
                          env={**os.environ, "HOME": str(home), "SAGE_MEM_SEMANTIC": "off"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout


def test_hooks_only_in_settings_local_json_are_not_told_to_install_again(
        tmp_path: Path) -> None:
    """They work; "run install" would make every prompt run the hook twice."""
    home, project = tmp_path / "home", tmp_path / "project"
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir(parents=True)
    local.write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "sagemem hook claude-code"}]}]}}))
    hooks = [f for f in diagnose(home=home, project=project, env={}, run_hook=False)
             if f.topic == "hooks"]
    assert [(f.level, f.fix) for f in hooks] == [
        ("note", f"delete hooks.UserPromptSubmit[0].hooks[0] from {local}; then sagemem "
                 "install claude-code")]
