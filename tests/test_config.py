"""Settings: defaults, SAGE_MEM_* variables, <state>/settings.json, options; clamp/default rules.

Every call passes an explicit ``env`` dict, so the real environment never leaks in; tests
that exercise the default directories point HOME at tmp_path for the same reason.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from sagemem.config import INT_SETTINGS, Settings, load_settings
from sagemem.errors import IllegalSetting, SagememError, SettingsError

# (key, env variable, default, low, high) — the documented integer settings.
INTS = [
    ("max_session_bytes", "SAGE_MEM_MAX_SESSION_BYTES", 61440, 4096, 524288),
    ("max_results", "SAGE_MEM_MAX_RESULTS", 10, 1, 30),
    ("max_chars", "SAGE_MEM_MAX_CHARS", 1500, 200, 20000),
    ("max_baseline", "SAGE_MEM_MAX_BASELINE", 8, 1, 50),
    ("stale_days", "SAGE_MEM_STALE_DAYS", 1, 0, 365),
    ("snapshot_keep", "SAGE_MEM_SNAPSHOT_KEEP", 20, 0, 1000),
    ("idle_days_project", "SAGE_MEM_IDLE_DAYS_PROJECT", 90, 0, 36500),
    ("idle_days_reference", "SAGE_MEM_IDLE_DAYS_REFERENCE", 180, 0, 36500),
    ("idle_days_feedback", "SAGE_MEM_IDLE_DAYS_FEEDBACK", 365, 0, 36500),
    ("idle_days_user", "SAGE_MEM_IDLE_DAYS_USER", 0, 0, 36500),
    ("hook_budget_ms", "SAGE_MEM_HOOK_BUDGET_MS", 5000, 100, 60000),
    ("serve_idle_minutes", "SAGE_MEM_SERVE_IDLE_MINUTES", 30, 0, 10080),
    ("soft_cap_memories", "SAGE_MEM_SOFT_CAP_MEMORIES", 1000, 0, 1_000_000),
    ("hard_cap_memories", "SAGE_MEM_HARD_CAP_MEMORIES", 20000, 0, 1_000_000),
    ("soft_cap_body_bytes", "SAGE_MEM_SOFT_CAP_BODY_BYTES", 8192, 0, 524288),
    ("hard_cap_body_bytes", "SAGE_MEM_HARD_CAP_BODY_BYTES", 65536, 0, 524288),
    ("dream_expired_days", "SAGE_MEM_DREAM_EXPIRED_DAYS", 30, 0, 36500),
    ("dream_max_loss_percent", "SAGE_MEM_DREAM_MAX_LOSS_PERCENT", 25, 0, 100),
    ("dream_keep_runs", "SAGE_MEM_DREAM_KEEP_RUNS", 20, 1, 1000),
    ("dream_auto_hours", "SAGE_MEM_DREAM_AUTO_HOURS", 24, 0, 8760),
    ("dream_auto_changes", "SAGE_MEM_DREAM_AUTO_CHANGES", 5, 0, 1_000_000),
    ("dream_auto_scan_minutes", "SAGE_MEM_DREAM_AUTO_SCAN_MINUTES", 10, 0, 1440),
]
INT_IDS = [key for key, *_ in INTS]
# The settings that decide what is deleted or archived: an illegal value is refused.
GUARDING = ["snapshot_keep", "idle_days_project", "idle_days_reference", "idle_days_feedback",
            "idle_days_user", "soft_cap_memories", "hard_cap_memories", "dream_expired_days",
            "dream_max_loss_percent", "dream_keep_runs"]
CLAMPED = [row for row in INTS if row[0] not in GUARDING]
CLAMPED_IDS = [key for key, *_ in CLAMPED]
GUARDED = [row for row in INTS if row[0] in GUARDING]
GUARDED_IDS = [key for key, *_ in GUARDED]
ILLEGAL_INTEGERS = ["abc", "", "   ", "1.5", "--5", "1e3", "0x10", "5 5", "٣"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home directory, so ``~`` never means the real one, and a working directory
    outside any git repository, so the folder is not chosen for this checkout's project."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.chdir(tmp_path)
    return path


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    return path


def load(env: dict[str, str], memory_dir: Path, state_dir: Path) -> Settings:
    return load_settings(env=env, memory_dir=memory_dir, state_dir=state_dir)


def write_settings(state_dir: Path, data: object) -> Path:
    path = state_dir / "settings.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# -- the table itself -------------------------------------------------------------------


def test_integer_settings_table_is_the_documented_one() -> None:
    assert [(s.key, s.env, s.default, s.low, s.high) for s in INT_SETTINGS] == INTS
    assert [s.key for s in INT_SETTINGS if s.guards] == GUARDING


def test_idle_days_per_type_with_zero_meaning_never(memory_dir: Path, state_dir: Path) -> None:
    settings = load({"SAGE_MEM_IDLE_DAYS_PROJECT": "30"}, memory_dir, state_dir)
    assert settings.idle_days("project") == 30
    assert settings.idle_days("user") == 0
    assert settings.idle_days("nonsense") == 0


def test_settings_value_is_frozen(memory_dir: Path, state_dir: Path) -> None:
    settings = load({}, memory_dir, state_dir)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.max_results = 3  # type: ignore[misc]


# -- defaults ---------------------------------------------------------------------------


def test_defaults_without_env_or_settings_file(memory_dir: Path, state_dir: Path) -> None:
    settings = load({}, memory_dir, state_dir)
    assert (settings.max_session_bytes, settings.max_results, settings.max_chars,
            settings.max_baseline, settings.stale_days) == (61440, 10, 1500, 8, 1)
    assert settings.validity is True
    assert settings.debug is False
    assert settings.task_id is None


def test_default_memory_dir_is_under_home(home: Path) -> None:
    settings = load_settings(env={})
    assert settings.memory_dir == home / ".sage-mem" / "memory"
    assert settings.source("memory_dir") == "default"


def test_default_state_dir_is_dot_sage_mem_beside_memory_dir(home: Path) -> None:
    settings = load_settings(env={})
    assert settings.state_dir == settings.memory_dir.parent / ".sage-mem"
    assert settings.source("state_dir") == "default"


def test_every_value_setting_defaults_with_source_default(memory_dir: Path,
                                                         state_dir: Path) -> None:
    settings = load({}, memory_dir, state_dir)
    for key in [*INT_IDS, "validity", "debug", "task_id"]:
        assert settings.source(key) == "default", key


def test_explicit_env_ignores_the_process_environment(
    memory_dir: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SAGE_MEM_MAX_RESULTS", "3")
    monkeypatch.setenv("SAGE_MEM_DIR", str(state_dir / "elsewhere"))
    monkeypatch.chdir(state_dir.parent)  # outside any git repository: the default folder
    settings = load_settings(env={}, state_dir=state_dir)
    assert settings.max_results == 10
    assert settings.source("memory_dir") == "default"


# -- directories ------------------------------------------------------------------------


def test_sage_mem_dir_sets_memory_dir_and_derives_state_dir(tmp_path: Path) -> None:
    settings = load_settings(env={"SAGE_MEM_DIR": str(tmp_path / "mem")})
    assert settings.memory_dir == tmp_path / "mem"
    assert settings.state_dir == tmp_path / ".sage-mem"
    assert settings.source("memory_dir") == "env"
    assert settings.source("state_dir") == "default"


def test_sage_mem_state_dir_sets_state_dir(tmp_path: Path) -> None:
    env = {"SAGE_MEM_DIR": str(tmp_path / "mem"), "SAGE_MEM_STATE_DIR": str(tmp_path / "st")}
    settings = load_settings(env=env)
    assert settings.state_dir == tmp_path / "st"
    assert settings.source("state_dir") == "env"


def test_relative_sage_mem_dir_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings(env={"SAGE_MEM_DIR": "notes/mem"})
    assert settings.memory_dir == tmp_path / "notes" / "mem"
    assert settings.memory_dir.is_absolute()


def test_tilde_in_sage_mem_dir_means_home(home: Path) -> None:
    settings = load_settings(env={"SAGE_MEM_DIR": "~/mem"})
    assert settings.memory_dir == home / "mem"


def test_surrounding_spaces_in_sage_mem_dir_are_ignored(tmp_path: Path) -> None:
    settings = load_settings(env={"SAGE_MEM_DIR": f"  {tmp_path / 'mem'}  "})
    assert settings.memory_dir == tmp_path / "mem"


@pytest.mark.parametrize("blank", ["", "   "])
def test_blank_dir_variables_fall_back_to_defaults(home: Path, blank: str) -> None:
    settings = load_settings(env={"SAGE_MEM_DIR": blank, "SAGE_MEM_STATE_DIR": blank})
    assert settings.memory_dir == home / ".sage-mem" / "memory"
    assert settings.source("memory_dir") == "default"
    assert settings.source("state_dir") == "default"


def test_directory_options_beat_the_environment(tmp_path: Path) -> None:
    env = {"SAGE_MEM_DIR": str(tmp_path / "env-mem"),
           "SAGE_MEM_STATE_DIR": str(tmp_path / "env-state")}
    settings = load_settings(env=env, memory_dir=tmp_path / "opt-mem",
                             state_dir=tmp_path / "opt-state")
    assert settings.memory_dir == tmp_path / "opt-mem"
    assert settings.state_dir == tmp_path / "opt-state"
    assert settings.source("memory_dir") == "option"
    assert settings.source("state_dir") == "option"


def test_memory_dir_option_derives_the_default_state_dir(tmp_path: Path) -> None:
    settings = load_settings(env={}, memory_dir=tmp_path / "mem")
    assert settings.state_dir == tmp_path / ".sage-mem"


# -- integer settings -------------------------------------------------------------------


@pytest.mark.parametrize(("key", "env_name", "default", "low", "high"), INTS, ids=INT_IDS)
@pytest.mark.parametrize("where", ["low", "high", "middle"])
def test_in_range_integer_is_taken_from_env(
    memory_dir: Path, state_dir: Path,
    key: str, env_name: str, default: int, low: int, high: int, where: str,
) -> None:
    value = {"low": low, "high": high, "middle": (low + high) // 2}[where]
    settings = load({env_name: str(value)}, memory_dir, state_dir)
    assert getattr(settings, key) == value
    assert settings.source(key) == "env"


@pytest.mark.parametrize(("key", "env_name", "default", "low", "high"), CLAMPED,
                         ids=CLAMPED_IDS)
@pytest.mark.parametrize(("raw", "bound"), [
    pytest.param(lambda low, high: str(low - 1), "low", id="just-below"),
    pytest.param(lambda low, high: "-5000", "low", id="negative"),
    pytest.param(lambda low, high: str(high + 1), "high", id="just-above"),
    pytest.param(lambda low, high: "999999999999", "high", id="twelve-digits"),
])
def test_out_of_range_integer_clamps_to_the_bound(
    memory_dir: Path, state_dir: Path,
    key: str, env_name: str, default: int, low: int, high: int,
    raw: Callable[[int, int], str], bound: str,
) -> None:
    settings = load({env_name: raw(low, high)}, memory_dir, state_dir)
    assert getattr(settings, key) == {"low": low, "high": high}[bound]
    assert settings.source(key) == "env"


@pytest.mark.parametrize(("key", "env_name", "default", "low", "high"), CLAMPED,
                         ids=CLAMPED_IDS)
@pytest.mark.parametrize("raw", ILLEGAL_INTEGERS)
def test_illegal_integer_falls_back_to_default(
    memory_dir: Path, state_dir: Path,
    key: str, env_name: str, default: int, low: int, high: int, raw: str,
) -> None:
    settings = load({env_name: raw}, memory_dir, state_dir)
    assert getattr(settings, key) == default
    assert settings.source(key) == "default"


@pytest.mark.parametrize(("key", "env_name", "default", "low", "high"), GUARDED,
                         ids=GUARDED_IDS)
@pytest.mark.parametrize("raw", [
    pytest.param(lambda low, high: str(low - 1), id="just-below"),
    pytest.param(lambda low, high: "-5", id="negative"),
    pytest.param(lambda low, high: str(high + 1), id="just-above"),
    pytest.param(lambda low, high: "999999999999", id="twelve-digits"),
    pytest.param(lambda low, high: "abc", id="not-a-number"),
    pytest.param(lambda low, high: "1.5", id="not-whole"),
])
def test_guarding_integer_out_of_range_or_illegal_in_env_is_refused(
    memory_dir: Path, state_dir: Path,
    key: str, env_name: str, default: int, low: int, high: int,
    raw: Callable[[int, int], str],
) -> None:
    """snapshot_keep and idle_days_* decide what rotation deletes and what the archive
    moves: a value they cannot take is refused by the one accessor that code reads them
    through, never clamped or defaulted; loading only records it, with a warning."""
    value = raw(low, high)
    settings = load({env_name: value}, memory_dir, state_dir)
    assert [w for w in settings.warnings if env_name in w and repr(value) in w]
    with pytest.raises(IllegalSetting) as caught:
        settings.guarded(key)
    message = str(caught.value)
    assert env_name in message and repr(value) in message
    assert f"from {low} to {high}" in message
    assert caught.value.name == env_name and caught.value.value == value
    assert isinstance(caught.value, SettingsError)


@pytest.mark.parametrize(("key", "env_name", "default", "low", "high"), GUARDED,
                         ids=GUARDED_IDS)
@pytest.mark.parametrize("value", [-1, 10**7, "lots", 1.5, None, True], ids=repr)
def test_guarding_integer_out_of_range_or_illegal_in_settings_file_is_refused(
    memory_dir: Path, state_dir: Path,
    key: str, env_name: str, default: int, low: int, high: int, value: object,
) -> None:
    path = write_settings(state_dir, {key: value})
    settings = load({env_name: str(default)}, memory_dir, state_dir)
    with pytest.raises(IllegalSetting) as caught:
        settings.guarded(key)
    assert caught.value.name == key and caught.value.path == path
    assert str(path) in str(caught.value) and f"from {low} to {high}" in str(caught.value)


def test_a_refused_value_is_never_read_as_the_default(memory_dir: Path,
                                                      state_dir: Path) -> None:
    settings = load({"SAGE_MEM_SNAPSHOT_KEEP": "-5", "SAGE_MEM_IDLE_DAYS_USER": "x"},
                    memory_dir, state_dir)
    with pytest.raises(IllegalSetting):
        settings.snapshot_keep  # noqa: B018  what rotation reads
    with pytest.raises(IllegalSetting):
        settings.idle_days("user")  # what the archive candidates read
    assert settings.idle_days("project") == 90  # the legal ones still read
    assert settings.refused.keys() == {"snapshot_keep", "idle_days_user"}


@pytest.mark.parametrize("blank", ["", "   "])
def test_blank_guarding_variable_means_unset(memory_dir: Path, state_dir: Path,
                                             blank: str) -> None:
    settings = load({"SAGE_MEM_SNAPSHOT_KEEP": blank}, memory_dir, state_dir)
    assert settings.snapshot_keep == 20 and settings.source("snapshot_keep") == "default"


def test_snapshot_keep_zero_is_legal_and_means_keep_all(memory_dir: Path,
                                                        state_dir: Path) -> None:
    settings = load({"SAGE_MEM_SNAPSHOT_KEEP": "0"}, memory_dir, state_dir)
    assert settings.snapshot_keep == 0 and settings.source("snapshot_keep") == "env"


@pytest.mark.parametrize("raw", [" 20 ", "+20", "020"])
def test_integer_with_spaces_sign_or_leading_zero_is_accepted(
    memory_dir: Path, state_dir: Path, raw: str
) -> None:
    assert load({"SAGE_MEM_MAX_RESULTS": raw}, memory_dir, state_dir).max_results == 20


def test_very_large_integer_in_env_clamps_to_the_upper_bound(
    memory_dir: Path, state_dir: Path
) -> None:
    settings = load({"SAGE_MEM_MAX_SESSION_BYTES": "9999999999999"}, memory_dir, state_dir)
    assert settings.max_session_bytes == 524288


# -- flags and text ---------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), [
    ("0", False), ("false", False), ("FALSE", False), ("False", False),
    ("off", False), ("OFF", False), ("  off  ", False), ("\tfalse\n", False),
    ("1", True), ("true", True), ("on", True), ("no", True), ("n", True),
    ("disabled", True), ("00", True),
])
def test_validity_is_turned_off_only_by_0_false_off(
    memory_dir: Path, state_dir: Path, raw: str, expected: bool
) -> None:
    settings = load({"SAGE_MEM_VALIDITY": raw}, memory_dir, state_dir)
    assert settings.validity is expected
    assert settings.source("validity") == "env"


@pytest.mark.parametrize("blank", ["", "  "])
def test_blank_validity_keeps_the_default_on(
    memory_dir: Path, state_dir: Path, blank: str
) -> None:
    settings = load({"SAGE_MEM_VALIDITY": blank}, memory_dir, state_dir)
    assert settings.validity is True
    assert settings.source("validity") == "default"


@pytest.mark.parametrize(("raw", "expected"), [
    ("1", True), ("true", True), ("on", True), ("yes", True), (" YES ", True),
    ("0", False), ("false", False), ("off", False), ("no", False), ("maybe", False),
])
def test_debug_is_turned_on_only_by_1_true_on_yes(
    memory_dir: Path, state_dir: Path, raw: str, expected: bool
) -> None:
    settings = load({"SAGE_MEM_DEBUG": raw}, memory_dir, state_dir)
    assert settings.debug is expected
    assert settings.source("debug") == "env"


def test_session_is_taken_from_env_and_unset_by_default(memory_dir: Path,
                                                        state_dir: Path) -> None:
    assert load({}, memory_dir, state_dir).session is None
    settings = load({"SAGE_MEM_SESSION": " 8e0c4f1a "}, memory_dir, state_dir)
    assert (settings.session, settings.source("session")) == ("8e0c4f1a", "env")


def test_task_id_is_taken_from_env_without_surrounding_spaces(
    memory_dir: Path, state_dir: Path
) -> None:
    settings = load({"SAGE_MEM_TASK_ID": "  task-42  "}, memory_dir, state_dir)
    assert settings.task_id == "task-42"
    assert settings.source("task_id") == "env"


@pytest.mark.parametrize("blank", ["", "   "])
def test_blank_task_id_is_none(memory_dir: Path, state_dir: Path, blank: str) -> None:
    settings = load({"SAGE_MEM_TASK_ID": blank}, memory_dir, state_dir)
    assert settings.task_id is None
    assert settings.source("task_id") == "default"


# -- settings.json ----------------------------------------------------------------------


@pytest.mark.parametrize(("key", "env_name", "default", "low", "high"), INTS, ids=INT_IDS)
def test_settings_file_overrides_env_for_integers(
    memory_dir: Path, state_dir: Path,
    key: str, env_name: str, default: int, low: int, high: int,
) -> None:
    write_settings(state_dir, {key: high})
    settings = load({env_name: str(low)}, memory_dir, state_dir)
    assert getattr(settings, key) == high
    assert settings.source(key) == "settings"


@pytest.mark.parametrize(("key", "env_name", "default", "low", "high"), CLAMPED,
                         ids=CLAMPED_IDS)
def test_settings_file_integer_clamps_like_env(
    memory_dir: Path, state_dir: Path,
    key: str, env_name: str, default: int, low: int, high: int,
) -> None:
    write_settings(state_dir, {key: high * 1000})
    settings = load({}, memory_dir, state_dir)
    assert getattr(settings, key) == high
    assert settings.source(key) == "settings"


@pytest.mark.parametrize("value", [True, False, 1.5, 12.0, "abc", None, [12], {"n": 12}],
                         ids=repr)
def test_settings_file_non_integer_falls_back_to_env(
    memory_dir: Path, state_dir: Path, value: object
) -> None:
    write_settings(state_dir, {"max_results": value})
    settings = load({"SAGE_MEM_MAX_RESULTS": "7"}, memory_dir, state_dir)
    assert settings.max_results == 7
    assert settings.source("max_results") == "env"


@pytest.mark.parametrize("value", [True, False], ids=repr)
def test_json_boolean_is_not_an_integer(
    memory_dir: Path, state_dir: Path, value: bool
) -> None:
    write_settings(state_dir, {"stale_days": value, "max_results": value})
    settings = load({}, memory_dir, state_dir)
    assert (settings.stale_days, settings.max_results) == (1, 10)
    assert settings.source("stale_days") == "default"


@pytest.mark.parametrize(("value", "expected"), [(False, False), (True, True),
                                                 ("off", False), (" OFF ", False)])
def test_settings_file_validity_overrides_env(
    memory_dir: Path, state_dir: Path, value: object, expected: bool
) -> None:
    write_settings(state_dir, {"validity": value})
    settings = load({"SAGE_MEM_VALIDITY": "0" if expected else "1"}, memory_dir, state_dir)
    assert settings.validity is expected
    assert settings.source("validity") == "settings"


def test_settings_file_debug_and_task_id_override_env(memory_dir: Path, state_dir: Path) -> None:
    write_settings(state_dir, {"debug": True, "task_id": "from-file"})
    env = {"SAGE_MEM_DEBUG": "0", "SAGE_MEM_TASK_ID": "from-env"}
    settings = load(env, memory_dir, state_dir)
    assert (settings.debug, settings.task_id) == (True, "from-file")
    assert settings.source("debug") == settings.source("task_id") == "settings"


def test_precedence_settings_file_then_env_then_default(
    memory_dir: Path, state_dir: Path
) -> None:
    write_settings(state_dir, {"max_results": 5})
    env = {"SAGE_MEM_MAX_RESULTS": "20", "SAGE_MEM_MAX_CHARS": "3000"}
    settings = load(env, memory_dir, state_dir)
    assert (settings.max_results, settings.source("max_results")) == (5, "settings")
    assert (settings.max_chars, settings.source("max_chars")) == (3000, "env")
    assert (settings.max_baseline, settings.source("max_baseline")) == (8, "default")


def test_sources_name_every_setting_that_was_not_defaulted(
    memory_dir: Path, state_dir: Path
) -> None:
    write_settings(state_dir, {"max_results": 5})
    settings = load({"SAGE_MEM_TASK_ID": "t"}, memory_dir, state_dir)
    assert dict(settings.sources) == {"memory_dir": "option", "state_dir": "option",
                                      "max_results": "settings", "task_id": "env"}


def test_settings_file_unknown_keys_and_env_style_keys_are_ignored(
    memory_dir: Path, state_dir: Path
) -> None:
    write_settings(state_dir, {"SAGE_MEM_MAX_RESULTS": 3, "maxResults": 3, "colour": "blue"})
    settings = load({}, memory_dir, state_dir)
    assert settings.max_results == 10


def test_settings_file_is_read_from_the_state_dir_named_in_env(tmp_path: Path) -> None:
    state = tmp_path / "st"
    state.mkdir()
    write_settings(state, {"max_results": 4})
    env = {"SAGE_MEM_DIR": str(tmp_path / "mem"), "SAGE_MEM_STATE_DIR": str(state)}
    assert load_settings(env=env).max_results == 4


def test_settings_file_is_read_from_the_default_state_dir(tmp_path: Path) -> None:
    state = tmp_path / ".sage-mem"
    state.mkdir()
    write_settings(state, {"max_chars": 900})
    assert load_settings(env={}, memory_dir=tmp_path / "mem").max_chars == 900


def test_missing_state_dir_means_no_settings_file(tmp_path: Path) -> None:
    settings = load_settings(env={}, memory_dir=tmp_path / "mem", state_dir=tmp_path / "none")
    assert settings.max_results == 10


@pytest.mark.parametrize("content", [
    pytest.param(b"not json", id="not-json"),
    pytest.param(b'{"max_results": 5', id="truncated"),
    pytest.param(b"[1, 2]", id="list"),
    pytest.param(b'"max_results"', id="string"),
    pytest.param(b"null", id="null"),
    pytest.param(b'{"task_id": "caf\xe9"}', id="latin-1"),
    pytest.param(b"\xff\xfe{\x00}\x00", id="utf-16"),
])
def test_malformed_settings_file_raises_settings_error(
    memory_dir: Path, state_dir: Path, content: bytes
) -> None:
    path = state_dir / "settings.json"
    path.write_bytes(content)
    with pytest.raises(SettingsError) as caught:
        load({}, memory_dir, state_dir)
    assert caught.value.path == path
    assert isinstance(caught.value, SagememError)
    assert str(path) in str(caught.value)


def test_settings_file_that_is_a_directory_raises_settings_error(
    memory_dir: Path, state_dir: Path
) -> None:
    (state_dir / "settings.json").mkdir()
    with pytest.raises(SettingsError):
        load({}, memory_dir, state_dir)


def test_oversized_settings_file_raises_settings_error(memory_dir: Path, state_dir: Path) -> None:
    (state_dir / "settings.json").write_bytes(b'{"pad": "' + b"x" * (512 * 1024) + b'"}')
    with pytest.raises(SettingsError):
        load({}, memory_dir, state_dir)



# -- settings file conveniences -----------------------------------------------------------


def test_empty_or_bom_settings_file_is_read(memory_dir: Path, state_dir: Path) -> None:
    (state_dir / "settings.json").write_bytes(b"")
    assert load({}, memory_dir, state_dir).max_results == 10
    (state_dir / "settings.json").write_bytes(b'\xef\xbb\xbf{"max_results": 4}')
    assert load({}, memory_dir, state_dir).max_results == 4


@pytest.mark.parametrize("value,expected", [(0, False), (1, True), (False, False)])
def test_validity_flag_in_settings_file_accepts_numbers(
    memory_dir: Path, state_dir: Path, value: object, expected: bool
) -> None:
    write_settings(state_dir, {"validity": value})
    assert load({}, memory_dir, state_dir).validity is expected


def test_unknown_and_illegal_settings_are_warned_about(memory_dir: Path, state_dir: Path) -> None:
    write_settings(state_dir, {"max_resutls": 3, "max_chars": "lots"})
    settings = load({"SAGE_MEM_MAX_CHARS": "900"}, memory_dir, state_dir)
    assert settings.max_chars == 900
    assert len(settings.warnings) == 2
    assert "unknown setting 'max_resutls'" in settings.warnings[0]
    assert "max_chars" in settings.warnings[1] and "env value used" in settings.warnings[1]


def test_negative_huge_integer_clamps_to_the_lower_bound(memory_dir: Path, state_dir: Path) -> None:
    settings = load({"SAGE_MEM_MAX_RESULTS": "-" + "9" * 5000}, memory_dir, state_dir)
    assert settings.max_results == 1


def _folder_with_default_state(tmp_path: Path) -> tuple[Path, Path]:
    """A memory folder that wrote once, so its default state directory holds a change log."""
    import subprocess
    import sys

    memory = tmp_path / "memory"
    for args in (["init"], ["new", "--type", "user", "--name", "x", "--description", "y"]):
        subprocess.run([sys.executable, "-m", "sagemem", "--dir", str(memory), *args],
                       check=True, capture_output=True, env={"HOME": str(tmp_path)})
    return memory, tmp_path / ".sage-mem"


def test_a_new_state_dir_is_told_of_the_records_left_in_the_default_one(tmp_path: Path) -> None:
    memory, old = _folder_with_default_state(tmp_path)
    assert (old / "journal.jsonl").is_file()
    moved = load_settings(env={"SAGE_MEM_STATE_DIR": str(tmp_path / "elsewhere")},
                          memory_dir=memory)
    said = [w for w in moved.warnings if str(old) in w]
    assert len(said) == 1 and "SAGE_MEM_STATE_DIR points at" in said[0]
    assert f"mv {old} {tmp_path / 'elsewhere'}" in said[0]
    assert not [w for w in load_settings(env={}, memory_dir=memory).warnings if str(old) in w]
    assert not [w for w in load_settings(env={}, memory_dir=memory, state_dir=old).warnings
                if str(old) in w]


def test_a_default_state_dir_of_caches_only_is_not_worth_a_warning(tmp_path: Path) -> None:
    memory, old = _folder_with_default_state(tmp_path)
    (old / "journal.jsonl").unlink()
    moved = load_settings(env={}, memory_dir=memory, state_dir=tmp_path / "elsewhere")
    assert not [w for w in moved.warnings if str(old) in w]
