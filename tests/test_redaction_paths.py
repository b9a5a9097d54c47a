"""No write path leaves a planted secret anywhere under the memory or the state directory:
not in the memory, MEMORY.md, a conflict record of a refused write, the archive log, the
search index, nor a kept copy of an edit that could not be saved."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemem.errors import StaleRevision, WriteFailed
from sagemem.history.archive import archive_memory
from sagemem.memory_tool import MemoryToolHandler
from sagemem.store import MemoryStore
from sagemem.writes.conflicts import contradict

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"


def _random_looking(body: str) -> bool:
    """As a real token's body is, in every prefix a strategy below takes (``b[:16]``…):
    a digit and 10+ distinct characters — else it is not a secret the redactor claims."""
    return len(set(body[:16])) >= 12 and any(c.isdigit() for c in body[:16])


BODY = st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789",
               min_size=36, max_size=36).filter(_random_looking)
SECRETS = st.one_of(
    BODY.map(lambda b: "ghp_" + b),
    BODY.map(lambda b: "sk-proj-" + b),
    BODY.map(lambda b: "glpat-" + b[:24]),
    BODY.map(lambda b: "xoxb-1234567890-" + b[:20]),
    BODY.map(lambda b: "AKIA" + "".join(c for c in b.upper() if c.isalnum())[:16]),
)
Marks = dict[str, int]
"""What a path must have left: a glob under the temporary folder (``memory/…``,
``state/…``) and how many ``<REDACTED:…>`` marks its files hold at least — a path that
wrote nothing (a refused edit, a ``similar`` answer) cannot pass for one that redacted."""
Write = Callable[[MemoryStore, str], Marks]


def _write(store: MemoryStore, secret: str) -> Marks:
    memory = store.get("user_pets.md")
    store.write(memory.file, memory.text + f"\nThe token is {secret}.\n", memory.revision)
    return {"memory/user_pets.md": 1}


def _refused_write(store: MemoryStore, secret: str) -> Marks:
    memory = store.get("user_pets.md")
    with pytest.raises(StaleRevision):
        store.write(memory.file, f"mine, with {secret}\n", "0" * 64,
                    reason=f"because {secret}")
    return {"state/conflicts/*.json": 2}  # the refused text and its reason


def _reasons(store: MemoryStore, secret: str) -> Marks:
    memory = store.get("user_pets.md")
    store.write(memory.file, memory.text + "\nMore.\n", memory.revision,
                reason=f"rotated {secret}")
    from sagemem.history.revisions import revert

    revert(store, "user_pets.md", reason=f"back, {secret}")
    return {"state/journal.jsonl": 2}


def _set(store: MemoryStore, secret: str) -> Marks:
    store.write("user_pets.md", fields={"description": f"key {secret}", "tags": [secret]})
    return {"memory/user_pets.md": 2}


def _new(store: MemoryStore, secret: str) -> Marks:
    store.new(type="reference", name=f"deploy {secret}", description=f"uses {secret}",
              tags=[secret], aliases=[f"a {secret}"], body=f"export TOKEN={secret}\n")
    return {"memory/reference_deploy_*.md": 5, "memory/MEMORY.md": 1}


def _archive(store: MemoryStore, secret: str) -> Marks:
    archive_memory(store, "user_pets.md", reason=f"rotated {secret}")
    return {"state/archive.jsonl": 1}


def _contradict(store: MemoryStore, secret: str) -> Marks:
    contradict(store, "user_pets.md", "user_background.md", note=f"see {secret}")
    return {"state/conflicts/*.json": 1}


def _memory_tool(store: MemoryStore, secret: str) -> Marks:
    tool = MemoryToolHandler(store)
    pets = store.get("user_pets.md").text
    answers = [
        tool.handle({"command": "create", "path": "/memories/reference_ci.md",
                     "file_text": f"CI token: {secret}\n"}),
        # a line of the body, which occurs once (``---`` occurs twice: nothing written)
        tool.handle({"command": "str_replace", "path": "/memories/user_pets.md",
                     "old_str": "不喜欢被抱。", "new_str": f"不喜欢被抱。note: {secret}"}),
        # after the last line: a line inside the frontmatter is refused (memory_tool/view.py)
        tool.handle({"command": "insert", "path": "/memories/user_pets.md",
                     "insert_line": len(pets.splitlines()), "insert_text": f"token {secret}\n"})]
    assert all(secret not in answer for answer in answers)
    assert store.get("user_pets.md").text != pets, answers
    return {"memory/reference_ci.md": 1, "memory/user_pets.md": 2}


def _remember(store: MemoryStore, secret: str) -> Marks:
    created = store.remember(type="reference", title=f"deploy key {secret}",
                             body=f"uses {secret}", description=f"the {secret} one",
                             tags=[secret])
    # the exact title of user_pets.md: an update (a title only similar writes nothing)
    updated = store.remember(type="user", title="家里的猫", body=f"cats, and {secret}")
    assert (created.action, updated.action) == ("created", "updated")
    return {"memory/reference_deploy_key_*.md": 4, "memory/user_pets.md": 1}


PATHS: dict[str, Write] = {
    "remember": _remember, "reasons, revert": _reasons,
    "write": _write, "refused write": _refused_write, "set": _set, "new": _new,
    "archive": _archive, "contradict": _contradict, "memory tool": _memory_tool,
}


def _sample(root: Path) -> tuple[Path, Path]:
    """A copy of ``sample_memory/`` at ``root/memory``, and the state folder beside it."""
    folder = root / "memory"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("eval"))
    return folder, root / "state"


def _everything_under(*folders: Path) -> bytes:
    return b"\n".join(p.read_bytes() for folder in folders for p in folder.rglob("*")
                      if p.is_file() and not p.is_symlink())


def _marks(root: Path, pattern: str) -> int:
    return sum(p.read_bytes().count(b"<REDACTED:") for p in root.glob(pattern))


@pytest.mark.parametrize("path", sorted(PATHS))
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secret=SECRETS)
def test_no_write_path_leaves_a_planted_secret_on_disk(path: str, secret: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder, state = _sample(Path(tmp))
        with MemoryStore(folder, state) as store:
            wrote = PATHS[path](store, secret)
            store.search(f"token {secret}")  # the index holds whatever the files hold
        assert secret.encode() not in _everything_under(folder, state), path
        for pattern, least in wrote.items():  # it wrote, and redacted what it wrote
            assert _marks(Path(tmp), pattern) >= least, (path, pattern)


def test_a_failed_edit_keeps_its_text_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from cli_run import store_runner

    folder, state = _sample(tmp_path)
    secret = "ghp_8fK2mQ9xL4vB7nR3tW6zY1cH5jD0sA9eG2kP"
    editor = tmp_path / "editor.sh"
    editor.write_text(f"#!/bin/sh\nprintf 'pushed with {secret}\\n' >> \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))

    def full_disk(self: MemoryStore, name: str, *args: object, **kwargs: object) -> None:
        raise WriteFailed(folder / name, "No space left on device")

    monkeypatch.setattr(MemoryStore, "write", full_disk)
    result = store_runner(capsys, MemoryStore(folder, state))("edit", "user_pets.md")
    assert result.code == 1 and "kept in" in result.err
    kept = [p for p in state.rglob("*") if p.is_file() and "user_pets" in p.name]
    assert kept and all(secret not in p.read_text() for p in kept)
    assert "<REDACTED:github_token>" in kept[0].read_text()
    assert secret not in result.out + result.err


def test_the_cli_says_what_it_redacted_and_never_prints_the_secret(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cli_run import store_runner

    folder, state = _sample(tmp_path)
    run = store_runner(capsys, MemoryStore(folder, state))
    secret = "ghp_8fK2mQ9xL4vB7nR3tW6zY1cH5jD0sA9eG2kP"
    result = run("new", "--type", "reference", "--name", "docs deploy", "--description",
                 "How the docs site is pushed", "--body", f"GH_TOKEN={secret} make publish",
                 "--json")
    assert result.code == 0
    data = json.loads(result.out)
    assert secret not in result.out + result.err
    assert "1 secret redacted before writing (github_token" in data["warnings"][0]
    assert "<REDACTED:github_token>" in (folder / data["file"]).read_text()


def test_a_question_with_a_pasted_token_is_kept_redacted_in_the_session(tmp_path: Path) -> None:
    from sagemem.config import load_settings
    from sagemem.inject.block import inject

    folder, state = _sample(tmp_path)
    secret = "ghp_8fK2mQ9xL4vB7nR3tW6zY1cH5jD0sA9eG2kP"
    with MemoryStore(folder, state) as store:
        inject(store, f"why does git push with {secret} fail for my cat repo", "s1",
               load_settings({}, folder, state))
    assert (state / "sessions").is_dir()
    assert secret.encode() not in _everything_under(folder, state)


def test_set_of_a_field_named_for_a_secret_keeps_no_value_on_disk(tmp_path: Path) -> None:
    folder, state = _sample(tmp_path)
    with MemoryStore(folder, state) as store:
        saved = store.write("user_pets.md", fields={"password": "hunter2x"})
    assert "password: <REDACTED:password>" in saved.text
    assert b"hunter2x" not in _everything_under(folder, state)


@pytest.mark.parametrize("file", ["reference_ghp_8fK2mQ9xL4vB7nR3tW6zY1cH5jD0sA9eG2kP.md",
                                  "reference_sk_live_51Hx8Qm3Lp7Vb2Nk9Rt4Wy6Cj.md"])
def test_a_file_name_holding_a_secret_is_refused_and_never_shown(tmp_path: Path,
                                                                  file: str) -> None:
    from sagemem.errors import InvalidName

    folder, state = _sample(tmp_path)
    secret = file[len("reference_"):-3]
    with MemoryStore(folder, state) as store:
        with pytest.raises(InvalidName) as new:
            store.new(type="reference", name="ci", description="d", file=file)
        with pytest.raises(InvalidName) as write:
            store.write(file, "body\n", None)
    assert secret not in str(new.value) + str(write.value)
    assert "holds a secret" in str(new.value)
    assert secret.encode() not in _everything_under(folder, state)
    assert all(secret not in p.name for p in folder.rglob("*"))


def test_a_rename_to_a_file_name_holding_a_secret_is_refused(tmp_path: Path) -> None:
    from sagemem.errors import InvalidName
    from sagemem.history.rename import rename_memory

    folder, state = _sample(tmp_path)
    secret = "ghp_8fK2mQ9xL4vB7nR3tW6zY1cH5jD0sA9eG2kP"
    with MemoryStore(folder, state) as store, pytest.raises(InvalidName):
        rename_memory(store, "user_pets.md", f"user_{secret}.md")
    assert (folder / "user_pets.md").exists()
    assert secret.encode() not in _everything_under(folder, state)


# -- issue 20: through the CLI, as an agent's shell reaches it


def _sagemem(folder: Path, state: Path, *args: str,
             input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SAGE_MEM_SEMANTIC": "off", "SAGE_MEM_GLOBAL_DIR": "off"}
    return subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(folder),
                           "--state-dir", str(state), *args], capture_output=True,
                          text=True, check=False, timeout=120, env=env, input=input_text)


def test_a_cli_new_with_the_secrets_of_issue_20_leaves_none_on_disk(tmp_path: Path) -> None:
    from test_redact import ISSUE_20

    folder, state = _sample(tmp_path)
    body = "\n".join(text for _, text, _ in ISSUE_20) + "\n"
    result = _sagemem(folder, state, "new", "--type", "reference", "--name", "ops notes",
                      "--description", "How we reach the services", "--body", body)
    assert result.returncode == 0, result.stderr
    written = (folder / "reference_ops_notes.md").read_text(encoding="utf-8")
    assert written.count("<REDACTED:") == len(ISSUE_20)
    disk = _everything_under(folder, state)
    assert [s for _, _, s in ISSUE_20 if s.encode() in disk] == []
    assert all(s not in result.stdout + result.stderr for _, _, s in ISSUE_20)


def test_a_remember_title_holding_a_chinese_password_stays_out_of_names_and_index(
        tmp_path: Path) -> None:
    folder, state = _sample(tmp_path)
    secret = "Xy7#kq9!pL"
    result = _sagemem(folder, state, "remember", "--type", "reference", "--title",
                      f"数据库密码：{secret}", "--body", "生产库，只读账号", "--json")
    assert result.returncode == 0, result.stderr
    created = json.loads(result.stdout)["file"]
    assert (folder / created).is_file() and "密码" in created
    assert "<REDACTED:password>" in (folder / "MEMORY.md").read_text(encoding="utf-8")
    assert all(secret not in p.name for p in [*folder.rglob("*"), *state.rglob("*")])
    assert secret.encode() not in _everything_under(folder, state)


@pytest.mark.parametrize("file", ["reference_hf_jnJwijWsYgkJtDnfhjbNjGWwtxVbqTbCau.md",
                                  "reference_SG.K86NgdekcN1J6Jk2jdYcHb.iaOn-3nQdbpeD5FSVipiFG57"
                                  "-ff7kxuBFzEKfqS6O4-.md"])
def test_a_file_name_holding_a_new_kind_of_secret_is_refused_in_one_line(
        tmp_path: Path, file: str) -> None:
    folder, state = _sample(tmp_path)
    result = _sagemem(folder, state, "new", "--type", "reference", "--name", "ci",
                      "--description", "The CI", "--file", file)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "holds a secret" in result.stderr and file[len("reference_"):-3] not in result.stderr
    assert not (folder / file).exists()


def test_a_cli_new_keeps_code_and_config_that_name_secrets_byte_for_byte(tmp_path: Path) -> None:
    """Review 3's false alarms: a variable, a placeholder, a schema's word, a YAML tag or
    a length in an agent's snippet reached disk as ``<REDACTED:…>``, a piece of the memory
    lost for good."""
    folder, state = _sample(tmp_path)
    prose = (Path(__file__).parent / "redaction" / "ordinary_prose_code.md").read_text(
        encoding="utf-8")
    body = prose.split("---\n", 2)[2]
    result = _sagemem(folder, state, "new", "--type", "reference", "--name", "secret plumbing",
                      "--description", "Where each service's secrets come from", "--body", "-",
                      input_text=body)
    assert result.returncode == 0, result.stderr
    written = (folder / "reference_secret_plumbing.md").read_text(encoding="utf-8")
    assert body.strip() in written
    assert "redacted" not in result.stdout + result.stderr


def test_a_cli_remember_redacts_a_password_in_a_sentence_and_a_session_cookie(
        tmp_path: Path) -> None:
    folder, state = _sample(tmp_path)
    secrets = ["Vq7mZ2pL9x", "swordfish", "8f3b2c1d4e5a6b7c8d9e0a1b2c3d4e5f"]
    body = (f"The password for the staging db is {secrets[0]}.\n"
            f'My passphrase is "{secrets[1]}".\n'
            f'curl -H "Cookie: sessionid={secrets[2]}" https://admin.example.com\n')
    result = _sagemem(folder, state, "remember", "--type", "reference", "--title",
                      "staging access", "--body", body, "--json")
    assert result.returncode == 0, result.stderr
    written = (folder / json.loads(result.stdout)["file"]).read_text(encoding="utf-8")
    assert written.count("<REDACTED:password>") == 2
    assert written.count("<REDACTED:session_cookie>") == 1
    disk = _everything_under(folder, state)
    assert [s for s in secrets if s.encode() in disk] == []
