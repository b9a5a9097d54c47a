"""The vector store and keeping it in step: only new texts are embedded, another embedder
re-embeds, removed texts are compacted away, a killed build resumes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_embedder import FakeEmbedder, factory_of

from sagemem.embed.embedder import register_embedder
from sagemem.search import vector_sync
from sagemem.search.vector_sync import sync_vectors, texts_of
from sagemem.search.vectors import VectorStore, vectors_path
from sagemem.store import MemoryStore

NOTE = """---
name: Deploys
description: how we ship the web app
tags: [ops]
---
# Rollout

We deploy with kubectl rollout on Tuesdays.

The canary runs for one hour before the full rollout.

Rollbacks use helm rollback with the previous release.
"""


@pytest.fixture
def store(tmp_path: Path, fake: FakeEmbedder) -> Iterator[MemoryStore]:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "project_deploys.md").write_text(NOTE, encoding="utf-8")
    (memory / "user_tea.md").write_text("---\nname: Tea\ndescription: likes green tea\n---\n"
                                        "Green tea, no sugar.\n", encoding="utf-8")
    with MemoryStore(memory, tmp_path / "state", semantic=True, embedder="fake") as opened:
        yield opened


def synced(store: MemoryStore) -> vector_sync.VectorReport:
    index = store.search_index()
    index.sync()
    return sync_vectors(store.vector_store(), index, store.embedder())


def test_first_sync_embeds_every_summary_and_paragraph(store: MemoryStore,
                                                       fake: FakeEmbedder) -> None:
    report = synced(store)
    assert report.files_done == 2 and not report.behind
    assert len(fake.texts) == 1 + 3 + 1 + 1  # two summaries, four paragraphs
    assert store.vector_store().rows() == len(fake.texts)


def test_an_edit_re_embeds_only_the_paragraph_it_changed(store: MemoryStore,
                                                         fake: FakeEmbedder) -> None:
    synced(store)
    fake.texts.clear()
    path = store.directory / "project_deploys.md"
    path.write_text(NOTE.replace("one hour", "two hours"), encoding="utf-8")
    synced(store)
    assert len(fake.texts) == 1 and "two hours" in fake.texts[0]


def test_a_rename_or_a_moved_paragraph_re_embeds_nothing(store: MemoryStore,
                                                         fake: FakeEmbedder) -> None:
    synced(store)
    fake.texts.clear()
    os.rename(store.directory / "project_deploys.md", store.directory / "project_ship.md")
    text = NOTE.split("# Rollout\n\n")[1].split("\n\n")
    moved = NOTE.split("# Rollout")[0] + "# Rollout\n\n" + "\n\n".join(
        [text[0], text[2].rstrip("\n"), text[1]]) + "\n"
    (store.directory / "project_ship.md").write_text(moved, encoding="utf-8")
    report = synced(store)
    assert fake.texts == [] and report.files_done == 1
    assert set(store.vector_store().revisions()) == {"project_ship.md", "user_tea.md"}


def test_a_memory_embeds_its_summary_and_each_paragraph_as_written() -> None:
    from sagemem.files.memory import parse

    items = texts_of(parse(NOTE.encode(), "project_deploys.md"))
    assert items[0].kind == "summary" and "how we ship the web app" in items[0].text
    assert items[2].text == "The canary runs for one hour before the full rollout."
    assert (items[2].start_line, items[2].end_line) == (10, 10)


def test_the_optional_prefix_gives_a_paragraph_its_name_and_heading(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from sagemem.files.memory import parse

    monkeypatch.setattr(vector_sync, "PREFIX_PARAGRAPHS", True)
    items = texts_of(parse(NOTE.encode(), "project_deploys.md"))
    assert items[2].text.startswith("Deploys — Rollout\n")


def test_another_embedder_re_embeds_everything_with_a_notice(store: MemoryStore,
                                                             tmp_path: Path) -> None:
    synced(store)
    other = FakeEmbedder("fake:2")
    register_embedder("fake2", factory_of(other))
    with MemoryStore(store.directory, store.state_dir, semantic=True,
                     embedder="fake2") as again:
        synced(again)
        assert len(other.texts) == 6
        assert any("re-embedding every memory with fake:2" in n
                   for n in again.vector_store().notices)


def test_a_damaged_matrix_is_rebuilt_with_a_notice(store: MemoryStore,
                                                   fake: FakeEmbedder) -> None:
    synced(store)
    vectors = store.vector_store()
    matrix = next(vectors.path.parent.glob("vectors-*.i8"))
    vectors.close()
    os.truncate(matrix, 10)
    fake.texts.clear()
    synced(store)
    assert len(fake.texts) == 6
    assert any("lost part of its matrix file" in n for n in vectors.notices)


def test_removed_texts_are_compacted_away(store: MemoryStore, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    monkeypatch.setattr(vector_sync, "COMPACT_MIN_ROWS", 1)
    synced(store)
    (store.directory / "project_deploys.md").unlink()
    report = synced(store)
    assert report.compacted == 4 and store.vector_store().rows() == 2
    response = store.search("green tea", mode="semantic")
    assert [r.file for r in response.results] == ["user_tea.md"]


KILLED_BUILD = """
import sys, time
sys.path.insert(0, {tests!r})
from fake_embedder import SlowEmbedder, factory_of
from sagemem.search import vector_sync
from sagemem.embed.embedder import register_embedder
from sagemem.store import MemoryStore
vector_sync.BATCH_TEXTS = 2
register_embedder("fake", factory_of(SlowEmbedder(0.05)))
store = MemoryStore({memory!r}, {state!r}, semantic=True, embedder="fake")
store.search_index().sync()
def progress(done, total, what):
    print(done, flush=True)
