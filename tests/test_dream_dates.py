"""Relative dates made absolute (``sagemem.dream.dates``): consolidation's "dates" tidy.

The anchor in the tables is Sunday 2026-03-15, the last day of the Monday-to-Sunday week
of 2026-03-09: "this week" is that week, "this Monday" 2026-03-09 (already past), "next
Monday" 2026-03-16 (tomorrow) and "last Monday" 2026-03-02. A rewrite must read
correctly in place, keep every other byte, leave code and URLs alone, and change nothing
the second time.
"""

from __future__ import annotations

import time
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sagemem.dream.dates import RelativeDate, absolute_dates, find_relative_dates

SUNDAY = date(2026, 3, 15)

ENGLISH = [
    ("we met yesterday", "we met on 2026-03-14"),
    ("we met today", "we met on 2026-03-15"),
    ("we deploy tonight", "we deploy on the evening of 2026-03-15"),
    ("we ship tomorrow", "we ship on 2026-03-16"),
    ("it broke the day before yesterday", "it broke on 2026-03-13"),
    ("due the day after tomorrow", "due on 2026-03-17"),
    ("since yesterday", "since 2026-03-14"),
    ("until tomorrow", "until 2026-03-16"),
    ("Yesterday we met", "On 2026-03-14 we met"),
    ("YESTERDAY we met", "On 2026-03-14 we met"),
    ("Done. Yesterday we met", "Done. On 2026-03-14 we met"),
    ("- Last month: moved", "- In February 2026: moved"),
    ("see you Tomorrow", "see you on 2026-03-16"),
    ("as of today", "as of 2026-03-15"),
    ("Today is Sunday", "2026-03-15 is Sunday"),
    ("Yesterday was long", "2026-03-14 was long"),
    ("we shipped last week", "we shipped the week of 2026-03-02"),
    ("busy this week", "busy the week of 2026-03-09"),
    ("Next week we move", "The week of 2026-03-16 we move"),
    ("we moved last month", "we moved in February 2026"),
    ("rent rises this month", "rent rises in March 2026"),
    ("since next month", "since April 2026"),
    ("we moved last year", "we moved in 2025"),
    ("this year", "in 2026"),
    ("Next year was planned", "2027 was planned"),
    ("call last Monday", "call on 2026-03-02"),
    ("call this Monday", "call on 2026-03-09"),
    ("call next Monday", "call on 2026-03-16"),
    ("call this Sunday", "call on 2026-03-15"),
    ("call next friday", "call on 2026-03-20"),
    ("3 days ago", "on 2026-03-12"),
    ("three days ago", "on 2026-03-12"),
    ("twelve days ago", "on 2026-03-03"),
    ("2 weeks ago", "the week of 2026-02-23"),
    ("two months ago", "in January 2026"),
    ("a week ago", "the week of 2026-03-02"),
    ("a month ago", "in February 2026"),
    ("in 3 days", "on 2026-03-18"),
    ("in one week", "the week of 2026-03-16"),
    ("in 3 days ago", "in 2026-03-12"),
    ("ends last\nweek", "ends the week of 2026-03-02"),
]

