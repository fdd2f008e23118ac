"""The chunked index build (retrieval.build): the fast word finder reads exactly the tokenizer's
words, and the arrays are those of a plain one-pass build from paper_tokens, whatever the chunk size."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval.build as build_module
from retrieval.corpus import load_corpus
from retrieval.index import build_index, open_index, paper_tokens
from retrieval.models import Paper
from retrieval.tokenize import analyze_document, surface_bytes, surface_words

ROOT = Path(__file__).resolve().parents[2]
ICLR = ROOT.parent / "shared" / "corpora" / "iclr2024" / "abstracts.txt"
CHINESE = Path(__file__).parent / "fixtures" / "chinese_corpus.txt"


def decoded(buf):
    return [w.decode("utf-8", "surrogatepass") for w in buf.split(b" ") if w]


def words_of(text):
    """What surface_bytes gives, as str: the tokenizer's words, ASCII words lowercased."""
    return [w.lower() if w.isascii() else w for w in surface_words(text)]


def corpus_fields(papers):
    for p in papers:
        yield p.title
        yield p.abstract


def test_surface_bytes_read_the_words_of_the_bundled_corpus(seed_papers):
    for text in corpus_fields(seed_papers):
        assert decoded(surface_bytes(text)) == words_of(text)


@pytest.mark.skipif(not ICLR.exists(), reason=f"no {ICLR}")
def test_surface_bytes_read_the_words_of_the_iclr_abstracts():
    papers = load_corpus(ICLR).papers
    for text in corpus_fields(papers):
        assert decoded(surface_bytes(text)) == words_of(text)


PIECES = list("aZ09'-_ \\.,()$\n\t{}é’") + ["--", " - ", "'s", "ab", r"\emph"]
ASCII_NOISE = st.lists(st.sampled_from(PIECES)).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), ASCII_NOISE))
def test_surface_bytes_read_the_words_of_any_text(text):
    assert decoded(surface_bytes(text)) == words_of(text)


def reference_arrays(papers):
    """A plain build: per paper paper_tokens (its own title, none when derived, then abstract) and
    the phrase stream."""
    vocab: dict[str, int] = {}
    docs = [paper_tokens(p) for p in papers]
    for doc in docs:
        for t in doc:
            vocab.setdefault(t, len(vocab))
    postings: list[list[tuple[int, int]]] = [[] for _ in vocab]
    for d, doc in enumerate(docs):
        counts: dict[int, int] = {}
        for t in doc:
            counts[vocab[t]] = counts.get(vocab[t], 0) + 1
        for t, tf in counts.items():
            postings[t].append((d, tf))
    stream: list[int] = []
    doc_start = [0]
    for p in papers:
        for field in (p.indexed_title, p.abstract):
            stream += [vocab[t] for t in analyze_document(field)[1]]
            stream.append(-1)
        doc_start.append(len(stream))
    positions: list[list[int]] = [[] for _ in vocab]
    for i, t in enumerate(stream):
        if t >= 0:
            positions[t].append(i)
    return {
        "terms": list(vocab),
        "indptr": np.cumsum([0] + [len(p) for p in postings]),
        "post_docs": np.asarray([d for p in postings for d, _ in p], dtype=np.int64),
        "post_tf": np.asarray([tf for p in postings for _, tf in p], dtype=np.int64),
        "doc_len": np.asarray([len(d) for d in docs]),
        "doc_start": np.asarray(doc_start),
        "pos_indptr": np.cumsum([0] + [len(p) for p in positions]),
        "positions": np.asarray([i for p in positions for i in p], dtype=np.int64),
    }


def assert_same_build(index, papers):
    expected = reference_arrays(papers)
    assert index.terms == expected.pop("terms")
    arrays = index.arrays()
    for name, want in expected.items():
        assert np.array_equal(arrays[name], want), name


@pytest.mark.parametrize("chunk_docs", [1, 3, 7, 1000])
def test_any_chunk_size_gives_the_plain_build(seed_papers, chunk_docs):
    index = build_index(seed_papers, chunk_docs=chunk_docs, use_rank_bm25=False)
    assert_same_build(index, seed_papers)


def test_chunks_of_mixed_scripts_latex_and_empty_fields():
    papers = load_corpus(CHINESE).papers + (
        Paper(id="e1", title="", authors=("A",), et_al=False, area="", abstract="the of and"),
        Paper(id="e2", title="Flow-matching -- 'quoted' x", authors=("A",), et_al=False, area="",
              abstract=r"An $\epsilon$-optimal \textit{Single-Step} policy; Schölkopf’s NFD Nu\u0303nez."),
        Paper(id="e3", title="a", authors=("A",), et_al=False, area="", abstract="-"),
    )  # fmt: skip
    for chunk_docs in (1, 2, 5, 100):
        assert_same_build(build_index(papers, chunk_docs=chunk_docs, use_rank_bm25=False), papers)


def test_long_words_and_hash_collisions_give_the_plain_build(monkeypatch):
    """Words over 16 bytes are looked up one by one; a collision of the 16-byte words' hash falls
    back to comparing the words' bytes (forced here by a constant hash, on the numpy path)."""
    words = ["a" * n for n in range(1, 40)] + ["x" * 16, "x" * 17, "exactly-sixteen1", "répétition" * 3]
    papers = [
        Paper(id=f"l{i}", title=" ".join(words[i::3]), authors=("A",), et_al=False, area="",
              abstract=" ".join(reversed(words[i::2])) + " flow-matchingflowmatchingx-y")
        for i in range(5)
    ]  # fmt: skip
    for chunk_docs in (1, 2, 100):
        assert_same_build(build_index(papers, chunk_docs=chunk_docs, use_rank_bm25=False), papers)
    real_unique = np.unique

    def colliding(values, **kwargs):
        if values.dtype == np.uint64:
            values = np.zeros_like(values)
        return real_unique(values, **kwargs)

    monkeypatch.setattr(build_module.np, "unique", colliding)
    monkeypatch.setattr(build_module.postings, "_kernel", None)  # the numpy path (C: test_build_c.py)
    assert_same_build(build_index(papers, chunk_docs=100, use_rank_bm25=False), papers)


