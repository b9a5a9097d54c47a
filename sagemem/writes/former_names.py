"""A renamed memory keeps its former title: a write that changes ``name`` records the
old one in ``former_names:``, so that saving by the old title (``remember``) updates
this memory instead of writing a second copy of it (issue 20: ``set name=`` dropped it).

The field lives in the file, not the state directory: it is what the memory was called,
so it travels with the file (a copy, a commit, another machine), a person sees and can
edit it, and ``remember`` reads it from the listing it already has. Only a rename done
as a field write is followed (``set name=…``, MCP ``set_memory_fields``): a whole text
written by hand or by a model is kept byte for byte as its writer gave it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..files.memory import Memory
from .similar import fold


def with_former_name(fields: Mapping[str, object], current: Memory | None
                     ) -> Mapping[str, object]:
    """``fields``, plus ``former_names`` holding ``current``'s name when they rename it
    (a name given back is taken off the list); as given when they do not."""
    if "name" not in fields or current is None or current.name is None \
            or "former_names" in fields:
        return fields
    new = fields["name"]
    new_key = fold(new) if isinstance(new, str) else None
    if new_key == fold(current.name):
        return fields
    kept = [f for f in current.former_names if fold(f) != new_key]
    if all(fold(f) != fold(current.name) for f in kept):
        kept.append(current.name)
    if kept == list(current.former_names):
        return fields
    return {**fields, "former_names": kept}
