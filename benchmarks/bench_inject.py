#!/usr/bin/env python3
"""Injection benchmarks: ``sagemem inject`` and the Claude Code hook as whole processes.

    python benchmarks/bench_inject.py [--size 1000] [--repeat 9]

Generates a memory directory with ``../shared/bench/gen_corpus.py``, builds its index
once, then times in the same run: a bare ``python -c pass`` (the interpreter's own start,
the floor), ``sagemem inject QUESTION`` and ``sagemem hook claude-code`` fed a
UserPromptSubmit payload. Each question uses a new session, as a new conversation would.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import GEN_CORPUS, corpus_generator_or_exit


def wall(args: list[str], stdin: bytes | None = None, env: dict[str, str] | None = None
         ) -> float:
    start = time.perf_counter()
    subprocess.run(args, input=stdin, capture_output=True, check=True, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    corpus_generator_or_exit()
    with tempfile.TemporaryDirectory(prefix="sagemem-bench-") as tmp:
        memory, state = Path(tmp) / "m", Path(tmp) / "s"
        subprocess.run([sys.executable, str(GEN_CORPUS), str(memory), str(args.size)],
                       check=True, capture_output=True)
        queries = [q for q in Path(f"{memory}.queries.txt").read_text().splitlines() if q]
        base = [sys.executable, "-m", "sagemem", "--dir", str(memory), "--state-dir", str(state)]
        subprocess.run([*base, "index"], check=True, capture_output=True)
        env = {**os.environ, "SAGE_MEM_DIR": str(memory), "SAGE_MEM_STATE_DIR": str(state)}
        rows = [
            ("python -c pass", [wall([sys.executable, "-c", "pass"])
                                for _ in range(args.repeat)]),
            ("sagemem inject", [wall([*base, "inject", q, "--session", f"b{i}"])
                                for i, q in enumerate(queries[: args.repeat])]),
            ("hook claude-code", [wall([sys.executable, "-m", "sagemem", "hook", "claude-code"],
                                       _payload(q, f"h{i}"), env)
                                  for i, q in enumerate(queries[: args.repeat])]),
        ]
    floor = statistics.median(rows[0][1])
    print(f"{args.size} memories, median of {args.repeat} processes")
    print(f"{'command':<20} {'median':>10} {'vs python start':>16}")
    for label, times in rows:
        median = statistics.median(times)
        print(f"{label:<20} {median * 1000:>7.0f} ms {median / floor:>15.1f}x")
    return 0


def _payload(question: str, session: str) -> bytes:
    return json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": session,
                       "prompt": question, "cwd": "/tmp"}).encode()


if __name__ == "__main__":
    sys.exit(main())
