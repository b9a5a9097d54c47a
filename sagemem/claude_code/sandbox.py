"""A throwaway copy of a state directory, for doctor's probes: running the hook does what a
prompt does (it records what it injected in the ledger, marks the session's reads, builds
the index), and doctor must observe without changing any of it. So the probe runs against
the copy, which is removed afterwards; the real state directory is only read.

Left out of the copy: ``snapshots/`` (no probe reads them, and they can be large) and
``folders/`` (the state of other memory folders sharing a parent's ``.sage-mem``). The
embedder's caches (``embedder/<key>/``: ~80 MB of model arrays, built in a temporary
folder and renamed, never written in place) are hard-linked where the file system allows
it, else copied. A symlink is left out (a write through it would land outside the copy),
and so is a FIFO or socket (copying one would hang or fail).

The prompt hook reads the global layer too, and records what it injected from there in
that layer's own state directory (beside the global folder, never given by a variable),
so the probe gets a copy of the global layer as well (``global_copy``): its files
hard-linked (the index, keyed by inode and mtime, stays current; sagemem replaces a file
rather than writing into it) and its state copied as above, claimed by the copy; the
copied settings name it as ``global_dir``, which no variable in a hook's command can
override (the settings file wins over the environment).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ..config import SETTINGS_FILE
from ..errors import SagememError
from ..files.state import OWNER_FILE, claim, default_state_dir, own_state_dir

LEFT_OUT = frozenset({"snapshots", "folders"})
LINKED = "embedder"


@contextmanager
def state_copy(state_dir: Path) -> Iterator[Path]:
    """A copy of ``state_dir`` (an empty folder when it does not exist yet), gone after."""
    with tempfile.TemporaryDirectory(prefix="sagemem-doctor-") as tmp:
        copy = Path(tmp) / "state"
        if state_dir.is_dir():
            _copy_dir(state_dir, copy, depth=0, link=False)
        else:
            copy.mkdir()
        yield copy


def _copy_dir(source: Path, target: Path, *, depth: int, link: bool) -> None:
    target.mkdir()
    try:
        entries = list(os.scandir(source))
    except OSError:
        return  # an unreadable corner: the probe sees it missing, the real one is untouched
    for entry in entries:
        if depth == 0 and entry.name in LEFT_OUT:
            continue
        here = target / entry.name
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                _copy_dir(Path(entry.path), here, depth=depth + 1,
                          link=link or (depth == 1 and source.name == LINKED))
            elif stat.S_ISREG(mode):
                _copy_file(Path(entry.path), here, link=link)
        except OSError:
            continue


def _copy_file(source: Path, target: Path, *, link: bool) -> None:
    if link:
        try:
            os.link(source, target)
            return
        except OSError:
            pass  # another file system: copied instead
    shutil.copy2(source, target)


def global_copy(copy: Path, global_dir: Path | None) -> None:
    """Make the probe run on a copy of the global layer (``global_dir``; None: off, and
    kept off) beside the state copy ``copy``, named in the copy's settings. A layer that
    cannot be copied is off for the probe: never the real one in its place."""
    setting = "off"
    if global_dir is not None:
        with suppress(OSError, SagememError):
            setting = str(_copy_layer(global_dir, copy.parent / "global"))
    _set_setting(copy / SETTINGS_FILE, "global_dir", setting)


def _copy_layer(global_dir: Path, into: Path) -> Path:
    """The folder hard-linked under ``into`` and its state copied where sagemem looks for
    the copy's (``own_state_dir``), claimed by the copy."""
    real_state = default_state_dir(global_dir)
    folder = into / (global_dir.name or "global")
    into.mkdir()
    _copy_dir(global_dir, folder, depth=1, link=True)
    state = own_state_dir(folder)
    state.parent.mkdir(parents=True)
    if real_state.is_dir():
        _copy_dir(real_state, state, depth=0, link=False)
    else:
        state.mkdir()
    (state / OWNER_FILE).unlink(missing_ok=True)
    claim(state, folder)
    return folder


def _set_setting(path: Path, key: str, value: str) -> None:
    """``key`` set in the copy's settings file; one that is not a JSON object is left as
    it is (the hook then reads no settings, nor either layer, and says so in its log)."""
    try:
        text = path.read_text("utf-8-sig") if path.is_file() else ""
        data = json.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        return
    if isinstance(data, dict):
        path.write_text(json.dumps({**data, key: value}), "utf-8")
