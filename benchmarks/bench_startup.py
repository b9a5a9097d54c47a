#!/usr/bin/env python3
"""Start-up benchmarks: commands as whole processes next to floors from the same run.

    python benchmarks/bench_startup.py [--size 10000] [--small 1000] [--repeat 9]

Every figure is the wall time of a whole process seen from outside (``subprocess``:
interpreter start, imports and all), the median of ``--repeat`` rounds. The rounds
alternate — each round runs every process once, in the same order — so a busy spell of
the (shared) machine lands on every row alike. Floors measured in the same run:

- ``python -c pass``   the interpreter's own start;
- ``stat pass``        Python starts, scandir + stat of every file of the 10k folder;
- ``hybrid floor``     the stat pass, ``import numpy``, then one query scored against a
                       memory-mapped int8 50k x 512 matrix (needs numpy; else skipped);
- ``re-read``          Python starts, reads, parses and tokenises every file (the work
                       an index saves).

Processes run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed from their
environment; the untimed first round writes the ``.pyc`` files), as after a ``pip
install``: with it set, an editable checkout compiles every sagemem module from source
on every start (~30 ms more per command here).

The list and config rows go through the launcher's fast paths (``sagemem/launch.py``),
as the console script does; ``hook, no typer`` is the hook run as a client that finds no
server runs it (``run_claude_code_hook``, no typer).

Each command row names its floor and the issue's target ratio. Rows whose command this
checkout lacks (``--mode`` before the vector slice, numpy not installed) say so.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from common import GEN_CORPUS, corpus_generator_or_exit, sagemem_command

SAMPLE = Path(__file__).resolve().parents[1] / "sample_memory"

STAT_PASS = """
import os, sys
with os.scandir(sys.argv[1]) as entries:
    for entry in entries:
        entry.stat(follow_symlinks=False)
"""

HYBRID_FLOOR = STAT_PASS + """
import numpy
matrix = numpy.load(sys.argv[2], mmap_mode="r")
query = numpy.ones(matrix.shape[1], dtype=numpy.float32)
# int8 converted to float32, then BLAS: 22 ms here; a mixed-type `matrix @ query` took 220
scores = matrix.astype(numpy.float32) @ query
scores.argmax()
"""

REREAD = """
import sys
from collections import Counter
from pathlib import Path
from sagemem.files.memory import parse
from sagemem.search.text import tokens
wanted = set(tokens(sys.argv[2]))
scores = Counter()
for path in Path(sys.argv[1]).glob("*.md"):
    memory = parse(path.read_bytes(), path.name)
    counts = Counter(tokens(memory.description + "\\n" + memory.body))
    scores[path.name] = sum(counts[t] for t in wanted)
"""

# the hook as a client that finds no server runs it: the library call, no typer
HOOK_DIRECT = ("import sys; from sagemem.claude_code.hook import run_claude_code_hook; "
               "sys.exit(run_claude_code_hook())")

MATRIX_ROWS, MATRIX_DIM = 50_000, 512  # the scale: 10k memories x 5 paragraphs


@dataclass(frozen=True)
class Row:
    label: str
    argv: list[str]
    floor: str | None = None  # label of the floor row its ratio is against
    target: str = ""
    env: dict[str, str] | None = None
    stdin: bytes | None = None
    fresh_session: bool = False  # a new session each run: a repeated question is not searched


_SESSIONS = itertools.count()


def wall(row: Row) -> float:
    env = dict(os.environ if row.env is None else row.env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    argv, stdin = row.argv, row.stdin
    if row.fresh_session:
        session = f"bench-{next(_SESSIONS)}"
        if stdin is None:
            argv = [*argv, "--session", session]
        else:
            stdin = stdin.replace(b'"session_id": "bench"', f'"session_id": "{session}"'.encode())
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, capture_output=True, check=True, env=env)
    return time.perf_counter() - start


def has_option(command: list[str], option: str) -> bool:
    out = subprocess.run([*command, "--help"], capture_output=True, text=True).stdout
    return option in out


def numpy_matrix(path: Path) -> bool:
    """Write the hybrid floor's int8 matrix; False when numpy is not installed."""
    try:
        import numpy
    except ImportError:
        return False
    rng = numpy.random.default_rng(13)
    numpy.save(path, rng.integers(-127, 128, (MATRIX_ROWS, MATRIX_DIM), dtype=numpy.int8))
    return True


