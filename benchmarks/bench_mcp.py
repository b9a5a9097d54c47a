#!/usr/bin/env python3
"""The MCP server: what a tool call costs an agent, next to its floors.

    python benchmarks/bench_mcp.py [--size N] [--repeat R]

On a synthetic folder (``../shared/bench/gen_corpus.py``), indexed once beforehand
(lexical, ``SAGE_MEM_SEMANTIC=off``, so the figures are the engine's and not the
embedder's), in the same run:

- ``python -c pass``           the floor of any process;
- ``server up, first answer``  a real ``sagemem mcp`` subprocess over stdio, from spawn
                               to the answer of ``tools/list`` (initialize included);
- ``sagemem search (CLI)``     the whole process an agent without MCP pays per question;
- ``store.search, long-lived`` the floor of a tool call: the same query in-process on a
                               watched store;
- ``search_memory over stdio`` the same queries as tool calls from the SDK's client to
                               the running server (JSON-RPC, validation and both
                               renderings included).

Needs the ``mcp`` extra. Ratios are against floors measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import GEN_CORPUS, corpus_generator_or_exit

from sagemem import MemoryStore

SAGEMEM = [sys.executable, "-m", "sagemem"]


def timed_process(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


async def server_calls(env: dict[str, str], queries: list[str]) -> tuple[float, list[float]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=SAGEMEM[0], args=[*SAGEMEM[1:], "mcp"], env=env)
    start = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        up = time.perf_counter() - start
        await client.call_tool("search_memory", {"query": queries[0]})  # the first sync
        times = []
        for query in queries:
            begin = time.perf_counter()
            result = await client.call_tool("search_memory", {"query": query})
            times.append(time.perf_counter() - begin)
            assert not result.is_error, result
    return up, times


def in_process(directory: Path, state: Path, queries: list[str]) -> list[float]:
    with MemoryStore(directory, state) as store:
        store.search(queries[0])
        store.search_index().watch()
        time.sleep(0.5)  # the watcher's first batch
        store.search(queries[0])
        times = []
        for query in queries:
            begin = time.perf_counter()
            store.search(query)
            times.append(time.perf_counter() - begin)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    corpus_generator_or_exit()
    try:
        import mcp  # noqa: F401
    except ImportError:
        print("bench_mcp: skipped, the mcp extra is not installed (pip install '.[mcp]')")
        return 0
    with tempfile.TemporaryDirectory(prefix="sagemem-bench-mcp-") as tmp:
        root = Path(tmp)
        directory, state = root / "memory", root / "state"
        subprocess.run([sys.executable, str(GEN_CORPUS), str(directory), str(args.size)],
                       check=True, capture_output=True)
        queries = [q for q in (root / "memory.queries.txt").read_text().splitlines() if q]
        queries = queries[:max(args.repeat * 3, 20)]
        env = {**os.environ, "SAGE_MEM_DIR": str(directory), "SAGE_MEM_STATE_DIR": str(state),
               "SAGE_MEM_SEMANTIC": "off"}
        subprocess.run([*SAGEMEM, "index"], env=env, check=True, capture_output=True)
        floor, ups, clis = [], [], []
        for query in queries[:args.repeat]:  # alternated, so all see the same machine
            floor.append(timed_process([sys.executable, "-c", "pass"], env))
            clis.append(timed_process([*SAGEMEM, "search", query], env))
            ups.append(asyncio.run(server_calls(env, queries[:1]))[0])
        calls = asyncio.run(server_calls(env, queries))[1]
        local = in_process(directory, state, queries)
    process_floor, call_floor = statistics.median(floor), statistics.median(local)
    rows = [
        ("python -c pass", process_floor, process_floor, "process floor"),
        ("server up, first answer", statistics.median(ups), process_floor,
         "x the process floor"),
        ("sagemem search (CLI)", statistics.median(clis), process_floor,
         "x the process floor"),
        ("store.search, long-lived", call_floor, call_floor, "tool-call floor"),
        ("search_memory over stdio", statistics.median(calls), call_floor,
         f"x the in-process search; {statistics.median(clis) / statistics.median(calls):.0f}"
         "x faster than the CLI process"),
    ]
    print(f"\nMCP server, {args.size} memories, lexical (medians: {args.repeat} processes, "
          f"{len(queries)} calls)")
    print(f"{'measurement':<26} {'median':>10} {'ratio':>8}  note")
    for label, value, base, note in rows:
        print(f"{label:<26} {value * 1000:>7.1f} ms {value / base:>7.2f}x  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
