"""Tests of retrieval.sentences: where sentences end in abstracts as people paste them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.markup import strip_markup
from retrieval.sentences import _BOUNDARY_CANDIDATE, _candidates, split_sentences


def test_split_sentences_basic():
    assert split_sentences("One here. Two there! Three? Four.") == [
        "One here.",
        "Two there!",
        "Three?",
        "Four.",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Methods (e.g., transformers) work. Next one.",
        "Models, i.e. Transformers, work. Next one.",
        "As Smith et al. Showed in 2020, it works. Next one.",
        "See Fig. 3 and Eq. 2 for details. Next one.",
        "The rate is 1.5 times higher. Next one.",
        "Code at https://github.com/a/b.Tool and www.site.org/x. Next one.",
        "Samples are i.i.d. Gaussian draws. Next one.",
        "J. Smith wrote it. Next one.",
    ],
)
def test_split_sentences_does_not_split_abbreviations(text):
    sentences = split_sentences(text)
    assert len(sentences) == 2, sentences
    assert sentences[1] == "Next one."


def test_split_sentences_missing_space_after_period():
    text = "It is useful across settings and models.Recent work by [Lee 2022] helps.Yet this fails."
    assert split_sentences(text) == [
        "It is useful across settings and models.",
        "Recent work by [Lee 2022] helps.",
        "Yet this fails.",
    ]
    assert split_sentences("raised by Dang et al.Lastly, we show it.") == [
        "raised by Dang et al.",
        "Lastly, we show it.",
    ]
    assert split_sentences("is it possible?In this work we show it.") == [
        "is it possible?",
        "In this work we show it.",
    ]


def test_split_sentences_quotes_brackets_and_paragraphs():
    assert split_sentences('He said "stop." Then left.') == ['He said "stop."', "Then left."]
    assert split_sentences("First para\n\nsecond para") == ["First para", "second para"]
    assert split_sentences("") == []
    assert split_sentences("   ") == []


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab .!?\u2026\n\u3002", max_size=40), st.integers(0, 45))
def test_boundary_candidates_are_the_regex_matches(text, start):
    assert _candidates(text, start) == [m.start() for m in _BOUNDARY_CANDIDATE.finditer(text, start)]


def test_boundary_candidates_on_real_abstracts(seed_papers):
    for paper in seed_papers:
        for text in (paper.abstract, strip_markup(paper.abstract)):
            assert _candidates(text, 0) == [m.start() for m in _BOUNDARY_CANDIDATE.finditer(text)]


# --------------------------------------------------------------------------------------------------
