"""The build makes the index's core arrays in the cache file's memory map, at their place in the file
(:class:`retrieval.index._CacheWriter`), before the header that decides where the data starts is
known: the file holds the same bytes as one written from arrays in memory, whether the guess of the
header's size was right or a page or two off, and a build whose cache cannot be written serves the
same index from memory."""

from __future__ import annotations

import errno
import logging
import types
from pathlib import Path

import numpy as np
import pytest

import retrieval.build as build_module
import retrieval.index as index_module
from retrieval.index import _CacheWriter, _save_arrays, cache_path_for, open_index
from retrieval.postings import BM25Params
from tests.retrieval.test_build_files import corpus_with_a_big_file

QUERIES = ["reinforcement learning policy", "graph neural network", '"language model"', "protein"]
BUILD_CORPUS = build_module.build_corpus
CORE = ("indptr", "post_docs", "post_tf", "idf", "baseline", "doc_len", "doc_start", "pos_indptr",
        "positions", "long_slot", "long_bits", "long_bmax", "long_min")  # fmt: skip


@pytest.fixture
def fixed_times(monkeypatch):
    """The build's times fixed (they are in the header): two builds give the same bytes."""
    fixed = types.SimpleNamespace(time=lambda: 1.0, perf_counter=lambda: 0.0)
    monkeypatch.setattr(index_module, "time", fixed)


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(build_module, "PARALLEL_MIN_BYTES", 1 << 40)  # in this process (faster here)
    return corpus_with_a_big_file(tmp_path)


def results(index) -> list:
    out = []
    for q in QUERIES:
        page = index.search(q, 10)
        out.append((page.total, [(h.paper.id, h.score, h.snippet) for h in page.hits]))
    return out


def build(folder: Path, cache: Path, monkeypatch, *, placed: bool = True, shift: int = 0):
    """open_index into ``cache``; ``placed=False``: the arrays are made in memory; ``shift``: the
    placed arrays assume a data start that many bytes off the guess. Returns the index, the cache
    file's bytes (None if none) and what was placed (name -> (data start, bytes))."""
    seen: dict[str, tuple[int, int]] = {}
    place = _CacheWriter.place

    def spy(self, sizes, data_start, file_bytes):
        out = place(self, sizes, data_start + shift, file_bytes)
        seen.update((name, (data_start + shift, arr.nbytes)) for name, arr in out.items())
        return out

    def without_place(*args, **kwargs):
        kwargs["place"] = None
        return BUILD_CORPUS(*args, **kwargs)

    monkeypatch.setattr(_CacheWriter, "place", spy)
    monkeypatch.setattr(build_module, "build_corpus", BUILD_CORPUS if placed else without_place)
    index, report = open_index(folder, cache_dir=cache)
    assert not report.from_cache
    path = cache_path_for(folder, BM25Params(), cache)
    data = path.read_bytes() if path.exists() else None
    left = sorted(p.name for p in cache.iterdir())
    assert left == ([path.name, path.name + ".titles"] if data is not None else [])
    return index, data, seen


