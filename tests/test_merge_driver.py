"""sagemem's merge driver under real git: two clones of one remote, both with ``sagemem
install git``, merging with ``git merge`` and with ``git pull --rebase``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.git_clones import ALPHA, INDEX, Clone, two_clones

PULLS = {"merge": ("pull", "-q", "--no-rebase", "origin", "main"),
         "rebase": ("pull", "-q", "--rebase", "origin", "main")}


def _pushed(clone: Clone, name: str, text: str, message: str) -> None:
    clone.write(name, text)
    clone.commit(message)
    clone.git("push", "-q", "origin", "main")


@pytest.mark.parametrize("how", sorted(PULLS))
def test_edits_of_different_fields_merge_with_both_changes(tmp_path: Path, how: str) -> None:
    one, two = two_clones(tmp_path)
    _pushed(one, "alpha.md", ALPHA.replace("priority: low", "priority: high"), "priority")
    two.write("alpha.md", ALPHA.replace("description: the first", "description: the 1st"))
    two.commit("description")
    done = two.git(*PULLS[how])
    assert done.returncode == 0
    assert two.read("alpha.md") == ALPHA.replace("priority: low", "priority: high").replace(
        "description: the first", "description: the 1st")
    assert two.git("status", "--porcelain").stdout == ""


@pytest.mark.parametrize("how", sorted(PULLS))
def test_edits_of_a_field_and_the_body_merge(tmp_path: Path, how: str) -> None:
    one, two = two_clones(tmp_path)
    _pushed(one, "alpha.md", ALPHA.replace("type: project", "type: reference"), "type")
    two.write("alpha.md", ALPHA.replace("line five", "line five, amended"))
    two.commit("body")
    two.git(*PULLS[how])
    assert two.read("alpha.md") == ALPHA.replace("type: project", "type: reference").replace(
        "line five", "line five, amended")


@pytest.mark.parametrize("how", sorted(PULLS))
def test_both_sides_adding_memories_keep_both_files_and_index_lines(
        tmp_path: Path, how: str) -> None:
    one, two = two_clones(tmp_path)
    for clone, name in ((one, "gamma"), (two, "delta")):
        clone.write(f"{name}.md", f"---\nname: {name}\ndescription: {name}\n---\n{name}\n")
        clone.write("MEMORY.md", INDEX + f"- [{name}]({name}.md) — {name}\n")
        clone.commit(f"add {name}")
    one.git("push", "-q", "origin", "main")
    two.git(*PULLS[how])
    index = two.read("MEMORY.md")
    assert index.startswith(INDEX)
    assert sorted(index[len(INDEX):].splitlines()) == [
        "- [delta](delta.md) — delta", "- [gamma](gamma.md) — gamma"]
    assert (two.mem / "gamma.md").is_file() and (two.mem / "delta.md").is_file()


@pytest.mark.parametrize("how", sorted(PULLS))
def test_a_line_added_on_both_sides_is_kept_once(tmp_path: Path, how: str) -> None:
    one, two = two_clones(tmp_path)
    line = "- [Gamma](gamma.md) — the third\n"
    _pushed(one, "MEMORY.md", INDEX + line, "gamma")
    two.write("MEMORY.md", INDEX.replace("- [Alpha]", line + "- [Alpha]"))
    two.commit("gamma too")
    two.git(*PULLS[how])
    assert two.read("MEMORY.md").count("gamma.md") == 1


@pytest.mark.parametrize("how", sorted(PULLS))
def test_an_edit_of_a_memory_the_other_side_archived_is_not_lost(
        tmp_path: Path, how: str) -> None:
    one, two = two_clones(tmp_path)
    done = one.sagemem("archive", "alpha.md", "--reason", "done with it", "--yes")
    assert done.returncode == 0, done.stderr
    one.commit("archive alpha")
    one.git("push", "-q", "origin", "main")
    edited = ALPHA.replace("line three", "line three, edited")
    two.write("alpha.md", edited)
    two.commit("edit alpha")
    two.git(*PULLS[how], check=False)
    # git's rename detection carries the edit into archive/alpha.md: the archive wins,
    # the edit is in the archived file, the index line is gone.
    assert not (two.mem / "alpha.md").exists()
    assert "line three, edited" in two.read("archive/alpha.md")
    assert "alpha.md" not in two.read("MEMORY.md")
    assert two.git("status", "--porcelain").stdout == ""


@pytest.mark.parametrize("how", sorted(PULLS))
def test_a_field_changed_differently_on_both_sides_stops_git_and_is_queued(
        tmp_path: Path, how: str) -> None:
    one, two = two_clones(tmp_path)
    _pushed(one, "alpha.md", ALPHA.replace("priority: low", "priority: high"), "high")
    two.write("alpha.md", ALPHA.replace("priority: low", "priority: urgent"))
    two.commit("urgent")
    done = two.git(*PULLS[how], check=False)
    assert done.returncode != 0
    marked = two.read("alpha.md")
    assert "<<<<<<< " in marked and ">>>>>>> " in marked
    assert "priority: high" in marked and "priority: urgent" in marked
    assert marked.endswith("line one\nline two\nline three\nline four\nline five\n")
    record = _one_open_merge(two)
    sides = {record["disk"]["text"], record["mine"]["text"]}
    assert sides == {ALPHA.replace("priority: low", "priority: high"),
                     ALPHA.replace("priority: low", "priority: urgent")}
    refused = two.sagemem("write", "alpha.md", "--from", str(two.mem / "alpha.md"),
                           "--expect", _revision(two))
    assert refused.returncode != 0 and "unresolved_merge" in refused.stderr


@pytest.mark.parametrize("how", sorted(PULLS))
def test_a_body_line_changed_differently_stops_git_with_markers(
        tmp_path: Path, how: str) -> None:
    one, two = two_clones(tmp_path)
    _pushed(one, "alpha.md", ALPHA.replace("line two", "line 2"), "two")
    two.write("alpha.md", ALPHA.replace("line two", "line II"))
    two.commit("II")
    assert two.git(*PULLS[how], check=False).returncode != 0
    marked = two.read("alpha.md")
    assert marked.startswith(ALPHA[:ALPHA.index("---\nline one")])  # frontmatter intact
    assert "line 2" in marked and "line II" in marked and "=======" in marked
    assert _one_open_merge(two)["mine"]["merge"]["where"] == ["body"]  # type: ignore[index]


@pytest.mark.parametrize("how", sorted(PULLS))
def test_keeping_theirs_from_the_queue_finishes_the_merge(tmp_path: Path, how: str) -> None:
    one, two = two_clones(tmp_path)
    _pushed(one, "alpha.md", ALPHA.replace("priority: low", "priority: high"), "high")
    two.write("alpha.md", ALPHA.replace("priority: low", "priority: urgent"))
    two.commit("urgent")
    two.git(*PULLS[how], check=False)
    record = _one_open_merge(two)
    done = two.sagemem("conflicts", "resolve", str(record["id"]), "--keep", "mine")
    assert done.returncode == 0, done.stderr
    assert two.read("alpha.md") == record["mine"]["text"]  # type: ignore[index]
    two.git("add", "mem/alpha.md")
    finish = ("rebase", "--continue") if how == "rebase" else ("commit", "-q", "--no-edit")
    two.env["GIT_EDITOR"] = "true"
    two.git(*finish)
    assert two.git("status", "--porcelain").stdout == ""


@pytest.mark.parametrize("how", sorted(PULLS))
def test_an_archive_against_a_rewrite_carries_the_rewrite_into_the_archive(
        tmp_path: Path, how: str) -> None:
    one, two = two_clones(tmp_path)
    assert one.sagemem("archive", "alpha.md", "--reason", "done", "--yes").returncode == 0
    one.commit("archive alpha")
    one.git("push", "-q", "origin", "main")
    rewritten = ("---\nname: Alpha\ndescription: rewritten whole\n---\n"
                 + "".join(f"a new line {n}\n" for n in range(30)))
    two.write("alpha.md", rewritten)
    two.commit("rewrite alpha")
    two.git(*PULLS[how])
    # the archive is a pure rename, which git detects however much the other side
    # changed the file: the rewrite lands in archive/alpha.md, whole.
    assert two.read("archive/alpha.md") == rewritten
    assert not (two.mem / "alpha.md").exists()


@pytest.mark.parametrize("how", sorted(PULLS))
def test_a_delete_against_an_edit_stops_git_with_the_edit_kept(
        tmp_path: Path, how: str) -> None:
    one, two = two_clones(tmp_path)
    one.git("rm", "-q", "mem/alpha.md")
    one.write("MEMORY.md", INDEX.replace("- [Alpha](alpha.md) — the first\n", ""))
    one.commit("delete alpha")
    one.git("push", "-q", "origin", "main")
    edited = ALPHA.replace("line three", "line three, edited")
    two.write("alpha.md", edited)
    two.commit("edit alpha")
    done = two.git(*PULLS[how], check=False)
    # modify/delete: no merge driver is asked; git stops and the edit stays in the tree
    assert done.returncode != 0
    assert "CONFLICT (modify/delete)" in done.stdout + done.stderr
    assert two.read("alpha.md") == edited
    assert "alpha.md" not in two.read("MEMORY.md")  # the index merged by the driver


@pytest.mark.parametrize("how", sorted(PULLS))
def test_sagemem_writes_on_both_machines_merge(tmp_path: Path, how: str) -> None:
    one, two = two_clones(tmp_path)
    assert one.sagemem("set", "alpha", "description=approved by Dana").returncode == 0
    one.commit("description")
    one.git("push", "-q", "origin", "main")
    assert two.sagemem("set", "alpha", "priority=high", "tags=[ops]").returncode == 0
    two.commit("priority and tags")
    two.git(*PULLS[how])
    merged = two.sagemem("show", "alpha", "--json")
    fields = json.loads(merged.stdout)
    assert fields["description"] == "approved by Dana"
    assert fields["tags"] == ["ops"]
    assert "priority: high" in two.read("alpha.md")


def test_without_the_driver_git_stops_on_edits_of_different_fields(tmp_path: Path) -> None:
    one, two = two_clones(tmp_path, install=False)  # the case the driver exists for
    _pushed(one, "alpha.md", ALPHA.replace("description: the first", "description: 1st"),
            "description")
    two.write("alpha.md", ALPHA.replace("name: Alpha", "name: Alpha one"))
    two.commit("name")
    assert two.git(*PULLS["merge"], check=False).returncode != 0


def test_with_the_driver_adjacent_fields_changed_on_each_side_merge(tmp_path: Path) -> None:
    one, two = two_clones(tmp_path)
    _pushed(one, "alpha.md", ALPHA.replace("description: the first", "description: 1st"),
            "description")
    two.write("alpha.md", ALPHA.replace("name: Alpha", "name: Alpha one"))
    two.commit("name")
    assert two.git(*PULLS["merge"], check=False).returncode == 0
    assert two.read("alpha.md") == ALPHA.replace(
        "description: the first", "description: 1st").replace("name: Alpha", "name: Alpha one")


def _one_open_merge(clone: Clone) -> dict[str, object]:
    listed = clone.sagemem("conflicts", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    records = [r for r in json.loads(listed.stdout)["conflicts"]
               if r["kind"] == "unresolved_merge" and r["status"] == "open"]
    assert len(records) == 1
    shown = clone.sagemem("conflicts", "show", records[0]["id"], "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)  # type: ignore[no-any-return]


def _revision(clone: Clone) -> str:
    shown = clone.sagemem("show", "alpha.md", "--json")
    assert shown.returncode == 0, shown.stderr
    return str(json.loads(shown.stdout)["revision"])
