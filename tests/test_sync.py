"""``sagemem sync`` against real repositories: a bare remote and two clones, real git,
sagemem as a shell runs it (``git_clones.py``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from git_clones import ALPHA, Clone, _clone, git_env, two_clones

from sagemem.history import journal


def synced(clone: Clone, *args: str) -> subprocess.CompletedProcess[str]:
    done = clone.sagemem("sync", *args)
    assert done.returncode == 0, done.stderr
    return done


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, done
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


def new_memory(clone: Clone, name: str) -> None:
    done = clone.sagemem("new", "--type", "user", "--name", name, "--description",
                         f"about {name}", "--body", f"{name} body")
    assert done.returncode == 0, done.stderr


def fresh_clone(tmp_path: Path) -> Clone:
    """An empty bare remote, cloned, no .gitignore anywhere: ``sagemem init`` in it."""
    env = git_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", "--bare",
                    str(tmp_path / "remote.git")], env=env, check=True)
    one = _clone(tmp_path, "one", env)
    assert one.sagemem("init").returncode == 0
    return one


def test_first_sync_pushes_and_the_other_clone_pulls_it(tmp_path: Path) -> None:
    one = fresh_clone(tmp_path)
    new_memory(one, "Pets")
    done = synced(one)
    assert "pushed 1 commit to origin/main" in done.stdout
    subject, _, body = one.git("log", "-1", "--format=%B").stdout.partition("\n\n")
    assert subject == "sagemem sync: 1 change (1 created)"
    assert "new user_pets.md (cli)" in body
    two = _clone(tmp_path, "two", one.env)
    assert "nothing to commit" in synced(two).stdout  # the clone had it all already
    new_memory(one, "Cats")
    synced(one)
    assert "pulled 1 commit from origin/main" in synced(two).stdout
    assert "Pets body" in two.read("user_pets.md") and "Cats body" in two.read("user_cats.md")


def test_the_state_directory_is_ignored_after_init_and_never_committed(tmp_path: Path) -> None:
    one = fresh_clone(tmp_path)
    assert one.read("../.gitignore") == "/.sage-mem/\n"  # init, in the project's repository
    new_memory(one, "Pets")
    synced(one)
    tracked = one.git("ls-files").stdout.split()
    assert tracked == ["mem/MEMORY.md", "mem/user_pets.md"]
    assert (one.top / ".sage-mem" / "journal.jsonl").exists()


def test_sync_adds_the_missing_ignore_line_and_says_so(tmp_path: Path) -> None:
    one = fresh_clone(tmp_path)
    (one.top / ".gitignore").unlink()
    new_memory(one, "Pets")
    done = synced(one)
    assert "note: added /.sage-mem/ to" in done.stderr
    assert one.read("../.gitignore") == "/.sage-mem/\n"
    assert not [p for p in one.git("ls-files").stdout.split() if ".sage-mem" in p]


def test_a_state_directory_inside_the_folder_never_travels(tmp_path: Path) -> None:
    one = fresh_clone(tmp_path)
    state = one.mem / "state"
    assert one.sagemem("--state-dir", str(state), "init").returncode == 0
    assert one.read(".gitignore") == "/state/\n"
    (one.mem / ".gitignore").write_text("*.swp\n")  # the line lost: sync puts it back
    done = one.sagemem("--state-dir", str(state), "sync")
    assert done.returncode == 0, done.stderr
    assert one.read(".gitignore") == "*.swp\n/state/\n"
    assert not [p for p in one.git("ls-files").stdout.split() if "/state/" in p]


def test_a_forced_state_path_is_refused_and_nothing_committed(tmp_path: Path) -> None:
    one = fresh_clone(tmp_path)
    state = one.mem / "state"
    assert one.sagemem("--state-dir", str(state), "init").returncode == 0
    one.git("add", "-f", "mem/state/folder.json")  # forced past the ignore line
    err = one_error(one.sagemem("--state-dir", str(state), "sync"))
    assert "refusing to commit the state directory" in err and "folder.json" in err
    assert one.git("rev-parse", "-q", "--verify", "HEAD", check=False).returncode != 0
    assert "folder.json" not in one.git("diff", "--cached", "--name-only").stdout


def test_both_sides_adding_memories_end_with_both(tmp_path: Path) -> None:
    one, two = two_clones(tmp_path)
    new_memory(one, "Cats")
    new_memory(two, "Dogs")
    synced(one)
    done = synced(two)
    assert "pulled 1 commit from origin/main" in done.stdout
    assert "rollback" in done.stdout  # the snapshot taken before the pull is named
    synced(one)
    for clone in (one, two):
        index = clone.read("MEMORY.md")
        assert "(user_cats.md)" in index and "(user_dogs.md)" in index
        assert "<<<<<<<" not in index


def test_concurrent_edits_of_different_fields_merge(tmp_path: Path) -> None:
    one, two = two_clones(tmp_path)
    assert one.sagemem("set", "alpha", "priority=high").returncode == 0
    assert two.sagemem("set", "alpha", "description=the very first").returncode == 0
    synced(one)
    synced(two)
    synced(one)
    for clone in (one, two):
        text = clone.read("alpha.md")
        assert "priority: high" in text and "description: the very first" in text


def test_archiving_what_the_other_side_edited_keeps_the_edit(tmp_path: Path) -> None:
    one, two = two_clones(tmp_path)
    one.write("beta.md", one.read("beta.md").replace("Beta's body.", "Beta, edited."))
    assert two.sagemem("archive", "beta", "--reason", "old").returncode == 0
    synced(one)
    synced(two)
    assert not (two.mem / "beta.md").exists()
    assert "Beta, edited." in two.read("archive/beta.md")  # the edit lands in the archive
    assert "(beta.md)" not in two.read("MEMORY.md")


def conflicted(tmp_path: Path) -> tuple[Clone, Clone, str]:
    one, two = two_clones(tmp_path)
    one.write("alpha.md", ALPHA.replace("line three", "line three, says one"))
    two.write("alpha.md", ALPHA.replace("line three", "line three, says two"))
    synced(one)
    done = two.sagemem("sync")
    return one, two, one_error(done)


def test_a_true_conflict_stops_naming_the_file_and_continue(tmp_path: Path) -> None:
    _, two, err = conflicted(tmp_path)
    assert "alpha.md" in err and "sagemem sync --continue" in err and "--abort" in err
    assert "<<<<<<<" in two.read("alpha.md")
    again = one_error(two.sagemem("sync"))  # no new sync on top of a stopped one
    assert "stopped half-way" in again
    queued = two.sagemem("conflicts", "list", "--json")
    assert queued.returncode == 0 and "alpha.md" in queued.stdout


def test_continue_refuses_until_the_fix_is_staged_then_pushes_it(tmp_path: Path) -> None:
    one, two, _ = conflicted(tmp_path)
    assert "alpha.md" in one_error(two.sagemem("sync", "--continue"))
    two.write("alpha.md", ALPHA.replace("line three", "line three, says both"))
    assert "git add" in one_error(two.sagemem("sync", "--continue"))  # fixed, not staged
    two.git("add", "mem/alpha.md")
    done = two.sagemem("sync", "--continue", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["pushed"] == 1
    synced(one)
    assert "says both" in one.read("alpha.md")
    log = two.sagemem("log", "--json")
    assert '"op": "sync"' in log.stdout.replace('":"', '": "')


def test_abort_goes_back_to_the_folder_before_the_pull(tmp_path: Path) -> None:
    _, two, _ = conflicted(tmp_path)
    done = two.sagemem("sync", "--abort")
    assert done.returncode == 0 and "sync aborted" in done.stdout
    assert "says two" in two.read("alpha.md") and "<<<<<<<" not in two.read("alpha.md")
    assert two.git("status", "--porcelain").stdout == ""


def test_sync_refuses_while_an_operation_is_pending(tmp_path: Path) -> None:
    one, _ = two_clones(tmp_path)
    journal.begin(one.top / ".sage-mem", "archive", {"file": "alpha.md"})  # then killed
    one.write("beta.md", one.read("beta.md") + "more\n")
    head = one.git("rev-parse", "HEAD").stdout
    done = one.sagemem("sync")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith("error: ")
    assert "run `sagemem recover` first" in done.stderr
    assert one.git("rev-parse", "HEAD").stdout == head


def test_no_upstream_names_the_commands_that_set_one(tmp_path: Path) -> None:
    env = git_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q",
                    str(tmp_path / "solo")], env=env, check=True)
    solo = Clone(tmp_path / "solo", env)
    assert solo.sagemem("init").returncode == 0
    err = one_error(solo.sagemem("sync"))
    assert "git remote add origin" in err and "git push -u origin main" in err


def test_outside_a_repository_is_one_error(tmp_path: Path) -> None:
    env = git_env(tmp_path / "home")
    plain = Clone(tmp_path / "plain", env)
    plain.top.mkdir()
    assert plain.sagemem("init").returncode == 0
    assert "not in a git repository" in one_error(plain.sagemem("sync"))


def test_a_rejected_push_keeps_the_commit_and_never_forces(tmp_path: Path) -> None:
    one, two = two_clones(tmp_path)
    new_memory(one, "Cats")
    synced(one)
    new_memory(two, "Dogs")
    # the remote moves on between two's fetch and push: a hook pushes one's new commit
    new_memory(one, "Owls")
    hook = two.top / ".git" / "hooks" / "pre-push"
    hook.write_text(f"#!/bin/sh\ncd {one.top} && git add -A mem && git commit -qm owls "
                    "&& git push -q origin main\n")
    hook.chmod(0o755)
    err = one_error(two.sagemem("sync"))
    assert "rejected" in err and "sagemem sync" in err
    hook.unlink()
    assert "Dogs body" in two.git("show", "HEAD:mem/user_dogs.md").stdout
    synced(two)
    assert "(user_owls.md)" in two.read("MEMORY.md")


def test_nothing_to_do_says_so_and_commits_nothing(tmp_path: Path) -> None:
    one, _ = two_clones(tmp_path)
    head = one.git("rev-parse", "HEAD").stdout
    done = synced(one)
    assert "nothing to commit" in done.stdout
    assert one.git("rev-parse", "HEAD").stdout == head


def test_only_the_folder_is_committed_other_staged_work_stays_staged(tmp_path: Path) -> None:
    one, _ = two_clones(tmp_path)
    (one.top / "code.py").write_text("print()\n")
    one.git("add", "code.py")
    new_memory(one, "Cats")
    synced(one)
    assert one.git("show", "--name-only", "--format=", "HEAD").stdout.split() == [
        "mem/MEMORY.md", "mem/user_cats.md"]
    assert one.git("diff", "--cached", "--name-only").stdout.split() == ["code.py"]


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    one, _ = two_clones(tmp_path)
    new_memory(one, "Cats")
    head = one.git("rev-parse", "HEAD").stdout
    done = synced(one, "--dry-run")
    assert "would commit" in done.stdout and "would push" in done.stdout
    assert one.git("rev-parse", "HEAD").stdout == head
    assert "user_cats.md" in one.git("status", "--porcelain").stdout


def test_the_driver_hint_is_shown_once_and_the_default_merge_works(tmp_path: Path) -> None:
    one, two = two_clones(tmp_path, install=False)
    new_memory(one, "Cats")
    first = synced(one)
    assert "sagemem install git" in first.stderr
    new_memory(one, "Owls")
    assert "sagemem install git" not in synced(one).stderr
    synced(two)
    assert "(user_owls.md)" in two.read("MEMORY.md")


def test_message_option_replaces_the_subject_keeps_the_lines(tmp_path: Path) -> None:
    one, _ = two_clones(tmp_path)
    new_memory(one, "Cats")
    one.write("beta.md", one.read("beta.md") + "more\n")
    synced(one, "--message", "weekly", "--no-push")
    text = one.git("log", "-1", "--format=%B").stdout
    assert text.startswith("weekly\n\n") and "edited by hand: beta.md" in text
    assert one.git("rev-list", "--count", "origin/main..HEAD").stdout.strip() == "1"
