"""The global and the project layer: habits true in every project beside the project's
own memories, as Claude Code and Codex keep them.

``Layers`` (``stack.py``) is the project store and, when ``SAGE_MEM_GLOBAL_DIR`` names an
existing folder that is not the project's, the global store — each with its own state
directory (snapshots, locks, conflicts, index, vectors), resolved as for any folder.
Search reads both and merges them (``merge.py``: by each result's score on its own
layer's 0–1 scale; a project memory shadows a global one of the same title); writes go
to one layer, the project's unless asked (``for_write(global_=True)``). Names offered:
``Layers``, ``global_folder``, ``GLOBAL``, ``PROJECT`` (``merge.merged`` and
``titles.shadowed`` are imported from their modules: listing and writing never load
search).
"""

from __future__ import annotations

from .stack import Layers as Layers
from .stack import global_folder as global_folder
from .titles import GLOBAL as GLOBAL
from .titles import PROJECT as PROJECT