CHINESE = [
    ("今天开会", "2026年3月15日开会"),
    ("今晚发布", "2026年3月15日晚发布"),
    ("昨天见面", "2026年3月14日见面"),
    ("前天下午", "2026年3月13日下午"),
    ("明天上线", "2026年3月16日上线"),
    ("后天出发", "2026年3月17日出发"),
    ("上周搬家", "2026-03-02 那周搬家"),
    ("上星期搬家", "2026-03-02 那周搬家"),
    ("上个星期搬家", "2026-03-02 那周搬家"),
    ("本周很忙", "2026-03-09 那周很忙"),
    ("这周很忙", "2026-03-09 那周很忙"),
    ("下周开始", "2026-03-16 那周开始"),
    ("下星期开始", "2026-03-16 那周开始"),
    ("上个月", "2026年2月"),
    ("这个月", "2026年3月"),
    ("本月", "2026年3月"),
    ("下个月", "2026年4月"),
    ("去年", "2025年"),
    ("今年", "2026年"),
    ("明年", "2027年"),
    ("前年", "2024年"),
    ("去年底", "2025年底"),
    ("上周一开会", "2026年3月2日开会"),
    ("上星期五", "2026年3月6日"),
    ("上周日", "2026年3月8日"),
    ("本周一", "2026年3月9日"),
    ("下周一", "2026年3月16日"),
    ("下星期天", "2026年3月22日"),
    ("三天前", "2026年3月12日"),
    ("3天前", "2026年3月12日"),
    ("十天前", "2026年3月5日"),
    ("十二天前", "2026年3月3日"),
    ("两周前", "2026-02-23 那周"),
    ("3个星期前", "2026-02-16 那周"),
    ("两个月前", "2026年1月"),
    ("三个月前", "2025年12月"),
    ("十年前年轻的时候", "2016年年轻的时候"),
    ("上周天气好", "2026-03-02 那周天气好"),
    ("然后天出发", "然后天出发"),
]

NOT_DATES = [
    "a few days ago", "recently", "on Monday", "last weekend", "yesterdays",
    "yesterday's notes", "today-only", "x-yesterday", "1,000 days ago", "weekly",
    "上周期", "这周围", "上周末", "然后天气", "之前天气", "几天前", "三四天前", "周一",
    "前往", "年轻", "上周五三天前",
]


@pytest.mark.parametrize(("text", "expected"), ENGLISH)
def test_english_phrases_become_absolute_and_read_in_place(text: str, expected: str) -> None:
    assert absolute_dates(text, SUNDAY) == expected


@pytest.mark.parametrize(("text", "expected"), CHINESE)
def test_chinese_phrases_become_absolute(text: str, expected: str) -> None:
    assert absolute_dates(text, SUNDAY) == expected


@pytest.mark.parametrize("text", NOT_DATES)
def test_vague_phrases_and_words_inside_words_are_left_alone(text: str) -> None:
    assert find_relative_dates(text, SUNDAY) == []
    assert absolute_dates(text, SUNDAY) == text


def test_last_month_in_january_is_december_of_the_year_before() -> None:
    assert absolute_dates("last month", date(2026, 1, 5)) == "in December 2025"
    assert absolute_dates("上个月", date(2026, 1, 5)) == "2025年12月"


def test_next_month_from_the_thirty_first_is_the_next_calendar_month() -> None:
    assert absolute_dates("next month", date(2024, 1, 31)) == "in February 2024"


def test_last_year_and_weeks_cross_the_year_boundary() -> None:
    assert absolute_dates("last year", date(2026, 1, 1)) == "in 2025"
    assert absolute_dates("last week", date(2026, 1, 1)) == "the week of 2025-12-22"


def test_found_offsets_slice_the_phrase_exactly() -> None:
    text = "Notes: we met yesterday, 上周一 again, and next Monday too."
    found = find_relative_dates(text, SUNDAY)
    assert [text[f.start:f.end] for f in found] == ["yesterday", "上周一", "next Monday"]
    assert [f.phrase for f in found] == ["yesterday", "上周一", "next Monday"]


def test_found_carries_the_first_day_of_the_span() -> None:
    [week, month, day] = find_relative_dates("last week, last month, 昨天", SUNDAY)
    assert week == RelativeDate(0, 9, "last week", "the week of 2026-03-02", date(2026, 3, 2))
    assert month.first_day == date(2026, 2, 1)
    assert day.first_day == date(2026, 3, 14)


def test_phrase_already_pinned_by_a_date_stays() -> None:
    for text in ("yesterday (2026-03-14)", "昨天（2026年3月14日）", "2026-03-14 (yesterday)",
                 "last month (February 2026)"):
        assert absolute_dates(text, SUNDAY) == text


def test_fenced_code_blocks_are_untouched() -> None:
    text = "```\nyesterday\n```\n~~~~ sh\nlast week\n~~~~\nyesterday"
    assert absolute_dates(text, SUNDAY) == (
        "```\nyesterday\n```\n~~~~ sh\nlast week\n~~~~\non 2026-03-14")


