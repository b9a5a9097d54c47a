"""Progress bars for long work (``index``, its embedding pass, ``import``, ``dream
run``): the library's ``Progress`` callback drawn with rich, on stderr, and only when
stderr is a terminal — a script, a pipe, ``--json`` and the tests see exactly the output
they saw without a bar. rich (typer's dependency) is imported only when a bar is drawn.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..search.progress import Progress

MIN_ITEMS = 100
"""A bar only for work of at least this many items: a smaller one is over before a bar
could be read, and drawing it would only flicker."""


@contextmanager
def progress_bar() -> Iterator[Progress]:
    """A callback that draws one bar per kind of work (``what``) while the block runs,
    cleared at its end so the command's own lines are all that stays on the screen."""
    if not sys.stderr.isatty():
        yield _silent
        return
    bars = _Bars()
    try:
        yield bars.update
    finally:
        bars.stop()


def _silent(done: int, total: int, what: str) -> None:
    """Off a terminal: nothing drawn, nothing imported."""


class _Bars:
    """The rich display, started at the first report worth a bar."""

    def __init__(self) -> None:
        self.display: Any = None
        self.tasks: dict[str, Any] = {}

    def update(self, done: int, total: int, what: str) -> None:
        if what not in self.tasks:
            if total < MIN_ITEMS:
                return
            self.tasks[what] = self._start().add_task(what, total=total)
        self.display.update(self.tasks[what], completed=done, total=total)

    def _start(self) -> Any:
        if self.display is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.display = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TimeElapsedColumn(), TimeRemainingColumn(),
                console=Console(file=sys.stderr), transient=True,
                redirect_stdout=False)  # data printed meanwhile stays on stdout, not stderr
            self.display.start()
        return self.display

    def stop(self) -> None:
        if self.display is not None:
            self.display.stop()
