"""The served scores equal rank-bm25's ``get_scores`` and the top-10 is identical, for BM25Okapi,
BM25L and BM25Plus, on the bundled corpus and on 5,000 generated abstracts, with both ways of
building the statistics (from a real rank-bm25 model, and computed by us for big corpora)."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.index import BM25Params, build_index, paper_tokens
from retrieval.query import parse_query
from retrieval.tokenize import tokenize

VARIANTS = [
    BM25Params(),
    BM25Params(variant="l"),
    BM25Params(variant="plus"),
    BM25Params(k1=0.9, b=0.4, epsilon=0.5),
    BM25Params(variant="plus", k1=1.2, b=0.3, delta=0.7),
]

SEED_QUERIES = [
    "sparse autoencoders",
    "offline reinforcement learning",
    "diffusion models for image generation",
    "flow-matching policies",
    "language model language model",  # repeated terms count twice in rank-bm25
    "preference datasets disagreement",
    "mean estimation algorithm",
    "transformer residual connections",
    "zzzunknownword interpretability",
    "sample complexity lower bound",
]


def reference_top(model, query: str, k: int) -> tuple[np.ndarray, list[int]]:
    """rank-bm25's scores and its top-k under the engine's hit rule, by brute force: every paper
    holding a query token is a hit (whatever its score, even 0 or negative), ordered by score, then
    by how many query words it holds, then corpus order."""
    tokens = tokenize(query)
    scores = np.asarray(model.get_scores(tokens))
    words = [set(w.tokens) for w in parse_query(query).words]
    counts = np.array([sum(1 for w in words if w & doc.keys()) for doc in model.doc_freqs])
    docs = np.flatnonzero(counts > 0)
    order = np.lexsort((docs, -counts[docs], -scores[docs]))
    return scores, docs[order][:k].tolist()


def check(papers, queries, params, use_rank_bm25, model=None, reference=reference_top):
    """``model``: rank-bm25's model of ``papers`` (fitted here when not given); ``reference``: how
    the brute-force answer is computed (``reference_top``, or a memo of it for a shared model)."""
    index = build_index(papers, params, use_rank_bm25=use_rank_bm25)
    if model is None:
        model = params.rank_bm25_model([paper_tokens(p) for p in papers])
    # The statistics themselves.
    assert index.avgdl == model.avgdl
    assert index.doc_len.tolist() == model.doc_len
    assert [index.idf[index.vocab[t]] for t in model.idf] == list(model.idf.values())
    compared = 0
    for query in queries:
        tokens = tokenize(query)
        ref_scores, ref_top = reference(model, query, 10)
        ours, _ = index.score_terms(tokens)
        rel = np.abs(ours - ref_scores) / np.maximum(np.abs(ref_scores), 1e-12)
        assert float(rel.max()) <= 1e-6, query
        results = index.search(query, 10)
        got = [index.position(h.paper.id) for h in results.hits]
        assert got == ref_top, query
        for hit in results.hits:
            assert hit.score == pytest.approx(ref_scores[index.position(hit.paper.id)], rel=1e-6)
        compared += bool(ref_top)
    assert compared >= len(queries) // 2  # the comparison was not vacuous


@pytest.mark.parametrize("params", VARIANTS, ids=lambda p: p.key())
def test_seed_corpus_equals_rank_bm25(seed_papers, params):
    assert len(seed_papers) >= 20
    check(seed_papers, SEED_QUERIES, params, use_rank_bm25=True)


@pytest.fixture(scope="module")
def synth_reference():
    """reference_top over the session's rank-bm25 models of the synthetic corpus, each (model, query)
    computed once: both ways of building the statistics are compared against the same answer."""
    memo = {}

    def reference(model, query: str, k: int):
        key = (id(model), query, k)  # the models live for the whole session: ids are not reused
        if key not in memo:
            memo[key] = reference_top(model, query, k)
        return memo[key]

    return reference


@pytest.mark.parametrize("params", VARIANTS[:3], ids=lambda p: p.key())
@pytest.mark.parametrize("use_rank_bm25", [True, False], ids=["rank-bm25-stats", "own-stats"])
def test_generated_corpus_equals_rank_bm25(
    synth_papers, synth_generator, synth_rank_bm25, synth_reference, params, use_rank_bm25
):
    assert len(synth_papers) >= 5000
    queries = synth_generator.queries(40) + ["learning model learning", "models data"]
    check(synth_papers, queries, params, use_rank_bm25, synth_rank_bm25(params), synth_reference)


def test_both_statistics_paths_build_identical_arrays(synth_papers):
    for params in VARIANTS[:3]:
        a = build_index(synth_papers[:2000], params, use_rank_bm25=True).arrays()
        b = build_index(synth_papers[:2000], params, use_rank_bm25=False).arrays()
        assert a.keys() == b.keys()
        for name in a:
            assert np.array_equal(a[name], b[name]), name


def test_plus_does_not_return_papers_without_a_query_term(seed_papers):
    index = build_index(seed_papers, BM25Params(variant="plus"))
    results = index.search("autoencoders", 100)
    assert results.total == len(index.term_docs("autoencod")) > 0
    assert all("autoencoders" in h.matched_terms for h in results.hits)
