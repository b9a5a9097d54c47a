#!/usr/bin/env python3
"""Serving the hook: ``hook claude-code`` and ``inject`` through ``sagemem serve`` next
to the same calls in their own process, and ``python -c pass`` from the same run.

    python benchmarks/bench_serve.py [--size 10000] [--small 1000] [--repeat 9]

Whole processes seen from outside, the median of ``--repeat`` alternated rounds (each
round runs every row once, in order), as in ``bench_startup.py``. The served rows go to
one ``sagemem serve`` over the large corpus; the in-process rows use a second state
directory of the same folder, where no server listens, so they never try one. Every
hook call is a new session and every inject a new question (a repeat is not searched). Lexical only
(``SAGE_MEM_SEMANTIC=off``) by default: the embedder's load would hide the start-up this
measures; ``--hybrid`` measures the default mode, the question embedded in the server.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from bench_startup import Row, _payload, corpus, measure, wall
from common import corpus_generator_or_exit, sagemem_command

READY_TIMEOUT = 120.0
ASKED = itertools.count()


def wall_numbered(row: Row) -> float:
    """``wall``, with ``{n}`` in the argv made a new number each run: ``inject``'s fast
    path takes no ``--session``, so a new question keeps it from being a repeat."""
    n = str(next(ASKED))
    return wall(replace(row, argv=[a.replace("{n}", n) for a in row.argv]))


def start_server(memory: Path, state: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``sagemem serve`` over ``memory``, once its socket is there."""
    server = subprocess.Popen([*sagemem_command(), "--dir", str(memory), "--state-dir",
                               str(state), "serve", "--idle", "0"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + READY_TIMEOUT
    while not (state / "run" / "serve.sock").exists():
        if server.poll() is not None or time.monotonic() > end:
            sys.exit("error: sagemem serve did not start")
        time.sleep(0.05)
    return server


def rows_for(root: Path, size: int, small: int, env: dict[str, str]
             ) -> tuple[list[Row], tuple[Path, Path]]:
    sm = sagemem_command()
    big, big_state, queries = corpus(root, size)
    little, little_state, _ = corpus(root, small)
    alone = root / f"s{size}-alone"
    subprocess.run([*sm, "--dir", str(big), "--state-dir", str(alone), "index"], check=True,
                   capture_output=True, env=env)
    served = [*sm, "--dir", str(big), "--state-dir", str(big_state)]
    local = [*sm, "--dir", str(big), "--state-dir", str(alone)]
    local_small = [*sm, "--dir", str(little), "--state-dir", str(little_state)]
    hook = ["hook", "claude-code"]
    payload = _payload(queries[3])
    rows = [
        Row("python -c pass", [sys.executable, "-c", "pass"], env=env),
        Row(f"hook, server ({size:,})", [*served, *hook], "python -c pass", "<= 3x",
            env=env, stdin=payload, fresh_session=True),
        Row(f"hook, in-process ({small:,})", [*local_small, *hook], "python -c pass",
            env=env, stdin=payload, fresh_session=True),
        Row(f"hook, in-process ({size:,})", [*local, *hook], "python -c pass",
            env=env, stdin=payload, fresh_session=True),
        Row(f"inject, server ({size:,})", [*served, "inject", f"{queries[3]} {{n}}"],
            "python -c pass", "<= 3x", env=env),
        Row(f"inject, in-process ({size:,})", [*local, "inject", f"{queries[3]} {{n}}"],
            "python -c pass", env=env),
    ]
    return rows, (big, big_state)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--hybrid", action="store_true",
                        help="the default hybrid mode (vectors built first: minutes at 10k), "
                             "not lexical only")
    args = parser.parse_args()
    corpus_generator_or_exit()
    env = dict(os.environ) if args.hybrid else {**os.environ, "SAGE_MEM_SEMANTIC": "off"}
    mode = "hybrid" if args.hybrid else "lexical"
    with tempfile.TemporaryDirectory(prefix="sv-bench-", dir="/tmp") as tmp:
        rows, (big, big_state) = rows_for(Path(tmp), args.size, args.small, env)
        server = start_server(big, big_state, env)
        try:
            medians = measure(rows, args.repeat, wall_numbered)
        finally:
            server.terminate()
            server.wait(30)
    print(f"whole processes, median of {args.repeat} alternated rounds, {os.cpu_count()} "
          f"cores, {mode}")
    print(f"{'process':<30} {'median':>9} {'ratio':>7} {'to':<16} target")
    for row in rows:
        value = medians[row.label]
        ratio = f"{value / medians[row.floor]:.2f}x" if row.floor else ""
        print(f"{row.label:<30} {value * 1000:>6.0f} ms {ratio:>7} {row.floor or '':<16} "
              f"{row.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
