"""Recall from Claude Code's transcripts, the library: which lines count, the bounds, the
scoring and the excerpts (the surfaces are in test_transcripts_surfaces.py)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from sagemem.config import Settings
from sagemem.errors import TranscriptsOff
from sagemem.files.gitroot import claude_project_key
from sagemem.transcripts import read as transcript_read
from sagemem.transcripts.locate import newest_transcripts, project_folders
from sagemem.transcripts.read import MAX_FILE_BYTES, MAX_LINE_BYTES, read_turns
from sagemem.transcripts.search import search_project, search_transcripts
from sagemem.transcripts.turns import spoken_text

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
QUEUE_SESSION = "5f2c1a9e-3b7d-4e21-9c0a-1d2e3f4a5b6c"
CHINESE_SESSION = "8a7b6c5d-4e3f-4a1b-9c8d-7e6f5a4b3c2d"
QUEUE_QUESTION = "What did we decide last time about the message queue for the order service?"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The fixture transcripts in a project folder of their own."""
    target = tmp_path / "projects" / "-home-dev-shop"
    shutil.copytree(FIXTURES, target)
    return target


def turn_line(text: str, session: str = "s-1", role: str = "assistant", **extra: object
              ) -> str:
    return json.dumps({"type": role, "sessionId": session, "uuid": "u",
                       "timestamp": "2026-11-01T10:00:00Z",
                       "message": {"role": role, "content": [{"type": "text", "text": text}]},
                       **extra})


def test_only_user_and_assistant_text_is_spoken() -> None:
    said = spoken_text({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "secret plan"}, {"type": "text", "text": "Use Redis."},
        {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}}]}})
    assert said == ("assistant", "Use Redis.")


@pytest.mark.parametrize("line", [
    {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "output"}]}},
    {"type": "user", "isMeta": True, "message": {"role": "user", "content": "Caveat: …"}},
    {"type": "assistant", "isSidechain": True,
     "message": {"role": "assistant", "content": "a subagent's words"}},
    {"type": "user", "isCompactSummary": True, "message": {"role": "user", "content": "recap"}},
    {"type": "user",
     "message": {"role": "user", "content": "<system-reminder>x</system-reminder>"}},
    {"type": "user",
     "message": {"role": "user", "content": "<command-name>/clear</command-name>"}},
    {"type": "user", "message": {"role": "user", "content": "<sagemem-memory>\n### a.md:1-2"}},
    {"type": "summary", "summary": "A session"},
    {"type": "user", "message": {"role": "assistant", "content": "role and type disagree"}},
    ["not", "an", "object"],
])
def test_tool_meta_sidechain_and_injected_lines_are_not_spoken(line: object) -> None:
    assert spoken_text(line) is None


def test_injected_tags_inside_a_turn_are_cut_out_and_the_rest_kept() -> None:
    said = spoken_text({"type": "user", "message": {"role": "user", "content":
                        "Use Postgres.<system-reminder>Use MySQL.</system-reminder> Done."}})
    assert said == ("user", "Use Postgres.  Done.")


def test_the_fixture_transcripts_yield_only_spoken_turns(folder: Path) -> None:
    turns, _ = read_turns(folder / f"{QUEUE_SESSION}.jsonl")
    texts = " ".join(t.text for t in turns)
    assert [t.window_line for t in turns] == [4, 6, 10]  # the broken line 5 is skipped
    for hidden in ("zebra-broker-7", "SIDECHAINQUEUE", "REMINDERQUEUE", "Caveat", "/model",
                   "Kafka needs zookeeper"):
        assert hidden not in texts


def test_a_history_question_finds_the_answer_with_its_citation(folder: Path) -> None:
    found = search_transcripts(QUEUE_QUESTION, [folder])
    best = found.hits[0]
    assert (best.citation, best.date, best.role) == (
        f"transcript {QUEUE_SESSION}:6", "2026-11-28", "assistant")
    assert best.excerpt.startswith("We settled on RabbitMQ")


def test_tool_output_and_our_own_block_are_never_quoted(folder: Path) -> None:
    for question in ("which kafka_bootstrap_servers broker zebra did the grep show?",
                     "what was SELFCITEDQUEUE before?", "was SIDECHAINQUEUE it last time?"):
        assert search_transcripts(question, [folder]).hits == ()


def test_a_chinese_question_finds_a_chinese_turn(folder: Path) -> None:
    hits = search_transcripts("数据库迁移我们上次决定用什么？", [folder]).hits
    assert hits[0].citation == f"transcript {CHINESE_SESSION}:2"
    assert "Alembic" in hits[0].excerpt


def test_a_secret_in_a_transcript_is_redacted(folder: Path) -> None:
    hits = search_transcripts("which token did we use for the staging deploy before?",
                              [folder]).hits
    assert hits and "<REDACTED:github_token>" in hits[0].excerpt
    assert "ghp_R8x2" not in hits[0].excerpt


def test_an_unrelated_question_finds_nothing(folder: Path) -> None:
    assert search_transcripts("what did we decide last time about the frontend framework?",
                              [folder]).hits == ()


