"""Settings: defaults, ``SAGE_MEM_*`` environment variables and ``<state>/settings.json``.

Configuration is read once, at the edge (CLI, hook, server), into one frozen
``Settings`` value; library functions take explicit arguments. Precedence, highest
first: command-line option (directories only) > settings file > environment > default.
Out-of-range numbers clamp to the nearest bound; values that are not numbers at all
(an empty or whitespace-only string included) fall back to the default, as in sage-mem.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

from .errors import SettingsError, StateDirNotDirectory
from .files.paths import STATE_DIR_NAME as STATE_DIR_NAME
from .files.paths import read_state_file

Source = Literal["default", "env", "settings", "option"]

JSON_VERSION = 1
"""The ``version`` of every JSON object sagemem prints or keeps; later versions only add
keys. It lives here, in a module every command loads anyway, so no module imports the
heavier ``output`` for one number."""
SETTINGS_FILE = "settings.json"
DEFAULT_MEMORY_DIR = "~/.sage-mem/memory"


@dataclass(frozen=True)
class IntSetting:
    """An integer setting: its env variable, default and inclusive range."""

    key: str
    env: str
    default: int
    low: int
    high: int


INT_SETTINGS: tuple[IntSetting, ...] = (
    IntSetting("max_session_bytes", "SAGE_MEM_MAX_SESSION_BYTES", 61440, 4096, 524288),
    IntSetting("max_results", "SAGE_MEM_MAX_RESULTS", 10, 1, 30),
    IntSetting("max_chars", "SAGE_MEM_MAX_CHARS", 1500, 200, 20000),
    IntSetting("max_baseline", "SAGE_MEM_MAX_BASELINE", 8, 1, 50),
    IntSetting("stale_days", "SAGE_MEM_STALE_DAYS", 1, 0, 365),
    IntSetting("snapshot_keep", "SAGE_MEM_SNAPSHOT_KEEP", 20, 1, 1000),
    # Idle days before a memory of that type becomes an archive candidate; 0 = never.
    IntSetting("idle_days_project", "SAGE_MEM_IDLE_DAYS_PROJECT", 90, 0, 36500),
    IntSetting("idle_days_reference", "SAGE_MEM_IDLE_DAYS_REFERENCE", 180, 0, 36500),
    IntSetting("idle_days_feedback", "SAGE_MEM_IDLE_DAYS_FEEDBACK", 365, 0, 36500),
    IntSetting("idle_days_user", "SAGE_MEM_IDLE_DAYS_USER", 0, 0, 36500),
)
FLAG_ENV = {"validity": "SAGE_MEM_VALIDITY", "debug": "SAGE_MEM_DEBUG"}
TEXT_ENV = {"task_id": "SAGE_MEM_TASK_ID"}
FALSE_WORDS = frozenset({"0", "false", "off"})
TRUE_WORDS = frozenset({"1", "true", "on", "yes"})
INTEGER = re.compile(r"[+-]?[0-9]+")
MAX_DIGITS = 18  # longer numbers clamp anyway; never hand int() a 100 kB string


@dataclass(frozen=True)
class Settings:
    """Every setting in effect, and where each one came from."""

    memory_dir: Path
    state_dir: Path
    max_session_bytes: int = 61440
    max_results: int = 10
    max_chars: int = 1500
    max_baseline: int = 8
    stale_days: int = 1
    snapshot_keep: int = 20
    idle_days_project: int = 90
    idle_days_reference: int = 180
    idle_days_feedback: int = 365
    idle_days_user: int = 0
    validity: bool = True
    debug: bool = False
    task_id: str | None = None
    sources: Mapping[str, Source] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def source(self, key: str) -> Source:
        return self.sources.get(key, "default")

    def idle_days(self, type_: str) -> int:
        """Idle days before a memory of this type is an archive candidate; 0 means never."""
        value = getattr(self, f"idle_days_{type_}", 0)
        return value if isinstance(value, int) else 0


def parse_int(raw: object, spec: IntSetting) -> int | None:
    """The clamped integer in ``raw``, or None when ``raw`` is not an integer at all."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, str) and INTEGER.fullmatch(raw.strip()):
        text = raw.strip()
        sign = -1 if text.startswith("-") else 1
        digits = text.lstrip("+-")
        value = sign * int(digits[:MAX_DIGITS] if len(digits) <= MAX_DIGITS else "9" * MAX_DIGITS)
    else:
        return None
    return min(max(value, spec.low), spec.high)


def parse_validity(raw: object) -> bool | None:
    """Validity filtering is on unless explicitly turned off with 0/false/off."""
    if isinstance(raw, (bool, int)):
        return bool(raw)
    if isinstance(raw, str) and raw.strip():
        return raw.strip().lower() not in FALSE_WORDS
    return None


def parse_debug(raw: object) -> bool | None:
    """Debug output is off unless explicitly turned on with 1/true/on/yes."""
    if isinstance(raw, (bool, int)):
        return bool(raw)
    if isinstance(raw, str) and raw.strip():
        return raw.strip().lower() in TRUE_WORDS
    return None


