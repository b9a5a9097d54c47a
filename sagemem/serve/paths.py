"""Where the hook socket lives, and the gates a path must pass before anyone uses it.

The socket is ``<state>/run/serve.sock``. Whoever can connect to it gets memories
injected and session state changed, so the rule is: only the owner. In order:

1. the run directory is a real directory (never a symlink), ours, mode 0700;
2. the socket path is at most ``MAX_SOCKET_PATH`` bytes (the kernel's ``sun_path``;
   a longer one is refused, never reached through a chdir trick);
3. what is at the socket path is a socket, ours (a planted link or file is never
   followed, replaced or removed);
4. the server checks each peer's uid (``server.py``), since a mode can be changed.

The client (``client.py``) runs gates 1 and 3 with ``lstat`` before connecting; the
server runs all of them before listening.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import struct
from pathlib import Path

from ..errors import ServeRefused, ServerRunning

RUN_DIR = "run"
SOCKET_NAME = "serve.sock"
MAX_SOCKET_PATH = 107  # sizeof(sun_path) is 108 on Linux, one byte for the NUL
PROBE_TIMEOUT = 0.2  # a live server accepts at once; a stale socket refuses at once


def socket_path(state_dir: Path) -> Path:
    """``<state>/run/serve.sock`` (absolute, since the server's cwd must not matter)."""
    return Path(os.path.abspath(state_dir)) / RUN_DIR / SOCKET_NAME


def unsafe_run_dir(run_dir: Path) -> str | None:
    """Why ``run_dir`` must not hold our socket (gate 1), or None when it may."""
    try:
        info = os.lstat(run_dir)
    except FileNotFoundError:
        return "no run directory"
    except OSError as exc:
        return f"run directory unreadable ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return f"{run_dir} is a symlink; sagemem never follows links"
    if not stat.S_ISDIR(info.st_mode):
        return f"{run_dir} is not a directory"
    if info.st_uid != os.getuid():
        return f"{run_dir} belongs to uid {info.st_uid}, not to us"
    if info.st_mode & 0o077:
        return (f"{run_dir} has mode {stat.S_IMODE(info.st_mode):o}; it must be owner-only "
                f"(chmod 700 {run_dir})")
    return None


def unsafe_socket(path: Path) -> str | None:
    """Why the client must not connect to ``path`` (gates 1 and 3), or None."""
    problem = unsafe_run_dir(path.parent)
    if problem is not None:
        return problem
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    if not stat.S_ISSOCK(info.st_mode):
        return f"{path} is not a socket (a {_kind(info.st_mode)}); it is left alone"
    if info.st_uid != os.getuid():
        return f"{path} belongs to uid {info.st_uid}, not to us"
    return None


def _kind(mode: int) -> str:
    return ("symlink" if stat.S_ISLNK(mode) else "directory" if stat.S_ISDIR(mode)
            else "regular file" if stat.S_ISREG(mode) else "special file")


def prepare_socket_path(state_dir: Path) -> Path:
    """The socket path, cleared for ``bind``: the run directory made (0700) or checked,
    a stale socket (nobody answers: its server was killed) removed. ServerRunning when a
    live server answers; ServeRefused for anything else in the way, left untouched."""
    path = socket_path(state_dir)
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise ServeRefused(path, f"the socket path is {len(os.fsencode(path))} bytes, over "
                                 f"the {MAX_SOCKET_PATH} a Unix socket allows; use a "
                                 "shorter state directory (--state-dir)")
    _make_run_dir(path.parent)
    if problem := unsafe_run_dir(path.parent):
        raise ServeRefused(path, problem)
    if not os.path.lexists(path):
        return path
    if problem := unsafe_socket(path):
        raise ServeRefused(path, problem)
    if answers(path):
        raise ServerRunning(path)
    os.unlink(path)  # stale: its server died without cleaning up (kill -9)
    return path


def _make_run_dir(run_dir: Path) -> None:
    """Make ``<state>/run`` owner-only; an existing one is checked, never chmod-ed (a
    directory someone loosened is a question for its owner, not something to fix)."""
    if os.path.lexists(run_dir):
        return
    os.makedirs(run_dir.parent, exist_ok=True)
    try:
        os.mkdir(run_dir, 0o700)
    except FileExistsError:
        return  # made meanwhile; unsafe_run_dir judges it
    os.chmod(run_dir, 0o700)  # the umask may have taken bits mkdir was given


def answers(path: Path) -> bool:
    """Whether a server accepts connections on ``path`` (refused or missing: stale)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(PROBE_TIMEOUT)
    try:
        probe.connect(os.fspath(path))
    except OSError as exc:
        # refused or gone: stale; busy (EAGAIN, a timeout): someone is there
        return exc.errno not in (errno.ECONNREFUSED, errno.ENOENT)
    finally:
        probe.close()
    return True


PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def peer_uid(conn: socket.socket) -> int:
    """The process's uid at the other end of ``conn``, from the kernel (it cannot be
    forged by the peer); -1 where the system has no ``SO_PEERCRED`` (the owner-only run
    directory is then the only guard)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return -1
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEERCRED.size)
    return int(PEERCRED.unpack(creds)[1])
