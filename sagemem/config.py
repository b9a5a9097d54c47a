"""Settings: defaults, ``SAGE_MEM_*`` environment variables and ``<state>/settings.json``.

Configuration is read once, at the edge (CLI, hook, server), into one frozen
``Settings`` value; library functions take explicit arguments. Precedence, highest
first: command-line option (directories only) > settings file > environment > default.
Out-of-range numbers clamp to the nearest bound; values that are not numbers at all
(an empty or whitespace-only string included) fall back to the default, as in sage-mem —
except for the settings that decide what is deleted or archived (``guards``:
``snapshot_keep``, ``idle_days_*``, ``soft_cap_memories``, ``hard_cap_memories``), where
a guessed value destroys data (``KEEP=0`` clamped to 1 once rotated away six snapshots):
any value but a whole number in range is refused; a blank variable still means unset.
A refused value is recorded in the settings (``Settings.refused``, and a warning), not
raised at load: the code that rotates or archives reads these settings only through
``Settings.guarded``, which raises the ``IllegalSetting``, while every other command
(``show``, ``search``, the prompt hook) runs — a typo in ``idle_days_user`` must not be
the reason memories cannot be read.
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

from .errors import (
    IllegalSetting,
    MemoryOff,
    ProjectMapError,
    RepositoryFileError,
    SettingsError,
    StateDirNotDirectory,
)
from .files.paths import MAX_FILE_BYTES, read_state_file
from .files.paths import STATE_DIR_NAME as STATE_DIR_NAME
from .files.scopes import Choice, choose_folder, find_project, project_home, repo_state_dir
from .files.state import OWNER_FILE, StrayState, check_owner, left_state, stray_states
from .files.state import default_state_dir as default_state_dir

Source = Literal["default", "env", "settings", "option", "project"]
"""``project``: the memory folder was chosen from the working directory's git project
(``files/scopes.py``; ``Settings.scope`` says by which rule)."""

JSON_VERSION = 1
"""The ``version`` of every JSON object sagemem prints or keeps; later versions only add
keys. It lives here, in a module every command loads anyway, so no module imports the
heavier ``output`` for one number."""
SETTINGS_FILE = "settings.json"
DEFAULT_MEMORY_DIR = "~/.sage-mem/memory"
DEFAULT_GLOBAL_DIR = "~/.sage-mem/global"
GLOBAL_ENV = "SAGE_MEM_GLOBAL_DIR"
CLAUDE_HOME_ENV = "SAGE_MEM_CLAUDE_HOME"
CLAUDE_CONFIG_ENV = "CLAUDE_CONFIG_DIR"  # Claude Code's own: where it keeps ~/.claude
DEFAULT_CLAUDE_HOME = "~/.claude"


@dataclass(frozen=True)
class IntSetting:
    """An integer setting: its env variable, default and inclusive range. A setting that
    ``guards`` decides what is deleted or archived: an illegal value is refused."""

    key: str
    env: str
    default: int
    low: int
    high: int
    guards: bool = False
    meaning: str = ""  # said in the refusal, e.g. what 0 means


INT_SETTINGS: tuple[IntSetting, ...] = (
    IntSetting("max_session_bytes", "SAGE_MEM_MAX_SESSION_BYTES", 61440, 4096, 524288),
    IntSetting("max_results", "SAGE_MEM_MAX_RESULTS", 10, 1, 30),
    IntSetting("max_chars", "SAGE_MEM_MAX_CHARS", 1500, 200, 20000),
    IntSetting("max_baseline", "SAGE_MEM_MAX_BASELINE", 8, 1, 50),
    IntSetting("stale_days", "SAGE_MEM_STALE_DAYS", 1, 0, 365),
    # Manual and auto snapshots kept by rotation; 0 = keep all (rotation off).
    IntSetting("snapshot_keep", "SAGE_MEM_SNAPSHOT_KEEP", 20, 0, 1000, True,
               " (0 keeps every snapshot)"),
    # Idle days before a memory of that type becomes an archive candidate; 0 = never.
    *(IntSetting(f"idle_days_{type_}", f"SAGE_MEM_IDLE_DAYS_{type_.upper()}", days, 0, 36500,
                 True, " (0: never an archive candidate)")
      for type_, days in (("project", 90), ("reference", 180), ("feedback", 365), ("user", 0))),
    # The Claude Code hook's time budget: Claude Code kills a hook at its timeout (10 s
    # here), and a killed hook injects nothing; past the budget it injects what is indexed.
    IntSetting("hook_budget_ms", "SAGE_MEM_HOOK_BUDGET_MS", 5000, 100, 60000),
    # ``sagemem serve`` exits after this many minutes without a request; 0 = never.
    IntSetting("serve_idle_minutes", "SAGE_MEM_SERVE_IDLE_MINUTES", 30, 0, 10080),
    # Per-layer caps (``writes/caps.py``; docs/writing.md, "Caps"); 0 turns each off. The count caps
    # decide what is archived, so they guard: past the hard cap a create archives the
    # least recently read memory. The body caps only warn or refuse one write: they clamp.
    IntSetting("soft_cap_memories", "SAGE_MEM_SOFT_CAP_MEMORIES", 1000, 0, 1_000_000, True,
               " (0: no warning)"),
    IntSetting("hard_cap_memories", "SAGE_MEM_HARD_CAP_MEMORIES", 20000, 0, 1_000_000, True,
               " (0: no cap, nothing is archived for room)"),
    IntSetting("soft_cap_body_bytes", "SAGE_MEM_SOFT_CAP_BODY_BYTES", 8192, 0, MAX_FILE_BYTES),
    IntSetting("hard_cap_body_bytes", "SAGE_MEM_HARD_CAP_BODY_BYTES", 65536, 0, MAX_FILE_BYTES),
    # Consolidation (docs/consolidation.md). Days past invalid_at before tidy proposes to
    # archive a memory; the share of the prior lines an applying run may leave absent;
    # the rollback points kept. They decide what is archived or kept: they guard.
    IntSetting("dream_expired_days", "SAGE_MEM_DREAM_EXPIRED_DAYS", 30, 0, 36500, True,
               " (0: as soon as invalid_at has passed)"),
    IntSetting("dream_max_loss_percent", "SAGE_MEM_DREAM_MAX_LOSS_PERCENT", 25, 0, 100, True,
               " (0: a run may drop no line; 100: no ceiling)"),
    IntSetting("dream_keep_runs", "SAGE_MEM_DREAM_KEEP_RUNS", 20, 1, 1000, True,
               " (the newest runs keep their rollback point)"),
    # dream auto's gates: hours since the last run, memories changed since, minutes
    # between two directory scans.
    IntSetting("dream_auto_hours", "SAGE_MEM_DREAM_AUTO_HOURS", 24, 0, 8760),
    IntSetting("dream_auto_changes", "SAGE_MEM_DREAM_AUTO_CHANGES", 5, 0, 1_000_000),
    IntSetting("dream_auto_scan_minutes", "SAGE_MEM_DREAM_AUTO_SCAN_MINUTES", 10, 0, 1440),
)
GUARDED_DEFAULTS = {spec.key: spec.default for spec in INT_SETTINGS if spec.guards}
# semantic: vectors beside the lexical index, on unless 0/false/off (off = lexical only)
# transcripts: recall from Claude Code's transcripts (docs/transcripts.md), on unless off
FLAG_ENV = {"validity": "SAGE_MEM_VALIDITY", "debug": "SAGE_MEM_DEBUG",
            "semantic": "SAGE_MEM_SEMANTIC", "transcripts": "SAGE_MEM_TRANSCRIPTS"}
# session: the host session ``read``/``search`` record what the model saw into
# dream_llm_*: the LLM planner's OpenAI-compatible endpoint; its key is read from
# DREAM_LLM_KEY_ENV only, never from a file. dream_auto_kinds: what dream auto applies.
TEXT_ENV = {"task_id": "SAGE_MEM_TASK_ID", "embedder": "SAGE_MEM_EMBEDDER",
            "session": "SAGE_MEM_SESSION", "dream_llm_url": "SAGE_MEM_DREAM_LLM_URL",
            "dream_llm_model": "SAGE_MEM_DREAM_LLM_MODEL",
            "dream_auto_kinds": "SAGE_MEM_DREAM_AUTO_KINDS"}
DREAM_LLM_KEY_ENV = "SAGE_MEM_DREAM_LLM_KEY"
DEFAULT_EMBEDDER = "use-m3"  # embed/embedder.py's default (config may not import search)
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
    hook_budget_ms: int = 5000
    serve_idle_minutes: int = 30
    soft_cap_body_bytes: int = 8192
    hard_cap_body_bytes: int = 65536
    validity: bool = True
    debug: bool = False
    semantic: bool = True
    transcripts: bool = True
    claude_home: Path | None = None
    """Claude Code's folder, whose ``projects/`` holds the transcripts searched when no
    memory answers (docs/transcripts.md); None: none are. Settings built by hand have
    none, so a library caller's injection never reads the user's transcripts unasked."""
    task_id: str | None = None
    embedder: str = DEFAULT_EMBEDDER
    session: str | None = None
    global_dir: Path | None = None
    """The global layer's folder as configured (None: off); ``layers/`` uses it only when
    it is a directory and not the memory folder itself. Settings built by hand have none."""
    dream_auto_hours: int = 24
    dream_auto_changes: int = 5
    dream_auto_scan_minutes: int = 10
    dream_llm_url: str | None = None
    dream_llm_model: str | None = None
    dream_auto_kinds: str = "dates,links,index,expired"
    scope: Choice | None = None
    """The git project the memory folder was chosen for, and by which rule (None: the
    folder came from --dir, SAGE_MEM_DIR or the default outside any repository)."""
    sources: Mapping[str, Source] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    # The settings that guard (snapshot_keep, idle_days_*): the legal values given, and
    # the refused ones — read both through ``guarded``, never directly.
    guarded_values: Mapping[str, int] = field(default_factory=dict)
    refused: Mapping[str, IllegalSetting] = field(default_factory=dict)

    def source(self, key: str) -> Source:
        return self.sources.get(key, "default")

    def guarded(self, key: str) -> int:
        """A setting that decides what is deleted or archived; IllegalSetting when its
        value was refused — the one way to read them, so no rotation or archive can fall
        back to a default it was not given."""
        if key in self.refused:
            raise self.refused[key]
        return self.guarded_values.get(key, GUARDED_DEFAULTS[key])

    @property
    def snapshot_keep(self) -> int:
        """Manual and auto snapshots rotation keeps (0: all); IllegalSetting if refused."""
        return self.guarded("snapshot_keep")

    @property
    def idle_days_project(self) -> int:
        return self.guarded("idle_days_project")

    @property
    def idle_days_reference(self) -> int:
        return self.guarded("idle_days_reference")

    @property
    def idle_days_feedback(self) -> int:
        return self.guarded("idle_days_feedback")

    @property
    def idle_days_user(self) -> int:
        return self.guarded("idle_days_user")

    @property
    def soft_cap_memories(self) -> int:
        """Memories a layer holds before each create warns (0: never); IllegalSetting if
        refused."""
        return self.guarded("soft_cap_memories")

    @property
    def hard_cap_memories(self) -> int:
        """Memories a layer holds at most: a create past it archives the least recently
        read (0: no cap); IllegalSetting if refused."""
        return self.guarded("hard_cap_memories")

    @property
    def dream_expired_days(self) -> int:
        return self.guarded("dream_expired_days")

    @property
    def dream_max_loss_percent(self) -> int:
        return self.guarded("dream_max_loss_percent")

    @property
    def dream_keep_runs(self) -> int:
        return self.guarded("dream_keep_runs")

    def idle_days(self, type_: str) -> int:
        """Idle days before a memory of this type is an archive candidate; 0 means never.
        IllegalSetting if that type's setting was refused."""
        key = f"idle_days_{type_}"
        return self.guarded(key) if key in GUARDED_DEFAULTS else 0


