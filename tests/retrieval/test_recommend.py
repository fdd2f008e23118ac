"""retrieval.recommend: a profile of saved papers queried through the BM25 index."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.index import build_index
from retrieval.models import Paper
from retrieval.recommend import ProfileCache, recommend


def paper(pid: str, abstract: str, area: str) -> Paper:
    return Paper(id=pid, title="", authors=("A B",), et_al=False, area=area, abstract=abstract, url=None)


RL = [
    "Offline reinforcement learning learns a policy from a fixed dataset of transitions with a critic.",
    "We study reinforcement learning policies trained with reward shaping and value critic ensembles.",
    "A policy gradient method for reinforcement learning with conservative value estimates of reward.",
    "Model based reinforcement learning plans with a learned dynamics model to improve the policy reward.",
]
VISION = [
    "Image segmentation with convolutional networks labels every pixel of an image.",
    "Object detection in images uses bounding boxes predicted by a convolutional backbone.",
    "Self supervised image representations from augmented views of each image.",
]


@pytest.fixture(scope="module")
def index():
    papers = [paper(f"rl{i}", text, "RL") for i, text in enumerate(RL)]
    papers += [paper(f"cv{i}", text, "Vision") for i, text in enumerate(VISION)]
    return build_index(papers)


def test_recommends_papers_like_the_saved_ones_and_never_a_saved_one(index):
    recs = recommend(index, ["rl0", "rl1"], 3)
    ids = [r.paper.id for r in recs]
    assert set(ids[:2]) == {"rl2", "rl3"}
    assert "rl0" not in ids and "rl1" not in ids
    assert [r.rank for r in recs] == list(range(1, len(recs) + 1))
    assert all(a.score >= b.score for a, b in zip(recs, recs[1:], strict=False))


def test_exclude_removes_other_saved_papers(index):
    ids = [r.paper.id for r in recommend(index, ["rl0"], 5, exclude=["rl1", "rl2"])]
    assert "rl1" not in ids and "rl2" not in ids and ids[0] == "rl3"


def test_because_names_the_saved_paper_most_like_each_recommendation(index):
    recs = recommend(index, ["rl0", "cv0"], 6)
    by_id = {r.paper.id: r.because for r in recs}
    assert by_id["cv1"] == "cv0" and by_id["rl2"] == "rl0"


def test_unknown_and_duplicate_ids_are_ignored(index):
    assert recommend(index, ["nope"], 3) == []
    assert recommend(index, [], 3) == []
    assert [r.paper.id for r in recommend(index, ["rl0", "nope", "rl0"], 2)] == [
        r.paper.id for r in recommend(index, ["rl0"], 2)
    ]


def _assert_same_vectors(index, positions):
    """Each paper's vector from its own text equals the one from walking every posting (the exact
    reference: term ids identical, weights to 1e-12), and is a unit vector."""
    import retrieval.recommend as rec

    by_scan = rec._vectors_by_scan(index, positions)
    for pos in positions:
        vector = rec._vector_by_tokens(index, pos)
        assert vector is not None, f"paper {index.papers[pos].id}: its tokens disagree with the index"
        tids, weights = vector
        assert abs(float(weights @ weights) - 1.0) < 1e-9 and list(tids) == sorted(tids)
        assert tids.tolist() == by_scan[pos][0].tolist()
        assert weights == pytest.approx(by_scan[pos][1], rel=1e-12, abs=1e-15)


def test_vectors_from_the_text_equal_the_postings_walk_on_the_fixtures(index, seed_index):
    _assert_same_vectors(index, list(range(len(index))))
    assert len(seed_index) >= 20
    _assert_same_vectors(seed_index, list(range(len(seed_index))))


def test_vectors_from_the_text_equal_the_postings_walk_on_chinese_and_a_served_cache(tmp_path):
    from retrieval.corpus import load_corpus
    from retrieval.index import open_index

    fixture = Path(__file__).parent / "fixtures" / "chinese_corpus.txt"
    built = build_index(load_corpus(fixture).papers)
    _assert_same_vectors(built, list(range(len(built))))
    open_index(fixture, cache_dir=tmp_path)  # writes the cache
    served, report = open_index(fixture, cache_dir=tmp_path)  # the mapped index the bot serves
    assert report.from_cache
    _assert_same_vectors(served, list(range(len(served))))


@pytest.mark.parametrize("variant", ["okapi", "plus"])
def test_vectors_from_the_text_equal_the_postings_walk_on_a_synthetic_corpus(synth_papers, variant):
    from retrieval.index import BM25Params

    params = BM25Params() if variant == "okapi" else BM25Params(variant="plus")
    synth = build_index(synth_papers[:2000], params)
    _assert_same_vectors(synth, list(range(0, len(synth), 7)))


def test_a_call_reads_no_postings_for_vectors_and_recommends_as_the_postings_walk(seed_index, monkeypatch):
    import retrieval.recommend as rec

    ids = [seed_index.papers[i].id for i in range(0, len(seed_index), 2)][:20]
    walked = rec._vectors_by_scan

    def refuse(*_args):
        raise AssertionError("walked the postings")

    monkeypatch.setattr(rec, "_vectors_by_scan", refuse)
    from_text = recommend(seed_index, ids, 10)
    monkeypatch.setattr(rec, "_vectors_by_scan", walked)
    monkeypatch.setattr(rec, "_vector_by_tokens", lambda *_args: None)  # every paper falls back
    assert from_text == recommend(seed_index, ids, 10) and from_text


def test_a_paper_whose_tokens_disagree_with_the_index_falls_back_to_the_postings(index, monkeypatch):
    import retrieval.index as index_module
    import retrieval.recommend as rec

    exact = rec._vectors_by_scan(index, [0, 1])
    real = index_module.paper_tokens
    monkeypatch.setattr(index_module, "paper_tokens", lambda p: real(p)[1:])  # one token short
    assert rec._vector_by_tokens(index, 0) is None
    got = rec.paper_vectors(index, [0, 1])
    for pos in (0, 1):
        assert got[pos][0].tolist() == exact[pos][0].tolist()
        assert got[pos][1] == pytest.approx(exact[pos][1])
    monkeypatch.setattr(index_module, "paper_tokens", lambda p: [*real(p), "zzz-not-a-term"])
    assert rec._vector_by_tokens(index, 0) is None


def test_vectors_are_cached_per_index(index):
    cache = ProfileCache(index, size=2)
    assert recommend(index, ["rl0"], 3, cache=cache) == recommend(index, ["rl0"], 3)
    cache.vectors([1, 2, 3])
    assert len(cache) == 2
    other = build_index([paper("x", "a different corpus about reward", "RL")])
    with pytest.raises(ValueError, match="another index"):
        recommend(other, ["x"], 1, cache=cache)


@pytest.mark.parametrize("k", [0, 101])
def test_k_is_checked(index, k):
    with pytest.raises(ValueError):
        recommend(index, ["rl0"], k)