@pytest.mark.parametrize(("shift", "longer"), [(0, 0), (4096, 0), (8192, 0), (0, 6000)])
def test_arrays_made_in_the_cache_file_give_its_bytes_wherever_the_guess_put_them(
    folder, tmp_path, monkeypatch, fixed_times, shift, longer
):
    """The guess right, a page or two too far (the arrays move down), or a header longer than
    guessed (they move up)."""
    if longer:
        monkeypatch.setattr(index_module, "_header_bytes", longer_header(index_module._header_bytes, longer))
    memory_index, memory_bytes, seen = build(folder, tmp_path / "memory", monkeypatch, placed=False)
    assert seen == {}
    index, data, seen = build(folder, tmp_path / "placed", monkeypatch, shift=shift)
    assert set(seen) == set(CORE)
    data_start = -(-(int.from_bytes(data[16:24], "little") + 32) // 4096) * 4096
    (placed_at,) = {start for start, _ in seen.values()}
    # the guess is right (then off by the shift), or the header came out longer than guessed
    assert placed_at < data_start if longer else placed_at == data_start + shift
    assert len(data) > 100_000 and data == memory_bytes
    assert results(index) == results(memory_index)


def longer_header(real, extra: int):
    """``_header_bytes`` with ``extra`` more bytes of header (a longer corpus list) than the guess
    (made before the arrays are placed, with its stand-in avgdl) saw."""

    def header_bytes(meta, sections, data_bytes):
        if meta["avgdl"] != 123.45678901234567:  # not the guess
            meta = dict(meta, corpus=dict(meta["corpus"], ignored_files=["x" * extra]))
        return real(meta, sections, data_bytes)

    return header_bytes


@pytest.mark.parametrize(
    ("header_pad", "pages_off", "other_layout"),
    [(10, 0, False), (10, 1, False), (10, 2, False), (5000, -1, False), (9000, -2, False), (10, 0, True)],
)
def test_placed_arrays_are_moved_to_the_real_data_start(tmp_path, header_pad, pages_off, other_layout):
    """_save_arrays with arrays placed for a data start one or two pages off (either way), or laid
    out otherwise than placed, writes the very bytes it writes from arrays in memory."""
    rng = np.random.default_rng(5)
    arrays = {"a": rng.integers(0, 1 << 30, 5000, dtype=np.int64), "b": rng.integers(0, 255, 77, np.uint8),
              "c": rng.random(3001), "d": np.arange(10, dtype=np.int32)}  # fmt: skip
    meta = {"fingerprint": "f", "corpus": {"files": ["y" * header_pad]}}
    _save_arrays(arrays, [], tmp_path / "memory.pbindex", meta)
    memory = (tmp_path / "memory.pbindex").read_bytes()
    real = index_module._header_bytes(meta, index_module._layout(arrays)[0], 0)[1]
    assert real == 4096 * (1 + (header_pad > 4000) + (header_pad > 8000))
    sizes = {name: (arr.dtype, len(arr)) for name, arr in list(arrays.items())[:3]}
    if other_layout:
        sizes = dict(reversed(list(sizes.items())))
    path = tmp_path / "placed.pbindex"
    writer = _CacheWriter(path)
    given = dict(arrays)
    for name, arr in writer.place(sizes, real + 4096 * pages_off, real + 100_000).items():
        arr[:] = arrays[name]
        given[name] = arr
    _save_arrays(given, [], path, meta, writer)
    assert len(memory) > 40_000 and path.read_bytes() == memory
    moved = writer.placed()  # the placed arrays, where they are now, hold their values
    assert set(moved) == set(sizes)
    for name, arr in moved.items():
        assert np.array_equal(arr, arrays[name]), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.pbindex", "placed.pbindex"]


def test_no_room_on_the_disk_serves_the_same_index_from_memory(folder, tmp_path, monkeypatch, caplog):
    memory_index, _, _ = build(folder, tmp_path / "memory", monkeypatch, placed=False)

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(index_module.os, "posix_fallocate", full)
    caplog.set_level(logging.WARNING)
    index, data, seen = build(folder, tmp_path / "full", monkeypatch)
    assert data is None and seen == {}
    warnings = [r.getMessage() for r in caplog.records
                if r.name == "retrieval.index" and r.levelno >= logging.WARNING]  # fmt: skip
    assert len(warnings) == 1 and "could not save the index cache" in warnings[0]
    assert results(index) == results(memory_index)


def test_a_cache_that_cannot_be_named_serves_the_arrays_where_they_were_moved(
    folder, tmp_path, monkeypatch, caplog, fixed_times
):
    """The file is written (the placed arrays moved a page) but cannot take its name: the index
    served from memory reads the arrays where they are now."""
    memory_index, _, _ = build(folder, tmp_path / "memory", monkeypatch, placed=False)

    def refuse(src, dst):
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(index_module.os, "replace", refuse)
    caplog.set_level(logging.WARNING)
    index, data, seen = build(folder, tmp_path / "refused", monkeypatch, shift=4096)
    assert data is None and "post_docs" in seen
    warnings = [r.getMessage() for r in caplog.records
                if r.name == "retrieval.index" and r.levelno >= logging.WARNING]  # fmt: skip
    assert len(warnings) == 1 and "could not save the index cache" in warnings[0]
    assert results(index) == results(memory_index)
    for name, arr in memory_index.arrays().items():
        assert np.array_equal(index.arrays()[name], arr), name
