"""The memory screen over real HTTP: the panel served by uvicorn on a free port, driven
with urllib (the cookie on every request, the panel's Origin on every POST)."""

from __future__ import annotations

import html
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

import uvicorn

from sagemem.layers import Layers
from sagemem.store import MemoryStore
from sagemem.ui.app import build_app
from sagemem.ui.guard import COOKIE
from sagemem.ui.serve import HOST, free_port

TOKEN = "test-token-memory-screen"
PETS = """---
name: Pets
description: the cat's name
metadata:
  type: user
tags: [home]
---
The cat is called Zhima.
"""
HOSTILE = ("---\nname: <script>alert(1)</script>\n"
           "description: '\"><img src=x onerror=alert(2)>'\nmetadata:\n  type: user\n---\n"
           "<script>alert(3)</script>\n[click](javascript:alert(4))\n"
           "clear \x1b[2J and \u202eflip\n")


@dataclass
class Panel:
    """A running panel and the folder behind it."""

    url: str
    directory: Path
    state_dir: Path

    def request(self, method: str, path: str, form: dict[str, str] | None = None, *,
                origin: bool = True) -> tuple[int, str, dict[str, str]]:
        headers = {"Cookie": f"{COOKIE}={TOKEN}"}
        if method == "POST" and origin:
            headers["Origin"] = self.url
        data = None if form is None else urllib.parse.urlencode(form).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers=headers)
        try:
            with _OPENER.open(req, timeout=10) as response:
                return response.status, response.read().decode(), dict(response.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(), dict(exc.headers)

    def get(self, path: str) -> tuple[int, str]:
        status, body, _ = self.request("GET", path)
        return status, body

    def post(self, path: str, form: dict[str, str], *, origin: bool = True
             ) -> tuple[int, str, dict[str, str]]:
        return self.request("POST", path, form, origin=origin)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *_args: object, **_kwargs: object) -> None:
        return None  # the test sees the 303 and follows it itself


_OPENER = urllib.request.build_opener(_NoRedirect)


@pytest.fixture
def panel(tmp_path: Path) -> Iterator[Panel]:
    directory, state_dir = tmp_path / "memory", tmp_path / "state"
    directory.mkdir()
    (directory / "MEMORY.md").write_text("# Memory\n\n- [Pets](user_pets.md) — the cat's name\n"
                                         "- [Hostile](user_hostile.md) — hostile\n")
    (directory / "user_pets.md").write_bytes(PETS.encode())
    (directory / "user_hostile.md").write_bytes(HOSTILE.encode())
    store = MemoryStore(directory, state_dir)
    port = free_port()
    app = build_app(Layers(store), token=TOKEN, host=HOST, port=port)
    server = uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level="warning",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the panel did not start"
    try:
        yield Panel(f"http://{HOST}:{port}", directory, state_dir)
    finally:
        server.should_exit = True
        thread.join(10)
        app.app.state.panel.executor.submit(store.close).result()  # type: ignore[attr-defined]
        app.app.state.panel.executor.shutdown()  # type: ignore[attr-defined]


