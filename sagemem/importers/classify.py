"""Which of sagemem's four types a section of instructions is (a CLAUDE.md section, an
OpenClaw MEMORY.md section), by rules a person can check, in the order they apply:

1. **The heading.** Its words are looked up in ``HEADING_WORDS``, type by type in the
   order user, feedback, reference, project; the first type with a word in the heading
   wins (``## About me`` → user, ``## Code style`` → feedback, ``## Links`` →
   reference, ``## Deploy`` → project).
2. **The body**, when the heading decided nothing (or there is none): each type scores
   its signals — user: first-person facts (``I am``, ``I'm``, ``my role``, ``I work``);
   feedback: lines that give orders (a line or sentence opening with ``always``,
   ``never``, ``prefer``, ``don't``, ``do not``, ``avoid``, ``must``, ``should``,
   ``use``, ``make sure``); reference: links (a URL or a Markdown link) on a line;
   project: commands and facts of the code (a code fence, a ``$ `` line, or a line
   naming ``build``, ``test``, ``deploy``, ``run``, ``install``, ``architecture``,
   ``database``, ``api``). The highest score wins; a tie goes to the earlier of
   feedback, project, user, reference.
3. **Nothing matched**: ``reference``, with ``classified`` False so the reader lists the
   section in its notes for the user to check.

Words are compared lower-cased, whole words only; nothing here is learned or random,
so one text always gets one type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADING_WORDS: dict[str, tuple[str, ...]] = {
    "user": ("about me", "who i am", "me", "my", "myself", "role", "background",
             "preference", "preferences", "personal", "profile", "bio", "user"),
    "feedback": ("style", "styles", "convention", "conventions", "guideline", "guidelines",
                 "rule", "rules", "instruction", "instructions", "feedback", "workflow",
                 "etiquette", "behavior", "behaviour", "do", "don't", "dont", "avoid",
                 "always", "never", "review", "commit", "commits"),
    "reference": ("link", "links", "reference", "references", "resource", "resources",
                  "docs", "documentation", "see also", "external", "url", "urls",
                  "further reading", "bookmarks"),
    "project": ("project", "architecture", "overview", "command", "commands", "build",
                "test", "tests", "testing", "deploy", "deployment", "setup", "install",
                "installation", "structure", "layout", "stack", "dependencies", "database",
                "api", "release", "ci", "environment", "decisions", "status", "roadmap",
                "tasks", "todo"),
}
_ORDER = ("user", "feedback", "reference", "project")
_TIE_ORDER = ("feedback", "project", "user", "reference")
_WORDS = re.compile(r"[a-z0-9']+")
_USER = re.compile(r"\b(i am|i'm|my role|i work|my background|my name)\b")
_ORDER_LINE = re.compile(r"(?:^|[.!?]\s+|^[-*+]\s+|^\d+\.\s+)(always|never|prefer|don't|do not|"
                         r"avoid|must|should|use|make sure)\b")
_LINK = re.compile(r"https?://|\[[^\]]+\]\([^)]+\)")
_PROJECT = re.compile(r"^\s*(```|~~~|\$ )|\b(build|test|tests|deploy|run|install|"
                      r"architecture|database|api)\b")


@dataclass(frozen=True)
class Classified:
    """A type and whether a rule decided it (False: the default, worth a note)."""

    type: str
    classified: bool
    rule: str


def classify(heading: str | None, body: str) -> Classified:
    """The type of a section under ``heading`` holding ``body`` (module docstring)."""
    by_heading = _by_heading(heading or "")
    if by_heading is not None:
        return Classified(by_heading, True, "heading")
    scores = _scores(body)
    best = max(_TIE_ORDER, key=lambda t: (scores[t], -_TIE_ORDER.index(t)))
    if scores[best] == 0:
        return Classified("reference", False, "default")
    return Classified(best, True, "body")


def _by_heading(heading: str) -> str | None:
    text = heading.lower()
    words = set(_WORDS.findall(text))
    for type_ in _ORDER:
        for entry in HEADING_WORDS[type_]:
            if (" " in entry and re.search(rf"\b{re.escape(entry)}\b", text)) or entry in words:
                return type_
    return None


def _scores(body: str) -> dict[str, int]:
    scores = dict.fromkeys(_TIE_ORDER, 0)
    for line in body.lower().splitlines():
        stripped = line.strip()
        scores["user"] += len(_USER.findall(stripped))
        scores["feedback"] += len(_ORDER_LINE.findall(stripped))
        scores["reference"] += 1 if _LINK.search(stripped) else 0
        scores["project"] += 1 if _PROJECT.search(line) else 0
    return scores
