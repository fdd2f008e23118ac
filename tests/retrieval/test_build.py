"""The chunked index build (retrieval.build): the fast word finder reads exactly the tokenizer's
words, and the arrays are those of a plain one-pass build from paper_tokens, whatever the chunk size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.corpus import load_corpus
from retrieval.index import build_index, paper_tokens
from retrieval.models import Paper
from retrieval.tokenize import analyze_document, surface_keys, surface_words

ROOT = Path(__file__).resolve().parents[2]
ICLR = ROOT.parent / "shared" / "corpora" / "iclr2024" / "abstracts.txt"
CHINESE = Path(__file__).parent / "fixtures" / "chinese_corpus.txt"


def decoded(keys):
    return [k.decode("ascii") if isinstance(k, bytes) else k for k in keys]


def corpus_fields(papers):
    for p in papers:
        yield p.title
        yield p.abstract


def test_surface_keys_read_the_words_of_the_bundled_corpus(seed_papers):
    for text in corpus_fields(seed_papers):
        assert decoded(surface_keys(text)) == surface_words(text)


@pytest.mark.skipif(not ICLR.exists(), reason="the ICLR corpus is not on this machine")
def test_surface_keys_read_the_words_of_the_iclr_abstracts():
    papers = load_corpus(ICLR).papers
    fast = 0
    for text in corpus_fields(papers):
        keys = surface_keys(text)
        assert decoded(keys) == surface_words(text)
        fast += bool(keys) and isinstance(keys[0], bytes)
    assert fast > len(papers)  # the fast path is the common one, not the fallback


PIECES = list("aZ09'-_ \\.,()$\n\t{}é’") + ["--", " - ", "'s", "ab", r"\emph"]
ASCII_NOISE = st.lists(st.sampled_from(PIECES)).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), ASCII_NOISE))
def test_surface_keys_read_the_words_of_any_text(text):
    assert decoded(surface_keys(text)) == surface_words(text)


def reference_arrays(papers):
    """A plain build: per paper paper_tokens (title then abstract) and the phrase stream."""
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
        for field in (p.title, p.abstract):
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


def test_idf_is_rank_bm25s_whatever_the_chunk_size(synth_papers):
    papers = synth_papers[:1500]
    model = build_index(papers, use_rank_bm25=True, chunk_docs=400)
    computed = build_index(papers, use_rank_bm25=False, chunk_docs=333)
    assert model.terms == computed.terms
    assert np.array_equal(model.idf, computed.idf) and model.avgdl == computed.avgdl
