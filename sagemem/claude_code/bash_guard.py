"""The Bash guard: a shell command that plainly writes into the memory folder is denied.

The write gate (``gate.py``) sees Claude Code's Write/Edit/MultiEdit tools only; the
same model can write ``echo … > memory/x.md`` through its Bash tool and skip the gate,
the redaction and the journal. So on ``PreToolUse`` of Bash the command is split the
way a shell would (``shlex``; ``;``, ``&&``, ``||``, ``|``, ``&`` and newlines end a
command; a ``cd DIR`` moves where relative paths start) and the clear cases are
denied: a ``>``/``>>``/``&>``/``2>`` target, ``tee``, ``sed -i``, ``perl -i``, ``dd
of=``, and ``mv``/``cp``/``rm``/``touch``/``truncate``/``ln``/``install``/``rsync`` with
a path in the project's folder or the global layer's (``~``, ``$HOME`` and ``${HOME}``
expanded; the folder itself counts). Reading (``cat``, ``grep``, ``head``) is allowed.

This is a guard against mistakes, not a sandbox: variables, ``eval``, ``bash -c``,
``python -c``, scripts and command substitution are not followed (docs/safety.md lists
what gets through). A command it cannot split (an open quote, over MAX_COMMAND_CHARS)
is allowed and logged: our parser must never block the user's shell.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .gate import GateAnswer, deny, memory_target

MAX_COMMAND_CHARS = 64 * 1024
"""A command longer than a page of script is not one to parse on every Bash call."""
MAX_TOKENS = 20_000
SEPARATOR_CHARS = frozenset(";&|\n")
_OPERATOR_CHARS = frozenset("<>&|")
PREFIXES = frozenset({"sudo", "command", "env", "nohup", "time", "nice", "exec", "builtin",
                      "doas"})
"""Words that run the command after them: the writer is the word that follows."""
OPERAND_WRITERS = frozenset({"rm", "mv", "touch", "truncate", "unlink", "shred"})
"""Every operand of these is changed (a ``mv`` source leaves the folder too)."""
TARGET_WRITERS = frozenset({"cp", "install", "ln", "rsync"})
"""These change their last operand (or ``-t DIR``); their sources are only read."""
IN_PLACE = frozenset({"sed", "perl"})
OUTPUT_OPTION = {"curl": ("-o", "--output"), "wget": ("-O", "--output-document")}
"""Downloads that name the file they write with an option."""
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][\w.-]*)\1")
_HOME = re.compile(r"^(?:\$HOME|\$\{HOME\})(?=/|$)")


@dataclass(frozen=True)
class Write:
    """A write a command makes: what writes, the path it names, and the directory that
    path is relative to (None: lost track of, after ``cd -`` or ``cd $DIR``)."""

    command: str
    path: str
    cwd: str | None


def guard(command: str | None, cwd: str | None, inside: Callable[[str, str | None], bool]
          ) -> GateAnswer:
    """Claude Code's PreToolUse answer to a Bash ``command``: a denial naming the tool or
    sagemem command to use instead when it writes into the folder (``inside`` tells a
    path, relative to a directory, in it), else nothing."""
    if not command:
        return GateAnswer()
    if not (cwd and os.path.isabs(cwd)):
        cwd = os.getcwd()  # Claude Code runs its hooks in the session's directory
    if len(command) > MAX_COMMAND_CHARS:
        return GateAnswer(log=(f"Bash: command of {len(command)} chars not parsed: allowed",))
    try:
        tokens = _tokens(command)
    except ValueError as exc:
        return GateAnswer(log=(f"Bash: command not parsed ({exc}): allowed",))
    for write in _writes(tokens, cwd):
        if inside(write.path, write.cwd):
            return GateAnswer(deny(bash_reason(write.command, write.path)),
                              (f"denied Bash: {write.command} writes {write.path} in the "
                               "memory folder",))
    return GateAnswer()


def _tokens(command: str) -> list[str]:
    """The command's words and operators; heredoc bodies left out (text, not commands:
    an apostrophe in one would otherwise leave the whole command unparsed)."""
    # Not posix: quotes stay on the words, so a quoted ``">"`` (``grep ">" a.md``) is a
    # word, never an operator; each word is unquoted on its own (``_unquoted``).
    lexer = shlex.shlex(_without_heredocs(command), posix=False, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    # No commenters: shlex would end a comment inside a word (``C#``, ``page#part``) and
    # swallow the newline after it, merging the next command into the commented one. In
    # the shell a comment starts only at a word's start and ends at the newline.
    lexer.commenters = ""
    tokens: list[str] = []
    in_comment = False
    for token in lexer:
        in_comment = token != "\n" and (in_comment or token.startswith("#"))
        if in_comment:
            continue
        tokens.append(token)
        if len(tokens) > MAX_TOKENS:
            raise ValueError(f"over {MAX_TOKENS} words")
    return tokens


def _without_heredocs(command: str) -> str:
    kept: list[str] = []
    ends: list[str] = []
    for line in command.split("\n"):
        if ends:
            if line.strip() == ends[0]:
                ends.pop(0)
            continue
        kept.append(line)
        ends = [m.group(2) for m in _HEREDOC.finditer(line)]
    return "\n".join(kept)


def _writes(tokens: list[str], cwd: str | None) -> Iterator[Write]:
    """Each write the commands make, with the directory its path is relative to."""
    for words, redirects in _commands(tokens):
        for target in redirects:
            yield Write(">", _expanded(target), cwd)
        name, args = _command_of(words)
        if name in ("cd", "pushd"):
            cwd = _moved(cwd, args)
            continue
        if name == "popd":  # the directory stack is not followed: where it lands is unknown
            cwd = None
            continue
        for path in _written(name, args):
            yield Write(name, _expanded(path), cwd)


def _commands(tokens: list[str]) -> Iterator[tuple[list[str], list[str]]]:
    """Each simple command's words and the files its output redirections name."""
    words: list[str] = []
    redirects: list[str] = []
    pending: str | None = None
    for token in [*tokens, ";"]:
        if pending is not None:
            if _output(pending) and not (pending == ">&" and token.isdigit()):
                redirects.append(_unquoted(token))
            pending = None
        elif token and set(token) <= SEPARATOR_CHARS:
            yield words, redirects
            words, redirects = [], []
        elif set(token) <= _OPERATOR_CHARS and ("<" in token or ">" in token):
            pending = token
        elif token not in ("(", ")", "{", "}"):
            words.append(_unquoted(token))


