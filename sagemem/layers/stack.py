"""``Layers``: the project store and the optional global store, searched together and
written one at a time.

The global layer is on only when its folder (``Settings.global_dir``,
``SAGE_MEM_GLOBAL_DIR``, default ``~/.sage-mem/global``) is a directory and not the
project folder itself. The prompt hook runs before every prompt, so a missing global
folder costs one ``stat`` and nothing else; an existing one costs its state directory's
resolution and one more index. With no global layer every answer is the project
store's own, unchanged to the byte.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Settings
from ..errors import NoGlobalLayer, SagememError
from ..files.atomic import make_folder
from ..files.state import default_state_dir, same_folder
from ..store import MemoryStore
from .titles import GLOBAL, PROJECT, shadow_keys

if TYPE_CHECKING:
    from ..search.hybrid import Mode
    from ..search.results import SearchResponse

MERGE_CAP = 10  # retrieve.MAX_CANDIDATES (not imported: a write never loads search)
"""Candidates in all, as one folder has: the layers share the budget, they do not double it."""


def global_folder(settings: Settings) -> tuple[Path | None, str, bool]:
    """The global layer's folder when it is on, else None; why it is off (said by
    ``--global``); and whether the folder configured is unusable (then a folder named
    explicitly earns a notice: a typo must not silently lose every habit)."""
    return _global_layer(settings)[:3]


def _global_layer(settings: Settings) -> tuple[Path | None, str, bool, str]:
    """``global_folder``, and what to do about a layer that is off: ``mkdir -p`` only for
    a folder that is missing (never for a file, nor for the project folder itself)."""
    path = settings.global_dir
    if path is None:
        return None, "SAGE_MEM_GLOBAL_DIR is off", False, _SET_A_FOLDER
    if not os.path.isdir(path):  # the one stat a missing global layer costs
        if os.path.lexists(path):
            return None, f"{path} is not a folder", True, _SET_ITS_OWN
        return (None, f"{path} does not exist", True,
                f"mkdir -p {path}, or set SAGE_MEM_GLOBAL_DIR=off")
    if same_folder(path, settings.memory_dir):
        return None, f"{path} is the project folder itself", False, _SET_ITS_OWN
    return path, "", False, ""


def _global_store(path: Path, settings: Settings, project: MemoryStore) -> MemoryStore:
    """The global layer's store: its own state directory, the project's embedder."""
    return MemoryStore(path, default_state_dir(path), semantic=settings.semantic,
                       embedder=settings.embedder, embedder_of=project,
                       caps=project.caps)  # each layer counted on its own


_SET_A_FOLDER = "set SAGE_MEM_GLOBAL_DIR to a folder"
_SET_ITS_OWN = "set SAGE_MEM_GLOBAL_DIR to a folder of its own, or to off"


class Layers:
    """The project store, and the global one when there is one (``stack.py`` doc)."""

    def __init__(self, project: MemoryStore, global_: MemoryStore | None = None, *,
                 folder: Path | None = None, why_off: str = "", fix: str = "",
                 notices: tuple[str, ...] = ()) -> None:
        self.project = project
        self.global_ = global_
        self.folder = global_.directory if global_ is not None else folder
        """The global layer's folder, or the one configured while it is off (None: off)."""
        self.why_off = why_off or "there is no global layer"
        self.fix = fix or _SET_A_FOLDER
        self.notices = notices
        """Said once per command: a global folder named explicitly that is not there."""
        self._keys: frozenset[str] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Layers:
        """Both layers for these settings; the global one shares the project's embedder
        and settings, and keeps its own state directory."""
        project = MemoryStore.from_settings(settings)
        path, why, missing, fix = _global_layer(settings)
        if path is None:
            named = missing and settings.source("global_dir") != "default"
            notices = (f"the global layer is off: {why} ({fix})",) if named else ()
            return cls(project, folder=settings.global_dir, why_off=why, fix=fix,
                       notices=notices)
        try:
            global_ = _global_store(path, settings, project)
        except SagememError as exc:  # its state is unusable: the project still answers
            return cls(project, folder=path, why_off=str(exc),
                       notices=(f"the global layer is off: {exc}",))
        return cls(project, global_)

    def open_global(self, settings: Settings) -> MemoryStore:
        """The global store for a write that names the global layer, its folder made
        first when it is only missing (the ``mkdir -p`` the notice asks for): an agent
        that has MCP alone has no shell to make it. A layer that is off for any other
        reason (the setting off, a file, the project folder itself) is NoGlobalLayer."""
        if self.global_ is not None:
            return self.global_
        path = settings.global_dir
        if path is not None and not os.path.lexists(path):
            make_folder(path)
        path, why, _, fix = _global_layer(settings)
        if path is None:
            raise NoGlobalLayer(settings.global_dir, why, fix)
        self.global_ = _global_store(path, settings, self.project)
        self.folder, self.notices, self._keys = path, (), None
        return self.global_

    def __enter__(self) -> Layers:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self.project.close()
        if self.global_ is not None:
            self.global_.close()

    def stores(self) -> tuple[tuple[str, MemoryStore], ...]:
        """(layer, store) of each layer, the project first."""
        return ((PROJECT, self.project),) + (((GLOBAL, self.global_),) if self.global_ else ())

    def store(self, layer: str) -> MemoryStore:
        """The store of ``layer`` ("project" or "global")."""
        return self.for_write(global_=layer == GLOBAL)

    def for_write(self, global_: bool = False) -> MemoryStore:
        """Where a write goes: the project unless ``global_``; NoGlobalLayer when asked
        for a global layer there is none of."""
        if not global_:
            return self.project
        if self.global_ is None:
            raise NoGlobalLayer(self.folder, self.why_off, self.fix)
        return self.global_

    def shadowing(self) -> frozenset[str]:
        """The project's titles and file names, which hide global memories of the same."""
        if self._keys is None:
            self._keys = shadow_keys(self.project.search_index().names())
        return self._keys

    def search(self, query: str, scope: str | None = None, limit: int = 10,
               cursor: str | None = None, include_archived: bool = False,
               deadline: float | None = None, mode: Mode | None = None) -> SearchResponse:
        """``MemoryStore.search`` over both layers (``merge.py``); with no global layer,
        the project's answer as it is."""
        if self.global_ is None:
            return self.project.search(query, scope=scope, limit=limit, cursor=cursor,
                                       include_archived=include_archived, deadline=deadline,
                                       mode=mode)
        from ..search.results import cursor_offset
        from .merge import merged

        mode = mode or ("hybrid" if self.project.semantic else "lexical")
        paged_as = f"{scope or ''}\0{mode}\0{int(include_archived)}\0layers"
        offset = cursor_offset(cursor, query, paged_as)
        whole = 2 * MERGE_CAP  # every result of a layer, archived ones included
        answers = [store.search(query, scope=scope, limit=whole,
                                include_archived=include_archived, deadline=deadline,
                                mode=mode) for _, store in self.stores()]
        self._keys = None  # the search brought the project's index up to date
        return merged(answers[0], answers[1], self.shadowing(), offset=offset, limit=limit,
                      paged_as=paged_as, cap=MERGE_CAP * (2 if include_archived else 1))

