"""docs/configuration.md promises every setting and environment variable in one table;
these tests hold it to that, so a setting added to the code without a row fails here
rather than going undocumented."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "configuration.md"
ENV_NAME = re.compile(r"SAGE_MEM_[A-Z_]+")


def env_names_in_code() -> set[str]:
    """Every ``SAGE_MEM_*`` name the package spells out (``SAGE_MEM_IDLE_DAYS_`` is the
    prefix of a family, which the page's full names contain)."""
    return {name for path in (ROOT / "sagemem").rglob("*.py")
            for name in ENV_NAME.findall(path.read_text(encoding="utf-8"))}


def settings_table_rows() -> dict[str, str]:
    """The rows of the page's settings table, keyed by the setting named in backticks at
    the start of the first cell."""
    rows: dict[str, str] = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if key := re.match(r"\| `([a-z_]+)`", line):
            rows[key.group(1)] = line
    return rows


def reported_settings(tmp_path: Path) -> dict[str, dict[str, str]]:
    """What ``sagemem config --json`` reports, run as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "sagemem", "--dir", str(tmp_path / "memory"), "config", "--json"],
        capture_output=True, text=True, check=True, cwd=tmp_path)
    settings: dict[str, dict[str, str]] = json.loads(done.stdout)["settings"]
    return settings


def test_every_environment_variable_in_the_code_is_on_the_page() -> None:
    names = env_names_in_code()
    assert "SAGE_MEM_DIR" in names  # the search itself works
    page = PAGE.read_text(encoding="utf-8")
    assert sorted(name for name in names if not on_page(name, page)) == []


def on_page(name: str, page: str) -> bool:
    """A whole word, so SAGE_MEM_STATE_DIR on the page does not count for a new
    SAGE_MEM_STATE; a name ending in ``_`` is a prefix the code completes
    (SAGE_MEM_IDLE_DAYS_ + a type), found at the start of a word."""
    end = "" if name.endswith("_") else "(?![A-Z_])"
    return re.search(rf"(?<![A-Z_]){re.escape(name)}{end}", page) is not None


def test_every_setting_config_reports_has_a_row_naming_its_variable(tmp_path: Path) -> None:
    settings = reported_settings(tmp_path)
    assert {"memory_dir", "state_dir", "max_results"} <= settings.keys()
    rows = settings_table_rows()
    missing = sorted(key for key in settings if key not in rows)
    assert missing == []
    unnamed = sorted(key for key, entry in settings.items()
                     if f"`{entry['env']}`" not in rows[key])
    assert unnamed == []


def test_the_table_lists_no_setting_config_does_not_know(tmp_path: Path) -> None:
    assert sorted(settings_table_rows().keys() - reported_settings(tmp_path).keys()) == []