def parse_text(raw: object) -> str | None:
    if isinstance(raw, str) and raw.strip():
        return raw.strip()
    return None


def default_state_dir(memory_dir: Path) -> Path:
    """``<parent of the memory directory>/.sage-mem``, as in sage-mem."""
    return memory_dir.parent / STATE_DIR_NAME


def resolve_dirs(
    env: Mapping[str, str], memory_dir: Path | None, state_dir: Path | None
) -> tuple[Path, Path, dict[str, Source]]:
    """The memory and state directories, from options, then the environment, then defaults."""
    sources: dict[str, Source] = {}
    if memory_dir is not None:
        mem, sources["memory_dir"] = memory_dir, "option"
    elif parse_text(env.get("SAGE_MEM_DIR")):
        mem, sources["memory_dir"] = Path(env["SAGE_MEM_DIR"].strip()), "env"
    else:
        mem, sources["memory_dir"] = Path(DEFAULT_MEMORY_DIR), "default"
    mem = Path(os.path.abspath(mem.expanduser()))
    if state_dir is not None:
        state, sources["state_dir"] = state_dir, "option"
    elif parse_text(env.get("SAGE_MEM_STATE_DIR")):
        state, sources["state_dir"] = Path(env["SAGE_MEM_STATE_DIR"].strip()), "env"
    else:
        state, sources["state_dir"] = default_state_dir(mem), "default"
    return mem, Path(os.path.abspath(state.expanduser())), sources


def read_settings_file(state_dir: Path) -> dict[str, object]:
    """The settings file as a dict; an absent file is empty, a malformed one an error."""
    if os.path.lexists(state_dir) and not state_dir.is_dir():  # not "cannot read settings.json"
        raise StateDirNotDirectory(state_dir)
    path = state_dir / SETTINGS_FILE
    raw = read_state_file(path)
    if raw is None:
        return {}
    try:
        text = raw.decode("utf-8-sig")
        data = json.loads(text) if text.strip() else {}
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SettingsError(path, f"not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise SettingsError(path, "must hold a JSON object")
    return data


def _layered(
    key: str, env_name: str, env: Mapping[str, str], file: Mapping[str, object],
    parse: Callable[[object], object | None],
) -> tuple[object, Source] | None:
    """The first legal value for ``key``: settings file, then environment."""
    if key in file and (value := parse(file[key])) is not None:
        return value, "settings"
    if env_name in env and (value := parse(env[env_name])) is not None:
        return value, "env"
    return None


def load_settings(
    env: Mapping[str, str] | None = None,
    memory_dir: Path | None = None,
    state_dir: Path | None = None,
) -> Settings:
    """Build the settings in effect for this process."""
    env = os.environ if env is None else env
    mem, state, sources = resolve_dirs(env, memory_dir, state_dir)
    file = read_settings_file(state)
    values: dict[str, object] = {}
    for spec in INT_SETTINGS:
        found = _layered(spec.key, spec.env, env, file, partial(parse_int, spec=spec))
        if found:
            values[spec.key], sources[spec.key] = found
    parsers = {"validity": parse_validity, "debug": parse_debug}
    for key, env_name in FLAG_ENV.items():
        if found := _layered(key, env_name, env, file, parsers[key]):
            values[key], sources[key] = found
    for key, env_name in TEXT_ENV.items():
        if found := _layered(key, env_name, env, file, parse_text):
            values[key], sources[key] = found
    known = {spec.key for spec in INT_SETTINGS} | set(FLAG_ENV) | set(TEXT_ENV)
    warnings = tuple(f"{state / SETTINGS_FILE}: unknown setting {key!r} ignored"
                     for key in file if key not in known)
    warnings += tuple(f"{state / SETTINGS_FILE}: {key} = {file[key]!r} is not a legal value; "
                      f"{sources.get(key, 'default')} value used"
                      for key in file if key in known and sources.get(key) != "settings")
    return Settings(memory_dir=mem, state_dir=state, sources=sources, warnings=warnings,
                    **values)  # type: ignore[arg-type]


def describe_settings(settings: Settings) -> list[tuple[str, object, Source, str]]:
    """Rows of (key, value, source, env variable) for every setting, for `sagemem config`."""
    rows: list[tuple[str, object, Source, str]] = [
        ("memory_dir", str(settings.memory_dir), settings.source("memory_dir"), "SAGE_MEM_DIR"),
        ("state_dir", str(settings.state_dir), settings.source("state_dir"), "SAGE_MEM_STATE_DIR"),
    ]
    for spec in INT_SETTINGS:
        rows.append((spec.key, getattr(settings, spec.key), settings.source(spec.key), spec.env))
    for key, env_name in {**FLAG_ENV, **TEXT_ENV}.items():
        rows.append((key, getattr(settings, key), settings.source(key), env_name))
    return rows