def corpus(root: Path, size: int) -> tuple[Path, Path, list[str]]:
    memory, state = root / f"m{size}", root / f"s{size}"
    subprocess.run([sys.executable, str(GEN_CORPUS), str(memory), str(size)], check=True,
                   capture_output=True)
    queries = [q for q in (root / f"m{size}.queries.txt").read_text().splitlines() if q]
    subprocess.run([*sagemem_command(), "--dir", str(memory), "--state-dir", str(state),
                    "index"], check=True, capture_output=True)
    return memory, state, queries


def rows_for(root: Path, size: int, small: int) -> tuple[list[Row], list[str]]:
    py, sm = sys.executable, sagemem_command()
    notes: list[str] = []
    big, big_state, queries = corpus(root, size)
    little, little_state, _ = corpus(root, small)
    matrix = root / "matrix.npy"
    rows = [Row("python -c pass", [py, "-c", "pass"]),
            Row(f"stat pass ({size:,})", [py, "-c", STAT_PASS, str(big)])]
    if numpy_matrix(matrix):
        rows.append(Row("hybrid floor", [py, "-c", HYBRID_FLOOR, str(big), str(matrix)],
                        f"stat pass ({size:,})"))
    else:
        notes.append("hybrid floor skipped: numpy is not installed")
    rows += [
        Row(f"re-read everything ({size:,})", [py, "-c", REREAD, str(big), queries[0]],
            f"stat pass ({size:,})"),
        Row("sagemem config", [*sm, "config"], "python -c pass", "<= 4x"),
        Row("sagemem list (sample_memory)", [*sm, "--dir", str(SAMPLE), "list"],
            "python -c pass", "<= 4x"),
    ]
    at_big = [*sm, "--dir", str(big), "--state-dir", str(big_state)]
    has_mode = has_option([*sm, "search"], "--mode")
    lexical = ["--mode", "lexical"] if has_mode else []
    off = {**os.environ, "SAGE_MEM_SEMANTIC": "off"}
    rows.append(Row(f"search lexical, warm ({size:,})", [*at_big, "search", queries[1], *lexical],
                    f"stat pass ({size:,})", "<= 3.5x", env=off))
    if has_mode and any(r.label == "hybrid floor" for r in rows):
        rows.append(Row(f"search hybrid, warm ({size:,})", [*at_big, "search", queries[2]],
                        "hybrid floor", "<= 1.5x"))
    else:
        notes.append("hybrid search skipped: this checkout's search has no --mode yet")
    env = {**os.environ, "SAGE_MEM_DIR": str(little), "SAGE_MEM_STATE_DIR": str(little_state)}
    rows += [
        Row(f"sagemem inject ({small:,})", [*sm, "inject", queries[3]], "python -c pass",
            "<= 0.3 s", env=env, fresh_session=True),
        Row(f"hook claude-code ({small:,})", [*sm, "hook", "claude-code"], "python -c pass",
            "<= 0.3 s", env=env, stdin=_payload(queries[3]), fresh_session=True),
        Row(f"hook, no typer ({small:,})", [py, "-c", HOOK_DIRECT], "python -c pass",
            "<= 0.3 s", env=env, stdin=_payload(queries[3]), fresh_session=True),
    ]
    return rows, notes


def _payload(question: str) -> bytes:
    import json

    return json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "bench",
                       "prompt": question, "cwd": "/tmp"}).encode()


def measure(rows: list[Row], repeat: int,
            timer: Callable[[Row], float] | None = None) -> dict[str, float]:
    """Medians of ``repeat`` alternated rounds of ``timer`` (default ``wall``)."""
    timer = timer or wall
    for row in rows:  # one untimed round: page cache and index warm for every row
        timer(row)
    times: dict[str, list[float]] = {row.label: [] for row in rows}
    for _ in range(repeat):
        for row in rows:
            times[row.label].append(timer(row))
    return {label: statistics.median(values) for label, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    corpus_generator_or_exit()
    with tempfile.TemporaryDirectory(prefix="sagemem-bench-") as tmp:
        rows, notes = rows_for(Path(tmp), args.size, args.small)
        medians = measure(rows, args.repeat)
    print(f"whole processes, median of {args.repeat} alternated rounds, {os.cpu_count()} cores")
    print(f"{'process':<32} {'median':>9} {'ratio':>7} {'to':<22} target")
    for row in rows:
        value = medians[row.label]
        ratio = f"{value / medians[row.floor]:.2f}x" if row.floor else ""
        print(f"{row.label:<32} {value * 1000:>6.0f} ms {ratio:>7} {row.floor or '':<22} "
              f"{row.target}")
    for note in notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