def test_control_characters_in_a_transcript_are_made_visible(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text(turn_line("The cache is redis\x1b[2J here.") + "\n")
    hit = search_transcripts("which cache did we pick before?", [tmp_path]).hits[0]
    assert "\x1b" not in hit.excerpt and "\\x1b[2J" in hit.excerpt


def test_a_hostile_session_id_cannot_break_the_citation(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text(turn_line("The cache is redis.", session="a\nb\x1b") + "\n")
    hit = search_transcripts("which cache did we pick before?", [tmp_path]).hits[0]
    assert hit.citation == "transcript ab:1"


def test_a_symlinked_transcript_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text(turn_line("The cache is redis.") + "\n")
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "linked.jsonl").symlink_to(outside)
    assert newest_transcripts([folder]) == []
    assert read_turns(folder / "linked.jsonl") == ([], 0)
    assert search_transcripts("which cache did we pick before?", [folder]).hits == ()


def test_a_symlinked_project_folder_is_never_followed(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    shutil.copytree(FIXTURES, real)
    project = tmp_path / "work" / "shop"
    project.mkdir(parents=True)
    projects = tmp_path / "claude" / "projects"
    projects.mkdir(parents=True)
    (projects / claude_project_key(project)).symlink_to(real)
    assert project_folders(tmp_path / "claude", project) == ()


def test_a_huge_transcript_is_read_from_its_end_only(tmp_path: Path) -> None:
    old = turn_line("Long ago the cache was memcached.")
    filler = turn_line("filler " * 200)
    with open(tmp_path / "big.jsonl", "w") as f:
        f.write(old + "\n")
        for _ in range((2 * MAX_FILE_BYTES) // len(filler)):
            f.write(filler + "\n")
        f.write(turn_line("Now the cache is redis.") + "\n")
    lines = (tmp_path / "big.jsonl").read_bytes().count(b"\n")
    turns, read = read_turns(tmp_path / "big.jsonl")
    assert read <= MAX_FILE_BYTES
    assert all("memcached" not in t.text for t in turns)
    hit = search_transcripts("which cache did we pick before?", [tmp_path]).hits[0]
    assert "redis" in hit.excerpt
    assert hit.line == lines  # numbered in the whole file, not in the window read


def test_a_line_over_the_cap_is_skipped_unparsed(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text(turn_line("redis cache " + "x" * MAX_LINE_BYTES) + "\n")
    assert read_turns(tmp_path / "s.jsonl")[0] == []


def test_a_file_too_large_to_number_is_left_out(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "s.jsonl").write_text(turn_line("The cache is redis.") + "\n")
    monkeypatch.setattr(transcript_read, "MAX_COUNTED_BYTES", 10)
    assert read_turns(tmp_path / "s.jsonl") == ([], 0)


def test_a_passed_deadline_reads_no_file_and_says_so(folder: Path) -> None:
    found = search_transcripts(QUEUE_QUESTION, [folder], deadline=0.0)
    assert found.hits == () and found.files_searched == 0
    assert found.notices == ("transcripts: 2 of 2 files not searched (time budget)",)


def test_only_the_newest_files_are_searched(tmp_path: Path) -> None:
    for n in range(5):
        path = tmp_path / f"s{n}.jsonl"
        path.write_text(turn_line(f"Session {n} talked about the cache.") + "\n")
        os.utime(path, (1_000_000 + n, 1_000_000 + n))
    assert [p.name for p in newest_transcripts([tmp_path], limit=2)] == ["s4.jsonl", "s3.jsonl"]


def test_the_asking_session_and_subagent_files_are_left_out(folder: Path) -> None:
    shutil.copy(folder / f"{QUEUE_SESSION}.jsonl", folder / "agent-1234.jsonl")
    listed = newest_transcripts([folder], skip_session=QUEUE_SESSION)
    assert [p.name for p in listed] == [f"{CHINESE_SESSION}.jsonl"]


def test_project_folders_follow_claude_codes_key(tmp_path: Path) -> None:
    project = tmp_path / "my_app.v2"
    project.mkdir()
    key = claude_project_key(project)
    assert "_" not in key and "." not in key
    (tmp_path / "claude" / "projects" / key).mkdir(parents=True)
    assert project_folders(tmp_path / "claude", project) == (
        tmp_path / "claude" / "projects" / key,)


def test_searching_with_transcripts_off_is_refused(tmp_path: Path) -> None:
    off = Settings(tmp_path / "m", tmp_path / "s", transcripts=False, claude_home=tmp_path)
    with pytest.raises(TranscriptsOff):
        search_project(off, QUEUE_QUESTION)
    with pytest.raises(TranscriptsOff):  # settings built by hand name no Claude Code folder
        search_project(Settings(tmp_path / "m", tmp_path / "s"), QUEUE_QUESTION)


def test_a_project_without_transcripts_says_where_it_looked(tmp_path: Path) -> None:
    settings = Settings(tmp_path / "m", tmp_path / "s", claude_home=tmp_path / "claude")
    found = search_project(settings, QUEUE_QUESTION, cwd=tmp_path)
    assert found.hits == ()
    assert found.notices == (
        f"no Claude Code transcripts of this project in {tmp_path / 'claude' / 'projects'}",)


def test_a_question_of_only_history_words_reads_no_transcript(folder: Path) -> None:
    found = search_transcripts("what did we decide last time?", [folder])
    assert (found.hits, found.files_searched) == ((), 0)
