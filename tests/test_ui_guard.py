"""The panel's guard over real HTTP (``ui/guard.py``): its own address only, the run's
token traded for a strict cookie, writes from its own page only, a content policy on
every answer, and a hostile memory shown as text on the Files page."""

from __future__ import annotations

import re
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from panel_server import (
    HOSTILE_MEMORY,
    PanelServer,
    Reply,
    port_of,
    running_panel,
    ui_process,
    wait_listening,
)

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The sample folder and one hostile memory."""
    directory = tmp_path / "memory"
    shutil.copytree(SAMPLE, directory, ignore=shutil.ignore_patterns(".sage-mem"))
    (directory / "hostile.md").write_text(HOSTILE_MEMORY, encoding="utf-8")
    return directory


@pytest.fixture
def panel(folder: Path, tmp_path: Path) -> Iterator[PanelServer]:
    with running_panel(folder, tmp_path / "state") as server:
        yield server


def _csp_is_strict(reply: Reply) -> None:
    policy = reply.headers["content-security-policy"]
    assert policy is not None, f"no content policy on a {reply.status}"
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "script-src 'self'" in policy and "default-src 'none'" in policy


def test_a_foreign_host_is_refused_with_421(panel: PanelServer) -> None:
    # DNS rebinding: a page on another site whose name now resolves to 127.0.0.1.
    reply = panel.request("GET", "/files", {"Host": f"rebound.example:{panel.port}",
                                             "Cookie": panel.cookie})
    assert reply.status == 421
    assert "Files" not in reply.text


def test_a_loopback_name_on_another_port_is_a_foreign_host(panel: PanelServer) -> None:
    reply = panel.request("GET", "/files", {"Host": "127.0.0.1:1", "Cookie": panel.cookie})
    assert reply.status == 421


@pytest.mark.parametrize("cookie", [None, "sagemem_panel=wrong", "sagemem_panel="])
def test_no_token_and_no_cookie_is_refused_with_403(panel: PanelServer,
                                                    cookie: str | None) -> None:
    reply = panel.request("GET", "/files", {} if cookie is None else {"Cookie": cookie})
    assert reply.status == 403
    assert "sagemem ui" in reply.text and "<table" not in reply.text


def test_a_wrong_token_in_the_url_is_refused(panel: PanelServer) -> None:
    wrong = panel.token[:-1] + ("y" if panel.token.endswith("x") else "x")  # never itself
    reply = panel.request("GET", "/files?token=" + wrong, {})
    assert reply.status == 403 and reply.headers["set-cookie"] is None


def test_the_token_url_trades_the_token_for_a_strict_cookie(panel: PanelServer) -> None:
    reply = panel.request("GET", f"/files?type=project&token={panel.token}", {})
    assert reply.status == 303
    cookie = reply.headers["set-cookie"]
    assert cookie.startswith(f"{panel.cookie};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    # The secret leaves the address bar (and the history): the same page, without it.
    assert reply.headers["location"] == "/files?type=project"
    assert panel.token not in reply.headers["location"]


def test_the_cookie_opens_the_files_page(panel: PanelServer) -> None:
    reply = panel.get("/files")
    assert reply.status == 200 and 'id="files"' in reply.text
    assert 'data-file="user_pets.md"' in reply.text


@pytest.mark.parametrize("origin", ["http://rebound.example", "null",
                                    "http://127.0.0.1:1", None])
def test_a_post_from_another_origin_or_none_is_refused(panel: PanelServer,
                                                      origin: str | None) -> None:
    headers = {"Cookie": panel.cookie, "Content-Type": "application/x-www-form-urlencoded"}
    if origin is not None:
        headers["Origin"] = origin
    reply = panel.request("POST", "/files", headers, b"q=x")
    assert reply.status == 403
    assert "own page" in reply.text


def test_a_foreign_referer_is_no_origin(panel: PanelServer) -> None:
    headers = {"Cookie": panel.cookie, "Referer": f"{panel.url}.rebound.example/files"}
    assert panel.request("POST", "/files", headers, b"").status == 403


def test_a_post_from_the_panels_own_page_passes_the_guard(panel: PanelServer) -> None:
    # /files answers GET only: a 405 is the screen's answer, past the guard.
    assert panel.post("/files", {"q": "x"}).status == 405
    referer = {"Cookie": panel.cookie, "Referer": f"{panel.url}/files"}
    assert panel.request("POST", "/files", referer, b"").status == 405


def test_a_post_without_the_cookie_is_refused_even_from_its_own_origin(
        panel: PanelServer) -> None:
    reply = panel.request("POST", "/files", {"Origin": panel.origin}, b"")
    assert reply.status == 403


def test_every_answer_carries_the_strict_content_policy(panel: PanelServer) -> None:
    replies = [
        panel.request("GET", "/files", {"Host": "rebound.example"}),  # 421
        panel.request("GET", "/files", {}),  # 403
        panel.request("GET", f"/files?token={panel.token}", {}),  # 303
        panel.request("POST", "/files", {"Cookie": panel.cookie}, b""),  # 403
        panel.get("/"),  # 303 to /files
        panel.get("/files"),
        panel.get("/files?type=user&q=cat"),
        panel.get("/static/htmx.min.js"),
        panel.get("/static/panel.css"),
        panel.get("/no-such-page"),  # 404
        panel.post("/files", {}),  # 405
    ]
    assert [r.status for r in replies] == [421, 403, 303, 403, 303, 200, 200, 200, 200,
                                           404, 405]
    for reply in replies:
        _csp_is_strict(reply)
        assert reply.headers["x-content-type-options"] == "nosniff"
        assert reply.headers["x-frame-options"] == "DENY"


def test_sagemem_ui_listens_on_127_0_0_1_only(folder: Path, tmp_path: Path) -> None:
    with ui_process(folder, tmp_path / "state") as run:
        port = port_of(run.line)
        wait_listening(port)
        # Linux routes all of 127/8 to lo: a socket on 0.0.0.0 would take 127.0.0.2 too.
        for address, family in (("127.0.0.2", socket.AF_INET), ("::1", socket.AF_INET6)):
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.settimeout(5)
                try:
                    refused = probe.connect_ex((address, port)) != 0
                except OSError:  # no IPv6 here at all: nothing listens there either
                    refused = True
            assert refused, f"the panel answers on {address}"


def test_a_hostile_memory_is_escaped_on_the_files_page(panel: PanelServer) -> None:
    page = panel.get("/files").text
    row = page[page.index('data-file="hostile.md"'):]
    row = row[:row.index("</tr>")]
    # Only the panel's own script tag, nothing from memory text, and no event handler.
    assert re.findall(r"<script[^>]*>", page, re.I) == [
        '<script src="/static/htmx.min.js" defer>', '<script src="/static/panel.js" defer>',
        '<script src="/static/htmx-sse.min.js" defer>']
    assert "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in row
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in row
    assert "javascript:" not in page.lower()
    # ESC and BEL are written out as text, never sent to the page raw.
    assert "\x1b" not in page and "\x07" not in page
    assert "\\x1b[31mred\\x07" in row and "\\x1b[2Jbell\\x07" in row
