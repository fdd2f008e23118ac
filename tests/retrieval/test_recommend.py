"""retrieval.recommend: a profile of saved papers queried through the BM25 index."""

from __future__ import annotations

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


def test_vectors_are_unit_length_the_same_both_ways_and_cached_per_index(index, monkeypatch):
    import retrieval.recommend as rec

    positions = list(range(len(index)))
    by_tokens = {p: rec._vector_by_tokens(index, p) for p in positions}
    by_scan = rec._vectors_by_scan(index, positions)
    for pos in positions:
        tids, weights = by_tokens[pos]
        assert abs(float(weights @ weights) - 1.0) < 1e-9 and list(tids) == sorted(tids)
        assert list(by_scan[pos][0]) == list(tids) and list(by_scan[pos][1]) == pytest.approx(list(weights))
    monkeypatch.setattr(rec, "SCAN_FROM", 2)  # the postings pass gives the same recommendations
    scanned = recommend(index, ["rl0", "rl1", "cv0"], 5)
    monkeypatch.setattr(rec, "SCAN_FROM", 100)
    assert scanned == recommend(index, ["rl0", "rl1", "cv0"], 5)
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

