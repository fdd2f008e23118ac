"""Derived titles pair their parentheses and brackets: a phrase cut from the text may close one it
never opened or open one it never closes (retrieval.titles._t_brackets, the last step of derive_title)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval import titles as text
from retrieval.corpus import load_corpus
from retrieval.markup import ELLIPSIS
from retrieval.titles import derive_title
from tests.retrieval.test_titles_fast import rule_texts
from tests.support.corpora import ICLR, ROOT, iclr_abstracts


def paired(title: str) -> bool:
    open_: list[str] = []
    for c in title:
        if c in "([":
            open_.append(c)
        elif c in ")]" and (not open_ or open_.pop() != "(["[")]".index(c)]):
            return False
    return not open_


@pytest.mark.parametrize(
    ("cut", "title"),
    [
        # a closer the phrase never opened goes
        ("ITIT: InTegrating Image Text)", "ITIT: InTegrating Image Text"),
        ("NetX: Sparse Hopfield Network) for time series", "NetX: Sparse Hopfield Network for time series"),
        # ... and the title ends there when a clause or a sentence follows it
        ("TAB: Temporal Batch Normalization), a novel SNN method", "TAB: Temporal Batch Normalization"),
        ("KICK: LLMs). We introduce a benchmark", "KICK: LLMs"),
        # an opener never closed: the title ends before its word, dangling words go
        ("Accelerating sampling processes (including EDM, DDIM", "Accelerating sampling processes"),
        ("Memorization with neural networks with O(N n", "Memorization with neural networks"),
        # ... unless fewer than two words would stay: then only the opener goes
        ("(Abstraction", "Abstraction"),
        ("Foo [bar) baz", "Foo bar baz"),
        # paired ones stay as they are
        ("Graph Neural Networks (GNNs) for explanations", "Graph Neural Networks (GNNs) for explanations"),
        ("A (b [c]) d", "A (b [c]) d"),
    ],
)
def test_unpaired_brackets_go(cut, title):
    assert text._t_brackets(cut) == title


def _titles_of(abstracts: list[str]) -> list[str]:
    return [t for t in map(derive_title, abstracts) if not t.endswith(ELLIPSIS)]


def test_every_bundled_title_pairs_its_brackets():
    titles = [p.title for p in load_corpus(ROOT / "data" / "corpus").papers]
    assert titles and all(paired(t) for t in titles), [t for t in titles if not paired(t)]


def test_every_iclr_title_pairs_its_brackets():
    abstracts = iclr_abstracts()
    if not abstracts:
        pytest.skip(f"no {ICLR}")
    bad = [t for t in _titles_of(abstracts) if not paired(t)]
    assert bad == []


_NAMED = st.sampled_from(
    [
        "We propose ITIT (InTegrating Image Text), a method.",
        "We introduce TAB (Temporal Batch Normalization), a novel method for spiking networks.",
        "We present Net-X (Sparse Hopfield Network) for time series prediction.",
        "Our method, RET (Resilient Text Similarity), is a lightweight deep model.",
        "We study sampling processes (including EDM, DDIM and others) in diffusion models.",
    ]
)


@settings(max_examples=300, deadline=None)
@given(_NAMED, rule_texts(), st.sampled_from([")", "(", "[", "]", ") ", " (", "), ", ")."]))
def test_generated_titles_pair_their_brackets(opening, rest, mark):
    body = f"{opening} {rest}".replace(", ", mark, 1) + " The results improve over baselines by far."
    for title in _titles_of([body, opening + mark + rest]):
        assert paired(title), (title, body)
