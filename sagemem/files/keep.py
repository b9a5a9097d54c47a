"""Keeping text that could not be written: a person's edit is never lost silently.

``sagemem edit`` (and, later, the MCP server) calls ``keep_text`` when the guarded
write of an edited text fails — a conflict, a full disk, a read-only folder. The text
goes to a file only its owner can read (``mkstemp``, 0600) in a directory only its
owner can enter (0700): first ``<state>/edits/``, else a fresh private directory in the
system temp directory. Neither a predictable name nor a world-readable copy: an earlier
fallback wrote ``/tmp/<stamp>-<name>.md`` with mode 0644. A file that could not be
written whole is removed, never left behind empty; when no place takes the text the
caller gets None and must show the text itself.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from contextlib import suppress
from datetime import datetime, timezone
from pathlib import Path

from .atomic import fill

PRIVATE_DIR = 0o700
TEMP_PREFIX = "sagemem-edits-"


def keep_text(text: str, name: str, directory: Path, *,
              now: datetime | None = None) -> Path | None:
    """Save ``text`` as ``<stamp>-<random>-<name>`` (0600) in ``directory`` (made 0700),
    else in a new private directory of the system temp directory; the file kept, or None
    when neither could hold all of it."""
    data = text.encode("utf-8", "surrogatepass")
    prefix = f"{(now or datetime.now(timezone.utc)).astimezone(timezone.utc):%Y%m%dT%H%M%S}-"
    places: tuple[Callable[[], Path], ...] = (lambda: _private(directory), _private_temp)
    for place in places:
        try:
            folder = place()
        except OSError:
            continue
        try:
            return _write_private(folder, prefix, f"-{name}", data)
        except OSError:
            if folder != directory:
                with suppress(OSError):
                    folder.rmdir()  # the temp directory we made for it, now empty
    return None


def _private(directory: Path) -> Path:
    """``directory``, created or narrowed to 0700; a symlink in its place is refused."""
    if os.path.islink(directory):
        raise OSError(errno.ELOOP, "is a symlink", str(directory))
    directory.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    os.chmod(directory, PRIVATE_DIR)
    return directory


def _private_temp() -> Path:
    return Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))  # 0700, a name no one can guess


def _write_private(folder: Path, prefix: str, suffix: str, data: bytes) -> Path:
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)  # 0600
    fill(fd, Path(name), [data])
    return Path(name)
