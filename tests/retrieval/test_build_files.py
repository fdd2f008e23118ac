"""The build's worker processes write their chunks' postings and positions, and their papers' text,
to files of their own beside the cache (:class:`retrieval.build.StoredChunk`) instead of sending
them through a pipe: the
cache file they give holds the same bytes as one built with the chunks sent whole, or built in one
process, and nothing of theirs is left beside the cache."""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np
import pytest

import retrieval.build as build_module
from retrieval.catalogue import CatalogueBuilder
from retrieval.corpus import HEADER
from retrieval.index import _read_header, cache_path_for, open_index
from retrieval.postings import BM25Params
from tests.retrieval.test_build import write_corpus_with_duplicates

ROOT = Path(__file__).resolve().parents[2]
SEEDS = sorted((ROOT / "data" / "corpus").glob("*.txt"))
BUILD_CORPUS = build_module.build_corpus


def corpus_with_a_big_file(tmp_path: Path) -> Path:
    folder = write_corpus_with_duplicates(tmp_path / "corpus")
    text = "\n\n".join(f.read_text(encoding="utf-8").strip() for f in SEEDS)
    (folder / "big.txt").write_text(text + "\n", encoding="utf-8")  # split, and duplicates of the others
    return folder


def cache_contents(folder: Path, cache: Path) -> tuple[dict, bytes]:
    """The cache file's header (without the build's times) and its data bytes, whole."""
    path = cache_path_for(folder, BM25Params(), cache)
    header, data_start, _ = _read_header(path)
    for key in ("built_at", "build_seconds"):
        header.pop(key)
    left = sorted(p.name for p in cache.iterdir())
    assert left == [path.name, path.name + ".titles"], "nothing else is left beside the cache and its titles"
    return header, path.read_bytes()[data_start:]


def build(folder: Path, cache: Path, monkeypatch, *, chunk_docs: int, stored: bool = True) -> tuple:
    """open_index with small chunks (several per file); ``stored=False``: the workers send their
    chunks whole, as before."""

    def with_chunks(*args, **kwargs):
        if not stored:
            kwargs["worker_files"] = None
        return BUILD_CORPUS(*args, **kwargs, chunk_docs=chunk_docs)

    monkeypatch.setattr(build_module, "build_corpus", with_chunks)
    open_index(folder, cache_dir=cache)
    return cache_contents(folder, cache)


@pytest.fixture
def kinds(monkeypatch):
    """The kinds of chunk merged."""
    seen: list[str] = []
    add = build_module.Merger.add

    def spy(self, chunk):
        seen.append(type(chunk).__name__)
        return add(self, chunk)

    monkeypatch.setattr(build_module.Merger, "add", spy)
    add_part = CatalogueBuilder.add

    def spy_part(self, part, text_at=None):
        seen.append("text in a file" if text_at is not None else "text sent")
        return add_part(self, part, text_at)

    monkeypatch.setattr(CatalogueBuilder, "add", spy_part)
    return seen


def test_stored_chunks_give_the_same_cache_bytes(tmp_path, monkeypatch, kinds):
    folder = corpus_with_a_big_file(tmp_path)
    monkeypatch.setattr(build_module, "SPLIT_MIN_BYTES", 3000)
    got = {}
    for chunk_docs in (3, 1000):
        monkeypatch.setattr(build_module, "PARALLEL_MIN_BYTES", 1 << 40)  # in this process
        kinds.clear()
        got["one process", chunk_docs] = build(folder, tmp_path / f"one{chunk_docs}", monkeypatch,
                                               chunk_docs=chunk_docs)  # fmt: skip
        assert set(kinds) == {"TokenChunk", "text sent"}
        monkeypatch.setattr(build_module, "PARALLEL_MIN_BYTES", 0)  # worker processes
        kinds.clear()
        got["stored", chunk_docs] = build(folder, tmp_path / f"stored{chunk_docs}", monkeypatch,
                                          chunk_docs=chunk_docs)  # fmt: skip
        assert set(kinds) == {"StoredChunk", "text in a file"}
        assert kinds.count("StoredChunk") >= (12 if chunk_docs == 3 else 5)
        kinds.clear()
        got["sent", chunk_docs] = build(folder, tmp_path / f"sent{chunk_docs}", monkeypatch,
                                        chunk_docs=chunk_docs, stored=False)  # fmt: skip
        assert set(kinds) == {"TokenChunk", "text sent"}
    header, data = got["one process", 1000]
    assert header["corpus"]["duplicates"] > 0 and len(data) > 100_000
    for key, (h, d) in got.items():
        assert h == header and d == data, key


