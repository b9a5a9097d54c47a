"""Write the docs' CLI reference from the click command tree of the real app, so the page
cannot drift from what ``sagemem --help`` says.

    python tools/cli_reference.py           # print the page
    python tools/cli_reference.py --write   # write docs/reference/cli.md
    python tools/cli_reference.py --check   # exit 1, naming the first difference, if stale

Every command of ``COMMANDS`` is built (as ``sagemem --help`` builds them all), and each
group is walked recursively (``snapshot create``, ``conflicts resolve``, …). The help
formatter's width is fixed, so the page does not depend on the terminal it is made in.
``tests/test_docs_reference.py`` fails while docs/reference/cli.md is not what this prints.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from sagemem.cli.main import root

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "cli.md"
WIDTH = 80  # the formatter's width: a usage line wraps the same on every terminal
WRITE = "run python tools/cli_reference.py --write"

_CODE_SPAN = re.compile(r"(`[^`]*`)")
_MARKDOWN = re.compile(r"([\\*_\[\]#])")
_LIST_START = re.compile(r"^([-+]|\d+\.)(\s)")


def contexts() -> Iterator[click.Context]:
    """A context for ``sagemem`` and for every command under it, depth first, in the
    order ``--help`` lists them."""
    app = root()
    top = click.Context(app, info_name="sagemem", terminal_width=WIDTH,
                        max_content_width=WIDTH, **app.context_settings)
    yield from _walk(top)


def _walk(ctx: click.Context) -> Iterator[click.Context]:
    yield ctx
    command = ctx.command
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, f"{ctx.command_path} lists {name} but cannot build it"
            if sub.hidden:  # the page promises what --help lists
                continue
            yield from _walk(click.Context(sub, info_name=name, parent=ctx,
                                           **sub.context_settings))


def page() -> str:
    """The whole page: a note on where it comes from, then one section per command."""
    sections = [_section(ctx) for ctx in contexts()]
    intro = [
        "# CLI reference",
        "",
        "Every command and option, as `sagemem COMMAND --help` prints them, in the order "
        "`sagemem --help` lists them. The global options below go before the command "
        "(`sagemem --dir DIR search …`). Every command also takes `-h`, `--help`.",
        "",
    ]
    outro = [
        "---",
        "",
        "*This page is generated from the app by `python tools/cli_reference.py --write`; "
        "`tests/test_docs_reference.py` fails while it is stale.*",
    ]
    body = [line for section in sections for line in section]
    return "\n".join(intro + body + outro) + "\n"


def _section(ctx: click.Context) -> list[str]:
    command = ctx.command
    lines = [f"## {ctx.command_path}", "", "```text", ctx.get_usage(), "```", ""]
    lines += _help_text(command)
    lines += _parameters(ctx)
    if isinstance(command, click.Group):
        lines += _subcommands(ctx, command)
    return lines


def _help_text(command: click.Command) -> list[str]:
    """The help as click shows it (what follows a ``\\f`` is hidden), one Markdown
    paragraph per paragraph; a ``\\b`` paragraph (kept unwrapped by click) stays a block."""
    text = (command.help or "").partition("\f")[0].strip()
    if command.deprecated:
        text = f"(Deprecated) {text}"
    lines: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text) if text else []:
        if paragraph.startswith("\b\n"):
            lines += ["```text", paragraph[2:], "```", ""]
        else:
            lines += [_LIST_START.sub(r"\1\\\2", _markdown(" ".join(paragraph.split()))), ""]
    return lines


def _markdown(text: str, *, cell: bool = False) -> str:
    """``text`` escaped so Markdown shows it as written (``<state>`` is no HTML tag, a
    ``snapshot_keep`` no emphasis); backquoted spans stay code. In a table ``cell``, a
    ``|`` outside code would end the cell, so it is escaped too."""
    parts = _CODE_SPAN.split(text)
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        plain = parts[i].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        plain = _MARKDOWN.sub(r"\\\1", plain)
        parts[i] = plain.replace("|", "\\|") if cell else plain
    return "".join(parts)


def _parameters(ctx: click.Context) -> list[str]:
    params = [p for p in ctx.command.get_params(ctx)
              if not getattr(p, "hidden", False) and p.name != "help"]
    if not params:
        return []
    rows = ["| Name | Type | Default | Required | Description |", "|---|---|---|---|---|"]
    rows += [_row(ctx, param) for param in params]
    return [*rows, ""]


def _row(ctx: click.Context, param: click.Parameter) -> str:
    cells = (_names(ctx, param), _markdown(_type(ctx, param), cell=True),
             _default(param), "yes" if param.required else "",
             _markdown(" ".join((getattr(param, "help", None) or "").split()), cell=True))
    return "| " + " | ".join(cells) + " |"


def _names(ctx: click.Context, param: click.Parameter) -> str:
    if isinstance(param, click.Argument):
        return f"`{param.make_metavar(ctx)}`"
    names = ", ".join(f"`{name}`" for name in param.opts)
    if param.secondary_opts:
        names += " / " + ", ".join(f"`{name}`" for name in param.secondary_opts)
    return names


def _type(ctx: click.Context, param: click.Parameter) -> str:
    """What the value looks like: ``flag`` for an option that takes none, else the
    metavar click prints, with a number range's bounds."""
    if isinstance(param, click.Option) and param.is_flag:
        return "flag"
    kind = (param.type.name.upper() if isinstance(param, click.Argument)
            else param.make_metavar(ctx))
    # click's private range API, stable across the click < 8.3 that pyproject.toml pins
    if isinstance(param.type, click.types._NumberRangeBase):
        kind += f" ({param.type._describe_range()})"
    if param.multiple:
        kind += ", repeatable"
    return kind