def _unquoted(word: str) -> str:
    """A word as the shell passes it on (quotes and escapes gone); as it is if odd."""
    try:
        parts = shlex.split(word)
    except ValueError:
        return word
    return parts[0] if len(parts) == 1 else word


def _output(operator: str) -> bool:
    """``>``, ``>>``, ``>|``, ``>&`` (a file unless a digit follows), ``&>``, ``&>>``."""
    return operator.startswith(">") or operator in ("&>", "&>>")


def _command_of(words: list[str]) -> tuple[str, list[str]]:
    """The command a line runs (past ``VAR=x``, ``sudo`` and friends, and their options)
    and its args."""
    at, prefixed = 0, False
    while at < len(words):
        word = words[at]
        skip = (re.match(r"^[A-Za-z_]\w*=", word) or os.path.basename(word) in PREFIXES
                or (prefixed and word.startswith("-")))
        if not skip:
            return os.path.basename(word), words[at + 1:]
        prefixed = prefixed or os.path.basename(word) in PREFIXES
        at += 1
    return "", []


def _written(name: str, args: list[str]) -> list[str]:
    """The paths ``name args`` writes, as far as its words show."""
    operands = [a for a in args if not a.startswith("-") or a == "-"]
    if name in OPERAND_WRITERS:
        return operands
    if name in TARGET_WRITERS:
        return _target(args, operands)
    if name == "tee":
        return operands
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if name in OUTPUT_OPTION:  # curl -o FILE, wget -O FILE: a download written there
        return _option_values(args, OUTPUT_OPTION[name])
    if name in IN_PLACE and _in_place(name, args):
        return operands
    return []


