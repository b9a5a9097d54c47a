#!/usr/bin/env python3
"""The near-duplicate check of ``sagemem new``: whole processes, with and without it.

    python benchmarks/bench_remember.py [--sizes 1000 10000] [--repeat 7]

``new`` refuses a title close to an existing memory's (``writes/remember.py``); it reads
every live memory's titles from ``<state>/titles.json`` (``writes/title_cache.py``) and
scores only the memories that may reach the threshold (``writes/close_titles.py``).
``new --distinct`` skips the check: it is the floor. Each round runs both once, in turn
(a busy spell of the shared machine lands on both alike), each with a title of random
letters so that every run creates a memory; one untimed round first fills the cache, as
any earlier command would have.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import GEN_CORPUS, sagemem_command, sizes_and_repeat

from sagemem.writes.title_cache import RACY_SECONDS

_RNG = random.Random(7)


def _words() -> str:
    return " ".join("".join(_RNG.choice("bcdfghjklmnpqrstvwxz") for _ in range(7))
                    for _ in range(3))


def new(at: list[str], distinct: bool) -> float:
    """One ``sagemem new`` of a fresh title, its wall time."""
    argv = [*at, "new", "--type", "project", "--name", _words(), "--description", _words(),
            "--body", "x", *(["--distinct"] if distinct else [])]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True, env=env)
    return time.perf_counter() - start


def measure(root: Path, size: int, repeat: int) -> tuple[float, float]:
    memory, state = root / f"m{size}", root / f"s{size}"
    subprocess.run([sys.executable, str(GEN_CORPUS), str(memory), str(size)], check=True,
                   capture_output=True)
    at = [*sagemem_command(), "--dir", str(memory), "--state-dir", str(state)]
    time.sleep(RACY_SECONDS + 0.5)  # files this recent are not cached; a folder is older
    new(at, False), new(at, True)
    checked, floor = [], []
    for _ in range(repeat):
        checked.append(new(at, False))
        floor.append(new(at, True))
    return statistics.median(checked), statistics.median(floor)


def main() -> int:
    args = sizes_and_repeat(__doc__)
    print(f"whole processes, median of {args.repeat} alternated rounds, {os.cpu_count()} cores")
    print(f"{'process':<30} {'median':>9} {'ratio':>7}  to")
    with tempfile.TemporaryDirectory(prefix="sagemem-bench-") as tmp:
        for size in args.sizes:
            checked, floor = measure(Path(tmp), size, args.repeat)
            print(f"{'new --distinct (' + f'{size:,}' + ')':<30} {floor * 1000:>6.0f} ms")
            print(f"{'new (' + f'{size:,}' + ')':<30} {checked * 1000:>6.0f} ms "
                  f"{checked / floor:>6.2f}x  new --distinct   target <= 1.5x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
