"""The panel in a real browser: Debian's headless Chromium driven by Playwright (PyPI,
pointed at the system browser; nothing is downloaded). The token URL opens the Files
table, its filters change it, a hostile memory stays text (no dialog, no policy
violation), and the Files screen's screenshot goes into the docs.

Without a browser (no ``/usr/bin/chromium``, or playwright not installed) these tests
skip and say why; in CI (``CI`` set, as ``.ci/run`` sets it) they fail instead, so a
broken browser setup can never pass as a skip."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from panel_server import HOSTILE_MEMORY, PanelServer, launched_chromium, running_panel

from sagemem.store import MemoryStore

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_memory"
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launched_chromium() as chromium:
        yield chromium


def _copy_sample(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    shutil.copytree(SAMPLE, directory, ignore=shutil.ignore_patterns(".sage-mem"))
    return directory


@pytest.fixture
def sample_panel(tmp_path: Path) -> Iterator[PanelServer]:
    """The panel over a copy of ``sample_memory/``."""
    with running_panel(_copy_sample(tmp_path), tmp_path / "state") as server:
        yield server


@pytest.fixture
def hostile_panel(tmp_path: Path) -> Iterator[PanelServer]:
    """The panel over the sample folder and one memory written to attack the page."""
    directory = _copy_sample(tmp_path)
    (directory / "hostile.md").write_text(HOSTILE_MEMORY, encoding="utf-8")
    with running_panel(directory, tmp_path / "state") as server:
        yield server


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def _files_shown(page: Page) -> list[str]:
    return list(page.locator("#files tbody tr[data-file]").evaluate_all(
        "rows => rows.map(r => r.dataset.file)"))


def _wait_for_search(page: Page) -> None:
    # A function, not an expression string: Playwright evals a string, which the panel's
    # content policy (no unsafe-eval) rightly refuses.
    # The first hybrid search of a process loads the embedder: seconds on a busy machine.
    page.wait_for_function("() => document.querySelector('#files thead')"
                           ".textContent.includes('Score')", timeout=90_000)


def _sample_files(*, type_: str | None = None) -> set[str]:
    listing = MemoryStore(SAMPLE, SAMPLE / ".sage-mem").list(include_archived=True)
    return {m.file for m in listing.memories if type_ in (None, m.type)}


def test_the_token_url_opens_the_files_table(page: Page, sample_panel: PanelServer) -> None:
    page.goto(sample_panel.token_url)
    # The token became a cookie the page's scripts cannot read, and left the address bar.
    assert page.url == f"{sample_panel.url}/files"
    assert page.evaluate("document.cookie") == ""
    assert set(_files_shown(page)) == _sample_files()
    assert page.locator("#badge-problems").is_visible()


def test_the_type_filter_changes_the_table(page: Page, sample_panel: PanelServer) -> None:
    page.goto(sample_panel.token_url)
    everything = _files_shown(page)
    page.select_option("select[name=type]", "user")
    # htmx swaps #main on change; wait until the table holds user memories only.
    page.wait_for_function("""() => {
        const types = [...document.querySelectorAll('#files tbody tr[data-file] td:nth-child(3)')]
            .map(td => td.textContent);
        return types.length > 0 && types.every(t => t === 'user');
    }""")
    shown = _files_shown(page)
    assert set(shown) == _sample_files(type_="user")
    assert len(shown) < len(everything)
    assert page.url.endswith("type=user") or "type=user&" in page.url


def test_the_search_box_changes_the_table(page: Page, sample_panel: PanelServer) -> None:
    page.goto(sample_panel.token_url)
    page.fill("input[name=q]", "cat")
    page.press("input[name=q]", "Enter")
    _wait_for_search(page)
    shown = _files_shown(page)
    assert shown and shown[0] == "user_pets.md"
    assert len(shown) < len(_sample_files())
    assert page.input_value("input[name=q]") == "cat"


def test_a_hostile_memory_stays_text_in_the_browser(page: Page,
                                                    hostile_panel: PanelServer) -> None:
    dialogs: list[str] = []
    problems: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("pageerror", lambda error: problems.append(str(error)))

    def console(message: Any) -> None:
        # The browser asks for /favicon.ico by itself; the panel has none (a 404, not
        # something our pages did).
        if message.type in ("error", "warning") and \
                not message.location.get("url", "").endswith("/favicon.ico"):
            problems.append(f"{message.text} ({message.location.get('url')})")

    page.on("console", console)
    page.goto(hostile_panel.token_url)
    row = page.locator('#files tr[data-file="hostile.md"]')
    assert row.locator("td").nth(1).text_content() == \
        "<script>alert(1)</script> \\x1b[31mred\\x07"
    assert row.locator(".tag").first.text_content() == "<script>alert(3)</script>"
    # The filters re-render the page through htmx: still nothing runs.
    page.select_option("select[name=type]", "project")
    # The filter's answer must be in before the search is typed: arriving after the
    # search's, it replaced the scored table and the wait below never ended (1 run in 4).
    page.wait_for_url(re.compile(r"type=project"))
    page.wait_for_selector('#files tr[data-file="hostile.md"]')
    page.fill("input[name=q]", "alert script")
    page.press("input[name=q]", "Enter")
    _wait_for_search(page)
    assert page.locator("script").count() == 3  # the panel's htmx, its SSE extension, panel.js
    assert page.evaluate("document.querySelectorAll('[onerror], img').length") == 0
    assert dialogs == []
    assert problems == [], f"errors or policy violations on the panel's page: {problems}"


def test_the_files_screen_renders_to_a_picture(page: Page, sample_panel: PanelServer,
                                               tmp_path: Path) -> None:
    page.goto(sample_panel.token_url)
    page.wait_for_selector("#files tbody tr[data-file]")
    shot = tmp_path / "panel-files.png"  # the docs' picture: test_ui_browser_screens.py
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
