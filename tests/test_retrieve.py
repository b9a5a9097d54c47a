"""Two-stage retrieval: thresholds, the short-question rule, line ranges, one paragraph a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagemem import MemoryStore
from sagemem.errors import InvalidCursor
from sagemem.files.memory import file_lines

MEMORIES = {
    "user_pets.md": """---
name: 家里的猫
description: 用户养的猫芝麻的品种、年龄和照顾注意事项。
metadata:
  type: user
aliases: [主子, pet cat]
---
猫叫芝麻 (Zhima)，是一只三岁的英短蓝猫。

每天早晚各喂一次，猫粮在厨房第二个抽屉。
""",
    "reference_k8s.md": """---
name: Kubernetes cluster
description: Where the kubernetes cluster for staging lives and how to reach it.
metadata:
  type: reference
tags: [infra]
---
# Access

The staging cluster is `stg-k8s-01`; the api server listens on port 6443.

## Credentials

Ask the platform team for a kubeconfig; it expires after 30 days.

```sh
kubectl get pods

kubectl logs deploy/api
```
""",
    "project_release.md": """---
name: Release process
description: How a release is cut, tagged and deployed to production.
metadata:
  type: project
tags: [release]
---
Releases are cut on Tuesdays from main.

Tag the release as v2.3 style semver, then the pipeline deploys to production.

Rollback: redeploy the previous tag within 15 minutes if errors rise.
""",
    "project_old_release.md": """---
name: Old release process
description: The manual release process used before the pipeline existed.
metadata:
  type: project
invalid_at: 2026-01-01
superseded_by: project_release.md
---
Copy the build to the server by hand and restart the service.
""",
    "project_next_release.md": """---
name: Next release process
description: The release train that replaces Tuesday cuts from next year.
metadata:
  type: project
valid_at: 2999-01-01
---
Releases leave on the monthly train, cut on the first Monday.
""",
    "feedback_config.md": """---
name: Config files
description: Keep api_base and other settings in config.toml, never hard-coded.
metadata:
  type: feedback
---
The api_base setting lives in config.toml under [server].

