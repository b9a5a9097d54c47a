"""Per-session injection state: the budget spent, the last question's signature, the
status cards already shown and the last attempts (for ``--explain``).

A session is one conversation of the host (Claude Code's session id, say). Its state lives
in ``<state>/sessions/<id>.json``, written atomically; the id comes from the host and is
untrusted, so it only ever names a file inside ``sessions/`` (an unsafe id is hashed).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import SagememError
from ..files.atomic import atomic_write, make_folder
from ..files.paths import read_regular

SESSIONS_DIR = "sessions"
DEFAULT_SESSION = "default"
"""The shared session of callers that know no host session id (a shell, a hook payload
without one)."""
MAX_ATTEMPTS = 5
CARD_RESERVE_SHARE = 0.05
CARD_RESERVE_MIN, CARD_RESERVE_MAX = 1024, 4096
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


@dataclass(frozen=True)
class Budget:
    """A session's byte budget: a pool for memory bodies and a reserve for status cards."""

    total: int
    body_pool: int
    card_reserve: int

    @classmethod
    def of(cls, total: int) -> Budget:
        reserve = min(max(int(total * CARD_RESERVE_SHARE), CARD_RESERVE_MIN), CARD_RESERVE_MAX)
        return cls(total, total - reserve, reserve)


@dataclass(frozen=True)
class SessionState:
    """What one session has been given so far."""

    session: str
    steps: int = 0
    body_used: int = 0
    card_used: int = 0
    last_signature: str | None = None
    card_signatures: tuple[str, ...] = ()
    task_revision: str | None = None
    attempts: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    def with_attempt(self, attempt: dict[str, Any]) -> SessionState:
        return replace(self, attempts=(*self.attempts, attempt)[-MAX_ATTEMPTS:])


def signature(text: str) -> str:
    """The key of a question or a card, blind to case, width and spacing: what a session
    remembers to tell a repeat (``last_signature``, ``card_signatures``)."""
    folded = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()[:16]


def session_file(state_dir: Path, session_id: str) -> Path:
    """The state file of a session; ids that are not plainly safe are hashed."""
    safe = session_id if _SAFE_ID.fullmatch(session_id) and ".." not in session_id else (
        "id-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:24])
    return state_dir / SESSIONS_DIR / f"{safe}.json"


def load_session(state_dir: Path, session_id: str) -> SessionState:
    """The saved state, or a fresh one (a missing or unreadable file starts afresh)."""
    path = session_file(state_dir, session_id)
    try:
        data = json.loads(read_regular(path).data.decode("utf-8"))
    except (SagememError, ValueError):
        return SessionState(session_id)
    return _from_json(session_id, data)


def _from_json(session_id: str, data: Any) -> SessionState:
    if not isinstance(data, dict):
        return SessionState(session_id)
    fresh = SessionState(session_id)
    try:
        return SessionState(
            session=session_id,
            steps=int(data.get("steps", 0)),
            body_used=int(data.get("body_used", 0)),
            card_used=int(data.get("card_used", 0)),
            last_signature=data.get("last_signature") or None,
            card_signatures=tuple(str(s) for s in data.get("card_signatures", [])),
            task_revision=data.get("task_revision") or None,
            attempts=tuple(a for a in data.get("attempts", []) if isinstance(a, dict)),
        )
    except (TypeError, ValueError):
        return fresh


def save_session(state_dir: Path, state: SessionState) -> None:
    """Write the session's state atomically; ``WriteFailed`` when it cannot be kept, and
    ``UnsafeFile`` for a symlink planted at ``sessions/`` (it would carry every session's
    state wherever it points; the state directory itself may be a link the user set)."""
    path = session_file(state_dir, state.session)
    make_folder(state_dir, follow_link=True)
    make_folder(path.parent, parents=False)
    data = {"version": 1, **asdict(state)}
    text = json.dumps(data, ensure_ascii=False, indent=1, default=str)
    atomic_write(path, text.encode("utf-8"), create=False)


def reset_session(state_dir: Path, session_id: str) -> SessionState:
    """Zero the budget ledgers and the signatures (after the host compacts or clears)."""
    state = SessionState(session_id)
    save_session(state_dir, state)
    return state
