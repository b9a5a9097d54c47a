"""The panel's Timeline and Undo screens over real HTTP: the real app under uvicorn on a
free loopback port, the token traded for its cookie, every change confirmed in two steps
and checked on disk."""

from __future__ import annotations

import hashlib
import html
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest
from dream_fixture import make_dream_folder

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("jinja2")

import uvicorn

from sagemem.config import load_settings
from sagemem.dream.plan import Operation, Plan
from sagemem.dream.run import dream_run
from sagemem.history.snapshots import create_snapshot
from sagemem.layers import Layers
from sagemem.store import MemoryStore
from sagemem.ui.app import build_app
from sagemem.ui.serve import HOST, free_port
from sagemem.ui.undo import WRITER

TOKEN = "test-token-0123456789"
NOTE = "project_server_port.md"
NOTE_TEXT = ("---\nname: Server port\ndescription: Where the dev server listens\n"
             "metadata:\n  type: project\n---\nThe dev server listens on port 8080.\n"
             "Restart it after changing the config.\n")
CONTRACT = "project_vendor_contract.md"
STILL_VALID = "Contract expires 2027-10-03, no auto-renewal."


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


@dataclass
class Browser:
    """Real HTTP to the panel, holding the cookie its token redirect set."""

    base: str
    cookie: str = ""

    def open(self, path: str, data: dict[str, str] | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, str, dict[str, str]]:
        body = None if data is None else urlencode(data).encode()
        request = urllib.request.Request(self.base + path, data=body,
                                         headers={"Cookie": self.cookie, **(headers or {})})
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(request, timeout=30) as response:
                return response.status, response.read().decode(), dict(response.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(), dict(exc.headers)

    def get(self, path: str) -> str:
        status, text, _ = self.open(path)
        assert status == 200, (status, text)
        return text

    def post(self, path: str, data: dict[str, str], *, origin: str | None = "same"
             ) -> tuple[int, str]:
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if origin is not None:
            headers["Origin"] = self.base if origin == "same" else origin
        status, text, _ = self.open(path, data, headers)
        return status, text


Serve = Callable[[MemoryStore], Browser]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Start the real panel over a store's folder; the browser has traded the token."""
    servers: list[tuple[uvicorn.Server, threading.Thread, Layers]] = []

    def start(store: MemoryStore) -> Browser:
        # The panel gets its own store: SQLite connections belong to the thread using them.
        layers = Layers(MemoryStore(store.directory, store.state_dir))
        port = free_port()
        app = build_app(layers, token=TOKEN, host=HOST, port=port)
        server = uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level="warning",
                                               lifespan="off"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        servers.append((server, thread, layers))
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "the panel did not start"
            time.sleep(0.02)
        browser = Browser(f"http://{HOST}:{port}")
        status, _, headers = browser.open(f"/timeline?token={TOKEN}")
        assert status == 303 and headers["location"] == "/timeline"
        browser.cookie = headers["set-cookie"].split(";")[0]
        return browser

    yield start
    for server, thread, layers in servers:
        server.should_exit = True
        thread.join(timeout=10)
        layers.close()


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    folder = tmp_path / "memory"
    folder.mkdir()
    return MemoryStore(folder, tmp_path / "state")


@pytest.fixture
def edited_store(store: MemoryStore) -> MemoryStore:
    """One memory created by the CLI, then its port changed by an MCP client."""
    created = store.write(NOTE, NOTE_TEXT, None, reason="remember the port", writer="cli")
    store.write(NOTE, NOTE_TEXT.replace("8080", "9090"), created.revision,
                reason="the port moved", writer="mcp")
    return store


@pytest.fixture
def dream_store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(make_dream_folder(tmp_path), tmp_path / "state")


def rows(page: str, table: str) -> list[str]:
    body = page.split(f'id="{table}"', 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr data-.*?</tr>", body, flags=re.S)


def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()
            and p.relative_to(folder).parts[0] != "dream"}


def hidden(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no hidden field {name}"
    return html.unescape(found.group(1))


# -- timeline ------------------------------------------------------------------------------

def test_timeline_lists_a_library_write_with_its_writer_and_reason(edited_store, serve):
    page = serve(edited_store).get("/timeline")
    newest, oldest = rows(page, "timeline")
    assert 'data-writer="mcp"' in newest and "the port moved" in newest and NOTE in newest
    assert 'data-writer="cli"' in oldest and "remember the port" in oldest
    assert "create" in oldest and "+0" in newest  # the byte change of 8080 → 9090


def test_the_writer_filter_keeps_only_that_writers_changes(edited_store, serve):
    page = serve(edited_store).get("/timeline?writer=cli")
    [only] = rows(page, "timeline")
    assert "remember the port" in only and "the port moved" not in page


def test_the_memory_filter_keeps_only_that_memorys_changes(edited_store, serve):
    edited_store.write("project_other.md", NOTE_TEXT.replace("Server port", "Other"), None,
                       reason="another memory", writer="cli")
    browser = serve(edited_store)
    assert len(rows(browser.get("/timeline"), "timeline")) == 3
    assert len(rows(browser.get(f"/timeline?file={NOTE}"), "timeline")) == 2


def test_a_changes_diff_shows_the_changed_line(edited_store, serve):
    browser = serve(edited_store)
    newest = rows(browser.get("/timeline"), "timeline")[0]
    link = html.unescape(re.search(r'href="(/diff\?[^"]+)"', newest).group(1))
    page = browser.get(link)
    assert '<span class="del">-The dev server listens on port 8080.</span>' in page
    assert '<span class="add">+The dev server listens on port 9090.</span>' in page
    assert "Restart it after" in page  # context line


def test_a_diff_of_a_version_no_longer_held_says_so(edited_store, serve):
    current = edited_store.get(NOTE).revision
    page = serve(edited_store).get(f"/diff?file={NOTE}&before={'ab' * 32}&after={current}")
    assert "is no longer held" in page and 'id="diff"' not in page


# -- undo: snapshots and rollback ----------------------------------------------------------

def test_a_rollback_through_its_confirmation_restores_the_snapshots_bytes(edited_store, serve):
    path = edited_store.directory / NOTE
    held = path.read_bytes()
    snapshot = create_snapshot(edited_store)
    edited_store.write(NOTE, NOTE_TEXT.replace("8080", "7070"),
                       edited_store.get(NOTE).revision, reason="wrong port", writer="mcp")
    browser = serve(edited_store)
    assert snapshot.id in browser.get("/undo")
    diff = browser.get(f"/undo/snapshot/project/{snapshot.id}")
    assert "-The dev server listens on port 9090." in diff
    assert "+The dev server listens on port 7070." in diff
    confirm = browser.get(f"/undo/rollback?layer=project&snapshot={snapshot.id}&scope=touched")
    assert NOTE in confirm.split('id="preview"', 1)[1] and b"7070" in path.read_bytes()
    form = {k: hidden(confirm, k) for k in ("layer", "snapshot", "scope", "digest")}
    status, done = browser.post("/undo/rollback", form)
    assert status == 200 and "Rolled back to snapshot" in done
    assert path.read_bytes() == held
    assert "rollback" in browser.get(f"/timeline?writer={WRITER}")


def test_a_rollback_confirmed_before_the_folder_changed_again_is_shown_again(edited_store,
                                                                           serve):
    snapshot = create_snapshot(edited_store)
    path = edited_store.directory / NOTE
    path.write_text(NOTE_TEXT.replace("8080", "7070"))
    browser = serve(edited_store)
    confirm = browser.get(f"/undo/rollback?layer=project&snapshot={snapshot.id}&scope=all")
    form = {k: hidden(confirm, k) for k in ("layer", "snapshot", "scope", "digest")}
    path.write_text(NOTE_TEXT.replace("8080", "6060"))  # after the confirmation was shown
    status, again = browser.post("/undo/rollback", form)
    assert status == 200 and 'id="moved-on"' in again
    assert "6060" in path.read_text()


def test_an_unknown_snapshot_is_a_page_saying_so(edited_store, serve):
    status, page, _ = serve(edited_store).open("/undo/rollback?snapshot=19990101T000000")
    assert status == 409 and 'id="problem"' in page


def test_recover_with_nothing_pending_goes_through_its_confirmation(edited_store, serve):
    browser = serve(edited_store)
    assert "Nothing is waiting to be recovered." in browser.get("/undo/recover")
    status, page = browser.post("/undo/recover", {})
    assert status == 200 and "Nothing to recover." in page


# -- undo: consolidation runs --------------------------------------------------------------

def test_a_dream_runs_lost_facts_show_and_its_undo_restores_the_folder(dream_store, serve):
    before = tree(dream_store.directory)
    text = dream_store.get(CONTRACT).text
    plan = Plan((Operation("rewrite", CONTRACT, "tidied", dream_store.get(CONTRACT).revision,
                           text.replace(STILL_VALID + "\n", ""), "other"),))
    settings = load_settings(env={}, memory_dir=dream_store.directory,
                             state_dir=dream_store.state_dir)
    report = dream_run(dream_store, settings, plan, apply=True)
    assert report.status == "applied" and tree(dream_store.directory) != before
    browser = serve(dream_store)
    [row] = rows(browser.get("/undo"), "runs")
    assert report.run_id in row and "applied" in row
    page = browser.get(f"/undo/run/project/{report.run_id}")
    facts = page.split('id="facts"', 1)[1]
    assert "Facts no longer present (1)" in facts and STILL_VALID in facts
    assert f"{CONTRACT}:" in facts
    confirm = browser.get(f"/undo/run/project/{report.run_id}/undo")
    assert CONTRACT in confirm.split('id="preview"', 1)[1]
    assert tree(dream_store.directory) != before  # the confirmation changed nothing
    status, done = browser.post(f"/undo/run/project/{report.run_id}/undo", {})
    assert status == 200 and "undone" in done
    assert tree(dream_store.directory) == before
    assert "undone" in rows(browser.get("/undo"), "runs")[0]


# -- safety --------------------------------------------------------------------------------

@pytest.mark.parametrize("origin", [None, "http://evil.example"])
def test_a_post_without_the_panels_origin_is_refused(dream_store, serve, origin):
    settings = load_settings(env={}, memory_dir=dream_store.directory,
                             state_dir=dream_store.state_dir)
    text = dream_store.get(CONTRACT).text
    report = dream_run(dream_store, settings, Plan((Operation(
        "rewrite", CONTRACT, "tidied", dream_store.get(CONTRACT).revision,
        text + "More.\n", "other"),)), apply=True)
    after = tree(dream_store.directory)
    status, page = serve(dream_store).post(f"/undo/run/project/{report.run_id}/undo", {},
                                           origin=origin)
    assert status == 403 and "own page" in page
    assert tree(dream_store.directory) == after


def test_hostile_memory_text_stays_escaped(store, serve):
    hostile = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    text = NOTE_TEXT.replace("Server port", hostile)
    created = store.write(NOTE, text, None, reason=f"{hostile} \x1b[31m", writer="cli")
    store.write(NOTE, text + f"[x](javascript:alert(3)) {hostile}\n", created.revision,
                reason="more", writer="cli")
    browser = serve(store)
    timeline = browser.get("/timeline")
    link = html.unescape(re.search(r'href="(/diff\?[^"]+)"', timeline).group(1))
    for page in (timeline, browser.get(link)):
        assert "<script>alert" not in page and "<img" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert "\x1b" not in page
    assert 'href="javascript' not in browser.get(link)
