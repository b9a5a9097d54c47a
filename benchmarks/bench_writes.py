#!/usr/bin/env python3
"""Guarded-write stress and kill -9 proof: no write is ever silently lost or torn.

    python benchmarks/bench_writes.py [--writers 8] [--cycles 200] [--kills 200]

Stress: WRITERS processes each do CYCLES read-modify-write cycles on the same 5 memories,
half through the library (``MemoryStore.write``) and half through the CLI
(``sagemem.cli.main(["write", NAME, "-", "--expect", REV])``), each appending a unique
token, while one more process rewrites the files like an editor, outside the guard:
alternately temp file + rename and plain in-place writes, each adding its own token.
Afterwards every attempted write is accounted for, exactly: its token is in the final
text, or in the ``mine`` side of a conflict record, or an editor save that began before
the write ended and finished after it began wrote a text without it (the editor is
outside the guard: that is the documented boundary). Anything else is a silent loss.

Kill -9: a process rewrites a 300 KB memory in a loop, alternating two versions, and is
killed at random instants; the file must always be exactly one of the versions.

``tests/test_write_stress.py`` runs both, smaller.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

MEMORIES = [f"project_shared_{n}.md" for n in range(5)]
SEED = "---\ndescription: shared memory {n} for the stress test\nmetadata:\n  type: project\n---\n"
TOKEN = re.compile(r"^(tok-w\d+-c\d+|edit-\d+)$", re.MULTILINE)
EDITOR_TMP = ".editor-save~"


def _store(root: Path):  # type: ignore[no-untyped-def]
    from sagemem import MemoryStore

    return MemoryStore(root / "memory", root / "state")


def setup(root: Path) -> None:
    from sagemem import init_directory

    init_directory(root / "memory", root / "state")
    for n, name in enumerate(MEMORIES):
        (root / "memory" / name).write_text(SEED.format(n=n))


# -- the processes ------------------------------------------------------------------------

def writer(root: Path, index: int, cycles: int) -> None:
    """One writer: library if index is even, CLI if odd; logs each attempt as a JSON line."""
    from sagemem import WriteRefused
    from sagemem.cli import main

    store, log = _store(root), []
    for cycle in range(cycles):
        name, token = MEMORIES[(index + cycle) % len(MEMORIES)], f"tok-w{index}-c{cycle}"
        memory = _read(store, name)
        text = memory.text + token + "\n"
        start, error = time.monotonic(), ""
        if index % 2 == 0:
            try:
                store.write(name, text, memory.revision)
            except WriteRefused as exc:
                error = str(exc)
        else:
            sys.stdin = io.TextIOWrapper(io.BytesIO(text.encode()))
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                main(["--dir", str(root / "memory"), "--state-dir", str(root / "state"),
                      "write", name, "-", "--expect", memory.revision])
            error = err.getvalue()
        log.append({"token": token, "file": name, "ok": not error, "error": error,
                    "t0": start, "t1": time.monotonic()})
    (root / f"writer-{index}.json").write_text(json.dumps(log))


def _read(store, name: str):  # type: ignore[no-untyped-def]
    """The read of read-modify-write; an editor saving in place can be caught mid-save."""
    from sagemem import FileChangedDuringRead

    for _ in range(100):
        with contextlib.suppress(FileChangedDuringRead):
            return store.get(name)
    return store.get(name)


def editor(root: Path, stop: Path) -> None:
    """Rewrite files like an editor (no lock, no revision): temp + rename, or in place."""
    rng, log, count = random.Random(9), [], 0
    while not stop.exists():
        name = rng.choice(MEMORIES)
        path = root / "memory" / name
        count += 1
        start = time.monotonic()
        data = path.read_bytes() + f"edit-{count}\n".encode()
        if count % 2:
            tmp = path.with_name(EDITOR_TMP)
            tmp.write_bytes(data)
            os.replace(tmp, path)
        else:
            with open(path, "r+b") as handle:
                handle.write(data)
                handle.truncate()
        log.append({"token": f"edit-{count}", "file": name, "r": start, "w": time.monotonic(),
                    "wrote": TOKEN.findall(data.decode())})
        time.sleep(rng.uniform(0.002, 0.01))
    (root / "editor.json").write_text(json.dumps(log))


def looper(root: Path, versions: list[bytes]) -> None:
    """Rewrite one large memory forever, alternating versions (killed from outside)."""
    store = _store(root)
    texts = [v.decode() for v in versions]
    print("ready", flush=True)
    while True:
        memory = store.get("project_big.md")
        store.write("project_big.md", texts[memory.text == texts[0]], memory.revision)


# -- stress -------------------------------------------------------------------------------

def stress(root: Path, writers: int = 8, cycles: int = 200, with_editor: bool = True
           ) -> dict[str, float]:
    setup(root)
    stop = root / "stop"
    me = [sys.executable, str(Path(__file__).resolve())]
    started = time.perf_counter()
    procs = [subprocess.Popen([*me, "_writer", str(root), str(i), str(cycles)])
             for i in range(writers)]
    edit = subprocess.Popen([*me, "_editor", str(root), str(stop)]) if with_editor else None
    codes = [p.wait() for p in procs]
    seconds = time.perf_counter() - started
    stop.touch()
    if edit is not None:
        codes.append(edit.wait())
    if any(codes):
        raise RuntimeError(f"a stress process failed: exit codes {codes}")
    return account(root, writers, seconds)


def account(root: Path, writers: int, seconds: float) -> dict[str, object]:
    from sagemem.writes.conflicts import list_conflicts

    attempts = [a for i in range(writers)
                for a in json.loads((root / f"writer-{i}.json").read_text())]
    edits = json.loads((root / "editor.json").read_text()) if (root / "editor.json").exists() \
        else []
    final = {n: (root / "memory" / n).read_text() for n in MEMORIES}
    on_disk = {n: set(TOKEN.findall(t)) for n, t in final.items()}
    records = list_conflicts(root / "state")
    recorded = {t for r in records for t in TOKEN.findall(r.side("mine").get("text") or "")}
    counts = dict.fromkeys(("in_final", "in_conflict_record", "overwritten_by_editor",
                            "silent_loss"), 0)
    for a in attempts:
        counts[_fate(a, on_disk, recorded, edits)] += 1
    refused = sum(not a["ok"] for a in attempts)
    unrecorded = [a["error"] for a in attempts if not a["ok"] and a["token"] not in recorded]
    return {
        "attempts": len(attempts), "written": len(attempts) - refused, "refused": refused,
        **counts,
        "refused_without_record": len(unrecorded),
        "conflict_records": len(records),
        "editor_saves": len(edits),
        "editor_saves_in_final": sum(e["token"] in on_disk[e["file"]] for e in edits),
        "torn_files": sum(not _well_formed(n, t) for n, t in final.items()),
        "leftover_temp_files": sum(1 for p in os.listdir(root / "memory")
                                   if p.endswith((".sagemem-tmp", EDITOR_TMP))),
        "seconds": round(seconds, 2),
        "writes_per_second": round((len(attempts) - refused) / seconds, 1),
        "attempts_per_second": round(len(attempts) / seconds, 1),
        "errors_without_record": sorted(set(unrecorded))[:5],
    }


def _fate(attempt: dict, on_disk: dict[str, set[str]], recorded: set[str],
          edits: list[dict]) -> str:
    token, file = attempt["token"], attempt["file"]
    if token in on_disk[file]:
        return "in_final"
    if token in recorded:
        return "in_conflict_record"
    if attempt["ok"] and any(e["file"] == file and e["r"] <= attempt["t1"]
                             and e["w"] >= attempt["t0"] and token not in e["wrote"]
                             for e in edits):
        return "overwritten_by_editor"
    return "silent_loss"


def _well_formed(name: str, text: str) -> bool:
    seed = SEED.format(n=MEMORIES.index(name))
    rest = text[len(seed):]
    return text.startswith(seed) and all(TOKEN.fullmatch(line) for line in rest.splitlines()) \
        and (rest == "" or rest.endswith("\n"))


def uncontended(root: Path, writes: int = 500) -> dict[str, float]:
    """One process, one memory: the cost of a guarded write itself (lock, fsync, rename)."""
    setup(root)
    store = _store(root)
    started = time.perf_counter()
    for n in range(writes):
        memory = store.get(MEMORIES[0])
        store.write(MEMORIES[0], memory.text + f"tok-w0-c{n}\n", memory.revision)
    seconds = time.perf_counter() - started
    return {"writes": writes, "seconds": round(seconds, 2),
            "writes_per_second": round(writes / seconds, 1)}


# -- kill -9 ------------------------------------------------------------------------------

def kill_nine(root: Path, iterations: int = 200, seed: int = 1) -> dict[str, float]:
    """Kill a looping writer at random instants; the file must be old or new, whole."""
    setup(root)
    body = "".join(f"line {i} of a large memory, padded to make the write slow\n"
                   for i in range(5000))
    versions = [(SEED.format(n="A") + body).encode(), (SEED.format(n="B") + body).encode()]
    path = root / "memory" / "project_big.md"
    path.write_bytes(versions[0])
    (root / "versions.json").write_text(json.dumps([v.decode() for v in versions]))
    rng = random.Random(seed)
    me = [sys.executable, str(Path(__file__).resolve())]
    torn = 0
    for _ in range(iterations):
        proc = subprocess.Popen([*me, "_looper", str(root)], stdout=subprocess.PIPE)
        assert proc.stdout is not None
        proc.stdout.readline()
        time.sleep(rng.uniform(0, 0.05))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        torn += path.read_bytes() not in versions
    leftovers = [p for p in os.listdir(root / "memory") if p.endswith(".sagemem-tmp")]
    return {"kills": iterations, "size_bytes": len(versions[0]), "torn": torn,
            "leftover_temp_files": len(leftovers)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--kills", type=int, default=200)
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        report = stress(Path(tmp) / "stress", args.writers, args.cycles)
        print(json.dumps({"stress": report}, indent=2))
        print(json.dumps({"uncontended": uncontended(Path(tmp) / "one")}, indent=2))
        print(json.dumps({"kill_9": kill_nine(Path(tmp) / "kill", args.kills)}, indent=2))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_writer":
        writer(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) > 1 and sys.argv[1] == "_editor":
        editor(Path(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "_looper":
        root = Path(sys.argv[2])
        looper(root, [v.encode() for v in json.loads((root / "versions.json").read_text())])
    else:
        sys.exit(main())