def test_idf_is_rank_bm25s_whatever_the_chunk_size(synth_papers):
    papers = synth_papers[:1500]
    model = build_index(papers, use_rank_bm25=True, chunk_docs=400)
    computed = build_index(papers, use_rank_bm25=False, chunk_docs=333)
    assert model.terms == computed.terms
    assert np.array_equal(model.idf, computed.idf) and model.avgdl == computed.avgdl


# -- a corpus read file by file (open_index), in this process and in worker processes ------------


def write_corpus_with_duplicates(folder: Path) -> Path:
    """The bundled corpus plus: a file repeating papers of another (cross-file duplicates), a
    Windows-1252 file with a duplicate inside it and an area spelled another way, a JSON Lines file
    with explicit ids (one repeated) and titles, and a file that is not read."""
    folder.mkdir()
    seed = sorted((ROOT / "data" / "corpus").glob("*.txt"))
    for f in seed:
        (folder / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    blocks = seed[0].read_text(encoding="utf-8").split("\n\n")
    (folder / "zz_repeats.txt").write_text("\n\n".join(blocks[1:7]) + "\n", encoding="utf-8")
    paper = "ML - Theory\n\nJosé Núñez, B. Smith\n\nWe study café models, prove risk bounds. It holds.\n"
    other = "ml theory\n\nA B\n\nAnother café paper with enough words to read as prose. It ends here.\n"
    (folder / "cp.txt").write_text(paper + "\n" + paper + "\n" + other, encoding="cp1252")
    (folder / "recs.jsonl").write_text(
        '{"id": "X-1", "title": "A $\\\\alpha$-Title", "abstract": "Flow-matching policies.", "area": "RL"}\n'
        '{"id": "X-1", "abstract": "Another abstract, same id."}\n'
        '{"abstract": "No id, no title: a derived one. It is fine."}\n',
        encoding="utf-8",
    )
    (folder / "notes.md").write_text("not a corpus file")
    return folder


def assert_open_index_equals_load_and_build(folder: Path, cache: Path, duplicates: int | None = 4) -> None:
    index, report = open_index(folder, cache_dir=cache)
    corpus = load_corpus(folder)
    reference = build_index(corpus.papers)
    assert index.terms == reference.terms
    got, want = index.arrays(), reference.arrays()
    assert got.keys() == want.keys()
    for name in want:
        assert got[name].dtype == want[name].dtype and np.array_equal(got[name], want[name]), name
    assert index.catalogue.area_names == reference.catalogue.area_names
    assert list(index.papers) == list(corpus.papers)
    assert report.duplicates == corpus.duplicates and duplicates in (None, corpus.duplicates)
    assert report.duplicate_details == corpus.duplicate_details
    assert report.skipped == corpus.skipped
    assert report.cp1252_files == corpus.cp1252_files and report.ignored_files == corpus.ignored_files


def test_open_index_builds_what_load_corpus_and_build_index_give(tmp_path, caplog):
    folder = write_corpus_with_duplicates(tmp_path / "corpus")
    with caplog.at_level(logging.INFO, logger="retrieval"):  # INFO: the report names the file
        assert_open_index_equals_load_and_build(folder, tmp_path / "cache")
    assert any("read as Windows-1252" in r.getMessage() for r in caplog.records)


def test_worker_processes_build_the_same_index(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(build_module, "PARALLEL_MIN_BYTES", 0)
    calls = []
    real = build_module.ProcessPoolExecutor

    def pool(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(build_module, "ProcessPoolExecutor", pool)
    folder = write_corpus_with_duplicates(tmp_path / "corpus")
    with caplog.at_level(logging.INFO, logger="retrieval"):
        assert_open_index_equals_load_and_build(folder, tmp_path / "cache")
    assert calls and calls[0]["max_workers"] >= 1  # the workers did run
    # an INFO line logged in a worker (which has no logging set up) is logged here too
    assert any("read as Windows-1252" in r.getMessage() for r in caplog.records)


def test_paper_text_is_spilled_to_a_temp_file_not_held(tmp_path, monkeypatch):
    folder = write_corpus_with_duplicates(tmp_path / "corpus")
    seen = {}
    real = build_module.build_corpus

    def spy(*args, **kwargs):
        seen["spill"] = kwargs.get("spill")
        built = real(*args, **kwargs)
        seen["in_memory"] = "paper_text" in built.catalogue
        return built

    monkeypatch.setattr(build_module, "build_corpus", spy)
    index, _ = open_index(folder, cache_dir=tmp_path / "cache")
    assert seen["spill"] is not None and not seen["in_memory"]
    assert not list((tmp_path / "cache").glob("*.tmp"))  # the spill file is gone
    assert index.get(index.papers[0].id) == index.papers[0]


PARENT = """
import multiprocessing, os, sys, time
from concurrent.futures import ProcessPoolExecutor
from retrieval.build import _worker_start
if __name__ == "__main__":
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_start, initargs=(os.getpid(),))
    print(pool.submit(os.getpid).result(), flush=True)
    pool.submit(time.sleep, 120)
    time.sleep(120)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_build_worker_dies_with_its_parent(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        worker = int(parent.stdout.readline())
        os.kill(worker, 0)  # alive
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                os.kill(worker, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            os.kill(worker, signal.SIGKILL)
            pytest.fail("the worker outlived its parent")
    finally:
        if parent.poll() is None:
            parent.kill()
