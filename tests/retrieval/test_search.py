"""Search behaviour on the bundled corpus: golden rankings, filters, paging, snippets, similar."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from retrieval.errors import EmptyQueryError, UnknownPaperError
from retrieval.markup import strip_markup
from retrieval.models import Paper
from retrieval.search import SNIPPET_LIMIT, snippet_spans
from retrieval.sentences import split_sentences
from retrieval.tokenize import phrase_tokens, tokenize


def contains_phrase(paper: Paper, phrase: str) -> bool:
    """Brute force: the phrase tokens appear consecutively in the title or the abstract."""
    needle = phrase_tokens(phrase)
    for text in (paper.title, paper.abstract):
        hay = phrase_tokens(text)
        if any(hay[i : i + len(needle)] == needle for i in range(len(hay) - len(needle) + 1)):
            return True
    return False


def has_token(paper: Paper, token: str) -> bool:
    return token in tokenize(paper.title) or token in tokenize(paper.abstract)


# -- golden rankings ------------------------------------------------------------------------------


# Golden rankings on the bundled corpus (ids are content-derived by retrieval.corpus). A derived
# title is not indexed, so the order follows the abstracts alone: papers in one group hold each
# query word equally often and are ordered by length (see test_equal_counts_rank_the_shorter_first).
GOLDEN = {
    "sparse autoencoders": [{"zfhrkp5j"}, {"s25ze1jy", "w4sz6mwt", "qbkdm1zb"}],
    "offline reinforcement learning": [{"y13x62p7", "qzrqehyr"}, {"7m1x7f9p"}, {"tq1rsx2h"}],
}


@pytest.mark.parametrize("query", list(GOLDEN))
def test_golden_top_ids(seed_index, query):
    k = sum(len(group) for group in GOLDEN[query])
    results = seed_index.search(query, k)
    ids = [h.paper.id for h in results.hits]
    pos = 0
    for group in GOLDEN[query]:
        assert set(ids[pos : pos + len(group)]) == group, (query, ids)
        pos += len(group)
    assert [h.rank for h in results.hits] == list(range(1, k + 1))
    scores = [h.score for h in results.hits]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0


def test_golden_sparse_autoencoders_details(seed_index):
    results = seed_index.search("sparse autoencoders", 10)
    assert results.total == 4
    assert results.hits[0].matched_terms == ("sparse", "autoencoders")
    assert sum(h.paper.abstract.startswith("Sparse autoencoders (SAEs)") for h in results.hits) == 3
    assert results.hits[0].paper.abstract.startswith("Sparse autoencoders (SAEs)")


def test_equal_counts_rank_the_shorter_first(seed_index):
    """BM25 over the abstracts (a derived title is not indexed): hits holding each query word as
    often as each other are ordered by their number of tokens, the shorter first."""
    from retrieval.index import paper_tokens

    hits = seed_index.search("sparse autoencoders", 10).hits[1:]
    counts = [tuple(paper_tokens(h.paper).count(t) for t in ("spars", "autoencod")) for h in hits]
    assert len(set(counts)) == 1 and len(hits) == 3
    lengths = [len(paper_tokens(h.paper)) for h in hits]
    assert lengths == sorted(lengths) and len(set(lengths)) == 3


def test_golden_offline_reinforcement_learning_details(seed_index):
    top2 = seed_index.search("offline reinforcement learning", 10).hits[:2]
    assert {h.paper.area for h in top2} == {"Reinforcement Learning · Batch/Offline"}
    opening = "Generative models such as diffusion and flow-matching"
    assert any(h.paper.abstract.startswith(opening) for h in top2)


def test_stemming_and_case_in_queries(seed_index):
    a = seed_index.search("Sparse AUTOENCODER", 5)
    b = seed_index.search("sparse autoencoders", 5)
    assert [h.paper.id for h in a.hits] == [h.paper.id for h in b.hits]
    assert a.hits[0].matched_terms == ("sparse", "autoencoder")


def test_no_hits_is_an_empty_page_not_an_error(seed_index):
    results = seed_index.search("zzzyzzx qqqwv", 5)
    assert results.total == 0 and results.hits == ()


def test_empty_query_raises(seed_index):
    with pytest.raises(EmptyQueryError):
        seed_index.search("the of and", 5)


@pytest.mark.parametrize(("k", "offset"), [(0, 0), (101, 0), (5, -1), (True, 0), (5, 1.5)])
def test_k_and_offset_are_validated(seed_index, k, offset):
    with pytest.raises(ValueError):
        seed_index.search("models", k, offset=offset)


# -- filters --------------------------------------------------------------------------------------


def test_phrase_filter_matches_brute_force(seed_index):
    for phrase in ["sparse autoencoders", "language models", "flow matching", "reinforcement learning"]:
        results = seed_index.search(f'"{phrase}"', 100)
        expected = {p.id for p in seed_index.papers if contains_phrase(p, phrase)}
        assert {h.paper.id for h in results.hits} == expected, phrase
        assert results.total == len(expected) > 0


def test_phrase_order_matters(seed_index):
    forward = seed_index.search('"sparse autoencoders"', 100).total
    backward = seed_index.search('"autoencoders sparse"', 100).total
    assert forward > 0 and backward < forward


def test_hyphenated_phrase_matches_both_spellings(seed_index):
    hits = seed_index.search('"flow matching"', 10).hits
    assert any("flow-matching" in h.paper.abstract for h in hits)


def test_exclusion(seed_index):
    results = seed_index.search("reinforcement learning -offline", 100)
    assert results.total > 0
    assert not any(has_token(h.paper, "offlin") for h in results.hits)
    everything = seed_index.search("reinforcement learning", 100)
    expected = [h.paper.id for h in everything.hits if not has_token(h.paper, "offlin")]
    assert [h.paper.id for h in results.hits] == expected


def test_excluded_phrase(seed_index):
    results = seed_index.search('models -"language models"', 100)
    assert results.total > 0
    assert not any(contains_phrase(h.paper, "language models") for h in results.hits)


def test_area_filter_inline_and_keyword(seed_index):
    inline = seed_index.search("learning area:theory", 100)
    keyword = seed_index.search("learning", 100, area="Theory")
    assert [h.paper.id for h in inline.hits] == [h.paper.id for h in keyword.hits]
    assert inline.total > 0 and all("Theory" in h.paper.area for h in inline.hits)


def test_area_matches_sub_area_partially_and_ignores_punctuation(seed_index):
    results = seed_index.search('policy area:"batch offline"', 100)
    assert results.total > 0
    assert {h.paper.area for h in results.hits} == {"Reinforcement Learning · Batch/Offline"}
    llm = seed_index.search('models area:"LARGE language"', 100)
    assert {h.paper.area for h in llm.hits} == {"Deep Learning · Large Language Models"}


def test_area_filters_combine(seed_index):
    both = seed_index.search("learning area:theory", 100, area="game")
    assert both.total > 0 and {h.paper.area for h in both.hits} == {"Theory · Game Theory"}


def test_filters_apply_before_the_top_k_cut(seed_index):
    # The Game Theory papers are far down the global ranking for "learning"; filtering first
    # still returns them at ranks 1.. and counts them all.
    global_ranking = [h.paper.area for h in seed_index.search("learning", 100).hits]
    first_game = global_ranking.index("Theory · Game Theory")
    assert first_game >= 1
    filtered = seed_index.search("learning", 1, area="game theory")
    assert filtered.hits[0].rank == 1 and filtered.hits[0].paper.area == "Theory · Game Theory"
    assert filtered.total == global_ranking.count("Theory · Game Theory")


def test_author_filter_partial_case_and_accent_insensitive(seed_index):
    nanda = seed_index.search("sparse author:nanda", 10)
    assert nanda.total >= 1 and all(any("Nanda" in a for a in h.paper.authors) for h in nanda.hits)
    for spelling in ["scholkopf", "SCHÖLKOPF", "Bernhard Schölkopf", "schölk"]:
        hits = seed_index.search("learning", 10, author=spelling).hits
        assert hits and all("Bernhard Schölkopf" in h.paper.authors for h in hits), spelling
    assert seed_index.search("learning", 10, author="nobody-by-that-name").total == 0


def test_negated_filters(seed_index):
    results = seed_index.search("learning -area:theory -author:nanda", 100)
    assert results.total > 0
    assert not any(h.paper.top_area == "Theory" for h in results.hits)
    assert not any("Neel Nanda" in h.paper.authors for h in results.hits)


# -- paging ---------------------------------------------------------------------------------------


def test_pages_concatenate_to_the_full_ranking(seed_index):
    full = seed_index.search("learning models", 100)
    assert full.total == len(full.hits) > 10
    pages = []
    for offset in range(0, full.total + 3, 3):
        page = seed_index.search("learning models", 3, offset=offset)
        assert page.total == full.total and page.offset == offset
        pages.extend(page.hits)
    assert [h.paper.id for h in pages] == [h.paper.id for h in full.hits]
    assert [h.rank for h in pages] == list(range(1, full.total + 1))
    assert seed_index.search("learning models", 5, offset=full.total).hits == ()


# -- snippets (spans; the markdown is bot.render's, tested in tests/bot/test_render.py) ------------


@pytest.mark.parametrize(
    "query", ["sparse autoencoders", "offline reinforcement learning", "models", "flow-matching", "bounds"]
)
def test_snippet_spans_are_sentences_holding_query_words(seed_index, query):
    stems = set(tokenize(query))
    for hit in seed_index.search(query, 20).hits:
        spans = hit.snippet
        assert spans is not None and 1 <= len(spans.sentences) <= 2
        sentences = [x.strip() for x in split_sentences(strip_markup(hit.paper.abstract))]
        assert spans.text == " ".join(x for x in sentences if x)
        assert sum(b - a for a, b in spans.sentences) <= SNIPPET_LIMIT or len(spans.sentences) == 1
        assert spans.matches, hit.paper.id
        assert "**" not in spans.plain or "**" in spans.text  # no markdown is added
        for a, b in spans.matches:
            assert any(s <= a < b <= e for s, e in spans.sentences)
            assert set(tokenize(spans.text[a:b])) & stems, spans.text[a:b]
        # every query word in a chosen sentence is matched
        for s, e in spans.sentences:
            for m in re.finditer(r"\w[\w-]*", spans.text[s:e]):
                if set(tokenize(m.group(0))) & stems:
                    assert any(a <= s + m.start() < b for a, b in spans.matches), m.group(0)


def test_snippet_spans_match_by_stem(seed_index):
    spans = seed_index.search("model", 1).hits[0].snippet
    assert any(re.fullmatch(r"[Mm]odels?", spans.text[a:b]) for a, b in spans.matches)


def test_snippet_spans_of_a_paper_without_abstract_fall_back_to_the_title():
    spans = snippet_spans(Paper("x", "A title about models", (), False, "", ""), {"model"})
    assert spans.text == "A title about models" and spans.sentences == ((0, 20),)


# -- similar --------------------------------------------------------------------------------------


def test_similar_excludes_itself_and_finds_related_papers(seed_index):
    sae = seed_index.search("sparse autoencoders", 1).hits[0].paper
    hits = seed_index.similar(sae.id, 5)
    assert len(hits) == 5 and sae.id not in {h.paper.id for h in hits}
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    assert hits[0].paper.abstract.startswith("Sparse autoencoders")
    assert all(h.score > 0 and h.snippet is not None and h.snippet.matches for h in hits)


def test_similar_unknown_id(seed_index):
    with pytest.raises(UnknownPaperError):
        seed_index.similar("no-such-paper")


# -- concurrency ----------------------------------------------------------------------------------


def test_concurrent_reads_agree(seed_index):
    queries = ["sparse autoencoders", "learning area:theory", '"language models"', "diffusion -image"] * 25
    expected = {q: [h.paper.id for h in seed_index.search(q, 10).hits] for q in set(queries)}
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda q: (q, [h.paper.id for h in seed_index.search(q, 10).hits]), queries))
    assert all(ids == expected[q] for q, ids in results)


# -- evaluation metric used by bench/scifact.py ----------------------------------------------------


def test_ndcg_and_recall_on_a_hand_computed_case():
    from bench.scifact import ndcg_at_k, recall_at_k

    ranked = ["d3", "d1", "d7", "d2"]
    relevant = {"d1", "d2"}
    # DCG = 1/log2(3) + 1/log2(5) = 0.630930 + 0.430677; ideal = 1/log2(2) + 1/log2(3) = 1.630930
    assert ndcg_at_k(ranked, relevant, 10) == pytest.approx(1.061606 / 1.630930, abs=1e-6)
    assert ndcg_at_k(ranked, relevant, 2) == pytest.approx(0.630930 / 1.630930, abs=1e-6)
    assert ndcg_at_k(["d1", "d2"], relevant) == 1.0 and ndcg_at_k(["x"], relevant) == 0.0
    # Only one relevant document: the ideal DCG is 1, whatever k.
    assert ndcg_at_k(["a", "b", "r"], {"r"}, 10) == pytest.approx(0.5)
    assert recall_at_k(ranked, relevant, 2) == 0.5 and recall_at_k(ranked, relevant, 100) == 1.0


@pytest.mark.parametrize("variant", ["okapi", "plus"])
def test_the_ranking_scratch_is_clean_between_queries(seed_papers, variant):
    """The kernel accumulates in per-thread scratch arrays: every query must see them zeroed, whatever
    ran before it (other words, filters, terms no word holds, an exception)."""
    from retrieval.index import BM25Params, build_index
    from retrieval.search import rank

    queries = ["sparse autoencoders", "offline reinforcement learning", "language model language model",
               "flow-matching policies", "bounds"]  # fmt: skip
    fresh = {}
    for q in queries:
        index = build_index(seed_papers, BM25Params(variant=variant))
        fresh[q] = rank(index, tokenize(q), 10)
    shared = build_index(seed_papers, BM25Params(variant=variant))
    mask = np.zeros(len(shared), dtype=np.bool_)
    mask[::2] = True
    for q in queries * 2:
        rank(shared, tokenize(q), 3, mask)
        with pytest.raises(IndexError):
            rank(shared, tokenize(q), 10, np.zeros(1, dtype=np.bool_))
        rank(shared, tokenize(q) + ["model"], 10, None, [["sparse"]])  # "model" is held by no word
        docs, scores, total = rank(shared, tokenize(q), 10)
        want_docs, want_scores, want_total = fresh[q]
        assert docs.tolist() == want_docs.tolist() and total == want_total
        assert [scores[d] for d in docs.tolist()] == [want_scores[d] for d in want_docs.tolist()]