def test_an_unclosed_fence_protects_to_the_end() -> None:
    assert absolute_dates("today\n```\nyesterday", SUNDAY) == "on 2026-03-15\n```\nyesterday"


def test_inline_code_spans_are_untouched() -> None:
    text = "run `deploy --since yesterday` or ``a `today` b`` yesterday"
    assert absolute_dates(text, SUNDAY) == (
        "run `deploy --since yesterday` or ``a `today` b`` on 2026-03-14")


def test_urls_and_link_targets_are_untouched() -> None:
    text = "see https://example.com/today and [notes](notes/yesterday.md) www.x.org/tomorrow"
    assert absolute_dates(text, SUNDAY) == text


def test_frontmatter_at_the_top_is_untouched() -> None:
    text = "---\ndescription: met yesterday\n---\nmet yesterday\n"
    assert absolute_dates(text, SUNDAY) == (
        "---\ndescription: met yesterday\n---\nmet on 2026-03-14\n")


def test_crlf_line_endings_are_kept() -> None:
    text = "# Log\r\n\r\n- met yesterday\r\n- 上周搬家\r\n"
    assert absolute_dates(text, SUNDAY) == (
        "# Log\r\n\r\n- met on 2026-03-14\r\n- 2026-03-02 那周搬家\r\n")


def test_text_without_a_phrase_is_returned_unchanged() -> None:
    text = "Plain notes about the server.\r\n`code` and https://example.com\n"
    assert find_relative_dates(text, SUNDAY) == []
    assert absolute_dates(text, SUNDAY) == text


def test_a_second_pass_changes_nothing_on_the_tables() -> None:
    for text, _ in ENGLISH + CHINESE:
        once = absolute_dates(text, SUNDAY)
        assert absolute_dates(once, SUNDAY) == once


_PIECES = st.sampled_from(
    [p for p, _ in ENGLISH + CHINESE] + NOT_DATES
    + [" ", "\n", "\r\n", "`", "```", "~~~", "---", "(", ")", "in", "on", "since", "a", "3",
       "三", "上", "晚", "月", "日", "-", "'s", "2026-03-14", "http://x.y/", "[a](", "."])


@given(st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=12),
       st.dates(min_value=date(1900, 1, 1), max_value=date(2200, 12, 31)))
def test_absolute_dates_is_idempotent(pieces: list[str], anchor: date) -> None:
    text = "".join(pieces)
    once = absolute_dates(text, anchor)
    assert absolute_dates(once, anchor) == once


@given(st.text(max_size=40))
def test_every_byte_outside_a_phrase_is_kept(text: str) -> None:
    rebuilt, position = [], 0
    for found in find_relative_dates(text, SUNDAY):
        assert text[found.start:found.end] == found.phrase
        rebuilt += [text[position:found.start], found.replacement]
        position = found.end
    assert "".join([*rebuilt, text[position:]]) == absolute_dates(text, SUNDAY)


def test_dates_past_the_calendar_are_skipped_not_raised() -> None:
    assert absolute_dates("tomorrow, next year", date(9999, 12, 31)) == "tomorrow, next year"


@pytest.mark.parametrize("hostile", [
    " " * 1_000_000, "last " * 200_000, "`" * 1_000_000, "` a " * 250_000,
    "```\n" * 250_000, "上个" * 500_000, "http://" * 150_000, "---\n" + "a\n" * 500_000,
])
def test_a_hostile_megabyte_takes_bounded_time(hostile: str) -> None:
    started = time.monotonic()
    absolute_dates(hostile, SUNDAY)
    assert time.monotonic() - started < 15


@pytest.mark.parametrize("text", ["他说“今天”“明天”“下周一”时按东八区理解",
                                  'the word "tomorrow" means the next day',
                                  "「昨天」这个词", "‘last week’ is vague"])
def test_a_relative_date_quoted_as_a_word_is_mentioned_not_meant(text: str) -> None:
    assert absolute_dates(text, date(2026, 10, 8)) == text
