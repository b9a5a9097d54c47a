"""``sagemem ui`` (``cli/ui.py``, ``ui/serve.py``) as a shell runs it: one line with the
address, then the panel at that address; without the ui extra, or on a taken port, one
``error:`` line and no address."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from panel_server import child_env, port_of, ui_process, wait_listening

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"
LINE = re.compile(r"sagemem panel: http://127\.0\.0\.1:(\d+)/files\?token=[A-Za-z0-9_-]{20,}\n")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    directory = tmp_path / "memory"
    shutil.copytree(SAMPLE, directory, ignore=shutil.ignore_patterns(".sage-mem"))
    return directory


def _sagemem(folder: Path, *args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    """``sagemem --dir … ui ARGS…`` in a fresh interpreter, after ``prelude`` (Python)."""
    code = (f"import sys\n{prelude}\nfrom sagemem.cli import main\n"
            f"sys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, "--dir", str(folder), "--state-dir",
                           str(folder.parent / "state"), "ui", "--no-browser", *args],
                          capture_output=True, text=True, encoding="utf-8", timeout=60,
                          env=child_env(), check=False)


def test_ui_prints_one_line_with_the_url_and_serves_it(folder: Path) -> None:
    with ui_process(folder, folder.parent / "state") as run:
        assert LINE.fullmatch(run.line), run.line
        wait_listening(port_of(run.line))
        url = run.line.split(": ", 1)[1].strip()
        # urllib follows the 303 without the cookie jar, so trade the token by hand.
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(url, timeout=30) as answer:
            page = answer.read().decode("utf-8")
            assert answer.status == 200 and answer.url.endswith("/files")
        assert 'data-file="user_pets.md"' in page
    assert run.rest == "", "sagemem ui printed more than its one line"
    assert "Traceback" not in run.err


def test_ui_without_the_extra_says_how_to_install_it(folder: Path) -> None:
    # The extra's packages made unimportable, as in an install without sagemem[ui].
    result = _sagemem(folder, prelude="sys.modules['jinja2'] = None")
    assert result.returncode == 2
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "pip install 'sagemem[ui]'" in result.stderr


def test_ui_on_a_taken_port_is_one_error_line(folder: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = _sagemem(folder, "--port", str(port))
    assert result.returncode == 1
    assert result.stdout == "", "the address was printed though nothing serves it"
    assert result.stderr == (f"error: cannot listen on 127.0.0.1:{port}: Address already "
                             "in use; stop what listens there or give another port\n")


def test_ui_over_a_missing_folder_is_one_error_line_and_serves_nothing(tmp_path: Path) -> None:
    result = _sagemem(tmp_path / "nowhere")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
