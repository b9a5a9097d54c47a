"""``sagemem sync`` as a new user's trial met it (a bare remote, two clones): each test
reproduces one finding through real git — an autostash put back with conflicts reported
as success, an unborn branch, no-upstream advice that could not work, ``--continue``
counts, conflict records left open, messages naming the wrong paths, and another
clone's committed state pulled over this one's."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from git_clones import ALPHA, Clone, _clone, git_env, two_clones
from test_sync import conflicted, fresh_clone, new_memory, one_error, synced

from sagemem.gitsync.git import last_line


def bare_with_readme(tmp_path: Path) -> tuple[Clone, Path]:
    """A bare remote holding one README.md commit, and the clone that pushed it."""
    env = git_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", "--bare",
                    str(remote)], env=env, check=True)
    first = _clone(tmp_path, "first", env)
    (first.top / "README.md").write_text("hello\n")
    first.git("add", "README.md")
    first.git("commit", "-q", "-m", "readme")
    first.git("push", "-q", "origin", "main")
    return first, remote


def new_repo(tmp_path: Path, env: dict[str, str], name: str = "solo") -> Clone:
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q",
                    str(tmp_path / name)], env=env, check=True)
    return Clone(tmp_path / name, env)


def open_records(clone: Clone) -> list[dict[str, object]]:
    done = clone.sagemem("conflicts", "list", "--status", "open", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    return found["conflicts"] if isinstance(found, dict) else found


# -- 1. an autostash that cannot be put back is not a success -------------------------------

def test_an_autostash_put_back_with_conflicts_stops_before_the_push(tmp_path: Path) -> None:
    one, two = two_clones(tmp_path)
    (one.top / "README.md").write_text("v1\n")
    one.git("add", "README.md")
    one.git("commit", "-q", "-m", "readme")
    one.git("push", "-q", "origin", "main")
    synced(two)
    (one.top / "README.md").write_text("v2 from one\n")
    one.git("commit", "-q", "-am", "readme v2")
    one.git("push", "-q", "origin", "main")
    (two.top / "README.md").write_text("v2 from two, not committed\n")
    new_memory(two, "Cats")
    err = one_error(two.sagemem("sync"))
    assert "README.md" in err and "git stash list" in err and "git stash drop" in err
    # git kept the user's work (read through the ref: `git stash` itself may be wrapped)
    assert "v2 from two" in two.git("show", "refs/stash:README.md").stdout
    two.git("fetch", "-q", "origin")
    assert "user_cats.md" not in two.git("ls-tree", "-r", "--name-only",
                                         "origin/main").stdout  # nothing pushed
    again = one_error(two.sagemem("sync"))  # nothing synced over the conflicted file
    assert "README.md" in again and "conflicted" in again
    (two.top / "README.md").write_text("v2, both\n")
    two.git("reset", "-q")
    assert "pushed 1 commit" in synced(two).stdout


# -- 2. an unborn branch ------------------------------------------------------------------

def test_an_unborn_branch_dry_run_agrees_with_the_sync(tmp_path: Path) -> None:
    first, remote = bare_with_readme(tmp_path)
    solo = new_repo(tmp_path, first.env)
    solo.git("remote", "add", "origin", str(remote))
    solo.git("fetch", "-q", "origin")
    solo.git("branch", "--set-upstream-to", "origin/main", "main", check=False)
    solo.git("config", "branch.main.remote", "origin")
    solo.git("config", "branch.main.merge", "refs/heads/main")
    assert solo.sagemem("init").returncode == 0
    dry = synced(solo, "--dry-run")
    assert "would pull 1 commit" in dry.stdout and "would commit" in dry.stdout
    done = synced(solo)
    assert "pulled 1 commit" in done.stdout and "pushed 1 commit" in done.stdout
    assert (solo.top / "README.md").read_text() == "hello\n"


def test_an_unborn_branch_with_nothing_to_commit_fast_forwards(tmp_path: Path) -> None:
    first, remote = bare_with_readme(tmp_path)
    solo = new_repo(tmp_path, first.env)
    solo.git("remote", "add", "origin", str(remote))
    solo.git("config", "branch.main.remote", "origin")
    solo.git("config", "branch.main.merge", "refs/heads/main")
    solo.mem.mkdir()
    assert "would pull 1 commit" in synced(solo, "--dry-run").stdout
    assert "pulled 1 commit" in synced(solo).stdout
    assert (solo.top / "README.md").read_text() == "hello\n"


def test_git_usage_lines_are_never_the_error() -> None:
    said = ("fatal: ambiguous argument 'HEAD': unknown revision or path not in the working "
            "tree.\nUse '--' to separate paths from revisions, like this:\n"
            "'git <command> [<revision>...] -- [<file>...]'\n")
    assert last_line(said).startswith("fatal: ambiguous argument 'HEAD'")


# -- 3. the no-upstream advice works as printed ----------------------------------------------

def command_in(err: str, starts: str) -> list[str]:
    found = [c for c in re.findall(r"`([^`]+)`", err) if c.startswith(starts)]
    assert found, err
    return shlex.split(found[0])


def test_no_upstream_commits_first_so_the_printed_push_works(tmp_path: Path) -> None:
    first, _ = bare_with_readme(tmp_path)
    empty = tmp_path / "empty.git"
    subprocess.run(["git", "init", "-q", "--bare", str(empty)], env=first.env, check=True)
    solo = new_repo(tmp_path, first.env)
    assert solo.sagemem("init").returncode == 0
    solo.git("remote", "add", "origin", str(empty))
    err = one_error(solo.sagemem("sync"))
    assert "git push -u origin main" in err and "is made" in err
    push = subprocess.run(command_in(err, "git push"), cwd=solo.top, env=solo.env,
                          capture_output=True, text=True, check=False)
    assert push.returncode == 0, push.stderr
    assert "nothing to commit" in synced(solo).stdout


def test_no_remote_commits_first_and_says_how_to_add_one(tmp_path: Path) -> None:
    env = git_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    solo = new_repo(tmp_path, env)
    assert solo.sagemem("init").returncode == 0
    err = one_error(solo.sagemem("sync"))
    assert "git remote add origin <url>" in err and "git push -u origin main" in err
    assert solo.git("ls-files").stdout.split() == ["mem/MEMORY.md"]  # committed


# -- 4 and 5. --continue: its counts, the records it closes ---------------------------------

def resolve_alpha(two: Clone) -> None:
    two.write("alpha.md", ALPHA.replace("line three", "line three, says both"))
    two.git("add", "mem/alpha.md")


def test_continue_counts_what_came_in_and_says_no_nothing_to_commit(tmp_path: Path) -> None:
    _, two, _ = conflicted(tmp_path)
    resolve_alpha(two)
    done = synced(two, "--continue")
    assert "pulled 1 commit from" in done.stdout, done.stdout
    assert "nothing to commit" not in done.stdout
    assert "pushed 1 commit" in done.stdout


def test_the_stop_names_the_records_and_passes_the_driver_lines(tmp_path: Path) -> None:
    _, _, err = conflicted(tmp_path)
    assert "in mem/alpha.md;" in err and "resolve it" in err and "`sagemem conflicts`" in err
    assert "(the merge driver: mem/alpha.md: conflict in body; see: sagemem conflicts show" in err


def test_continue_closes_the_records_of_the_files_it_resolved(tmp_path: Path) -> None:
    _, two, _ = conflicted(tmp_path)
    assert len(open_records(two)) == 1
    resolve_alpha(two)
    done = synced(two, "--continue")
    assert "closed 1 conflict record" in done.stdout
    assert open_records(two) == []
    shown = json.loads(two.sagemem("conflicts", "list", "--json").stdout)
    records = shown["conflicts"] if isinstance(shown, dict) else shown
    assert "resolved in git by sync --continue" in json.dumps(records)


def test_abort_closes_the_records_as_abandoned(tmp_path: Path) -> None:
    _, two, _ = conflicted(tmp_path)
    assert synced(two, "--abort")
    assert open_records(two) == []
    shown = two.sagemem("conflicts", "list", "--json").stdout
    assert "abandoned: the rebase was aborted" in shown


# -- 6. messages --------------------------------------------------------------------------

def test_a_forced_in_ignored_state_path_says_git_rm_cached(tmp_path: Path) -> None:
    one = fresh_clone(tmp_path)
    state = one.mem / "state"
    assert one.sagemem("--state-dir", str(state), "init").returncode == 0
    one.git("add", "-f", "mem/state/folder.json")
    err = one_error(one.sagemem("--state-dir", str(state), "sync"))
    assert "git rm -r --cached mem/state" in err


def test_an_archive_is_sagemems_not_a_hand_edit(tmp_path: Path) -> None:
    one, _ = two_clones(tmp_path)
    assert one.sagemem("archive", "beta", "--reason", "old").returncode == 0
    synced(one)
    text = one.git("log", "-1", "--format=%B").stdout
    assert "edited by hand" not in text and "archive beta.md" in text


def test_the_index_init_wrote_is_not_a_hand_edit(tmp_path: Path) -> None:
    one = fresh_clone(tmp_path)
    synced(one)
    text = one.git("log", "-1", "--format=%B").stdout
    assert "edited by hand" not in text and "init MEMORY.md (sagemem init)" in text


def test_a_sync_with_nothing_to_do_adds_no_journal_line(tmp_path: Path) -> None:
    one, _ = two_clones(tmp_path)
    new_memory(one, "Cats")
    synced(one)
    before = one.sagemem("log", "--json").stdout
    synced(one)
    synced(one)
    assert one.sagemem("log", "--json").stdout == before


# -- 7. another clone's committed state is not pulled over this one's ------------------------

def test_incoming_state_paths_stop_before_the_rebase(tmp_path: Path) -> None:
    one, two = two_clones(tmp_path)
    new_memory(one, "Cats")
    one.git("add", "-f", ".sage-mem/journal.jsonl")  # before the state ignored itself
    one.git("commit", "-q", "-m", "oops, state")
    one.git("push", "-q", "origin", "main")
    new_memory(two, "Dogs")
    journal = (two.top / ".sage-mem" / "journal.jsonl").read_bytes()
    head = two.git("rev-parse", "HEAD").stdout
    err = one_error(two.sagemem("sync"))
    assert ".sage-mem/journal.jsonl" in err and "git rm -r --cached .sage-mem" in err
    assert (two.top / ".sage-mem" / "journal.jsonl").read_bytes()[:len(journal)] == journal
    assert two.git("rev-list", "--count", f"{head.strip()}..HEAD").stdout.strip() == "1"
    assert not two.git("rebase", "--show-current-patch", check=False).stdout
