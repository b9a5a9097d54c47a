"""Relative dates that rot ("last week", 上周) made absolute from a memory's ``updated`` day.

A memory written on 2026-03-15 that says "we moved the server last week" is wrong a month
later; consolidation rewrites the phrase to "the week of 2026-03-02" computed from the
anchor (the memory's ``updated`` date). Only phrases with one clear meaning are matched;
vague ones ("a few days ago", "recently", a bare "on Monday", 几天前) are left alone.

Meanings, with weeks starting on Monday:

- a day is the anchor plus or minus days; "last/this/next <weekday>" and 上周一/本周一/
  下周一 are that weekday in the previous, current or next Monday-to-Sunday week, so on
  Sunday 2026-03-15 "this Monday" is 2026-03-09 and "next Monday" 2026-03-16;
- "N weeks ago" / N周前 is the week holding the day 7N days back; "N months ago" the
  calendar month N back; "last month" on 2024-03-31 is February 2024 (no day arithmetic).

Replacement rules, so the text reads correctly in place:

- English days become ISO dates led by "on" ("met yesterday" → "met on 2026-03-14"),
  months and years are led by "in" ("in March 2026", "in 2025"), weeks stand alone
  ("the week of 2026-03-09"). No lead word after a preposition ("since yesterday" →
  "since 2026-03-14", ``PREPOSITIONS``) or before a verb ("Yesterday was long" →
  "2026-03-14 was long"). A phrase written with a capital at a sentence or line start
  keeps one ("Yesterday we met" → "On 2026-03-14 we met"; "- Last week" → "- The week
  of …"); mid-sentence the lead word is lower case ("see you Tomorrow" → "see you on …").
- Chinese days become 2026年3月14日 (the form of 2026年3月 and 2026年, so one family reads
  alike), weeks ``2026-03-09 那周``, evenings 2026年3月15日晚
  (not 晚上: 今晚月色 would become …晚上月色, where a second pass finds 上月).

Never rewritten: a YAML frontmatter block at the top, fenced code blocks, inline code
spans, URLs and Markdown link targets, words inside other words (``yesterdays``,
"last weekend", 上周期, 然后天气), possessives ("yesterday's"), and a phrase already
pinned by an absolute date beside it ("yesterday (2026-03-14)", "2026-03-14 (昨天)").
The writer's own pin is trusted over the anchor. No replacement contains a phrase, so a
second pass changes nothing. Every other byte (CRLF included) is kept.

Known limits: "in 3 days" is read as the anchor plus three days, though "built it in
3 days" is a duration; indented (four-space) code blocks are not recognised, since a
nested list looks the same; 大前天/大后天, 周末, "this morning" are not matched.

Bounded time: one compiled regex with no nested quantifiers scans the text once; every
other check reads a window of a few dozen characters around a match.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from .verbatim import overlaps, verbatim_spans

__all__ = ["RelativeDate", "absolute_dates", "find_relative_dates"]


@dataclass(frozen=True)
class RelativeDate:
    """One relative phrase found in a text, and what replaces it."""

    start: int
    end: int
    phrase: str
    replacement: str
    first_day: date
    """The day it means, or the first day of the week, month or year it means."""


@dataclass(frozen=True)
class _Meaning:
    first_day: date
    span: str  # "day", "evening", "week", "month", "year"


# -- the phrases ---------------------------------------------------------------------------

_EN_BEFORE = r"(?<![0-9A-Za-z_\u00C0-\u024F-])(?<![0-9][,.])"
_EN_AFTER = r"(?![0-9A-Za-z_\u00C0-\u024F-]|['’][A-Za-z])"
_SP = r"(?:[ \t]+(?:\r?\n[ \t]*)?|\r?\n[ \t]*)"  # a hard-wrapped line breaks a phrase too
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_EN_NUMBERS = {word: n for n, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_EN_NUMBERS.update({"a": 1, "an": 1})
_EN_NUMBER = r"(?P<n>[0-9]{1,3}|" + "|".join(sorted(_EN_NUMBERS, key=len, reverse=True)) + ")"
_EN_UNIT = r"(?P<unit>day|week|month|year)s?"
_EN_STEP = {"last": -1, "this": 0, "next": 1}

_ZH_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}
# Not inside a longer number (1000天前 is not 0 days) nor a date (a rewrite's 2026-03-31
# before 周前 is not 31 weeks)
_ZH_NUMBER = (r"(?<![-0-9一二两三四五六七八九十百千万几])"
              r"(?P<n>[0-9]{1,3}|[一二两三四五六七八九十]{1,3})")
# 上周五三天前 is unclear, and rewriting 上周五 alone would end it in 日, making the 三天前
# the first pass left (after 五) a phrase to the second: a week word never precedes a numeral
_ZH_NO_NUMERAL_AFTER = r"(?![0-9一二两三四五六七八九十])"
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_WEEK_WORD = r"(?:个)?(?:周|星期|礼拜)"
_ZH_STEP = {"上": -1, "本": 0, "这": 0, "下": 1}
# 上周期 (the last cycle), 这周围 (around here), 上周末 (a weekend, not a week); 上周日 is
# a day, and 上周天 one unless it is 上周 + 天气
_ZH_NOT_A_WEEK = r"(?![期末围边日])" + _ZH_NO_NUMERAL_AFTER
# 年轻 (young), 年纪/年龄 (age): 前年轻 is 前 + 年轻
_ZH_NOT_A_YEAR = r"(?![轻纪龄])"
# 天气, 天空, 天色: 然后天气 is 然后 + 天气, 之前天气 is 之前 + 天气
_ZH_NOT_A_DAY = r"(?![气空色])"


def _day(offset: int, span: str = "day") -> Callable[[dict[str, str], date], _Meaning]:
    return lambda groups, anchor: _Meaning(anchor + timedelta(days=offset), span)


def _en_step_span(groups: dict[str, str], anchor: date) -> _Meaning:
    return _span_from(anchor, groups["unit"].lower(), _EN_STEP[groups["step"].lower()])


def _en_step_weekday(groups: dict[str, str], anchor: date) -> _Meaning:
    weekday = _EN_WEEKDAYS.index(groups["weekday"].lower())
    return _weekday_of(anchor, _EN_STEP[groups["step"].lower()], weekday)


def _en_ago(groups: dict[str, str], anchor: date) -> _Meaning:
    return _span_from(anchor, groups["unit"].lower(), -_en_number(groups["n"]))


def _en_ahead(groups: dict[str, str], anchor: date) -> _Meaning:
    return _span_from(anchor, groups["unit"].lower(), _en_number(groups["n"]))


def _zh_step_weekday(groups: dict[str, str], anchor: date) -> _Meaning:
    return _weekday_of(anchor, _ZH_STEP[groups["step"]], _ZH_WEEKDAYS[groups["weekday"]])


def _zh_step_week(groups: dict[str, str], anchor: date) -> _Meaning:
    return _span_from(anchor, "week", _ZH_STEP[groups["step"]])


def _zh_ago(unit: str) -> Callable[[dict[str, str], date], _Meaning]:
    return lambda groups, anchor: _span_from(anchor, unit, -_zh_number(groups["n"]))


def _fixed(unit: str, step: int) -> Callable[[dict[str, str], date], _Meaning]:
    return lambda groups, anchor: _span_from(anchor, unit, step)


_Rule = tuple[str, str, Callable[[dict[str, str], date], _Meaning]]

_EN_RULES: tuple[_Rule, ...] = (
    ("en", rf"(?:the{_SP})?day{_SP}before{_SP}yesterday", _day(-2)),
    ("en", rf"(?:the{_SP})?day{_SP}after{_SP}tomorrow", _day(2)),
    ("en", r"today", _day(0)),
    ("en", r"tonight", _day(0, "evening")),
    ("en", rf"last{_SP}night", _day(-1, "evening")),
    ("en", r"yesterday", _day(-1)),
    ("en", r"tomorrow", _day(1)),
    ("en", rf"(?P<step>last|this|next){_SP}(?P<unit>week|month|year)", _en_step_span),
    ("en", rf"(?P<step>last|this|next){_SP}(?P<weekday>{'|'.join(_EN_WEEKDAYS)})",
     _en_step_weekday),
    ("en", rf"{_EN_NUMBER}{_SP}{_EN_UNIT}{_SP}ago", _en_ago),
    # "in 3 days ago" is "in" + "3 days ago"
    ("en", rf"in{_SP}{_EN_NUMBER}{_SP}{_EN_UNIT}(?!{_SP}ago)", _en_ahead),
)

_ZH_RULES: tuple[_Rule, ...] = (
    ("zh", r"今晚", _day(0, "evening")),
    ("zh", r"昨晚", _day(-1, "evening")),
    ("zh", r"明晚", _day(1, "evening")),
    ("zh", r"(?<![如])今天", _day(0)),
    ("zh", r"昨天", _day(-1)),
    ("zh", r"(?<![提之以目当眼跟面向])前天" + _ZH_NOT_A_DAY, _day(-2)),
    ("zh", r"(?<![说聪光证发表透])明天", _day(1)),
    ("zh", r"(?<![然先之以最落])后天" + _ZH_NOT_A_DAY + r"(?!性)", _day(2)),
    ("zh", rf"(?P<step>[上下本这]){_ZH_WEEK_WORD}(?P<weekday>[一二三四五六日天])"
           rf"{_ZH_NOT_A_DAY}{_ZH_NO_NUMERAL_AFTER}", _zh_step_weekday),
    ("zh", rf"(?P<step>[上下本这]){_ZH_WEEK_WORD}{_ZH_NOT_A_WEEK}", _zh_step_week),
    ("zh", r"上个?月", _fixed("month", -1)),
    ("zh", r"(?:这个|本)月", _fixed("month", 0)),
    ("zh", r"下个?月", _fixed("month", 1)),
    ("zh", r"去年" + _ZH_NOT_A_YEAR, _fixed("year", -1)),
    ("zh", r"今年" + _ZH_NOT_A_YEAR, _fixed("year", 0)),
    ("zh", r"明年" + _ZH_NOT_A_YEAR, _fixed("year", 1)),
    # 十年前年轻 is 十年前 + 年轻: N年前 starts further left, so it is found first
    ("zh", r"前年" + _ZH_NOT_A_YEAR, _fixed("year", -2)),
    ("zh", rf"{_ZH_NUMBER}天前(?!往)", _zh_ago("day")),
    ("zh", rf"{_ZH_NUMBER}{_ZH_WEEK_WORD}前(?!往)", _zh_ago("week")),
    ("zh", rf"{_ZH_NUMBER}个月前(?!往)", _zh_ago("month")),
    ("zh", rf"{_ZH_NUMBER}年前(?!往)", _zh_ago("year")),
)

_RULES = _EN_RULES + _ZH_RULES


def _bounded(rule: _Rule) -> str:
    """The rule's pattern, word-bounded when it is English (CJK has no word boundaries)."""
    language, body, _ = rule
    return f"{_EN_BEFORE}(?:{body}){_EN_AFTER}" if language == "en" else body


