"""Tokenising and paragraph splitting (``sagemem.search.text``): the text model retrieval uses.

Tokens must make identifiers, paths, versions and numbers findable whole and by part,
turn CJK runs into overlapping two-character units, and handle mixed text in one pass.
Paragraphs must carry the file's own 1-based line numbers, keep headings with the block
under them and never split a fenced code block.
"""

from __future__ import annotations

import pytest

from sagemem.search.text import Paragraph, cjk_units, file_lines, fold, paragraphs, tokens

# -- ASCII words --------------------------------------------------------------------------


def test_ascii_words_are_lower_cased() -> None:
    assert tokens("Neovim TMUX Ruff") == ["neovim", "tmux", "ruff"]


def test_punctuation_and_spaces_separate_words() -> None:
    assert tokens("deploy, then (verify)!") == ["deploy", "then", "verify"]


def test_numbers_are_tokens_of_their_own() -> None:
    assert tokens("port 8080") == ["port", "8080"]
    assert "8080" in tokens("the service listens on 8080.")


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("v2.3", ["v2.3", "v2", "3"], id="version"),
    pytest.param("api_base", ["api_base", "api", "base"], id="snake-case-identifier"),
    pytest.param("src/app.py", ["src/app.py", "src", "app", "py"], id="path"),
    pytest.param("blue-green", ["blue-green", "blue", "green"], id="hyphenated"),
    pytest.param("localhost:8080", ["localhost:8080", "localhost", "8080"], id="host-and-port"),
])
def test_compound_token_gives_the_whole_and_its_parts(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


def test_compound_token_is_lower_cased_whole_and_in_parts() -> None:
    assert tokens("API_BASE") == ["api_base", "api", "base"]


def test_trailing_sentence_punctuation_is_not_part_of_a_version_or_path() -> None:
    assert tokens("Upgrade to v2.3.")[-3:] == ["v2.3", "v2", "3"]
    assert tokens("Edit src/app.py, then run.")[1:5] == ["src/app.py", "src", "app", "py"]


def test_same_identifier_in_a_question_and_a_memory_shares_tokens() -> None:
    memory = set(tokens("The api_base for staging is set in src/app.py (since v2.3)."))
    for question in ("api_base", "api base", "app.py", "v2.3", "what changed in 2.3"):
        assert set(tokens(question)) & memory - {"the", "in", "is"}, question


# -- CJK --------------------------------------------------------------------------------


def test_cjk_run_becomes_overlapping_bigrams() -> None:
    assert tokens("部署流程") == ["部署", "署流", "流程"]


def test_two_character_cjk_run_is_one_bigram() -> None:
    assert tokens("芝麻") == ["芝麻"]


def test_one_character_cjk_run_stays_single() -> None:
    assert tokens("猫") == ["猫"]
    assert cjk_units("猫") == ["猫"]


def test_cjk_punctuation_ends_a_run() -> None:
    assert tokens("格式化，提交") == ["格式", "式化", "提交"]


def test_japanese_kana_is_treated_as_cjk() -> None:
    assert tokens("デプロイ") == ["デプ", "プロ", "ロイ"]


# -- mixed text -------------------------------------------------------------------------


def test_mixed_chinese_and_english_is_tokenised_in_one_pass() -> None:
    assert tokens("用 kubectl 部署到 prod") == ["用", "kubectl", "部署", "署到", "prod"]


def test_mixed_text_without_spaces_still_separates_the_scripts() -> None:
    assert tokens("用kubectl部署到prod环境") == ["用", "kubectl", "部署", "署到", "prod", "环境"]


def test_full_width_letters_and_digits_give_their_ascii_tokens() -> None:
    assert tokens("端口８０８０") == tokens("端口8080")
    assert tokens("Ｎｅｏｖｉｍ") == ["neovim"]


def test_tokens_keep_repeats_for_term_frequency() -> None:
    assert tokens("ruff ruff 格式 格式") == ["ruff", "ruff", "格式", "格式"]


def test_text_without_words_has_no_tokens() -> None:
    assert tokens("") == []
    assert tokens("  —— !!! …  ") == []


# -- suffix folding ---------------------------------------------------------------------


@pytest.mark.parametrize("inflected", ["deploys", "deployed", "deploying"])
def test_inflections_meet_their_stem(inflected: str) -> None:
    assert tokens(inflected) == tokens("deploy")


@pytest.mark.parametrize(("inflected", "stem"), [
    pytest.param("caches", "cache", id="plural-of-e-word"),
    pytest.param("planned", "plan", id="doubled-consonant-ed"),
    pytest.param("running", "run", id="doubled-consonant-ing"),
    pytest.param("called", "call", id="double-l-kept"),
    pytest.param("servers", "server", id="plural"),
])
def test_suffix_folding_brings_inflection_and_stem_together(inflected: str, stem: str) -> None:
    assert fold(inflected) == fold(stem)


@pytest.mark.parametrize("word", ["bus", "is", "was", "goes", "news", "used", "make"])
def test_short_words_are_left_untouched(word: str) -> None:
    assert fold(word) == word


@pytest.mark.parametrize("word", ["status", "analysis", "address"])
def test_words_ending_in_us_is_or_ss_keep_their_s(word: str) -> None:
    assert fold(word) == word


def test_numbers_and_identifiers_are_not_folded() -> None:
    assert fold("8080s") == "8080s"
    assert tokens("deploys_scripts") == ["deploys_scripts", "deploy", "script"]


# -- file lines -------------------------------------------------------------------------


def test_file_lines_numbers_lines_as_an_editor_does() -> None:
    assert file_lines("a\nb\n") == ["a", "b"]
    assert file_lines("a\nb") == ["a", "b"]
    assert file_lines("a\n\nb\n\n") == ["a", "", "b", ""]
    assert file_lines("") == []


def test_file_lines_drops_the_cr_of_crlf() -> None:
    assert file_lines("a\r\nb\r\n") == ["a", "b"]


# -- paragraphs -------------------------------------------------------------------------

DEPLOY_BODY = """\
# Deploy

Main is deployed to staging on every merge.
Production needs a signed tag.

```bash
kubectl apply -f k8s/staging.yaml

kubectl rollout status deploy/web
```

Rollbacks use kubectl rollout undo.
"""


def test_paragraphs_are_blank_line_separated_blocks() -> None:
    body = "First line.\nSecond line.\n\nAnother block.\n\n\n\nLast block.\n"
    assert paragraphs(body, 1) == [
        Paragraph(1, 2, "First line.\nSecond line."),
        Paragraph(4, 4, "Another block."),
        Paragraph(8, 8, "Last block."),
    ]


def test_paragraph_lines_are_the_files_own_numbers() -> None:
    # The body of a file with a 6-line frontmatter starts on line 7.
    found = paragraphs("One.\n\nTwo.\n", first_line=7)
    assert [(p.start_line, p.end_line) for p in found] == [(7, 7), (9, 9)]


def test_paragraph_text_matches_the_file_lines_it_claims() -> None:
    frontmatter = "---\nname: Deploy\ndescription: How we deploy.\n---\n"
    text = frontmatter + DEPLOY_BODY
    lines = file_lines(text)
    for para in paragraphs(DEPLOY_BODY, first_line=5):
        assert para.text == "\n".join(lines[para.start_line - 1:para.end_line])


def test_heading_only_block_stays_with_the_block_under_it() -> None:
    found = paragraphs(DEPLOY_BODY, 1)
    assert found[0] == Paragraph(
        1, 4, "# Deploy\n\nMain is deployed to staging on every merge.\n"
              "Production needs a signed tag.")


def test_heading_directly_above_text_is_one_block() -> None:
    assert paragraphs("## Steps\n1. build\n2. ship\n", 1) == [
        Paragraph(1, 3, "## Steps\n1. build\n2. ship")]


def test_second_of_two_heading_only_blocks_stays_with_the_block_under_it() -> None:
    body = "# Deploy notes\n\n## Steps\n\nTag the release, then push.\n"
    holding_text = next(p for p in paragraphs(body, 1) if "Tag the release" in p.text)
    assert "## Steps" in holding_text.text


def test_heading_at_the_end_of_a_body_is_a_paragraph_of_its_own() -> None:
    assert paragraphs("Some text.\n\n## Later\n", 1) == [
        Paragraph(1, 1, "Some text."), Paragraph(3, 3, "## Later")]


def test_hash_without_space_is_not_a_heading() -> None:
    found = paragraphs("#hashtag\n\nText.\n", 1)
    assert [p.text for p in found] == ["#hashtag", "Text."]


@pytest.mark.parametrize("fence", ["```", "~~~"])
def test_fenced_code_block_with_blank_lines_is_never_split(fence: str) -> None:
    body = f"Intro.\n\n{fence}python\nimport os\n\n\nprint(os.sep)\n{fence}\n\nAfter.\n"
    assert paragraphs(body, 1) == [
        Paragraph(1, 1, "Intro."),
        Paragraph(3, 8, f"{fence}python\nimport os\n\n\nprint(os.sep)\n{fence}"),
        Paragraph(10, 10, "After."),
    ]


def test_fence_is_closed_only_by_the_same_kind_of_fence() -> None:
    body = "~~~\n```\n\nstill code\n~~~\n\nAfter.\n"
    assert [p.text for p in paragraphs(body, 1)] == [
        "~~~\n```\n\nstill code\n~~~", "After."]


def test_fence_is_closed_only_by_a_fence_at_least_as_long() -> None:
    body = "````\n```\n\nstill code\n````\n\nAfter.\n"
    assert [p.text for p in paragraphs(body, 1)] == [
        "````\n```\n\nstill code\n````", "After."]


def test_text_right_before_a_fence_stays_with_the_code() -> None:
    body = "Run this:\n```\nmake build\n\nmake deploy\n```\n"
    assert paragraphs(body, 1) == [
        Paragraph(1, 6, "Run this:\n```\nmake build\n\nmake deploy\n```")]


def test_crlf_body_gives_the_same_paragraphs_as_lf() -> None:
    crlf = DEPLOY_BODY.replace("\n", "\r\n")
    assert paragraphs(crlf, 5) == paragraphs(DEPLOY_BODY, 5)


def test_trailing_text_without_a_final_newline_is_a_paragraph() -> None:
    assert paragraphs("One.\n\nTwo, no newline", 3) == [
        Paragraph(3, 3, "One."), Paragraph(5, 5, "Two, no newline")]


def test_leading_and_trailing_blank_lines_belong_to_no_paragraph() -> None:
    assert paragraphs("\n\n用户每天用 Neovim。\n\n\n", 1) == [
        Paragraph(3, 3, "用户每天用 Neovim。")]


def test_whitespace_only_line_separates_paragraphs() -> None:
    assert [p.text for p in paragraphs("One.\n   \t\nTwo.\n", 1)] == ["One.", "Two."]


def test_empty_body_has_no_paragraphs() -> None:
    assert paragraphs("", 1) == []


def test_tokens_past_the_kept_words_are_the_same_and_the_cache_stays_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from sagemem.search import text

    monkeypatch.setattr(text, "_UNITS", {})
    monkeypatch.setattr(text, "UNITS_KEPT", 3)
    sentence = "Deploying api_base v2.3 deployed Caches caching planned running"
    first = text.tokens(sentence)
    assert len(text._UNITS) == 3
    assert text.tokens(sentence) == first == [
        "deploy", "api_base", "api", "base", "v2.3", "v2", "3", "deploy", "cach", "cach",
        "plan", "run"]
    assert len(text._UNITS) == 3
