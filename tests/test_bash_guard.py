"""The Bash guard: a shell command that plainly writes into the memory folder is denied
with Claude Code's PreToolUse answer; reads, paths elsewhere and commands the guard
cannot parse go through. Through the real hook command, as Claude Code runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_memory

from sagemem.claude_code.bash_guard import guard, in_folders

SESSION = "7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d"


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    directory.mkdir()
    write_memory(directory, "a.md", "---\nname: A\ndescription: a\ntype: user\n---\nA.\n")
    return directory


@pytest.fixture
def project(tmp_path: Path) -> Path:
    directory = tmp_path / "project"
    directory.mkdir()
    return directory


def run_hook(memory_dir: Path, state_dir: Path, stdin: bytes
             ) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGE_MEM_")}
    env["SAGE_MEM_GLOBAL_DIR"] = "off"
    return subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(memory_dir),
                           "--state-dir", str(state_dir), "hook", "claude-code"],
                          input=stdin, capture_output=True, env=env, timeout=60,
                          check=False)


def bash(memory_dir: Path, tmp_path: Path, cwd: Path, command: str) -> str:
    """The hook's answer to PreToolUse of Bash running ``command`` in ``cwd``."""
    payload = {"session_id": SESSION, "transcript_path": "/home/u/.claude/t.jsonl",
               "cwd": str(cwd), "permission_mode": "default",
               "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command, "description": "run it"},
               "tool_use_id": "toolu_01B"}
    done = run_hook(memory_dir, tmp_path / "state", json.dumps(payload).encode())
    assert (done.returncode, done.stderr) == (0, b"")
    return done.stdout.decode("utf-8")


def denial(output: str) -> str:
    specific = json.loads(output)["hookSpecificOutput"]
    assert (specific["hookEventName"], specific["permissionDecision"]) == ("PreToolUse",
                                                                           "deny")
    return str(specific["permissionDecisionReason"])


def test_redirecting_into_a_memory_file_is_denied(memory_dir: Path, tmp_path: Path,
                                                  project: Path) -> None:
    reason = denial(bash(memory_dir, tmp_path, project, f"echo x > {memory_dir}/a.md"))
    assert "Write tool" in reason and "memory folder" in reason


def test_reading_a_memory_file_is_allowed(memory_dir: Path, tmp_path: Path,
                                          project: Path) -> None:
    assert bash(memory_dir, tmp_path, project,
                f"cat {memory_dir}/a.md | grep A && head -1 {memory_dir}/a.md") == ""


def test_rm_after_cd_into_the_folder_is_denied_pointing_to_archive(
        memory_dir: Path, tmp_path: Path, project: Path) -> None:
    reason = denial(bash(memory_dir, tmp_path, project, f"cd {memory_dir} && rm a.md"))
    assert "sagemem archive NAME" in reason


def test_sed_in_place_on_a_memory_file_is_denied_pointing_to_edit(
        memory_dir: Path, tmp_path: Path, project: Path) -> None:
    reason = denial(bash(memory_dir, tmp_path, project, f"sed -i s/a/b/ {memory_dir}/a.md"))
    assert "Edit tool" in reason


def test_a_write_outside_the_folder_is_allowed(memory_dir: Path, tmp_path: Path,
                                               project: Path) -> None:
    assert bash(memory_dir, tmp_path, project,
                f"echo x > notes.md; cp {memory_dir}/a.md /tmp/a.md; rm -f build.log") == ""


def test_an_unparseable_command_is_allowed_and_logged(memory_dir: Path, tmp_path: Path,
                                                      project: Path) -> None:
    assert bash(memory_dir, tmp_path, project, f"echo 'x > {memory_dir}/a.md") == ""
    assert "not parsed" in (tmp_path / "state" / "logs" / "hook.log").read_text("utf-8")


@pytest.mark.parametrize("stdin", [
    b"{", b"null",
    json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": {"command": ["rm", "x"]}}).encode(),
    json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": None}).encode(),
])
def test_broken_bash_payloads_print_nothing_and_exit_zero(memory_dir: Path, tmp_path: Path,
                                                          stdin: bytes) -> None:
    done = run_hook(memory_dir, tmp_path / "state", stdin)
    assert (done.returncode, done.stdout) == (0, b"")


