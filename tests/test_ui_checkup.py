"""The Health and Injection screens over real HTTP: the panel served by uvicorn on a free
port, driven with ``urllib.request`` (the cookie from the token's redirect, ``Origin`` on
every post), the files on disk checked after each action."""

from __future__ import annotations

import http.cookiejar
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")

from conftest import MEMORY_TEXT, write_memory  # noqa: E402

from sagemem.errors import StaleRevision  # noqa: E402
from sagemem.layers import Layers  # noqa: E402
from sagemem.store import MemoryStore  # noqa: E402
from sagemem.ui.app import build_app  # noqa: E402
from sagemem.ui.serve import HOST, free_port  # noqa: E402
from sagemem.writes import conflicts  # noqa: E402

TOKEN = "test-token-0123456789"
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
INDEX = """# Memory index

- [alice](user_alice.md) — about alice
- [gone](user_gone.md) — a memory deleted by hand
"""


@dataclass
class Reply:
    status: int
    body: str


@dataclass
class Browser:
    """A client with the panel's cookie: GETs, and POSTs that carry the panel's Origin."""

    base: str
    opener: urllib.request.OpenerDirector

    def get(self, path: str) -> Reply:
        return self._send(urllib.request.Request(self.base + path))

    def post(self, path: str, fields: dict[str, str], *, origin: bool = True) -> Reply:
        headers = {"Origin": self.base} if origin else {}
        return self._send(urllib.request.Request(
            self.base + path, data=urlencode(fields).encode(), headers=headers,
            method="POST"))

    def _send(self, request: urllib.request.Request) -> Reply:
        try:
            with self.opener.open(request, timeout=30) as answer:
                return Reply(answer.status, answer.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, exc.read().decode("utf-8"))


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "memory", tmp_path / "state")
    store.directory.mkdir()
    write_memory(store.directory, "user_alice.md", MEMORY_TEXT.format(
        name="alice", description="about alice", type="user", body="Alice likes tea.\n"))
    write_memory(store.directory, "MEMORY.md", INDEX)
    return store


@pytest.fixture
def panel(store: MemoryStore) -> Iterator[Browser]:
    """The real app on a free loopback port, in a thread; a browser holding its cookie."""
    port = free_port()
    app = build_app(Layers(store), token=TOKEN, host=HOST, port=port)
    server = uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level="warning",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the panel did not start"
        time.sleep(0.02)
    jar = http.cookiejar.CookieJar()
    browser = Browser(f"http://{HOST}:{port}", urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(jar)))
    first = browser.get(f"/checkup?token={TOKEN}")  # the redirect trades it for the cookie
    assert first.status == 200 and any(c.name == "sagemem_panel" for c in jar)
    yield browser
    server.should_exit = True
    thread.join(timeout=10)


def stale_conflict(store: MemoryStore, mine: str = "Mine.\n") -> conflicts.Conflict:
    """A write based on a revision someone edited by hand since: the guard's record."""
    memory = store.get("user_alice")
    write_memory(store.directory, "user_alice.md", memory.text.replace("tea", "green tea"))
    with pytest.raises(StaleRevision) as info:
        store.write(memory.file, memory.text + mine, memory.revision)
    return conflicts.load(store.state_dir, info.value.conflict_id or "")


def section(body: str, element_id: str) -> str:
    """The HTML from the element with ``element_id`` to the end of its article/section."""
    start = body.index(f'id="{element_id}"')
    end = min(i for i in (body.find("</article>", start), body.find("</section>", start))
              if i != -1)
    return body[start:end]


def test_audit_problem_is_shown_grouped_with_file_and_line(panel: Browser) -> None:
    page = panel.get("/checkup")
    assert page.status == 200
    group = section(page.body, "layer-project")
    group = group[group.index('data-category="dangling_index_entry"'):]
    assert "<h3>dangling_index_entry" in group
    assert "MEMORY.md:4" in group and "user_gone.md" in group


def test_stale_write_shows_as_a_card_with_both_sides(panel: Browser,
                                                     store: MemoryStore) -> None:
    record = stale_conflict(store)
    card = section(panel.get("/checkup").body, f"conflict-{record.id}")
    assert "stale_version" in card and "user_alice.md" in card
    disk = card[card.index('class="side-disk"'):]
    assert "green tea" in disk[:disk.index("</pre>")]
    mine = card[card.index('class="side-mine"'):]
    assert "Alice likes tea.\n\nMine.\n" in mine[:mine.index("</pre>")]
    assert 'value="keep_disk"' in card and 'value="keep_mine"' in card


def test_keep_disk_takes_two_steps_and_closes_the_record(panel: Browser,
                                                         store: MemoryStore) -> None:
    record = stale_conflict(store)
    on_disk = (store.directory / "user_alice.md").read_bytes()
    path = f"/checkup/conflicts/project/{record.id}"
    asked = panel.post(path, {"action": "keep_disk"})
    assert asked.status == 200 and 'name="confirm" value="yes"' in asked.body
    assert "user_alice.md stays as it is on disk" in asked.body
    assert conflicts.load(store.state_dir, record.id).status == "open"  # nothing yet
    done = panel.post(path, {"action": "keep_disk", "confirm": "yes"})
    assert done.status == 200 and "keep_disk" in section(done.body, "note")
    closed = conflicts.load(store.state_dir, record.id)
    assert (closed.status, closed.decision) == ("resolved", "keep_disk")
    assert (store.directory / "user_alice.md").read_bytes() == on_disk
    assert f'id="conflict-{record.id}"' not in done.body