def _option_values(args: list[str], options: tuple[str, ...]) -> list[str]:
    """The values given to ``options`` (``-o FILE``, ``--output FILE``, ``--output=FILE``)."""
    values = [args[at + 1] for at, arg in enumerate(args[:-1]) if arg in options]
    return values + [arg.split("=", 1)[1] for arg in args
                     if arg.startswith("--") and arg.split("=", 1)[0] in options and "=" in arg]


def _target(args: list[str], operands: list[str]) -> list[str]:
    for at, arg in enumerate(args):
        if arg in ("-t", "--target-directory") and at + 1 < len(args):
            return [args[at + 1]]
        if arg.startswith("--target-directory="):
            return [arg.split("=", 1)[1]]
    return operands[-1:]


def _in_place(name: str, args: list[str]) -> bool:
    """``sed -i``/``--in-place`` (``-i.bak``, ``-Ei``), ``perl -i``/``-pi``."""
    for arg in args:
        if arg.startswith("--in-place"):
            return True
        if arg.startswith("-") and not arg.startswith("--"):
            flags = arg[1:]
            if name == "perl":
                flags = flags.split("e", 1)[0]
            if "i" in flags:
                return True
    return False


def _moved(cwd: str | None, args: list[str]) -> str | None:
    """Where ``cd args`` leaves the shell; None when it cannot be told (``cd -``)."""
    operands = [a for a in args if not a.startswith("-")]
    if args[:1] == ["-"] or "$" in "".join(operands):
        return None
    target = _expanded(operands[0]) if operands else "~"
    target = os.path.expanduser(target)
    if os.path.isabs(target):
        return os.path.normpath(target)
    return os.path.normpath(os.path.join(cwd, target)) if cwd else None


def _expanded(path: str) -> str:
    """``$HOME``/``${HOME}`` at the start as the home (``~`` is left to ``inside``)."""
    return _HOME.sub(lambda _: os.path.expanduser("~"), path)


def bash_reason(command: str, path: str) -> str:
    """What the model is told: that the memory folder is written another way, and how."""
    if command in ("rm", "unlink", "shred"):
        instead = "to retire a memory run `sagemem archive NAME` (it can be restored)"
    elif command == "mv":
        instead = "to move a memory out of the way run `sagemem archive NAME`"
    elif command in ("sed", "perl", "truncate"):
        instead = "to change a memory use the Edit tool"
    else:
        instead = ("to create a memory use the Write tool or `sagemem remember`/`sagemem "
                   "new`; to change one use the Edit tool")
    return (f"sagemem: this Bash command writes into the memory folder ({command} "
            f"{path}), past sagemem's checks for stale writes and secrets; {instead}. "
            "Reading memory files with cat, grep or head is fine.")


def in_folders(memory_dir: Path, global_dir: Path | None) -> Callable[[str, str | None], bool]:
    """``inside`` for ``guard``: a path in (or being) the project's or global folder."""
    roots = [d for d in (memory_dir, global_dir) if d is not None]

    def inside(path: str, cwd: str | None) -> bool:
        if cwd is None and not (os.path.isabs(path) or path.startswith("~")):
            return False  # relative to a directory we lost track of: cannot tell
        for root in roots:
            if memory_target(path, cwd, root) is not None or _is_root(path, cwd, root):
                return True
        return False
    return inside


def _is_root(path: str, cwd: str | None, root: Path) -> bool:
    full = os.path.expanduser(path) if path == "~" or path.startswith("~/") else path
    real = os.path.realpath(os.path.join(cwd or os.getcwd(), full))
    try:
        return os.path.samestat(os.stat(real), os.stat(root))
    except OSError:
        return False
