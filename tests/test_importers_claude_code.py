"""The Claude Code reader: CLAUDE.md sections, types, imports, auto memory, adopt."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from importer_helpers import by_name, copy_fixture, parsed, source_of

from sagemem.errors import ImportSourceError
from sagemem.importers import claude_code
from sagemem.importers.claude_project import (
    auto_memory_dir,
    format_problem,
    project_key,
    project_root,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_fixture("claude-code/project", tmp_path / "acme")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return copy_fixture("claude-code/home", tmp_path / "home")


def with_auto_memory(home: Path, root: Path) -> Path:
    folder = home / ".claude" / "projects" / project_key(root) / "memory"
    copy_fixture("claude-code/auto-memory", folder)
    return folder


def test_each_section_becomes_a_memory_with_its_type_name_and_source(project: Path,
                                                                     home: Path) -> None:
    batch = claude_code.read_batch(project, home=home, cwd=project)
    items = by_name(batch)
    assert batch.source == "claude-code"
    expected = {"project_commands.md": "project", "feedback_code_style.md": "feedback",
                "reference_links.md": "reference", "project_deploy.md": "project"}
    for name, type_ in expected.items():
        assert parsed(items[name]).type == type_
    style = parsed(items["feedback_code_style.md"])
    assert style.title == "Code style"
    assert style.description == "Always use type hints in new Python code."
    assert source_of(items["feedback_code_style.md"]) == "claude-code:CLAUDE.md#code-style"
    assert items["feedback_code_style.md"].origin == "CLAUDE.md:14 § Code style"


def test_a_heading_inside_a_code_fence_does_not_split(project: Path, home: Path) -> None:
    commands = by_name(claude_code.read_batch(project, home=home, cwd=project))
    body = parsed(commands["project_commands.md"]).body
    assert "# not a heading: a comment in a code block" in body
    assert not any("not_a_heading" in name for name in commands)


def test_an_unclassified_section_is_reference_and_noted(project: Path, home: Path) -> None:
    batch = claude_code.read_batch(project, home=home, cwd=project)
    assert parsed(by_name(batch)["reference_acme_web_app.md"]).type == "reference"
    assert "CLAUDE.md:1 § Acme web app: no rule gave it a type; imported as reference" \
        in batch.notes


def test_a_rule_file_keeps_its_paths_and_defaults_to_feedback(project: Path,
                                                              home: Path) -> None:
    items = by_name(claude_code.read_batch(project, home=home, cwd=project))
    api = parsed(items["project_api_handlers.md"])
    assert api.body.lstrip().startswith("Applies to files matching `src/api/**/*.py`.")
    assert parsed(items["feedback_naming.md"]).type == "feedback"


def test_imports_are_followed_and_cycles_and_missing_files_are_notes(project: Path,
                                                                     home: Path) -> None:
    batch = claude_code.read_batch(project, home=home, cwd=project)
    assert "project_deploy.md" in by_name(batch)
    assert "docs/deploy.md imports @../CLAUDE.md: not followed, an import cycle" in batch.notes
    assert "docs/deploy.md imports @missing.md: not followed, no such file" in batch.notes


def test_an_import_outside_the_project_is_not_read(project: Path, home: Path,
                                                   tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("## Secret\n\nThe vault code is 1234.\n")
    (project / "CLAUDE.md").write_text("## Notes\n\nRead @../secret.md first.\n")
    batch = claude_code.read_batch(project, home=home, cwd=project)
    assert not any("1234" in item.text for item in batch.items)
    assert any("not followed, outside" in note for note in batch.notes)


def test_an_import_through_a_symlink_is_not_read(project: Path, home: Path,
                                                 tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("## Leak\n\nsecret text\n")
    os.symlink(outside, project / "linked")
    (project / "CLAUDE.md").write_text("## Notes\n\nSee @linked/x.md here.\n")
    batch = claude_code.read_batch(project, home=home, cwd=project)
    assert not any("secret text" in item.text for item in batch.items)


def test_an_import_in_a_code_span_is_not_followed(project: Path, home: Path) -> None:
    (project / "CLAUDE.md").write_text("## Notes\n\nWrite `@docs/deploy.md` to import.\n")
    batch = claude_code.read_batch(project, home=home, cwd=project)
    assert "project_deploy.md" not in by_name(batch)


def test_imports_stop_after_five_hops(project: Path, home: Path) -> None:
    for n in range(7):
        (project / f"c{n}.md").write_text(f"## Step {n}\n\nNext @c{n + 1}.md now.\n")
    (project / "CLAUDE.md").write_text("## Start\n\nSee @c0.md first.\n")
    batch = claude_code.read_batch(project, home=home, cwd=project)
    steps = [i for i in batch.items if i.origin.startswith("c")]
    assert len(steps) == 5
    assert any("deeper than 5 imports" in note for note in batch.notes)


def test_the_default_reads_home_project_and_auto_memory(project: Path, home: Path) -> None:
    folder = with_auto_memory(home, project)
    batch = claude_code.read_batch(None, home=home, cwd=project)
    items = by_name(batch)
    assert parsed(items["user_about_me.md"]).type == "user"
    assert source_of(items["user_about_me.md"]) == "claude-code:~/.claude/CLAUDE.md#about-me"
    assert "feedback_code_style.md" in items
    copied = items["feedback_testing.md"]
    assert copied.text.encode() == (folder / "feedback_testing.md").read_bytes()
    assert copied.origin == "auto memory: feedback_testing.md"
    assert "MEMORY.md" not in items


def test_the_same_source_gives_the_same_batch(project: Path, home: Path) -> None:
    with_auto_memory(home, project)
    first = claude_code.read_batch(None, home=home, cwd=project)
    assert claude_code.read_batch(None, home=home, cwd=project) == first


def test_two_sections_of_one_heading_get_numbered_names(project: Path, home: Path) -> None:
    (project / "CLAUDE.md").write_text("## Build\n\nRun make.\n\n## Build\n\nRun make all.\n")
    names = [i.name for i in claude_code.read_batch(project, home=home, cwd=project).items]
    assert names[:2] == ["project_build.md", "project_build_2.md"]


def test_originals_are_not_changed(project: Path, home: Path) -> None:
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    claude_code.read_batch(project, home=home, cwd=project)
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before


def test_a_missing_path_is_one_error(tmp_path: Path, home: Path) -> None:
    with pytest.raises(ImportSourceError, match="does not exist"):
        claude_code.read_batch(tmp_path / "nope", home=home, cwd=tmp_path)


def test_an_unreadable_file_is_skipped_not_fatal(project: Path, home: Path) -> None:
    (project / "CLAUDE.local.md").write_bytes(b"## Local\n\n\xff\xfe not utf-8\n")
    batch = claude_code.read_batch(project, home=home, cwd=project)
    assert any(s.origin == "CLAUDE.local.md" for s in batch.skipped)
    assert "feedback_code_style.md" in by_name(batch)


def test_the_project_is_the_git_root_and_a_worktree_shares_its_main_tree(tmp_path: Path) -> None:
    main = tmp_path / "repo"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / "src").mkdir()
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    linked = tmp_path / "wt"
    linked.mkdir()
    (linked / ".git").write_text(f"gitdir: {main}/.git/worktrees/wt\n")
    (main / ".git" / "worktrees" / "wt" / "gitdir").write_text(f"{linked}/.git\n")
    assert project_root(main / "src") == main
    assert project_root(linked) == main
    assert project_key(Path("/home/u/my_app.v2")) == "-home-u-my-app-v2"


def test_a_git_file_without_gits_back_link_is_a_project_of_its_own(tmp_path: Path) -> None:
    # a .git file claiming another repository's commondir would otherwise adopt that
    # project's auto memory (files/gitroot.py's back-link check)
    (tmp_path / "victim" / ".git").mkdir(parents=True)
    unpacked = tmp_path / "unpacked"
    (unpacked / "fake").mkdir(parents=True)
    (unpacked / ".git").write_text("gitdir: fake\n")
    (unpacked / "fake" / "commondir").write_text(f"{tmp_path / 'victim' / '.git'}\n")
    assert project_root(unpacked) == unpacked


def test_an_auto_memory_folder_is_found_and_checked(project: Path, home: Path) -> None:
    assert auto_memory_dir(project, home) is None
    folder = with_auto_memory(home, project)
    assert auto_memory_dir(project, home) == folder
    assert format_problem(folder) is None
    (folder / "loose.md").write_text("no frontmatter here\n")
    assert format_problem(folder) == "loose.md has no frontmatter (---) block"


def test_a_loose_file_in_auto_memory_is_skipped_on_copy(project: Path, home: Path) -> None:
    folder = with_auto_memory(home, project)
    (folder / "loose.md").write_text("no frontmatter here\n")
    batch = claude_code.read_batch(folder, home=home, cwd=project)
    assert {i.name for i in batch.items} == {"user_role.md", "feedback_testing.md"}
    assert batch.skipped[0].origin == "auto memory: loose.md"


def test_adopt_refuses_when_there_is_no_auto_memory(project: Path, home: Path) -> None:
    with pytest.raises(ImportSourceError, match="no auto-memory folder"):
        claude_code.adopt(project, home)


def test_adopt_refuses_a_folder_not_in_sagemem_format(project: Path, home: Path) -> None:
    folder = with_auto_memory(home, project)
    (folder / "MEMORY.md").unlink()
    with pytest.raises(ImportSourceError, match=r"has no MEMORY\.md"):
        claude_code.adopt(project, home)


def test_adopt_records_the_auto_memory_folder_as_the_projects(project: Path,
                                                              home: Path) -> None:
    """Needs ``files/scopes.py`` (the scopes branch); skipped until it is merged."""
    scopes = pytest.importorskip("sagemem.files.scopes")
    folder = with_auto_memory(home, project)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert claude_code.adopt(project, home) == folder
    assert scopes.read_project_map(scopes.projects_file(home)) == {
        str(project): {"memory_dir": str(folder)}}
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_the_folders_down_to_the_working_directory_are_read(project: Path, home: Path) -> None:
    (project / ".git").mkdir()  # the project root is the repository's
    (project / "api").mkdir()
    (project / "api" / "CLAUDE.md").write_text("## Api errors\n\nReturn problem+json.\n")
    (project / ".claude" / "CLAUDE.md").write_text("## Review\n\nAsk for one reviewer.\n")
    (project / "unrelated").mkdir()
    (project / "unrelated" / "CLAUDE.md").write_text("## Elsewhere\n\nNot loaded here.\n")
    origins = [i.origin for i in claude_code.read_batch(None, home=home,
                                                        cwd=project / "api").items]
    assert "api/CLAUDE.md:1 § Api errors" in origins
    assert ".claude/CLAUDE.md:1 § Review" in origins
    assert not any(o.startswith("unrelated/") for o in origins)


def test_a_home_import_is_followed_only_into_dot_claude(project: Path, home: Path) -> None:
    (home / ".netrc").write_text("machine example.com login ada password hunter2-s3cret\n")
    (home / ".config").mkdir()
    (home / ".config" / "notes.txt").write_text("## Diary\n\nprivate notes\n")
    (home / "notes.md").write_text("## Diary\n\nprivate notes\n")
    (home / ".claude" / "editor.md").write_text("## Editor\n\nI am a vim user.\n")
    (project / "CLAUDE.md").write_text(
        "## Notes\n\nSee @~/.netrc and @~/.config/notes.txt, @~/notes.md, "
        "@~/../x.md and @~/.claude/editor.md too.\n")
    batch = claude_code.read_batch(project, home=home, cwd=project)
    assert source_of(by_name(batch)["user_editor.md"]) == "claude-code:~/.claude/editor.md#editor"
    made = " ".join(i.name + i.text + i.origin for i in batch.items)
    assert "hunter2" not in made and "private notes" not in made
    for target in ("~/.netrc", "~/.config/notes.txt", "~/notes.md", "~/../x.md"):
        assert f"CLAUDE.md imports @{target}: not followed, outside the project and " \
            "~/.claude" in batch.notes


def test_only_markdown_files_are_imported(project: Path, home: Path) -> None:
    (project / "notes.txt").write_text("## Plain\n\nplain text\n")
    (home / ".claude" / "settings.json").write_text('{"apiKey": "x"}\n')
    (project / "CLAUDE.md").write_text(
        "## Notes\n\nSee @notes.txt and @~/.claude/settings.json too.\n")
    batch = claude_code.read_batch(project, home=home, cwd=project)
    assert not any("plain text" in i.text or "apiKey" in i.text for i in batch.items)
    assert "CLAUDE.md imports @notes.txt: not followed, not a Markdown (.md) file" in batch.notes
    assert "CLAUDE.md imports @~/.claude/settings.json: not followed, not a Markdown (.md) " \
        "file" in batch.notes


def test_a_secret_in_a_heading_reaches_no_name_title_source_or_origin(project: Path,
                                                                    home: Path) -> None:
    (project / "CLAUDE.md").write_text(
        "## machine example.com login ada password hunter2-s3cret\n\nThe staging box.\n")
    batch = claude_code.read_batch(project, home=home, cwd=project)
    [item] = [i for i in batch.items if i.origin.startswith("CLAUDE.md:")]
    assert "hunter2" not in item.name + item.text + item.origin
    assert item.name == "reference_machine_example_com_login_ada_password_redacted_password.md"
    assert parsed(item).name == "machine example.com login ada password <REDACTED:password>"