def _default(param: click.Parameter) -> str:
    """The default worth saying: not an absent value, an empty text or an unset flag."""
    shown = getattr(param, "show_default", None)
    if shown is False:  # a default --help hides (it may differ from machine to machine)
        return ""
    if isinstance(shown, str):
        return _markdown(shown, cell=True)
    value = param.default
    if value is None or value is False or value in ("", (), []) or callable(value):
        return ""
    if isinstance(param, click.Option) and param.is_flag and param.secondary_opts:
        return f"`{param.opts[0] if value else param.secondary_opts[0]}`"
    return f"`{value}`"


def _subcommands(ctx: click.Context, group: click.Group) -> list[str]:
    """Each subcommand linked to its section, with its first sentence (click's summary;
    the limit only keeps click from cutting that sentence short)."""
    lines = ["| Command | What it does |", "|---|---|"]
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        assert sub is not None
        if sub.hidden:
            continue
        path = f"{ctx.command_path} {name}"
        lines.append(f"| [{name}](#{_anchor(path)}) | "
                     f"{_markdown(sub.get_short_help_str(limit=1000), cell=True)} |")
    return [*lines, ""]


def _anchor(heading: str) -> str:
    """The id mkdocs' toc gives a ``## sagemem snapshot create`` heading."""
    return re.sub(r"[^\w\s-]", "", heading).strip().lower().replace(" ", "-")


def difference(found: str, expected: str, name: str = PAGE.name) -> str | None:
    """The first line where the page ``found`` (file ``name``) is not the ``expected``
    one, said with the command whose section it is in; None when they are the same."""
    have, want = found.splitlines(), expected.splitlines()
    for number, (line, wanted) in enumerate(zip(have, want, strict=False), start=1):
        if line != wanted:
            return _differs(name, want, number,
                            f"the app gives {wanted!r}, the page has {line!r}")
    if len(have) == len(want):
        return None
    number = min(len(have), len(want)) + 1
    if len(want) > len(have):
        return _differs(name, want, number,
                        f"the page ends where the app gives {want[number - 1]!r}")
    return _differs(name, want, number, f"the page goes on with {have[number - 1]!r}")


def _differs(name: str, want: list[str], number: int, what: str) -> str:
    headings = [line for line in want[:number] if line.startswith("## ")]
    where = f" (in {headings[-1][3:]})" if headings else ""
    return f"{name} line {number}{where}: {what}; {WRITE}"


def check(path: Path = PAGE) -> str | None:
    """What is stale in the page at ``path`` (the first difference), or None."""
    if not path.exists():
        return f"{path.name} does not exist; {WRITE}"
    return difference(path.read_text(encoding="utf-8"), page(), path.name)


def write_page(path: Path = PAGE) -> bool:
    """Write the page; whether anything changed."""
    new = page()
    if path.exists() and path.read_text(encoding="utf-8") == new:
        return False
    path.write_text(new, encoding="utf-8")
    return True


def main(argv: list[str], page_path: Path = PAGE) -> int:
    if argv == ["--write"]:
        print(f"{page_path.name} updated" if write_page(page_path)
              else f"{page_path.name} already up to date")
    elif argv == ["--check"]:
        if stale := check(page_path):
            print(stale, file=sys.stderr)
            return 1
        print(f"{page_path.name} is up to date")
    elif not argv:
        print(page(), end="")
    else:
        print("usage: python tools/cli_reference.py [--write | --check]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
