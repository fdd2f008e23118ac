"""bench/title_ceiling.py measures what it says: its oracle finds the best phrase, its logistic
regression is a logistic regression, and a word bag is scored as bench/titles.py scores a title."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def ceiling():  # noqa: ANN201
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("title_ceiling", BENCH / "title_ceiling.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCH))


ABSTRACT = (
    "Graph neural networks struggle with long-range dependencies. We propose LRGNN, a long-range graph "
    "network that mixes distant nodes through spectral filters. On molecular benchmarks, LRGNN improves "
    "accuracy, and spectral filters prove robust."
)


def test_the_oracle_is_the_best_phrase_of_one_clause(ceiling) -> None:  # noqa: ANN001
    read = ceiling.Abstract(ABSTRACT, "LRGNN")
    # "LRGNN: spectral filters" is the real title's bag exactly: Jaccard 1
    assert read.best_phrase("LRGNN", "LRGNN: Spectral Filters") == 1.0
    # no phrase crosses the comma between "network" and "that": the best is "long-range graph
    # network" (5 tokens: longrang, long, rang, graph, network) plus the name, against a real title
    # whose bag also holds "spectral" and "filter": 6 common of 8
    got = read.best_phrase("LRGNN", "LRGNN: Long-range Graph Network with Spectral Filters")
    assert got == pytest.approx(6 / 8)
    # a real title of words the abstract never says shares only the name
    assert read.best_phrase("LRGNN", "LRGNN: Quantum Chemistry") == pytest.approx(1 / 3)


def test_the_features_are_of_the_abstracts_words_less_the_name(ceiling) -> None:  # noqa: ANN001
    read = ceiling.Abstract(ABSTRACT, "LRGNN")
    df = Counter({"spectral": 1, "graph": 3})
    keys, x = read.features(df, 4)
    assert "lrgnn" not in keys and "spectral" in keys and "graph" in keys
    assert x.shape == (len(keys), len(ceiling.FEATURES))
    row = dict(zip(ceiling.FEATURES, x[keys.index("spectral")], strict=True))
    assert row["log count"] == pytest.approx(np.log(2))  # "spectral filters" twice
    assert row["idf"] == pytest.approx(np.log(4 / 1.5))
    assert row["statement"] == 1.0  # within the words after "We propose"
    assert row["first sentence"] == 0.0
    graph = dict(zip(ceiling.FEATURES, x[keys.index("graph")], strict=True))
    assert graph["first sentence"] == 1.0 and graph["first at"] == 0.0


def test_fit_logistic_recovers_known_weights(ceiling) -> None:  # noqa: ANN001
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20000, 2))
    truth = np.array([-1.0, 2.0, -0.5])
    p = 1.0 / (1.0 + np.exp(-(truth[0] + x @ truth[1:])))
    y = (rng.random(len(x)) < p).astype(float)
    w = ceiling.fit_logistic(x, y, l2=0.0)
    assert np.allclose(w, truth, atol=0.08)


def test_a_bag_is_scored_like_a_title(ceiling) -> None:  # noqa: ANN001
    read = ceiling.Abstract(ABSTRACT, "LRGNN")
    pairs = [("LRGNN: Spectral Filters for Graphs", ABSTRACT)]
    probabilities = {0: (["spectral", "filter", "molecular"], np.array([0.9, 0.8, 0.1]))}
    # the two likeliest words and the name: {lrgnn, spectral, filter} against {lrgnn, spectral, filter, graph}
    assert ceiling.bag_scores([0], probabilities, [read], pairs, 2) == [pytest.approx(3 / 4)]
    assert ceiling.bag_scores([0], probabilities, [read], pairs, 3) == [pytest.approx(3 / 5)]