def merged_arrays(outputs, stored: bool) -> tuple:
    merger = build_module.Merger()
    if stored:
        for out in outputs[::-1]:  # the later range first: it waits for the earlier one
            merger.add_worker_terms(out.new_terms)
    for out in outputs:
        for chunk in out.chunks:
            assert isinstance(chunk, build_module.StoredChunk if stored else build_module.TokenChunk)
            merger.add(chunk)
    merged = merger.finish()
    names = ("df", "indptr", "post_docs", "post_tf", "doc_len", "doc_start", "pos_indptr", "positions")
    return merged.terms, [getattr(merged, name) for name in names]


def test_stored_chunks_merge_as_the_chunks_themselves_in_any_order(tmp_path, monkeypatch):
    """A worker numbers terms in the order it meets them; the merger gives them ids in corpus
    order, whatever order the worker did its tasks in (a re-run is done after later tasks)."""
    monkeypatch.setattr(build_module, "_STORE_FILES", {})
    monkeypatch.setattr(build_module, "_WORKER_TERMS", {})
    monkeypatch.setattr(build_module, "_WORKER_NEW", [])
    missing = (str(tmp_path / "no such folder"), "x.")
    out = build_module.process_file(SEEDS[0], "f.txt", (HEADER,), chunk_docs=2, store=missing)
    assert len(out.chunks) > 1 and all(isinstance(c, build_module.TokenChunk) for c in out.chunks)
    assert out.new_terms is None
    monkeypatch.setattr(build_module, "_STORE_FILES", {})
    folder = tmp_path / "files"
    folder.mkdir()
    store = (str(folder), "y.")
    first, second = (build_module.process_file(f, "f.txt", (HEADER,), chunk_docs=2, store=store)
                     for f in SEEDS[:2])  # fmt: skip
    assert first.new_terms[1] == 0 and second.new_terms[1] == len(first.new_terms[2]) > 0
    plain = [build_module.process_file(f, "f.txt", (HEADER,), chunk_docs=2,
                                       tokenizer=build_module.ChunkTokenizer())
             for f in SEEDS[:2]]  # fmt: skip
    for order in ((0, 1), (1, 0)):  # the second file's chunks merged first: its known terms first
        got = merged_arrays([(first, second)[k] for k in order], stored=True)
        want = merged_arrays([plain[k] for k in order], stored=False)
        assert got[0] == want[0]
        for a, b in zip(got[1], want[1], strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b)
    assert len(list(folder.iterdir())) == 1 and next(folder.iterdir()).name.startswith("y.")


@pytest.mark.parametrize("kernel", ["copies", "copies a little, then refuses", "absent"])
def test_the_papers_text_is_copied_from_its_parts_of_files(tmp_path, monkeypatch, kernel):
    import errno
    import os

    from retrieval import index as index_module

    a, b = tmp_path / "a.tmp", tmp_path / "b.tmp"
    a.write_bytes(b"0123456789" * 5)
    b.write_bytes(bytes(range(256)) * 300)
    segments = [(a, 3, 20), (b, 0, 70_000), (a, 40, 10), (b, 76_000, 0), (b, 70_000, 6800)]
    want = b"HEAD" + b"".join(p.read_bytes()[s : s + n] for p, s, n in segments) + b"TAIL"
    real = os.copy_file_range
    if kernel == "copies a little, then refuses":
        calls = []

        def refuse(src, dst, count, offset_src=None, offset_dst=None):
            calls.append(count)
            if len(calls) > 1:
                raise OSError(errno.EXDEV, "cross-device")
            return real(src, dst, min(count, 5), offset_src, offset_dst)

        monkeypatch.setattr(os, "copy_file_range", refuse)
    elif kernel == "absent":
        monkeypatch.delattr(os, "copy_file_range")
    spilled = index_module._Spilled(segments)
    assert spilled.nbytes == len(want) - 8 and spilled.read().tobytes() == want[4:-4]
    out = tmp_path / "out"
    out.write_bytes(b"HEAD" + bytes(len(want) - 8) + b"TAIL")  # (the cache file's room, mapped)
    with out.open("r+b") as fh, mmap.mmap(fh.fileno(), 0) as mm:
        index_module._copy_segments(spilled, fh.fileno(), 4, mm)
    assert out.read_bytes() == want
    short = index_module._Spilled([(a, 45, 10)])
    (tmp_path / "out2").write_bytes(bytes(20))
    with (tmp_path / "out2").open("r+b") as fh, mmap.mmap(fh.fileno(), 0) as mm:
        with pytest.raises(OSError, match="fewer bytes"):
            index_module._copy_segments(short, fh.fileno(), 0, mm)
