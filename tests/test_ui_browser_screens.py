"""The panel's screens in a real browser, beyond Files: edit a memory and save it, a stale
save shown as a conflict, a conflict resolved on Health, a snapshot rolled back through
its confirmation on Undo, the map's points, a live update — and a screenshot of every
screen for the docs (``docs/img/panel-<screen>.png``, 1280×800).

The same browser as ``test_ui_browser.py`` (Debian's headless Chromium through
Playwright; skipped locally without it, failing in CI). Every test works on a copy of
``sample_memory/`` (or ``tests/dream_fixture.py``'s folder for a consolidation run), with
file times and the library's clock pinned where a screenshot would show them."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from dream_fixture import make_dream_folder
from panel_server import PanelServer, launched_chromium, running_panel

from sagemem.config import load_settings
from sagemem.dream.plan import Operation, Plan
from sagemem.dream.run import dream_run
from sagemem.errors import StaleRevision
from sagemem.history.snapshots import create_snapshot
from sagemem.store import MemoryStore
from sagemem.writes import conflicts

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_memory"
IMG = ROOT / "docs" / "img"
VIEWPORT = {"width": 1280, "height": 800}
PINNED = datetime(2026, 3, 14, 9, 30, tzinfo=timezone.utc)
"""The time every file and every change of a screenshot's folder carries."""
PORTS = "reference_local_ports.md"
PETS = "user_pets.md"
CONTRACT = "project_vendor_contract.md"
STILL_VALID = "Contract expires 2027-10-03, no auto-renewal."


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launched_chromium() as chromium:
        yield chromium


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def _pin_times(directory: Path) -> None:
    stamp = PINNED.timestamp()
    for path in directory.rglob("*"):
        os.utime(path, (stamp, stamp))