vector_sync.sync_vectors(store.vector_store(), store.search_index(), store.embedder(),
                         progress=progress)
print("finished", flush=True)
"""


def test_a_killed_build_keeps_its_batches_and_resumes(tmp_path: Path, fake: FakeEmbedder
                                                      ) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    for i in range(40):
        (memory / f"project_n{i}.md").write_text(
            f"---\nname: Note {i}\ndescription: note number {i}\n---\nbody of note {i}\n",
            encoding="utf-8")
    script = KILLED_BUILD.format(tests=str(Path(__file__).parent), memory=str(memory),
                                 state=str(tmp_path / "state"))
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    seen = [child.stdout.readline() for _ in range(5)]  # five batches committed
    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()
    assert "finished\n" not in seen
    with MemoryStore(memory, tmp_path / "state", semantic=True, embedder="fake") as store:
        kept = store.vector_store().rows()
        assert kept >= 10
        report = synced(store)
        assert not report.behind and len(fake.texts) == 80 - kept
        assert store.vector_store().rows() == 80


def test_vectors_live_beside_the_lexical_index(store: MemoryStore) -> None:
    synced(store)
    path = store.vector_store().path
    assert path == vectors_path(store.search_index().path)
    assert path.parent == store.state_dir / "index" and path.name.startswith("vectors-")


def test_scores_are_cosines_within_quantisation(tmp_path: Path) -> None:
    import numpy as np

    vectors = VectorStore(tmp_path / "vectors-x.sqlite3", "fake:1", 64)
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(5, 64)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    vectors.commit({str(i): rows[i] for i in range(5)}, {})
    assert np.allclose(vectors.scores(rows[2]), rows @ rows[2], atol=0.02)
    vectors.close()


def test_repeated_scoring_keeps_a_float32_copy_and_drops_it_when_rows_change(
    store: MemoryStore, fake: FakeEmbedder
) -> None:
    import numpy as np

    synced(store)
    vectors = store.vector_store()
    query = fake.encode(["green tea"])[0]
    first = vectors.scores(query)
    assert vectors.matrix._dense is None  # a one-query process never pays for the copy
    second = vectors.scores(query)
    assert vectors.matrix._dense is not None and np.allclose(first, second, atol=1e-5)
    (store.directory / "user_coffee.md").write_text(
        "---\nname: Coffee\ndescription: drinks black coffee\n---\nBlack, no sugar.\n",
        encoding="utf-8")
    synced(store)
    grown = vectors.scores(query)
    assert len(grown) > len(second) and vectors.matrix._dense is None  # rebuilt on the next query


# -- damage, first use and compaction under other processes ----------------------------


def _garble(path: Path, offset: int, size: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(b"\xa5" * size)


def test_a_store_whose_header_is_overwritten_is_rebuilt_with_a_notice(
        store: MemoryStore, fake: FakeEmbedder) -> None:
    synced(store)
    path = store.vector_store().path
    store.vector_store().close()
    _garble(path, 0, 200)
    response = store.search("green tea", mode="semantic")
    assert response.results and response.results[0].file == "user_tea.md"
    assert [n for n in response.notices if "vector index" in n and "rebuilt" in n]


def test_a_store_garbled_past_its_header_is_rebuilt_when_the_damage_is_met(
        store: MemoryStore, fake: FakeEmbedder) -> None:
    synced(store)
    vectors = store.vector_store()
    path = vectors.path
    vectors.close()
    import sqlite3

    with sqlite3.connect(path) as conn:  # fold the WAL in: every page in the main file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        roots = dict(conn.execute("SELECT name, rootpage FROM sqlite_master"))
    page = 4096
    first = max(roots["meta"], 1) * page  # opening reads the schema and meta pages only
    _garble(path, first, path.stat().st_size - first)
    response = store.search("green tea", mode="hybrid")
    assert response.results and response.results[0].file == "user_tea.md"
    assert [n for n in response.notices if "vector index" in n and "damaged" in n]
    report = synced(store)  # and `sagemem index` goes on from the rebuilt store
    assert not report.behind


FRESH_OPEN = """
import sys, time
sys.path.insert(0, {tests!r})
from pathlib import Path
import numpy as np
from sagemem.search.vectors import VectorStore
start = {start!r}
time.sleep(max(0.0, start - time.time()))  # every process opens the new store at once
store = VectorStore(Path({path!r}), "fake:1", 8)
for _ in range(20):
    store.commit({{str({i}) + ":" + str(_): np.ones(8, dtype=np.float32)}}, {{}})