def test_keep_mine_writes_the_refused_version(panel: Browser, store: MemoryStore) -> None:
    record = stale_conflict(store, mine="Mine too.\n")
    panel.post(f"/checkup/conflicts/project/{record.id}",
               {"action": "keep_mine", "confirm": "yes"})
    text = store.get("user_alice").text
    assert text.endswith("Alice likes tea.\n\nMine too.\n") and "green tea" not in text
    assert conflicts.load(store.state_dir, record.id).decision == "keep_mine"


def test_contradiction_shows_both_memories_and_invalidates_one(panel: Browser,
                                                               store: MemoryStore) -> None:
    write_memory(store.directory, "user_bob.md", MEMORY_TEXT.format(
        name="bob", description="about bob", type="user", body="Alice likes coffee.\n"))
    record = conflicts.contradict(store, "user_alice", "user_bob", "tea or coffee?")
    card = section(panel.get("/checkup").body, f"conflict-{record.id}")
    assert "Alice likes tea." in card and "Alice likes coffee." in card
    panel.post(f"/checkup/conflicts/project/{record.id}",
               {"action": "invalidate", "name": "user_alice.md",
                "superseded_by": "user_bob.md", "confirm": "yes"})
    alice = store.get("user_alice")
    assert alice.invalid_at is not None and alice.superseded_by == "user_bob.md"
    undo = section(panel.get("/checkup").body, f"resolved-{record.id}")
    panel.post(f"/checkup/conflicts/project/{record.id}",
               {"action": "undo", "name": "user_alice.md", "confirm": "yes"})
    assert 'value="undo"' in undo and store.get("user_alice").invalid_at is None


def test_delete_removes_only_the_record(panel: Browser, store: MemoryStore) -> None:
    record = stale_conflict(store)
    before = (store.directory / "user_alice.md").read_bytes()
    panel.post(f"/checkup/conflicts/project/{record.id}", {"action": "delete",
                                                           "confirm": "yes"})
    assert conflicts.list_conflicts(store.state_dir) == []
    assert (store.directory / "user_alice.md").read_bytes() == before


def test_fix_preview_changes_nothing_and_the_post_applies_it(panel: Browser,
                                                             store: MemoryStore) -> None:
    preview = section(panel.get("/checkup").body, "fix-preview-project")
    assert "user_gone.md" in preview
    assert (store.directory / "MEMORY.md").read_text() == INDEX  # a preview writes nothing
    digest = re.search(r'name="plan" value="([0-9a-f]+)"', preview)
    assert digest is not None
    done = panel.post("/checkup/fix/project", {"plan": digest.group(1)})
    assert done.status == 200
    assert "user_gone.md" not in (store.directory / "MEMORY.md").read_text()
    snapshot = re.search(r'id="fix-snapshot">([^<]+)<', done.body)
    assert snapshot is not None and snapshot.group(1) != "none"
    assert (store.state_dir / "snapshots").is_dir()


def test_fix_refuses_a_plan_other_than_the_preview(panel: Browser,
                                                   store: MemoryStore) -> None:
    refused = panel.post("/checkup/fix/project", {"plan": "0" * 16})
    assert refused.status == 409 and "nothing was written" in refused.body
    assert (store.directory / "MEMORY.md").read_text() == INDEX


def test_settings_show_a_value_from_the_environment(panel: Browser,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGE_MEM_MAX_RESULTS", "7")
    row = panel.get("/injection").body
    row = row[row.index('data-key="max_results"'):]
    row = row[:row.index("</tr>")]
    assert '<td class="value">7</td>' in row and "source-env" in row
    assert "SAGE_MEM_MAX_RESULTS" in row


def test_session_attempts_show_injected_and_kept_out(panel: Browser,
                                                     store: MemoryStore) -> None:
    from sagemem.config import load_settings
    from sagemem.inject.block import inject

    settings = load_settings(memory_dir=store.directory, state_dir=store.state_dir)
    inject(Layers(store), "what does alice like", "s-1", settings)
    page = panel.get("/injection?session=s-1").body
    session = section(page, "session")
    assert "what does alice like" in session and "user_alice.md" in session
    tried = panel.get("/injection?" + urlencode({"session": "s-1", "q": "alice tea"})).body
    assert 'id="tried"' in tried and "user_alice.md" in section(tried, "tried")


def test_hostile_memory_text_stays_escaped(panel: Browser, store: MemoryStore) -> None:
    record = stale_conflict(store, mine=HOSTILE + "\n")
    write_memory(store.directory, "user_evil.md", MEMORY_TEXT.format(
        name="evil", description=HOSTILE, type="user", body=HOSTILE + "\n"))
    for path in ("/checkup", "/injection?" + urlencode({"q": "alert script evil"})):
        body = panel.get(path).body
        assert "<script>alert" not in body and "<img src=x" not in body
    card = section(panel.get("/checkup").body, f"conflict-{record.id}")
    assert "&lt;script&gt;alert(" in card


def test_post_without_origin_is_refused(panel: Browser, store: MemoryStore) -> None:
    record = stale_conflict(store)
    refused = panel.post(f"/checkup/conflicts/project/{record.id}",
                         {"action": "delete", "confirm": "yes"}, origin=False)
    assert refused.status == 403
    assert conflicts.load(store.state_dir, record.id).status == "open"


def test_unknown_conflict_and_layer_are_not_found(panel: Browser) -> None:
    assert panel.post("/checkup/conflicts/project/nope", {"action": "delete"}).status == 404
    assert panel.post("/checkup/conflicts/elsewhere/nope", {"action": "delete"}).status == 404