def _copy_sample(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    shutil.copytree(SAMPLE, directory, ignore=shutil.ignore_patterns(".sage-mem"))
    _pin_times(directory)
    return directory


@pytest.fixture
def sample_panel(tmp_path: Path) -> Iterator[PanelServer]:
    """The panel over a copy of ``sample_memory/``."""
    with running_panel(_copy_sample(tmp_path), tmp_path / "state") as server:
        yield server


def _store(server: PanelServer) -> MemoryStore:
    """A store of its own over the panel's folder, as another writer on the machine is
    (the panel's store lives on its own thread)."""
    project = server.layers.project
    return MemoryStore(project.directory, project.state_dir)


@contextmanager
def _clock(monkeypatch: pytest.MonkeyPatch, *modules: str) -> Iterator[None]:
    """The library's clock in ``modules`` starts at PINNED and steps a minute a call, so
    what a screenshot shows of the time is the same on every run."""
    calls = iter(range(10_000))

    class Pinned(datetime):
        @classmethod
        def now(cls, tz: object = None) -> Pinned:  # type: ignore[override]
            moment = PINNED + timedelta(minutes=next(calls))
            return cls.fromtimestamp(moment.timestamp(), tz=timezone.utc)

    with monkeypatch.context() as patch:
        for module in modules:
            patch.setattr(f"{module}.datetime", Pinned)
        yield


def _shot(page: Page, screen: str) -> None:
    """A screenshot of the screen: into docs/img with SAGEMEM_SCREENSHOTS=1 (how the
    docs' pictures are made), else into a scratch folder — a test run never rewrites the
    checkout."""
    import tempfile

    folder = IMG if os.environ.get("SAGEMEM_SCREENSHOTS") == "1" else \
        Path(tempfile.gettempdir()) / "sagemem-panel-shots"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"panel-{screen}.png"
    page.evaluate("() => document.fonts.ready.then(() => true)")
    page.screenshot(path=str(target))
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _submit(page: Page, button: str) -> None:
    """Click a form's submit button and check the panel accepted the post."""
    with page.expect_response(lambda r: r.request.method == "POST") as posted:
        page.click(button)
    reply = posted.value
    assert reply.status != 403, f"the panel refused its own page's post: {reply.text()}"


def _open_memory_from_files(page: Page, server: PanelServer, file: str) -> None:
    page.goto(server.token_url)
    page.click(f'#files tr[data-file="{file}"] td:first-child a')
    page.wait_for_url(f"**/memory/project/{file}")


# -- editing --------------------------------------------------------------------------------

def test_an_edit_saved_in_the_browser_lands_on_disk(page: Page,
                                                    sample_panel: PanelServer) -> None:
    path = sample_panel.layers.project.directory / PORTS
    before = path.read_text(encoding="utf-8")
    _open_memory_from_files(page, sample_panel, PORTS)
    _shot(page, "memory")
    page.click("#edit summary")
    body = page.locator("#editor textarea[name=body]")
    body.wait_for()
    _shot(page, "edit")
    text = body.input_value()
    body.fill(text.rstrip("\n") + "\nThe docs server listens on port 8123.")
    _submit(page, "#editor button[type=submit]")
    page.wait_for_selector("#confirm")  # the second step names the change: its diff
    assert "+The docs server listens on port 8123." in page.inner_text("#diff")
    assert path.read_text(encoding="utf-8") == before
    _submit(page, "#confirm-yes")
    page.wait_for_selector("#done")
    after = path.read_text(encoding="utf-8")
    assert after != before
    assert after.endswith("The docs server listens on port 8123.\n")
    assert after.split("---", 2)[1] == before.split("---", 2)[1] or "updated" in after
    assert "The docs server listens on port 8123." in page.inner_text("#body")


def test_a_stale_save_shows_both_sides_and_leaves_the_disk_alone(
        page: Page, sample_panel: PanelServer) -> None:
    path = sample_panel.layers.project.directory / PETS
    _open_memory_from_files(page, sample_panel, PETS)
    page.click("#edit summary")
    body = page.locator("#editor textarea[name=body]")
    body.fill(body.input_value().rstrip("\n") + "\nMine: a new kitten.")
    disk = path.read_text(encoding="utf-8") + "Theirs: a goldfish, written meanwhile.\n"
    path.write_text(disk, encoding="utf-8")
    _submit(page, "#editor button[type=submit]")
    page.wait_for_selector("#confirm")
    _submit(page, "#confirm-yes")
    page.wait_for_selector("#stale")
    assert "Theirs: a goldfish" in page.inner_text("#disk")
    assert "Mine: a new kitten." in page.inner_text("#mine")
    assert "Mine: a new kitten." not in page.inner_text("#disk")
    assert path.read_text(encoding="utf-8") == disk


# -- Health: a conflict resolved --------------------------------------------------------------

def _stale_conflict(store: MemoryStore, file: str) -> tuple[conflicts.Conflict, str]:
    """A write based on a revision edited by hand since: the guard's record, and the
    text on disk."""
    memory = store.get(file)
    disk = memory.text + "Edited by hand in an editor.\n"
    (store.directory / memory.file).write_text(disk, encoding="utf-8")
    with pytest.raises(StaleRevision) as info:
        store.write(memory.file, memory.text + "Written by an agent from an old read.\n",
                    memory.revision, writer="mcp")
    return conflicts.load(store.state_dir, info.value.conflict_id or ""), disk


def test_a_conflict_resolved_on_health_keeps_the_disk(
        page: Page, sample_panel: PanelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(sample_panel)
    with _clock(monkeypatch, "sagemem.writes.conflicts"):
        record, disk = _stale_conflict(store, PETS)
    page.goto(sample_panel.token_url)
    page.click('header.bar nav a[href="/checkup"]')
    card = page.locator(f"#conflict-{record.id}")
    card.wait_for()
    assert "Edited by hand" in card.locator(".side-disk").inner_text()
    assert "Written by an agent" in card.locator(".side-mine").inner_text()
    card.scroll_into_view_if_needed()
    page.evaluate("() => window.scrollTo(0, 0)")
    _shot(page, "health")
    _submit(page, f"#conflict-{record.id} form:has(input[value=keep_disk]) button")
    page.wait_for_selector("#confirm")
    assert conflicts.load(store.state_dir, record.id).status == "open"  # not yet
    _submit(page, "#confirm button[type=submit]")
    page.wait_for_url("**/checkup**")
    page.wait_for_selector("#note")
    assert page.locator(f"#conflict-{record.id}").count() == 0
    assert conflicts.load(store.state_dir, record.id).status != "open"
    assert (store.directory / PETS).read_text(encoding="utf-8") == disk


# -- Undo: a snapshot rolled back -------------------------------------------------------------

def test_a_rollback_confirmed_in_the_browser_restores_the_snapshots_bytes(
        page: Page, sample_panel: PanelServer) -> None:
    store = _store(sample_panel)
    path = store.directory / PORTS
    held = path.read_bytes()
    snapshot = create_snapshot(store, label="before the port change",
                               now=PINNED)
    memory = store.get(PORTS)
    store.write(PORTS, memory.text.replace("\n", "\nThe port moved.\n", 1) + "More.\n",
                memory.revision, reason="the port moved", writer="cli")
    assert path.read_bytes() != held
    page.goto(sample_panel.token_url)
    page.click('header.bar nav a[href="/undo"]')
    row = page.locator(f'#snapshots tr[data-snapshot="{snapshot.id}"], '
                       f'tr[data-snapshot="{snapshot.id}"]').first
    row.wait_for()
    row.locator("a").first.click()
    page.wait_for_selector("#diff")
    page.click("form.confirm button[type=submit]")
    page.wait_for_selector("#preview")
    assert PORTS in page.inner_text("#preview")
    assert path.read_bytes() != held  # the confirmation changed nothing
    _submit(page, "form.confirm button.danger")
    page.wait_for_selector("#done")
    assert path.read_bytes() == held


# -- Map ----------------------------------------------------------------------------------------

def test_the_maps_points_are_drawn_and_open_their_memory(page: Page,
                                                        sample_panel: PanelServer) -> None:
    page.goto(sample_panel.token_url)
    page.click('header.bar nav a[href="/map"]')
    points = page.locator("#map-svg g.points a.point")
    points.first.wait_for()
    assert page.locator("#map-svg circle").count() == points.count() >= 10
    _shot(page, "map")
    point = page.locator(f'#map-svg a.point[data-file="{PETS}"] circle')
    point.click()
    page.wait_for_url(f"**/memory/project/{PETS}")
    assert page.inner_text("#fields").startswith("File")
    assert PETS in page.inner_text("#fields")


# -- live -----------------------------------------------------------------------------------------

NEW_MEMORY = """---
name: Coffee order
description: How the user takes their coffee
metadata:
  type: user
---
A flat white, no sugar.
"""


def test_a_memory_written_on_disk_appears_in_files_without_a_reload(
        page: Page, sample_panel: PanelServer) -> None:
    page.goto(sample_panel.token_url)
    page.wait_for_selector("#files tbody tr[data-file]")
    page.evaluate("() => { window.notReloaded = true; }")
    # Let the page's event stream connect before the write, so the write is a change.
    page.wait_for_timeout(1500)
    (sample_panel.layers.project.directory / "user_coffee.md").write_text(
        NEW_MEMORY, encoding="utf-8")
    page.wait_for_selector('#files tr[data-file="user_coffee.md"]', timeout=8_000)
    assert page.evaluate("() => window.notReloaded === true")


# -- screenshots of the other screens --------------------------------------------------------------

def test_screenshots_of_files_timeline_and_injection(
        page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = _copy_sample(tmp_path)
    store = MemoryStore(directory, tmp_path / "state")
    with _clock(monkeypatch, "sagemem.writes.changelog"):
        for file, old, new, why in [
                (PORTS, "\n", "\nThe docs server listens on port 8123.\n", "a new port"),
                (PETS, "\n", "\nThe cat is called Miso.\n", "the cat's name"),
                ("user_timezone_schedule.md", "\n", "\nNo meetings on Fridays.\n",
                 "a new rule")]:
            memory = store.get(file)
            text = memory.text.rstrip("\n") + new
            assert old in text
            store.write(file, text, memory.revision, reason=why, writer="cli")
    _pin_times(directory)
    with running_panel(directory, tmp_path / "state") as server:
        page.goto(server.token_url)
        page.wait_for_selector("#files tbody tr[data-file]")
        _shot(page, "files")
        page.goto(f"{server.url}/timeline")
        page.wait_for_selector("#timeline tbody tr[data-file]")
        _shot(page, "timeline")
        page.goto(f"{server.url}/injection")
        page.wait_for_selector("#main h1")
        _shot(page, "injection")


def test_screenshots_of_undo_and_a_runs_manifest(
        page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = make_dream_folder(tmp_path)
    store = MemoryStore(directory, tmp_path / "state")
    create_snapshot(store, label="before tidying", now=PINNED)
    text = store.get(CONTRACT).text
    plan = Plan((Operation("rewrite", CONTRACT, "tidied the contract notes",
                           store.get(CONTRACT).revision,
                           text.replace(STILL_VALID + "\n", ""), "other"),))
    settings = load_settings(env={}, memory_dir=directory, state_dir=store.state_dir)
    with _clock(monkeypatch, "sagemem.dream.run", "sagemem.dream.runs",
                "sagemem.history.snapshots"):
        report = dream_run(store, settings, plan, apply=True)
    assert report.status == "applied"
    with running_panel(directory, tmp_path / "state") as server:
        page.goto(server.token_url)
        page.goto(f"{server.url}/undo")
        page.wait_for_selector(f'tr[data-run="{report.run_id}"]')
        _shot(page, "undo")
        page.click(f'tr[data-run="{report.run_id}"] td:first-child a')
        page.wait_for_selector("#facts")
        assert STILL_VALID in page.inner_text("#facts")
        _shot(page, "run")



def test_escape_closes_the_edit_drawer_and_cancels_a_confirmation(
        page: Page, sample_panel: PanelServer) -> None:
    _open_memory_from_files(page, sample_panel, PETS)
    page.click("#edit summary")
    assert page.locator("#edit").get_attribute("open") is not None
    page.keyboard.press("Escape")
    assert page.locator("#edit").get_attribute("open") is None
    page.goto(page.url.split("?")[0] + "?confirm=archive")
    page.wait_for_selector("#confirm")
    page.keyboard.press("Escape")
    page.wait_for_selector("#edit summary")  # back on the memory, nothing archived
    assert (sample_panel.layers.project.directory / PETS).exists()