def parse_int(raw: object, spec: IntSetting) -> int | None:
    """The clamped integer in ``raw``, or None when ``raw`` is not an integer at all."""
    value = _whole(raw)
    return None if value is None else min(max(value, spec.low), spec.high)


def _whole(raw: object) -> int | None:
    """The integer ``raw`` spells (huge ones capped at 18 nines), or None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and INTEGER.fullmatch(raw.strip()):
        text = raw.strip()
        sign = -1 if text.startswith("-") else 1
        digits = text.lstrip("+-")
        return sign * int(digits if len(digits) <= MAX_DIGITS else "9" * MAX_DIGITS)
    return None


def checked_int(raw: object, spec: IntSetting, name: str, path: Path | None = None
                ) -> int | None:
    """The integer in ``raw`` for a setting that ``guards``: None when blank (unset), else
    a whole number in range or IllegalSetting — never a clamped or default guess."""
    if isinstance(raw, str) and not raw.strip():
        return None
    value = _whole(raw)
    if value is None or not spec.low <= value <= spec.high:
        raise IllegalSetting(name, raw, spec.low, spec.high, path=path, meaning=spec.meaning)
    return value


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


def resolve_memory_dir(env: Mapping[str, str], memory_dir: Path | None,
                       cwd: Path | None = None) -> tuple[Path, Source, Choice | None]:
    """The memory folder by docs/configuration.md's "Which folder": ``--dir``, then
    ``SAGE_MEM_DIR``, then the git project of ``cwd`` (default: the process's), then
    ``~/.sage-mem/memory``. A project whose memory is off comes back with its choice
    (``off``) and the folder the git-root rule would give; callers decide (MemoryOff)."""
    if memory_dir is not None:
        return Path(os.path.abspath(memory_dir.expanduser())), "option", None
    if parse_text(env.get("SAGE_MEM_DIR")):
        return Path(os.path.abspath(Path(env["SAGE_MEM_DIR"].strip()).expanduser())), "env", None
    project = find_project(_cwd() if cwd is None else cwd)
    if project is None:
        return Path(os.path.abspath(Path(DEFAULT_MEMORY_DIR).expanduser())), "default", None
    choice = choose_folder(project)
    # off: the folder the git-root rule would give, so `config` has a path to show
    folder = choice.memory_dir or project_home(project.root) / "memory"
    return Path(os.path.abspath(folder)), "project", choice


def _cwd() -> Path:
    try:
        return Path.cwd()
    except OSError:  # the working directory was deleted: no project to find
        return Path("/")


def resolve_dirs(
    env: Mapping[str, str], memory_dir: Path | None, state_dir: Path | None,
    *, cwd: Path | None = None, allow_off: bool = False,
) -> tuple[Path, Path, dict[str, Source]]:
    """The memory and state directories, from options, then the environment, then the
    project or defaults (``files/state.py``); a state directory of another memory folder
    is WrongFolder; a project whose memory is off is MemoryOff unless ``allow_off``."""
    return _resolve(env, memory_dir, state_dir, cwd, allow_off)[:3]


def _resolve(env: Mapping[str, str], memory_dir: Path | None, state_dir: Path | None,
             cwd: Path | None, allow_off: bool
             ) -> tuple[Path, Path, dict[str, Source], Choice | None]:
    mem, source, choice = resolve_memory_dir(env, memory_dir, cwd)
    if choice is not None and choice.off and not allow_off:
        raise MemoryOff(choice.project.root, choice.file or choice.project.root)
    sources: dict[str, Source] = {"memory_dir": source}
    if state_dir is not None:
        state, sources["state_dir"] = state_dir, "option"
    elif parse_text(env.get("SAGE_MEM_STATE_DIR")):
        state, sources["state_dir"] = Path(env["SAGE_MEM_STATE_DIR"].strip()), "env"
    elif choice is not None and choice.rule == "repository file":
        # a folder inside a cloned repository keeps its state outside it: a state
        # directory the repository shipped (snapshots, folder.json) is never adopted
        state = repo_state_dir(choice.project.root, mem)
        check_owner(state, mem, given=False)
        return mem, state, {**sources, "state_dir": "project"}, choice
    else:
        return mem, default_state_dir(mem), {**sources, "state_dir": "default"}, choice
    state = Path(os.path.abspath(state.expanduser()))
    check_owner(state, mem)
    return mem, state, sources, choice


def resolve_global_dir(env: Mapping[str, str], file: Mapping[str, object]
                       ) -> tuple[Path | None, Source]:
    """The global layer's folder: settings file, then environment, then the default;
    ``off``/``0``/``false`` or a blank value turns it off (None). Unlike other settings a
    blank variable is not "unset": ``SAGE_MEM_GLOBAL_DIR=`` is how a shell says "none"."""
    for raw, source in ((file.get("global_dir"), "settings"), (env.get(GLOBAL_ENV), "env")):
        if isinstance(raw, str):
            if not raw.strip() or raw.strip().lower() in FALSE_WORDS:
                return None, source  # type: ignore[return-value]
            return Path(os.path.abspath(Path(raw.strip()).expanduser())), \
                source  # type: ignore[return-value]
    return Path(os.path.abspath(Path(DEFAULT_GLOBAL_DIR).expanduser())), "default"


def resolve_claude_home(env: Mapping[str, str], file: Mapping[str, object]
                        ) -> tuple[Path, Source]:
    """Claude Code's folder, whose transcripts recall searches: settings file, then
    ``SAGE_MEM_CLAUDE_HOME``, then Claude Code's own ``CLAUDE_CONFIG_DIR``, then
    ``~/.claude``."""
    for raw, source in ((file.get("claude_home"), "settings"), (env.get(CLAUDE_HOME_ENV), "env"),
                        (env.get(CLAUDE_CONFIG_ENV), "env")):
        if (text := parse_text(raw)) is not None:
            return Path(os.path.abspath(Path(text).expanduser())), source  # type: ignore[return-value]
    return Path(os.path.abspath(Path(DEFAULT_CLAUDE_HOME).expanduser())), "default"


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


def _guarded(spec: IntSetting, env: Mapping[str, str], file: Mapping[str, object],
             state: Path) -> tuple[int | IllegalSetting, Source] | None:
    """``_layered`` for a setting that guards: an illegal value is returned as its
    refusal, which names where the value was (a file's wins over the environment's)."""
    try:
        if spec.key in file and (value := checked_int(file[spec.key], spec, spec.key,
                                                      state / SETTINGS_FILE)) is not None:
            return value, "settings"
        if spec.env in env and (value := checked_int(env[spec.env], spec, spec.env)) is not None:
            return value, "env"
    except IllegalSetting as exc:
        return exc, "env" if exc.path is None else "settings"
    return None


def _refused_warning(exc: IllegalSetting) -> str:
    return (f"{exc.problem}; the commands that rotate snapshots or archive by it refuse "
            "to run until it is fixed")


def _left_warning(old: Path, state: Path, source: str) -> str:
    """Say that records stay behind in the default state directory once another one is
    set: snapshots, locks and conflicts there are not seen from the new one."""
    given = "--state-dir" if source == "option" else "SAGE_MEM_STATE_DIR"
    return (f"{old} holds this folder's earlier state (snapshots, conflicts, locks, change "
            f"log), unused while {given} points at {state}: move it there (mv {old} {state}, "
            f"before the first write), or drop {given} to use it again")


def _stray_warning(stray: StrayState, memory_dir: Path) -> str:
    """Say where a moved or copied folder's locks and snapshots are, and how to adopt
    them — never adopted silently: a state directory is one folder's record."""
    name = stray.owner.name
    gone, was = ((", which no longer exists", f"{name} moved") if stray.moved else
                 ("", f"a copy of {name}"))
    return (f"{stray.state_dir} holds the state (locks, snapshots) of {stray.owner}{gone}, "
            f"and {memory_dir} has none of its own: if it is {was}, "
            f"adopt that state by setting \"folder\" in {stray.state_dir / OWNER_FILE} to "
            f"{str(memory_dir)!r}; otherwise its first write starts a fresh one (or pass "
            "--state-dir)")


def load_settings(
    env: Mapping[str, str] | None = None,
    memory_dir: Path | None = None,
    state_dir: Path | None = None,
    *,
    cwd: Path | None = None,
    allow_off: bool = False,
) -> Settings:
    """Build the settings in effect for this process; an illegal value of a setting that
    guards is recorded as refused, with a warning (see the module doc). The memory folder
    follows ``cwd``'s git project (see ``resolve_memory_dir``); a project with memory off
    is MemoryOff, unless ``allow_off`` (``config`` and ``scope`` show it: ``scope.off``)."""
    env = os.environ if env is None else env
    mem, state, sources, choice = _resolve(env, memory_dir, state_dir, cwd, allow_off)
    file = read_settings_file(state)
    values: dict[str, object] = {}
    guarded: dict[str, int] = {}
    refused: dict[str, IllegalSetting] = {}
    for spec in INT_SETTINGS:
        if spec.guards:
            if kept := _guarded(spec, env, file, state):
                value, sources[spec.key] = kept
                if isinstance(value, IllegalSetting):
                    refused[spec.key] = value
                else:
                    guarded[spec.key] = value
        elif found := _layered(spec.key, spec.env, env, file, partial(parse_int, spec=spec)):
            values[spec.key], sources[spec.key] = found
    parsers = {"validity": parse_validity, "debug": parse_debug, "semantic": parse_validity,
               "transcripts": parse_validity}
    for key, env_name in FLAG_ENV.items():
        if found := _layered(key, env_name, env, file, parsers[key]):
            values[key], sources[key] = found
    for key, env_name in TEXT_ENV.items():
        if found := _layered(key, env_name, env, file, parse_text):
            values[key], sources[key] = found
    values["global_dir"], global_source = resolve_global_dir(env, file)
    if global_source != "default":
        sources["global_dir"] = global_source
    values["claude_home"], home_source = resolve_claude_home(env, file)
    if home_source != "default":
        sources["claude_home"] = home_source
    if choice is not None and not choice.off and _same_place(values["global_dir"], mem):
        raise _global_clash(choice, mem)
    known = {spec.key for spec in INT_SETTINGS} | set(FLAG_ENV) | set(TEXT_ENV) | {"global_dir",
                                                                          "claude_home"}
    warnings = tuple(f"{state / SETTINGS_FILE}: unknown setting {key!r} ignored"
                     for key in file if key not in known)
    warnings += tuple(f"{state / SETTINGS_FILE}: {key} = {file[key]!r} is not a legal value; "
                      f"{sources.get(key, 'default')} value used"
                      for key in file if key in known and sources.get(key) != "settings")
    warnings += tuple(_refused_warning(exc) for exc in refused.values())
    if sources["state_dir"] == "default":
        warnings += tuple(_stray_warning(stray, mem) for stray in stray_states(mem))
    elif sources["state_dir"] != "project" and (old := left_state(mem, state)) is not None:
        warnings += (_left_warning(old, state, sources["state_dir"]),)
    return Settings(memory_dir=mem, state_dir=state, sources=sources, warnings=warnings,
                    guarded_values=guarded, refused=refused, scope=choice,
                    **values)  # type: ignore[arg-type]


def _same_place(global_dir: object, folder: Path) -> bool:
    """Whether the global folder is ``folder``, symlinks followed: a link to the global
    folder named as a project's is the global folder all the same."""
    return isinstance(global_dir, Path) and os.path.realpath(global_dir) == os.path.realpath(
        folder)


def _global_clash(choice: Choice, folder: Path) -> SettingsError:
    """A project folder that is the global layer's: every project's memories would be
    this one's, and this one's every project's."""
    error = ProjectMapError if choice.rule == "user project map" else RepositoryFileError
    return error(choice.file or folder, f"names {folder}, the global layer's folder (every "
                                        "project's), as this project's")


def describe_settings(settings: Settings) -> list[tuple[str, object, Source, str]]:
    """Rows of (key, value, source, env variable) for every setting, for `sagemem config`."""
    rows: list[tuple[str, object, Source, str]] = [
        ("memory_dir", str(settings.memory_dir), settings.source("memory_dir"), "SAGE_MEM_DIR"),
        ("state_dir", str(settings.state_dir), settings.source("state_dir"), "SAGE_MEM_STATE_DIR"),
    ]
    for spec in INT_SETTINGS:
        rows.append((spec.key, _shown_value(settings, spec), settings.source(spec.key),
                     spec.env))
    for key, env_name in {**FLAG_ENV, **TEXT_ENV}.items():
        rows.append((key, getattr(settings, key), settings.source(key), env_name))
    shown = "off" if settings.global_dir is None else str(settings.global_dir)
    rows.append(("global_dir", shown, settings.source("global_dir"), GLOBAL_ENV))
    rows.append(("claude_home", str(settings.claude_home or ""), settings.source("claude_home"),
                 CLAUDE_HOME_ENV))
    return rows


def folder_rule(settings: Settings) -> dict[str, object]:
    """Which rule of "Which folder" chose the memory folder: ``option``, ``env``, one of
    the project rules (with the project root and the file that decided) or ``default``;
    ``memory`` is ``off`` when the project turned memory off."""
    choice = settings.scope
    if choice is None:
        return {"rule": settings.source("memory_dir"), "project_root": None, "file": None,
                "memory": "on"}
    return {"rule": choice.rule, "project_root": str(choice.project.root),
            "file": None if choice.file is None else str(choice.file),
            "memory": "off" if choice.off else "on"}


def scope_text(settings: Settings) -> str:
    """The memory folder and the rule that chose it: ``/…/memory  (git root /src/app)``;
    ``off  (user project map /src/app)`` when memory is off for the project."""
    choice = settings.scope
    if choice is None:
        return str(settings.memory_dir)  # the FROM column names the rule: option, env, default
    shown = "off" if choice.off else str(settings.memory_dir)
    return f"{shown}  ({choice.rule} {choice.project.root})"


def _shown_value(settings: Settings, spec: IntSetting) -> object:
    """What ``sagemem config`` shows: a refused value as it was given (its warning says
    it is refused), never the default nothing would use."""
    if not spec.guards:
        return getattr(settings, spec.key)
    if spec.key in settings.refused:
        return settings.refused[spec.key].value
    return settings.guarded(spec.key)
