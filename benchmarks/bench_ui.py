#!/usr/bin/env python3
"""Panel benchmark: the Files screen (``GET /files``) of a running ``sagemem ui``.

    python benchmarks/bench_ui.py [--sizes 1000 10000] [--repeat 7]

Generates a memory directory with ``../shared/bench/gen_corpus.py`` for each size, serves
the real panel (``build_app`` under uvicorn on a loopback port, as ``tests/panel_server.py``
does) and times, over real HTTP with the run's cookie, in the same run:

- ``store.list()``         the floor: every file through the safe read path, parsed;
- ``GET /files, cold``     a new panel's first request: the audit behind the badges runs
                           (then it is kept while the folder's stat signature holds);
- ``GET /files, warm``     the screen again: the stat pass, conflicts, locks, the listing,
                           the marks and the whole table rendered;
- ``GET /files?type=user`` the same, a quarter of the rows rendered;
- ``files_page() only``    the warm screen's data without HTTP or the template.

Target (issue 23): the warm Files screen of 10,000 memories well under a second.
Needs the ui extra (skipped without it, like ``bench_mcp.py`` without mcp).
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from common import GEN_CORPUS, median_of, sizes_and_repeat

if importlib.util.find_spec("jinja2") is None:
    print("bench_ui: skipped, the ui extra is not installed (pip install '.[ui]')")
    sys.exit(0)
# The tests' panel server: the same real app under uvicorn, one definition of "serving".
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from panel_server import PanelServer, running_panel

from sagemem import MemoryStore
from sagemem.ui.app import Panel
from sagemem.ui.files import Filters, files_page


def timed_get(panel: PanelServer, path: str) -> float:
    start = time.perf_counter()
    reply = panel.get(path)
    seconds = time.perf_counter() - start
    assert reply.status == 200, (path, reply.status)
    return seconds


def cold(corpus: Path, state: Path, repeat: int) -> float:
    """Median first request over ``repeat`` fresh panels (each audits once)."""
    times = []
    for _ in range(repeat):
        with running_panel(corpus, state) as panel:
            times.append(timed_get(panel, "/files"))
    return statistics.median(times)


def measure(files: int, repeat: int) -> tuple[int, int, list[tuple[str, float]]]:
    with tempfile.TemporaryDirectory(prefix="sagemem-bench-") as tmp:
        corpus, state = Path(tmp) / "memory", Path(tmp) / "state"
        subprocess.run([sys.executable, str(GEN_CORPUS), str(corpus), str(files)],
                       check=True, capture_output=True)
        store = MemoryStore(corpus, state)
        count = len(store.list(include_archived=True).memories)
        rows = [("store.list() (floor)",
                 median_of(lambda: store.list(include_archived=True), repeat)),
                ("GET /files, cold", cold(corpus, state, max(1, repeat // 2)))]
        with running_panel(corpus, state) as panel:
            page_bytes = len(panel.get("/files").text.encode())
            rows += [("GET /files, warm", median_of(lambda: timed_get(panel, "/files"),
                                                    repeat)),
                     ("GET /files?type=user", median_of(
                         lambda: timed_get(panel, "/files?type=user"), repeat))]
            bare = panel_of(panel)
            files_page(bare, Filters(), date.today())  # the audit and the parse, once
            rows.append(("files_page() only", median_of(
                lambda: files_page(bare, Filters(), date.today()), repeat)))
    return count, page_bytes, rows


def panel_of(server: PanelServer) -> Panel:
    """A ``Panel`` of its own over the server's layers, called on this thread."""
    return Panel(server.layers)


def main() -> int:
    args = sizes_and_repeat(__doc__)
    for n, files in enumerate(args.sizes):
        count, page_bytes, rows = measure(files, args.repeat)
        floor = rows[0][1]
        print(("\n" if n else "") + f"{count} memories, /files page {page_bytes / 1024:.0f} "
              f"KiB, median of {args.repeat} runs (cold: of {max(1, args.repeat // 2)})")
        print(f"{'operation':<24} {'median s':>10} {'vs floor':>10}")
        for label, seconds in rows:
            print(f"{label:<24} {seconds:>10.3f} {seconds / floor:>9.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