def _hidden(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no {name} field in the page"
    return html.unescape(found.group(1))


def _edit_form(page: str, **changes: str) -> dict[str, str]:
    """The edit form as a browser would send it, with ``changes`` typed in."""
    form = {"do": "save", "revision": _hidden(page, "revision"),
            "opened": _hidden(page, "opened"), "confirm": "yes"}
    for key in ("name", "description", "tags", "aliases", "valid_at", "invalid_at",
                "superseded_by"):
        form[key] = _hidden(page, key)
    form["type"] = re.search(r"<option selected>([^<]*)</option>", page).group(1)  # type: ignore[union-attr]
    body = re.search(r'<textarea name="body" rows="16">\n(.*?)</textarea>', page, re.S)
    assert body
    form["body"] = html.unescape(body.group(1)).replace("\n", "\r\n")  # as browsers send it
    return {**form, **changes}


PETS_URL = "/memory/project/user_pets.md"


def test_page_shows_fields_body_and_revision(panel: Panel) -> None:
    status, page = panel.get(PETS_URL)
    assert status == 200
    assert "the cat&#39;s name" in page and "The cat is called Zhima." in page
    assert re.search(r'id="revision">[0-9a-f]{12}<', page)


def test_page_shows_a_hostile_memory_inert(panel: Panel) -> None:
    status, page, headers = panel.request("GET", "/memory/project/user_hostile.md")
    assert status == 200
    assert "script-src 'self'" in headers["content-security-policy"]
    assert "<script>alert" not in page and "&lt;script&gt;alert(3)&lt;/script&gt;" in page
    assert "<img" not in page and "&#34;&gt;&lt;img src=x onerror=alert(2)&gt;" in page
    assert 'href="javascript' not in page and "[click](javascript:alert(4))" in page
    assert "\x1b" not in page and "\u202e" not in page
    assert "\\x1b[2J" in page and "\\u202eflip" in page
    scripts = re.findall(r"<script[^>]*>", page)  # the panel's own htmx, nothing else
    assert scripts and all(re.fullmatch(r'<script src="/static/[\w.-]+" defer>', s)
                           for s in scripts)


def test_save_lands_on_disk(panel: Panel) -> None:
    _, page = panel.get(PETS_URL)
    form = _edit_form(page, description="the cat's name and age",
                      body="The cat is called Zhima.\r\nShe is three.")
    status, _, headers = panel.post(PETS_URL, form)
    assert status == 303 and headers["location"].endswith("?done=saved")
    assert (panel.directory / "user_pets.md").read_text() == PETS.replace(
        "description: the cat's name", "description: the cat's name and age").replace(
        "Zhima.\n", "Zhima.\nShe is three.\n")
    _, after = panel.get(headers["location"])
    assert 'id="done"' in after and "<td>ui</td>" in after  # the journal names the panel


def test_unchanged_save_changes_no_byte(panel: Panel) -> None:
    _, page = panel.get(PETS_URL)
    status, _, headers = panel.post(PETS_URL, _edit_form(page))
    assert status == 303 and headers["location"].endswith("?done=unchanged")
    assert (panel.directory / "user_pets.md").read_bytes() == PETS.encode()


def test_stale_save_shows_both_sides_and_keeps_the_disk_text(panel: Panel) -> None:
    _, page = panel.get(PETS_URL)
    disk = PETS.replace("Zhima.", "Zhima, and she hates baths.")
    (panel.directory / "user_pets.md").write_text(disk)
    status, answer, _ = panel.post(PETS_URL, _edit_form(page, body="Mine: the cat is Sesame."))
    assert status == 409
    conflict_id = re.search(r'id="conflict-id">([^<]+)<', answer)
    assert conflict_id and (panel.state_dir / "conflicts").is_dir()
    assert any(conflict_id.group(1) in p.name for p in (panel.state_dir / "conflicts").iterdir())
    assert "Zhima, and she hates baths." in answer and "Mine: the cat is Sesame." in answer
    assert (panel.directory / "user_pets.md").read_text() == disk


def test_archive_without_a_reason_is_refused(panel: Panel) -> None:
    _, confirm = panel.get(PETS_URL + "?confirm=archive")
    assert "Archive user_pets.md?" in confirm
    status, answer, _ = panel.post(PETS_URL, {"do": "archive", "reason": "  ",
                                              "revision": _hidden(confirm, "revision")})
    assert status == 400 and "An archive needs a reason" in answer
    assert (panel.directory / "user_pets.md").exists()


def test_archive_of_a_locked_memory_is_refused(panel: Panel) -> None:
    status, _, _ = panel.post(PETS_URL, {"do": "lock", "confirm": "yes"})
    assert status == 303
    _, page = panel.get(PETS_URL)
    assert 'id="locked"' in page
    status, answer, _ = panel.post(PETS_URL, {"do": "archive", "reason": "old"})
    assert status == 409 and "is locked" in answer
    assert (panel.directory / "user_pets.md").exists()


def test_archive_then_restore(panel: Panel) -> None:
    status, _, _ = panel.post(PETS_URL, {"do": "archive", "reason": "the cat moved out"})
    assert status == 303 and (panel.directory / "archive" / "user_pets.md").exists()
    _, page = panel.get(PETS_URL)
    assert 'id="archived"' in page and 'value="restore"' in page
    status, _, _ = panel.post(PETS_URL, {"do": "restore", "confirm": "yes"})
    assert status == 303 and (panel.directory / "user_pets.md").read_bytes() == PETS.encode()


def test_revert_restores_a_prior_version(panel: Panel) -> None:
    _, page = panel.get(PETS_URL)
    panel.post(PETS_URL, _edit_form(page, body="A rewrite that lost the cat's name."))
    assert (panel.directory / "user_pets.md").read_bytes() != PETS.encode()
    _, page = panel.get(PETS_URL)
    link = re.search(r'href="([^"]*\?confirm=revert&amp;to=[0-9a-f]+)"', page)
    assert link
    _, confirm = panel.get(html.unescape(link.group(1)))
    assert "Revert user_pets.md?" in confirm
    status, _, headers = panel.post(PETS_URL, {"do": "revert",
                                               "revision": _hidden(confirm, "revision"),
                                               "to": _hidden(confirm, "to")})
    assert status == 303 and headers["location"].endswith("?done=reverted")
    assert (panel.directory / "user_pets.md").read_bytes() == PETS.encode()


def test_post_without_origin_is_refused(panel: Panel) -> None:
    status, _, _ = panel.post(PETS_URL, {"do": "lock"}, origin=False)
    assert status == 403
    _, page = panel.get(PETS_URL)
    assert 'id="locked"' not in page


def test_a_name_without_its_suffix_opens_the_memory(panel: Panel) -> None:
    status, page = panel.get("/memory/project/user_pets")
    assert status == 200 and "The cat is called Zhima." in page


def test_missing_memory_is_a_404_with_a_sentence(panel: Panel) -> None:
    status, page = panel.get("/memory/project/user_nothing.md")
    assert status == 404 and "No memory named &#39;user_nothing.md&#39;" in page
    assert panel.get("/memory/elsewhere/user_pets.md")[0] == 404


def test_unsafe_names_are_refused_by_the_library(panel: Panel) -> None:
    (panel.directory / "user_link.md").symlink_to(panel.directory / "user_pets.md")
    for path in ("/memory/project/..%2Fsecret.md", "/memory/project/user_link.md"):
        status, page = panel.get(path)
        assert status == 400 and 'id="refused"' in page, path
    status, _, _ = panel.post("/memory/project/..%2Fsecret.md", {"do": "lock"})
    assert status == 400


def test_a_save_and_a_lock_first_show_what_they_change_and_change_nothing(panel: Panel
                                                                         ) -> None:
    before = (panel.directory / "user_pets.md").read_bytes()
    _, page = panel.get(PETS_URL)
    form = {k: v for k, v in _edit_form(page, description="Zhima, the cat").items()
            if k != "confirm"}
    status, step, _ = panel.post(PETS_URL, form)
    assert status == 200 and 'id="confirm"' in step and "+description: Zhima, the cat" in step
    status, step, _ = panel.post(PETS_URL, {"do": "lock"})
    assert status == 200 and "it will never be archived" in step
    assert (panel.directory / "user_pets.md").read_bytes() == before