def _unnamed(pattern: str) -> str:
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


# Inner group names (n, unit, step) repeat between rules, so the scan names only the
# rule; the rule's own pattern then reads its groups from the matched phrase.
# Every phrase starts with one of these characters; saying so first lets the scan skip
# every other position at once (1.3 → 0.5 ms a memory).
_FIRST = "(?=[tdlynioefsza0-9今昨明前后上下本这去一二两三四五六七八九十])"
# Every phrase holds one of these (day, tonight, week, 上周, 去年 …): a text without any
# is skipped before the scan.
_TRIGGER = re.compile(r"day|night|week|month|year|tomorrow|[天晚周期拜月年]", re.IGNORECASE)
_SCAN = re.compile(_FIRST + "(?:" + "|".join(f"(?P<r{number}>{_unnamed(_bounded(rule))})"
                                            for number, rule in enumerate(_RULES)) + ")",
                   re.IGNORECASE)
_RULE_PATTERNS = tuple(re.compile(_bounded(rule), re.IGNORECASE) for rule in _RULES)


# -- meanings ------------------------------------------------------------------------------


def _en_number(word: str) -> int:
    return int(word) if word.isdigit() else _EN_NUMBERS[word.lower()]


def _zh_number(text: str) -> int:
    """一..九十九 and Arabic digits; a run like 三四 (three or four) is vague, not a number."""
    if text.isdigit():
        return int(text)
    tens, _, ones = text.partition("十")
    if "十" not in text:
        if len(text) != 1:
            raise ValueError(text)
        return _ZH_DIGITS[text]
    if (tens and tens not in _ZH_DIGITS) or (ones and ones not in _ZH_DIGITS):
        raise ValueError(text)
    return (_ZH_DIGITS[tens] if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0)