print(store.rows(), len(store.notices))
"""


def test_processes_opening_a_fresh_store_at_once_share_it(tmp_path: Path) -> None:
    path = tmp_path / "index" / "vectors-x.sqlite3"
    start = time.time() + 3
    children = [subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(FRESH_OPEN.format(
            tests=str(Path(__file__).parent), path=str(path), i=i, start=start))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(6)]
    outputs = [child.communicate(timeout=120) for child in children]
    assert all(child.returncode == 0 for child in children), [err for _, err in outputs]
    vectors = VectorStore(path, "fake:1", 8)
    assert vectors.rows() == 6 * 20  # no process threw another's rows away
    vectors.close()


def test_hits_of_rows_renumbered_by_another_process_are_scored_again(
        store: MemoryStore, fake: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(6):
        (store.directory / f"project_n{i}.md").write_text(
            f"---\nname: Note {i}\ndescription: tea note {i}\n---\nGreen tea {i}.\n\n"
            f"Oolong {i}.\n", encoding="utf-8")
    synced(store)
    vectors = store.vector_store()
    other = VectorStore(vectors.path, vectors.embedder_name, vectors.dim)
    for i in range(0, 6, 2):
        (store.directory / f"project_n{i}.md").unlink()  # their rows become garbage
    (store.directory / "project_deploys.md").unlink()
    synced(store)
    real_scores = VectorStore.scores
    compacted: list[int] = []

    def scores_then_compact(self: VectorStore, query: object) -> object:
        out = real_scores(self, query)  # type: ignore[arg-type]
        if not compacted:
            compacted.append(other.compact())  # between scores() and hits()
        return out

    monkeypatch.setattr(VectorStore, "scores", scores_then_compact)
    raced = store.search("green tea", mode="semantic")
    other.close()
    monkeypatch.setattr(VectorStore, "scores", real_scores)
    assert compacted and compacted[0] > 0
    assert raced.results == store.search("green tea", mode="semantic").results


def test_index_rebuilds_a_store_found_damaged_mid_use(store: MemoryStore) -> None:
    import sqlite3

    from sagemem.cli.embedding import embed_all

    synced(store)
    vectors = store.vector_store()
    path = vectors.path
    vectors.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        roots = dict(conn.execute("SELECT name, rootpage FROM sqlite_master"))
    first = roots["meta"] * 4096  # past the pages opening reads
    _garble(path, first, path.stat().st_size - first)
    (store.directory / "user_tea.md").write_text(
        "---\nname: Tea\ndescription: likes oolong\n---\nOolong, no sugar.\n", encoding="utf-8")
    store.search_index().sync()
    assert "2 files embedded" in embed_all(store, rebuild=False)
    assert not synced(store).behind
