"""The progress callback of long library work (a build of the index, embedding, an
import, a consolidation run): one signature for all of it, so a surface draws every
kind with one helper and the library never knows whether anyone is watching.

It lives in the lowest room that does such work (``search``); the rooms above it
(``history``, ``transfer``, ``dream``) pass the same callback on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Progress(Protocol):
    """Told ``done`` of ``total`` items of the work named ``what`` (``"indexing"``,
    ``"embedding"``…) are done. ``done`` never goes down within one ``what``, and the last
    call of a finished piece of work has ``done == total``; calls come in batches, not
    per item, so a callback may draw without slowing the work."""

    def __call__(self, done: int, total: int, what: str) -> None: ...


def named(progress: Progress | None, what: str) -> Callable[[int, int], None] | None:
    """``progress`` for work that reports (done, total) alone (``create_snapshot``'s
    copies), under the name ``what``; None stays None, so no callback costs nothing."""
    if progress is None:
        return None
    return lambda done, total: progress(done, total, what)
