"""retrieval.watch: the papers a reindex added that a saved query finds, by /search's rule."""

from __future__ import annotations

import pytest

from retrieval.index import build_index
from retrieval.watch import check_watch, new_matches
from tests.retrieval.test_recommend import RL, VISION, paper


@pytest.fixture(scope="module")
def index():
    papers = [paper(f"rl{i}", text, "RL") for i, text in enumerate(RL)]
    papers += [paper(f"cv{i}", text, "Vision") for i, text in enumerate(VISION)]
    return build_index(papers)




def test_watch_matches_only_added_papers_with_search_rules(index):
    found = new_matches(index, "reinforcement policy", ["rl2", "rl3", "cv0"], 10)
    assert {p.id for p in found.papers} == {"rl2", "rl3"} and found.total == 2
    # ranked as /search ranks them
    hits = index.search("reinforcement policy", 10).hits
    order = [h.paper.id for h in hits if h.paper.id in {"rl2", "rl3"}]
    assert [p.id for p in found.papers] == order
    assert new_matches(index, "reinforcement -critic", ["rl0", "rl2"], 10).total == 1  # rl0 has critic
    assert new_matches(index, "image", ["cv0", "cv1", "rl0"], 1).total == 2
    assert len(new_matches(index, "image", ["cv0", "cv1"], 1).papers) == 1
    assert new_matches(index, "image", ["cv0"], 5, area="RL").total == 0
    assert new_matches(index, "image", ["gone"], 5).total == 0


def test_a_watch_that_cannot_parse_is_refused():
    from retrieval.errors import QueryError

    with pytest.raises(QueryError):
        check_watch('"unclosed')

