#!/usr/bin/env python3
"""Moving benchmark: export, import, the merge driver and sync as whole processes.

    python benchmarks/bench_moving.py [--files 1000 10000] [--repeat R] [--import-max N]

Generates a memory directory per size with ``../shared/bench/gen_corpus.py`` (beside the
checkout) and times, as whole processes seen from outside (``subprocess`` wall time,
interpreter start and imports included), the median of rounds that alternate every row
(a busy spell of the shared machine lands on every row alike), after one untimed round
that warms the page cache. Every row names the floor its ratio is to:

- ``python -c pass``     the floor: the interpreter's own start;
- ``re-read``            the floor of export and import: Python starts and reads every
                         file's bytes, nothing else (as in ``bench_dream.py``);
- ``export FILE``        the folder as one JSON document, written atomically;
- ``import`` (fresh)     that export into a fresh ``sagemem init`` folder, each round a
                         new one (the init not timed): every memory a guarded create, the
                         byte-identical round trip (checked once, after the rounds);
- ``import`` (again)     the same export into the folder the row above just filled: every
                         memory ``unchanged``, nothing written (the idempotent re-run);
- ``import --dry-run``   the export planned against an empty ``init`` folder;
- ``git merge-file -p``  the floor of the driver: git's own three-way merge of the files;
- ``merge-driver``       ``python -m sagemem merge-driver O A B P`` as ``install git``
                         wires it in, on one small memory whose sides changed different
                         fields and the body (a clean merge; ``A`` restored before each
                         round, untimed);
- ``git status``         the floor of sync, in a repository holding the folder, its
                         driver installed, pushed to a bare remote;
- ``sync --dry-run``, ``sync``   nothing to commit, pull or push (checked every round).

Every process runs with ``HOME`` set to an empty directory holding only a git identity
(no global layer, no user git config). ``--repeat`` defaults to 5 rounds, 3 at 10,000
memories. The two writing imports run only at sizes up to ``--import-max`` (default
10,000: every size; a smaller value skips them where they would take long). The default
run takes about 2 minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from common import GEN_CORPUS, corpus_generator_or_exit, sagemem_command

REREAD = """
import sys
from pathlib import Path
for path in Path(sys.argv[1]).glob("*.md"):
    path.read_bytes()
"""

BASE = """---
name: Deploys
description: who approves a deploy
type: project
updated: 2026-11-01
---
Ask Dana before a deploy.

