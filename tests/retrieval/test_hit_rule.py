"""The hit rule: every paper that contains a query word is a hit, even when BM25Okapi scores it 0
(idf is exactly 0 for a word in exactly half the papers) or below 0 (its epsilon floor goes negative
in tiny corpora); no other paper is. Scores stay rank-bm25's; ties are broken by how many query words
a paper holds, then corpus order. Checked against rank-bm25 by brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.index import BM25Params, build_index, paper_tokens
from retrieval.models import Paper
from retrieval.query import parse_query
from retrieval.tokenize import tokenize

VARIANTS = [BM25Params(), BM25Params(variant="l"), BM25Params(variant="plus")]


def papers_of(*abstracts: str) -> tuple[Paper, ...]:
    return tuple(
        Paper(id=f"p{i}", title="", authors=("A. Author",), et_al=False, area="Test", abstract=text)
        for i, text in enumerate(abstracts)
    )


def expected(papers, params, query: str) -> tuple[list[int], np.ndarray]:
    """Brute force: hit positions in order and rank-bm25's scores."""
    docs = [paper_tokens(p) for p in papers]
    model = params.rank_bm25_model(docs)
    scores = np.asarray(model.get_scores(tokenize(query)))
    words = [set(w.tokens) for w in parse_query(query).words]
    counts = [sum(1 for w in words if w & set(doc)) for doc in docs]
    hits = [i for i in range(len(docs)) if counts[i] > 0]
    hits.sort(key=lambda i: (-scores[i], -counts[i], i))
    return hits, scores


def check(papers, params, query: str, k: int = 100) -> list[int]:
    index = build_index(papers, params)
    want, scores = expected(papers, params, query)
    results = index.search(query, k)
    got = [index.position(h.paper.id) for h in results.hits]
    assert got == want[:k], query
    assert results.total == len(want)
    for hit in results.hits:
        assert hit.score == pytest.approx(scores[index.position(hit.paper.id)], rel=1e-9, abs=1e-12)
        assert hit.matched_terms
    return got


def test_word_in_half_the_bundled_corpus_is_found(seed_index, seed_papers):
    # "train" is in 20 of the 40 bundled papers: BM25Okapi's idf for it is exactly 0.
    holding = [i for i, p in enumerate(seed_papers) if "train" in paper_tokens(p)]
    assert len(holding) * 2 == len(seed_papers)
    assert seed_index.idf[seed_index.vocab["train"]] == 0.0
    results = seed_index.search("train", 100)
    assert results.total == len(holding)
    assert [seed_index.position(h.paper.id) for h in results.hits] == holding  # all score 0: corpus order
    assert all(h.score == 0.0 and h.matched_terms == ("train",) for h in results.hits)


def test_zero_idf_word_still_ranks_below_real_matches(seed_index):
    hits = seed_index.search("train autoencoders", 100).hits
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert {h.paper.id for h in hits if h.score == 0} and hits[0].score > 0
    check(seed_index.papers, BM25Params(), "train autoencoders")


@pytest.mark.parametrize("params", VARIANTS, ids=lambda p: p.variant)
def test_one_paper_corpus_answers_its_own_words(params):
    papers = papers_of("Sparse autoencoders find interpretable features in language models.")
    index = build_index(papers, params)
    for query in ["sparse", "interpretable features", "language models autoencoders"]:
        results = index.search(query, 5)
        assert [h.paper.id for h in results.hits] == ["p0"], query
    assert index.search("diffusion", 5).total == 0
    if params.variant == "okapi":
        assert index.search("sparse", 5).hits[0].score < 0  # rank-bm25's negative floor, kept
    check(papers, params, "sparse features")


@pytest.mark.parametrize("params", VARIANTS, ids=lambda p: p.variant)
def test_two_paper_corpus_answers_its_own_words(params):
    papers = papers_of(
        "Diffusion policies for offline reinforcement learning.",
        "Sparse autoencoders for language model interpretability.",
    )
    index = build_index(papers, params)
    assert [h.paper.id for h in index.search("diffusion", 5).hits] == ["p0"]
    assert [h.paper.id for h in index.search("autoencoders", 5).hits] == ["p1"]
    assert {h.paper.id for h in index.search("offline interpretability", 5).hits} == {"p0", "p1"}
    for query in ["diffusion", "sparse language", "learning model", "offline interpretability"]:
        check(papers, params, query)


def test_negative_scores_are_hits_and_papers_without_the_word_are_not():
    # Three papers, every word in two or three of them: every Okapi idf is negative, so is their
    # average and the epsilon floor. The two holders of "gradient" score below 0 and are hits; the
    # third paper scores 0 (more than they do) and is not.
    papers = papers_of("policy gradient", "policy gradient search", "policy search")
    index = build_index(papers, BM25Params())
    results = index.search("gradient", 5)
    assert {h.paper.id for h in results.hits} == {"p0", "p1"}
    assert all(h.score < 0 for h in results.hits)
    for query in ["gradient", "policy", "gradient search", "search unknownword"]:
        check(papers, BM25Params(), query)


def test_ties_broken_by_words_matched_then_corpus_order():
    # Four papers; "alpha" and "beta" each in exactly two, so both score 0 under Okapi.
    papers = papers_of("alpha one", "alpha beta two", "beta three", "gamma four")
    index = build_index(papers, BM25Params())
    hits = index.search("alpha beta", 5).hits
    assert [h.score for h in hits] == [0.0, 0.0, 0.0]
    assert [h.paper.id for h in hits] == ["p1", "p0", "p2"]
    assert hits[0].matched_terms == ("alpha", "beta")


def test_filters_still_apply_to_zero_score_hits(seed_index):
    everything = seed_index.search("train", 100)
    some_area = everything.hits[0].paper.top_area
    filtered = seed_index.search("train", 100, area=some_area)
    assert 0 < filtered.total < everything.total
    assert all(h.paper.top_area == some_area for h in filtered.hits)
    assert seed_index.search("train -train", 100).total == 0


def test_paging_over_tied_hits_is_stable(seed_index):
    whole = [h.paper.id for h in seed_index.search("train", 20).hits]
    pages = [h.paper.id for off in range(0, 20, 5) for h in seed_index.search("train", 5, offset=off).hits]
    assert pages == whole


_VOCAB = ["alpha", "beta", "gamma", "delta", "policy", "model", "sparse", "graph"]


@settings(max_examples=150, deadline=None)
@given(
    docs=st.lists(st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=6), min_size=1, max_size=7),
    query=st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=3),
    variant=st.sampled_from(VARIANTS),
    k=st.integers(1, 8),
)
def test_tiny_corpora_match_brute_force(docs, query, variant, k):
    check(papers_of(*(" ".join(d) for d in docs)), variant, " ".join(query), k)
