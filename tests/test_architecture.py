"""The map of the rooms holds: imports point down, and every map names every module.

docs/architecture.md's map, each subpackage's docstring and ``errors.py``'s drawn tree
are the places a reader looks first; each drifted in issue 20 (new modules unlisted, an
exception drawn under no parent), so each is checked against the code here.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sagemem
from sagemem import errors

PACKAGE = Path(sagemem.__file__).parent
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"

# docs/architecture.md's map, lowest first: a module may import its own room and the rooms
# of a lower step only; rooms on one step never import each other.
STEPS = (("errors",), ("files",), ("config",), ("writes", "embed"), ("search",),
         ("store", "transcripts"),
         ("history", "layers"), ("audit", "inject", "memory_tool", "transfer", "gitsync"),
         ("claude_code", "dream", "importers"), ("hosts", "serve"),
         ("mcp_server", "ui"), ("cli",), ("launch",), ("__main__",))
STEP = {room: n for n, rooms in enumerate(STEPS) for room in rooms}
ROOMS = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))


def _module_name(path: Path) -> tuple[list[str], bool]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = parts[-1] == "__init__"
    return (parts[:-1] if package else parts), package


def _imported(path: Path) -> list[tuple[int, list[str]]]:
    """Every sagemem module ``path`` imports, at module level or inside a function."""
    parts, package = _module_name(path)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = parts if package else parts[:-1]
            base = base[: len(base) - (node.level - 1)]
            found.append((node.lineno, base + (node.module.split(".") if node.module else [])))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sagemem"):
            found.append((node.lineno, node.module.split(".")))  # type: ignore[union-attr]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name.split(".")) for a in node.names
                      if a.name.startswith("sagemem")]
    return found


def _room(parts: list[str]) -> str | None:
    """The room of a module; None for the package itself (``from .. import __version__``)."""
    return parts[1] if len(parts) > 1 and parts[1] != "__version__" else None


def test_no_module_imports_a_room_above_or_beside_its_own() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts, _ = _module_name(path)
        source = _room(parts)
        if source is None:  # sagemem/__init__.py: the public API may name any room
            continue
        for line, target in _imported(path):
            room = _room(target)
            if room is not None and room != source and STEP[room] >= STEP[source]:
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} ({source}) imports {room}")
    assert wrong == []


def test_every_room_is_on_the_map() -> None:
    assert [room for room in ROOMS if room not in STEP] == []


def _drawn_tree() -> dict[str, str | None]:
    """Each class the docstring of ``errors.py`` draws, with the class drawn above it."""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        match = re.match(r"^[\s│├└─]*([A-Z]\w+)\b", line)
        if not match or not isinstance(getattr(errors, match.group(1), None), type):
            continue
        indent = match.start(1)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parents[match.group(1)] = stack[-1][1] if stack else None
        stack.append((indent, match.group(1)))
    return parents


def test_the_error_tree_draws_every_class_under_its_parent() -> None:
    classes = {name: value for name, value in vars(errors).items()
               if isinstance(value, type) and issubclass(value, Exception)
               and value.__module__ == errors.__name__}
    drawn = _drawn_tree()
    assert sorted(drawn) == sorted(classes)
    wrong = {name: parent for name, parent in drawn.items()
             if parent is not None and classes[name].__bases__[0].__name__ != parent}
    assert wrong == {}


def _modules(room: str) -> set[str]:
    return {p.stem for p in (PACKAGE / room).glob("*.py") if p.stem != "__init__"}


@pytest.mark.parametrize("room", ROOMS)
def test_each_room_docstring_names_its_modules(room: str) -> None:
    doc = ast.get_docstring(ast.parse((PACKAGE / room / "__init__.py").read_text("utf-8")))
    assert sorted(m for m in _modules(room) if not re.search(rf"\b{m}\b", doc or "")) == []


def _architecture_rooms() -> dict[str, set[str]]:
    """The modules the architecture page's map lists under each room."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    start = text.index("# Architecture\n")
    block = text[text.index("```", start):text.index("```", text.index("```", start) + 3)]
    listed: dict[str, set[str]] = {}
    room = None
    for line in block.splitlines():
        if heading := re.match(r"^  (\w+)/\s", line):
            room = heading.group(1)
            listed[room] = set()
        elif (entry := re.match(r"^    (\w+)\s", line)) and room:
            listed[room].add(entry.group(1))
    return listed


def test_the_architecture_page_lists_every_module_in_its_room() -> None:
    listed = _architecture_rooms()
    assert {room: sorted(_modules(room) ^ listed.get(room, set())) for room in ROOMS} == {
        room: [] for room in ROOMS}


def test_no_library_module_loads_typer_or_mcp() -> None:
    """Only ``cli/`` and ``mcp_server/`` may: ``import sagemem`` and every room below them
    stand without the CLI's and the MCP extra's dependencies."""
    library = sorted(".".join(_module_name(p)[0]) for p in PACKAGE.rglob("*.py")
                     if _room(_module_name(p)[0]) not in ("cli", "mcp_server", "__main__"))
    code = ("import importlib, sys\n"
            f"for name in {library!r}: importlib.import_module(name)\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'click', 'mcp'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