@pytest.mark.parametrize("command", [
    "echo x >> {m}/a.md", "printf x &> {m}/a.md", "ls 2> {m}/err.md",
    "echo x | tee -a {m}/a.md", "perl -pi -e s/a/b/ {m}/a.md", "mv {m}/a.md /tmp/",
    "cp /tmp/x.md {m}/", "touch {m}/new.md", "truncate -s 0 {m}/a.md",
    "ln -s /etc/passwd {m}/p.md", "install -m 644 x {m}/x.md", "rsync -a x/ {m}",
    "dd if=/dev/zero of={m}/a.md", "rm -rf {m}", "cd {m}; echo x > a.md",
    "sudo -n rm {m}/a.md", "FOO=1 rm {m}/a.md", "cat > {m}/a.md <<'EOF'\nIt's x\nEOF",
    "cd {m}\nrm *.md", "echo x >{m}/a.md",
])
def test_clear_writes_into_the_folder_are_denied(memory_dir: Path, command: str) -> None:
    answer = guard(command.format(m=memory_dir), "/", in_folders(memory_dir, None))
    assert answer.output and '"deny"' in answer.output


@pytest.mark.parametrize("command", [
    "grep -r x {m}", "less {m}/a.md", "ls {m} 2>&1 | head", "cp {m}/a.md /tmp/b.md",
    "echo x > /dev/null", "cd - && rm a.md", "wc -l < {m}/a.md", "git -C {m} log",
])
def test_reads_and_writes_elsewhere_are_allowed(memory_dir: Path, command: str) -> None:
    assert guard(command.format(m=memory_dir), "/", in_folders(memory_dir, None)).output == ""


def test_home_spellings_are_expanded(memory_dir: Path, monkeypatch: pytest.MonkeyPatch
                                     ) -> None:
    monkeypatch.setenv("HOME", str(memory_dir.parent))
    inside = in_folders(memory_dir, None)
    for command in ("rm ~/memory/a.md", "rm $HOME/memory/a.md", "rm ${HOME}/memory/a.md"):
        assert guard(command, "/", inside).output, command


def test_a_command_over_the_bound_is_allowed_and_logged(memory_dir: Path) -> None:
    answer = guard("rm a.md; " * 10_000, str(memory_dir), in_folders(memory_dir, None))
    assert answer.output == "" and "not parsed" in answer.log[0]


@pytest.mark.parametrize("command", [
    'grep ">" {m}/a.md', "grep -- '->' {m}/a.md", 'echo "rm {m}/a.md"',
    "git commit -m 'x > {m}/a.md'",
])
def test_quoted_operators_and_words_are_not_writes(memory_dir: Path, command: str) -> None:
    assert guard(command.format(m=memory_dir), "/", in_folders(memory_dir, None)).output == ""


def test_quoted_paths_are_unquoted(memory_dir: Path) -> None:
    answer = guard(f"echo x > '{memory_dir}/a b.md'", "/", in_folders(memory_dir, None))
    assert answer.output


@pytest.mark.parametrize("command", [
    "ls  # list first\nrm {m}/a.md", "git status  # check\nmv {m}/a.md /tmp/",
    "curl -s https://x.org/p#sec -o /tmp/p; sed -i s/a/b/ {m}/a.md",
    "echo C# notes > {m}/a.md", "sed -i s/a#/b/ {m}/a.md",
])
def test_a_comment_hides_no_write_after_it(memory_dir: Path, command: str) -> None:
    answer = guard(command.format(m=memory_dir), "/", in_folders(memory_dir, None))
    assert answer.output and '"deny"' in answer.output


def test_words_after_a_comment_mark_are_not_commands(memory_dir: Path) -> None:
    assert guard(f"ls  # > {memory_dir}/a.md", "/", in_folders(memory_dir, None)).output == ""


@pytest.mark.parametrize("command", [
    "curl -s https://x -o {m}/a.md", "curl --output={m}/a.md https://x",
    "wget -O {m}/a.md https://x",
])
def test_a_download_into_the_folder_is_denied(memory_dir: Path, command: str) -> None:
    assert guard(command.format(m=memory_dir), "/", in_folders(memory_dir, None)).output


def test_after_popd_the_directory_is_unknown_and_nothing_is_denied(memory_dir: Path) -> None:
    command = f"pushd {memory_dir}; ls; popd; rm a.md"
    assert guard(command, "/tmp", in_folders(memory_dir, None)).output == ""