Staging first, then production.
"""
OURS = BASE.replace("who approves a deploy", "who approves a deploy, and when") \
           .replace("2026-11-01", "2026-11-20")
THEIRS = BASE.replace("type: project\n", "type: project\ntags: [deploy]\n") \
             .replace("then production.", "then production, never on Fridays.")
MERGED = OURS.replace("type: project\n", "type: project\ntags: [deploy]\n") \
             .replace("then production.", "then production, never on Fridays.")

PASS, REREAD_FLOOR = "python -c pass", "re-read"


@dataclass(frozen=True)
class Row:
    label: str
    argv: list[str]
    floor: str | None = None  # the row its ratio is to
    prepare: Callable[[], list[str]] | None = None  # untimed; returns the argv to run
    warm: bool = True  # part of the untimed first round
    cwd: Path | None = None
    expect: str | None = None  # said on stdout or stderr every round: the row did its job
    exits: tuple[int, ...] = (0,)


def environment(root: Path) -> dict[str, str]:
    """The processes' environment: bytecode cached, no sagemem setting from the caller,
    and a HOME of their own holding only a git identity (the set-up commits)."""
    home = root / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n"
                                     "[init]\n\tdefaultBranch = main\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SAGE_MEM_", "GIT_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env["HOME"] = str(home)
    return env


def wall(argv: list[str], env: dict[str, str], cwd: Path | None = None,
         exits: tuple[int, ...] = (0,)) -> tuple[float, str]:
    """One process's wall time and what it said (stdout, then stderr)."""
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, cwd=cwd, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in exits:
        sys.exit(f"error: {' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    return seconds, done.stdout + done.stderr


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
    """An untimed set-up step."""
    wall(argv, env, cwd)


def at(folder: Path, state: Path) -> list[str]:
    return [*sagemem_command(), "--dir", str(folder), "--state-dir", str(state)]


class FreshFolders:
    """A new ``sagemem init`` folder for each fresh import; the latest one is where the
    re-run imports again. The previous round's folder is removed first (untimed)."""

    def __init__(self, root: Path, export: Path, env: dict[str, str]) -> None:
        self.root, self.export, self.env, self.rounds = root, export, env, 0
        self.latest: Path | None = None

    def fresh(self) -> list[str]:
        if self.latest is not None:
            shutil.rmtree(self.latest)
            shutil.rmtree(self.latest.with_suffix(".state"))
        self.rounds += 1
        self.latest = self.root / f"fresh{self.rounds}"
        run([*at(self.latest, self.latest.with_suffix(".state")), "init"], self.env)
        return [*at(self.latest, self.latest.with_suffix(".state")), "import",
                str(self.export)]

    def again(self) -> list[str]:
        assert self.latest is not None, "the fresh import runs first in every round"
        return [*at(self.latest, self.latest.with_suffix(".state")), "import",
                str(self.export)]


def merge_files(root: Path) -> tuple[Path, Path, Path, Callable[[], list[str]]]:
    """git's %O %A %B for one memory, and a prepare that puts %A back (the driver writes
    the result there)."""
    root.mkdir()
    base, ours, theirs = root / "O.md", root / "A.md", root / "B.md"
    for path, text in ((base, BASE), (ours, OURS), (theirs, THEIRS)):
        path.write_text(text)

    def restore() -> list[str]:
        ours.write_text(OURS)
        return [sys.executable, "-m", "sagemem", "merge-driver", str(base), str(ours),
                str(theirs), "memory/project_deploys.md"]

    return base, ours, theirs, restore


def sync_repository(root: Path, corpus: Path, env: dict[str, str]) -> tuple[Path, list[str]]:
    """A repository holding a copy of the folder (driver installed, state directory
    ignored), pushed to a bare remote and synced once: nothing left to do."""
    repo, remote = root / "repo", root / "remote.git"
    run(["git", "init", "-q", str(repo)], env)
    shutil.copytree(corpus, repo / "memory")
    sagemem = at(repo / "memory", repo / ".sage-mem")
    run([*sagemem, "install", "git"], env, repo)
    run(["git", "init", "-q", "--bare", str(remote)], env)
    run(["git", "remote", "add", "origin", str(remote)], env, repo)
    run(["git", "add", "-A"], env, repo)
    run(["git", "commit", "-q", "-m", "start"], env, repo)
    run(["git", "push", "-q", "-u", "origin", "main"], env, repo)
    run([*sagemem, "sync"], env, repo)  # the state directory ignores itself: nothing left
    return repo, sagemem


def rows_for(root: Path, size: int, imports: bool, env: dict[str, str]
             ) -> tuple[list[Row], FreshFolders]:
    corpus, state = root / "memory", root / "state"
    subprocess.run([sys.executable, str(GEN_CORPUS), str(corpus), str(size)], check=True,
                   capture_output=True)
    export = root / "export.json"
    run([*at(corpus, state), "export", str(export)], env)
    folders = FreshFolders(root, export, env)
    base, ours, theirs, restore = merge_files(root / "merge")
    repo, sagemem = sync_repository(root / "sync", corpus, env)
    empty = root / "empty"
    run([*at(empty, empty.with_suffix(".state")), "init"], env)
    rows = [Row(PASS, [sys.executable, "-c", "pass"]),
            Row(REREAD_FLOOR, [sys.executable, "-c", REREAD, str(corpus)], PASS),
            Row("export FILE", [*at(corpus, state), "export", str(root / "out.json")],
                REREAD_FLOOR, expect=f"exported {size} memories")]
    if imports:
        rows += [Row("import (fresh folder)", [], REREAD_FLOOR, folders.fresh, warm=False,
                     expect=f"{size} created"),
                 Row("import (again)", [], REREAD_FLOOR, folders.again, warm=False,
                     expect=f"0 created, {size} unchanged")]
    rows += [Row("import --dry-run", [*at(empty, empty.with_suffix(".state")), "import",
                                      str(export), "--dry-run"],
                 REREAD_FLOOR, expect=f"{size} created"),
             # git's line merge conflicts here (neighbouring lines changed): exit 1
             Row("git merge-file -p", ["git", "merge-file", "-p", str(ours), str(base),
                                       str(theirs)], PASS, exits=(1,)),
             Row("merge-driver", [], "git merge-file -p", restore, cwd=repo),
             Row("git status", ["git", "status"], PASS, cwd=repo),
             Row("sync --dry-run", [*sagemem, "sync", "--dry-run"], "git status", cwd=repo,
                 expect="nothing to commit"),
             Row("sync (nothing to do)", [*sagemem, "sync"], "git status", cwd=repo,
                 expect="nothing to commit")]
    return rows, folders


def measure(rows: list[Row], repeat: int, env: dict[str, str]) -> dict[str, list[float]]:
    """Every row's times over ``repeat`` alternated rounds."""
    for row in rows:
        if row.warm:
            wall(row.prepare() if row.prepare else row.argv, env, row.cwd, row.exits)
    times: dict[str, list[float]] = {row.label: [] for row in rows}
    for _ in range(repeat):
        for row in rows:
            seconds, said = wall(row.prepare() if row.prepare else row.argv, env, row.cwd,
                                 row.exits)
            if row.expect and row.expect not in said:
                sys.exit(f"error: {row.label} did not say {row.expect!r}:\n{said}")
            times[row.label].append(seconds)
    return times


def checks(root: Path, folders: FreshFolders) -> list[str]:
    """What the timed runs left, checked once: the driver's merge, the round trip."""
    said = []
    merged = (root / "merge" / "A.md").read_text()
    said.append("the driver's merge: " + ("clean, both sides' changes" if merged == MERGED
                                           else "NOT the expected text"))
    if folders.latest is not None:
        same = filecmp.dircmp(root / "memory", folders.latest)
        identical = not (same.left_only or same.right_only or same.diff_files or
                         filecmp.cmpfiles(root / "memory", folders.latest,
                                          same.common_files, shallow=False)[1])
        said.append("the round trip: " + ("byte-identical" if identical else "DIFFERS"))
    return said


def print_table(size: int, repeat: int, rows: list[Row], times: dict[str, list[float]]
                ) -> None:
    medians = {label: statistics.median(values) for label, values in times.items()}
    floors = {row.label: row.floor for row in rows}
    print(f"\n{size:,} memories, median of {repeat} alternated rounds")
    print(f"{'process':<22} {'median':>10} {'min-max':>19} {'x pass':>8}  {'x its floor':<28}")
    for label, values in times.items():
        ratio_pass = f"{medians[label] / medians[PASS]:.1f}x" if label != PASS else ""
        floor = floors.get(label)
        ratio = (f"{medians[label] / medians[floor]:.2f}x {floor}"
                 if floor and floor != PASS else "")
        spread = f"{min(values) * 1000:,.0f}-{max(values) * 1000:,.0f} ms"
        print(f"{label:<22} {medians[label] * 1000:>7,.0f} ms {spread:>19} {ratio_pass:>8}  "
              f"{ratio:<28}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[1000, 10_000],
                        help="Memories per corpus, one table each.")
    parser.add_argument("--repeat", type=int, default=None,
                        help="Rounds per size (default: 5, and 3 at 10,000 or more).")
    parser.add_argument("--import-max", type=int, default=10_000,
                        help="Time the two writing imports only at sizes up to this.")
    args = parser.parse_args()
    corpus_generator_or_exit()
    start = time.perf_counter()
    print(f"whole processes, alternated rounds, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="sagemem-bench-") as tmp:
        env = environment(Path(tmp))
        for size in args.files:
            root = Path(tmp) / f"n{size}"
            root.mkdir()
            repeat = args.repeat or (3 if size >= 10_000 else 5)
            imports = size <= args.import_max
            rows, folders = rows_for(root, size, imports, env)
            print_table(size, repeat, rows, measure(rows, repeat, env))
            for line in checks(root, folders):
                print(line)
            if not imports:
                print(f"import (fresh folder) and (again) skipped at {size:,} "
                      f"(--import-max {args.import_max})")
    print(f"\ntotal {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
