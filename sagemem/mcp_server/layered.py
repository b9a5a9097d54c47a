"""Which layer a tool works on: the project's memories, or the global layer's habits
that hold in every project (``sagemem.layers``), served side by side.

Search and listing read both (``Layers.search`` merges them, a project memory shadowing
a global one of the same title). A tool that names one memory takes ``layer``; without
it a read finds the name in the project, else in the global layer — reading a habit is
harmless — but a change to a name only the global layer has is refused: an edit there
changes every project, so the model must say ``layer: "global"`` (an agent tidying one
project must not rewrite the user's habits by accident). A write that names the global
layer makes its folder when it is only missing (``Layers.open_global``): an agent with
MCP alone has no shell to ``mkdir`` it.

Each layer keeps its own record of what the model saw: the session's ``seen`` revisions
go to the layer's own state directory, and ``Views`` are per layer, so a revision read
in the global layer vouches only for the global file of that name.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import Field

from ..config import Settings
from ..errors import InvalidArgument, MemoryNotFound, SagememError
from ..inject.seen import record_seen
from ..layers import GLOBAL, PROJECT, Layers, global_folder
from ..search.results import SearchResult
from ..store import MemoryStore
from .views import Views

LayerName = Literal["project", "global"]
_WHICH = ("project: this project's memories; global: the user's habits and preferences "
          "that hold in every project (reply language, commit habits, their editor)")
Layer = Annotated[LayerName | None, Field(description=(
    f"Which layer the memory is in ({_WHICH}). Default project; a read finds a name "
    "only the global layer has by itself, but changing a global memory needs layer "
    "\"global\": the change holds in every project."))]
CreateLayer = Annotated[LayerName, Field(description=(
    f"Where to save it ({_WHICH}). global only for what holds in every project; "
    "anything about this project's code, people or decisions is project."))]
CATCH_UP_SLICE_S = 0.25
"""One slice of the background catch-up; tool calls queue behind at most this long."""


class ServedLayers:
    """The layers a server serves, and what it showed the model of each."""

    def __init__(self, layers: Layers, settings: Settings | None,
                 session_id: str | None) -> None:
        self.layers, self.settings, self.session_id = layers, settings, session_id
        self._views = {PROJECT: Views(), GLOBAL: Views()}

    def views(self, layer: str) -> Views:
        return self._views[layer]

    def store(self, layer: str) -> MemoryStore:
        """The store of ``layer``; NoGlobalLayer (saying how to make one) when off."""
        return self.layers.store(layer)

    def for_read(self, name: str, layer: LayerName | None
                 ) -> tuple[LayerName, MemoryStore]:
        """Where ``name`` is read: the layer asked for, else the project's, else the
        global layer's when only it has the name (else the project, whose error says
        the name is unknown)."""
        if layer is not None:
            return layer, self.store(layer)
        if self._only_global(name) is not None:
            return "global", self.store(GLOBAL)
        return "project", self.layers.project

    def for_change(self, name: str, layer: LayerName | None, *,
                   create: bool = False) -> tuple[LayerName, MemoryStore]:
        """Where a change to ``name`` goes: the layer asked for (a ``create`` in the
        global layer makes its folder if missing), else the project's; refused when
        only the global layer has the name and no layer was given."""
        if layer == GLOBAL:
            return "global", self.for_create("global") if create else self.store(GLOBAL)
        if layer is None and (file := self._only_global(name)) is not None:
            raise InvalidArgument("layer", (
                f"{file} is a global memory, a habit kept for every project, and this "
                "project has none of that name; to change it in every project, call "
                "again with layer: \"global\" (to give this project its own, with "
                "layer: \"project\"); nothing was written"))
        return "project", self.layers.project

    def for_create(self, layer: LayerName) -> MemoryStore:
        """Where a new memory goes; the global layer's folder made if it is missing."""
        if layer == PROJECT:
            return self.layers.project
        if self.settings is None:  # a bare store was served: no global layer to make
            return self.store(GLOBAL)
        return self.layers.open_global(self.settings)

    def _only_global(self, name: str) -> str | None:
        """The global memory's file when the global layer has ``name`` and the project
        has not (a bad name is the project's error, raised here)."""
        if self.layers.global_ is None or _has(self.layers.project, name):
            return None
        try:
            return self.layers.global_.get(name).file
        except SagememError:  # not there, or its folder gone: the project answers
            return None

    def seen(self, layer: str, revisions: Mapping[str, str]) -> list[str]:
        """Record for the session what the model saw, in ``layer``'s own state."""
        if self.session_id is None or not revisions:
            return []
        return record_seen(self.store(layer).state_dir, self.session_id, revisions)

    def searched(self, results: tuple[SearchResult, ...]) -> list[str]:
        """Each search result seen in its own layer (record and ``Views``)."""
        warnings: list[str] = []
        for layer in (PROJECT, GLOBAL):
            mine = tuple(r for r in results if r.layer == layer)
            warnings += self.seen(layer, {r.file: r.revision for r in mine if r.revision})
            self._views[layer].searched(mine)
        return warnings

    def catch_up(self) -> bool:
        """One slice of bringing each layer's index (and vectors) in step with its
        folder; True once nothing is left in any. A folder that is gone is skipped: a
        tool call says so."""
        return all(catch_up(store) for _, store in self.layers.stores()
                   if store.directory.is_dir())

    def refresh(self) -> None:
        """Open a global layer whose folder was made since the server started (``mkdir
        -p``, ``sagemem new --global`` elsewhere): one stat a call while there is none."""
        if self.layers.global_ is None and self.settings is not None \
                and global_folder(self.settings)[0] is not None:
            with contextlib.suppress(SagememError):  # unusable: the project still answers
                self.layers.open_global(self.settings)

    def watch(self) -> None:
        """Follow each layer's folder (again, once a folder that went away is back)."""
        for _, store in self.layers.stores():
            if store.directory.is_dir():
                store.search_index().watch()


def catch_up(store: MemoryStore) -> bool:
    """One slice for ``store``; True once its index and vectors are in step. A long-lived
    server runs slices between tool calls, so a fresh folder of thousands of memories
    never makes one call wait for all."""
    index = store.search_index()
    if index.sync(deadline=time.monotonic() + CATCH_UP_SLICE_S).pending:
        return False
    if not store.semantic:
        return True
    from ..search.vector_sync import sync_vectors

    report = sync_vectors(store.vector_store(), index, store.embedder(),
                          deadline=time.monotonic() + CATCH_UP_SLICE_S)
    return not report.behind


def _has(store: MemoryStore, name: str) -> bool:
    try:
        store.get(name)
    except MemoryNotFound:
        return False
    return True