def _monday_of(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _weekday_of(anchor: date, weeks: int, weekday: int) -> _Meaning:
    return _Meaning(_monday_of(anchor) + timedelta(weeks=weeks, days=weekday), "day")


def _span_from(anchor: date, unit: str, steps: int) -> _Meaning:
    """The day, week, month or year ``steps`` away: "3 weeks ago" is the week holding the
    day 21 days back, "last month" the calendar month before the anchor's."""
    if unit == "day":
        return _Meaning(anchor + timedelta(days=steps), "day")
    if unit == "week":
        return _Meaning(_monday_of(anchor + timedelta(weeks=steps)), "week")
    if unit == "month":
        months = anchor.year * 12 + anchor.month - 1 + steps
        return _Meaning(date(months // 12, months % 12 + 1, 1), "month")
    return _Meaning(date(anchor.year + steps, 1, 1), "year")


# -- writing it out ------------------------------------------------------------------------

_ABSOLUTE = (r"(?:\d{4}-\d\d-\d\d|\d{4}年\d{1,2}月(?:\d{1,2}日)?"
             r"|(?:January|February|March|April|May|June|July|August|September|October"
             r"|November|December)[ \t]+\d{4})")
_PINNED_AFTER = re.compile(rf"[ \t]*[(\[（,，]?[ \t]*(?:on[ \t]+)?{_ABSOLUTE}", re.IGNORECASE)
_PINNED_BEFORE = re.compile(rf"{_ABSOLUTE}[ \t]*[(\[（][ \t]*\Z", re.IGNORECASE)
PREPOSITIONS = ("since", "until", "till", "til", "by", "before", "after", "from", "on", "of",
                "to", "through", "thru", "for", "at", "around", "about", "in", "during",
                "than", "starting", "as")
"""After these an English date needs no "on"/"in" of its own ("since 2026-03-14")."""
_AFTER_PREPOSITION = re.compile(rf"(?<![\w-])(?:{'|'.join(PREPOSITIONS)})[ \t]+\Z",
                                re.IGNORECASE)
_BEFORE_VERB = re.compile(r"[ \t]+(?:is|was|will|would|has|had)\b", re.IGNORECASE)
_SENTENCE_START = re.compile(r"(?:\n[ \t]*(?:#{1,6}|[-*+>]|\d{1,9}[.)])?|[.!?。！？:]"
                             r"[\"'”’)\]]*)[ \t]*\Z")
_LEAD = {"day": "on ", "evening": "on ", "week": "", "month": "in ", "year": "in "}
_WINDOW = 40


def _english(meaning: _Meaning) -> str:
    day = meaning.first_day
    if meaning.span == "evening":
        return f"the evening of {day.isoformat()}"
    if meaning.span == "week":
        return f"the week of {day.isoformat()}"
    if meaning.span == "month":
        return f"{calendar.month_name[day.month]} {day.year}"
    if meaning.span == "year":
        return str(day.year)
    return day.isoformat()


def _chinese(meaning: _Meaning) -> str:
    day = meaning.first_day
    return {"day": f"{day.year}年{day.month}月{day.day}日",
            "evening": f"{day.year}年{day.month}月{day.day}日晚",
            "week": f"{day.isoformat()} 那周",
            "month": f"{day.year}年{day.month}月",
            "year": f"{day.year}年"}[meaning.span]


def _english_in_place(text: str, start: int, end: int, meaning: _Meaning) -> str:
    """The English date with the lead word the sentence needs, capitalised as written."""
    before = text[max(0, start - _WINDOW):start]
    bare = _AFTER_PREPOSITION.search(before) or _BEFORE_VERB.match(text, end)
    written = (("" if bare else _LEAD[meaning.span]) + _english(meaning))
    if text[start].isupper() and _starts_a_sentence(text, start):
        written = written[0].upper() + written[1:]
    return written


def _starts_a_sentence(text: str, start: int) -> bool:
    """After a line start (a heading, bullet or quote mark allowed) or a sentence's end;
    "see you Tomorrow" mid-sentence gets "on", not "On"."""
    before = ("\n" if start <= _WINDOW else "") + text[max(0, start - _WINDOW):start]
    return bool(_SENTENCE_START.search(before))


def _pinned(text: str, start: int, end: int) -> bool:
    """Whether the writer already put an absolute date beside the phrase."""
    return bool(_PINNED_AFTER.match(text, end)
                or _PINNED_BEFORE.search(text[max(0, start - _WINDOW):start]))


def _found(text: str, match: re.Match[str], anchor: date) -> RelativeDate | None:
    number = int(match.lastgroup[1:]) if match.lastgroup else 0
    language, _, meaning_of = _RULES[number]
    phrase = match.group()
    inner = _RULE_PATTERNS[number].fullmatch(phrase)
    assert inner is not None  # the scan matched this rule's own pattern
    try:
        meaning = meaning_of({k: v for k, v in inner.groupdict().items() if v}, anchor)
    except (ValueError, OverflowError):  # 三四天前 (vague), or past date.max
        return None
    start, end = match.span()
    replacement = (_english_in_place(text, start, end, meaning) if language == "en"
                   else _chinese(meaning))
    return RelativeDate(start, end, phrase, replacement, meaning.first_day)


def find_relative_dates(text: str, anchor: date) -> list[RelativeDate]:
    """Every relative date in ``text`` that ``anchor`` can pin, in order of position."""
    if not _TRIGGER.search(text):
        return []
    protected = verbatim_spans(text)
    found: list[RelativeDate] = []
    for match in _SCAN.finditer(text):
        start, end = match.span()
        if overlaps(start, end, protected) or _pinned(text, start, end) or \
                _quoted(text, start, end):
            continue
        relative = _found(text, match, anchor)
        if relative is not None:
            found.append(relative)
    return found


_QUOTES = {"“": "”", "‘": "’", '"': '"', "'": "'", "「": "」", "『": "』", "«": "»"}


def _quoted(text: str, start: int, end: int) -> bool:
    """A phrase that is the whole of a quotation — 他说“今天”时, the word "tomorrow" —
    is the word mentioned, not a date meant: never rewritten."""
    if start == 0 or end >= len(text):
        return False
    closing = _QUOTES.get(text[start - 1])
    return closing is not None and text[end] == closing


def absolute_dates(text: str, anchor: date) -> str:
    """``text`` with every relative date replaced by the absolute one it meant on ``anchor``."""
    pieces: list[str] = []
    position = 0
    for relative in find_relative_dates(text, anchor):
        pieces += [text[position:relative.start], relative.replacement]
        position = relative.end
    pieces.append(text[position:])
    return "".join(pieces)