Why: hard-coded URLs broke the staging deploy twice.
""",
}


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    directory = tmp_path / "memory"
    directory.mkdir()
    for name, text in MEMORIES.items():
        (directory / name).write_text(text, encoding="utf-8")
    with MemoryStore(directory, tmp_path / "state") as opened:
        yield opened


def files(store: MemoryStore, query: str, **kwargs: object) -> list[str]:
    return [r.file for r in store.search(query, **kwargs).results]  # type: ignore[arg-type]


def test_summary_question_finds_its_memory(store: MemoryStore) -> None:
    assert files(store, "how is a release deployed to production")[0] == "project_release.md"


def test_chinese_question_finds_its_memory(store: MemoryStore) -> None:
    assert files(store, "猫叫什么名字")[0] == "user_pets.md"


def test_alias_wording_hits(store: MemoryStore) -> None:
    assert files(store, "主子每天喂几次")[0] == "user_pets.md"


def test_misspelt_rare_term_still_finds_it(store: MemoryStore) -> None:
    assert "reference_k8s.md" in files(store, "kuberntes cluster access")


@pytest.mark.parametrize("query", ["v2.3", "api_base", "6443"])
def test_identifiers_versions_and_numbers_are_findable(store: MemoryStore, query: str) -> None:
    assert files(store, query), query


@pytest.mark.parametrize("query", [
    "今天天气怎么样", "how do I configure a printer", "recommend a good pizza place",
    "北京明天会下雨吗",
])
def test_unrelated_questions_find_nothing(store: MemoryStore, query: str) -> None:
    assert files(store, query) == []


@pytest.mark.parametrize("query", ["继续", "ok", "猫"])
def test_questions_under_four_characters_do_not_search_bodies(
    store: MemoryStore, query: str
) -> None:
    assert files(store, query) == []


def test_four_character_question_searches_bodies(store: MemoryStore) -> None:
    # "kubeconfig" appears only in a body paragraph, in no summary
    assert files(store, "kubeconfig") == ["reference_k8s.md"]


def test_result_line_range_points_at_the_real_lines(store: MemoryStore) -> None:
    for query in ("kubeconfig expires", "rollback previous tag", "猫粮在哪里"):
        result = store.search(query).results[0]
        path = store.directory / result.file
        lines = file_lines(path.read_text(encoding="utf-8"))
        assert "\n".join(lines[result.start_line - 1:result.end_line]) == result.paragraph


def test_heading_stays_with_its_paragraph_and_fence_is_whole(store: MemoryStore) -> None:
    kube = store.search("kubectl logs pods").results[0]
    assert kube.paragraph.startswith("```sh") and kube.paragraph.endswith("```")
    access = store.search("api server port 6443").results[0]
    assert access.paragraph.startswith("# Access")


def test_one_file_gives_at_most_one_result(store: MemoryStore) -> None:
    names = files(store, "release tag production rollback pipeline")
    assert len(names) == len(set(names))


def test_invalid_memory_is_found_and_marked(store: MemoryStore) -> None:
    results = {r.file: r for r in store.search("manual release process by hand").results}
    old = results["project_old_release.md"]
    assert old.invalid and old.invalid_at == "2026-01-01"
    assert old.superseded_by == "project_release.md"


def test_memory_not_yet_valid_is_found_and_marked(store: MemoryStore) -> None:
    results = {r.file: r for r in store.search("monthly release train").results}
    later = results["project_next_release.md"]
    assert later.not_yet_valid and later.valid_at == "2999-01-01" and not later.invalid
    current = store.search("releases cut on tuesdays from main").results[0]
    assert current.file == "project_release.md" and not current.not_yet_valid


def test_scope_restricts_by_type_or_tag(store: MemoryStore) -> None:
    assert set(files(store, "release process", scope="feedback")) == set()
    assert files(store, "staging", scope="infra") == ["reference_k8s.md"]


def test_pages_do_not_repeat_and_end_with_no_cursor(store: MemoryStore) -> None:
    query = "release process"
    everything = files(store, query)
    seen: list[str] = []
    cursor = None
    while True:
        response = store.search(query, limit=1, cursor=cursor)
        seen += [r.file for r in response.results]
        cursor = response.coverage.next_cursor
        if cursor is None:
            break
    assert seen == everything and len(everything) > 1


def test_cursor_of_another_query_is_refused(store: MemoryStore) -> None:
    cursor = store.search("release process", limit=1).coverage.next_cursor
    assert cursor
    with pytest.raises(InvalidCursor):
        store.search("something else", cursor=cursor)


def test_coverage_counts_what_was_looked_at(store: MemoryStore) -> None:
    coverage = store.search("release process production").coverage
    assert coverage.files_scanned == len(MEMORIES)
    assert coverage.candidates >= 1 and coverage.paragraphs_filtered >= 0


TIED = """---
name: Zebra migration notes
description: Where the zebra herd migrates each spring.
metadata:
  type: project
---
The zebra herd migrates north across the river in spring.
"""
# Twelve memories that score exactly alike (same text; the names differ only in a letter
# no question holds), written out of name order: more than the ten candidates, so the
# tie-break decides both which ten go on and their order.
TIED_NAMES = [f"project_tie_{c}.md" for c in "kdalbjcgefih"]


def tied_store(root: Path) -> Path:
    directory = root / "memory"
    directory.mkdir()
    for i, name in enumerate(TIED_NAMES):  # mtimes in that order too: the index syncs
        (directory / name).write_text(TIED, encoding="utf-8")  # newest first
        os.utime(directory / name, (1_700_000_000 + i, 1_700_000_000 + i))
    return directory


def test_ties_break_by_file_name_in_and_across_processes(tmp_path: Path) -> None:
    directory = tied_store(tmp_path)
    documented = sorted(TIED_NAMES)[:10]  # docs/retrieval.md: "ties break by file name"
    with MemoryStore(directory, tmp_path / "state") as opened:
        response = opened.search("zebra herd migration")
    assert len({r.score for r in response.results}) == 1  # a real tie
    assert [r.file for r in response.results] == documented
    for seed in ("1", "2"):  # fresh processes, fresh indexes, other hash seeds
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-m", "sagemem", "--dir", str(directory), "--state-dir",
             str(tmp_path / f"state-{seed}"), "search", "zebra herd migration", "--json"],
            capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, check=False)
        assert done.returncode == 0, done.stderr
        assert [r["file"] for r in json.loads(done.stdout)["results"]] == documented


def test_empty_directory_finds_nothing(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    with MemoryStore(tmp_path / "m", tmp_path / "s") as empty:
        assert empty.search("anything at all").results == ()


def test_a_file_that_keeps_changing_is_left_out_not_a_failure(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sagemem.search import results

    monkeypatch.setattr(results, "revision_of", lambda data: "never-the-indexed-one")
    response = store.search("Zhima")
    assert response.results == ()
    assert any("kept changing" in n for n in response.notices)
