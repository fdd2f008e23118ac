"""The compiled phrase clip (retrieval/_titlescan.c ``clip``, what text._t_clip asks first) gives the
rules' phrase (text._t_clip_rules: the first words, cut at the first clause break, an early label
dropped, no dangling last word nor unfinished short last phrase) for every ASCII text it reads, and
declines (False) any other text and any phrase left with a parenthesis or bracket, which the rules
then answer.

Checked at every word of the bundled, pasted and ICLR abstracts' title regions, on generated text
made of the words and marks the rules tell apart, and on arbitrary text.
Without the compiled pass these tests skip; under CI=true they fail."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval import titles as text
from tests.support.compiled import require_compiled
from tests.support.corpora import ICLR, bundled_and_pasted_abstracts, iclr_abstracts


@pytest.fixture(scope="module")
def clip():
    text._t_scan()
    return require_compiled(text._t_clip_c, "retrieval._titlescan is not built (pip install -e .)")


def _same(clip, sample: str, words: int = 12) -> bool:
    """C's phrase is the rules' (True), or C declined (False)."""
    got = clip(sample, words)
    if got is False:
        return False
    assert got == text._t_clip_rules(sample, words), (sample[:120], words)
    return True


def _abstracts() -> list[str]:
    return bundled_and_pasted_abstracts() + iclr_abstracts()


def test_every_word_of_the_abstracts_gives_the_same_phrase(clip):
    read = total = 0
    for abstract in _abstracts():
        head = text._t_head(abstract)
        starts = [i + 1 for i, c in enumerate(head) if c == " "]
        for k, i in enumerate(starts):
            for words in (12, 14) if k % 5 == 0 else (12,):
                total += 1
                read += _same(clip, text._t_window(head, i), words)
    assert total > (150_000 if ICLR.exists() else 5_000), total
    assert read >= 0.7 * total, (read, total)


_WORDS = sorted(  # (ASCII: what the compiled pass reads)
    w
    for w in {*text._T_DANGLING, *text._T_OPENERS, *text._T_ARTICLES, *text._T_CUT_AFTER_COMMA}
    | {*text._T_CUT_AFTER_SPACE}
    | set(
        "Graph networks learning model The A An THE Using USING, using, of, in: principle: label: "
        "x y z - -- , ; : . ! ? * ** _ __ *bold* _x_ a-b self-supervised 3D e.g. i.e. ,x x, :x x: "
        "so that such that in order to".split()
    )
    if w.isascii()
)
_SEPS = [" ", " ", " ", "  ", "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1f", ", ", ": ", "; ", ". "]


@st.composite
def phrases(draw) -> str:
    n = draw(st.integers(min_value=0, max_value=30))
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=n, max_size=n))
    seps = draw(st.lists(st.sampled_from(_SEPS), min_size=n, max_size=n))
    lead = draw(st.sampled_from(["", " ", "\t", "Label: ", "ab: ", "a b: ", ": "]))
    return lead + "".join(w + s for w, s in zip(words, seps, strict=True))


@settings(max_examples=1500, deadline=None)
@given(phrases(), st.sampled_from([12, 14, 12, 4, 1, 0, 6, 13]))
def test_generated_text_gives_the_same_phrase(clip, sample, words):
    assert _same(clip, sample, words)
    assert _same(clip, sample.rstrip(), words)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.integers(min_value=0, max_value=20))
def test_any_text_gives_the_same_phrase_or_is_declined(clip, sample, words):
    ascii_ = sample.isascii()
    if not _same(clip, sample, words):
        assert not ascii_ or "(" in sample or "[" in sample
    assert text._t_clip(sample, words) == text._t_clip_rules(sample, words)


@pytest.mark.parametrize(
    ("sample", "words", "phrase"),
    [
        (
            "We propose a novel method for graph learning, which works well",
            12,
            "We propose a novel method for graph learning",
        ),
        (
            "principle: preference data vary across the people who are in the",
            12,
            "preference data vary across the people",
        ),
        ("a b c d e f g h i j k l m n o p q", 12, "a b c d e f g h i j k l"),
        (
            "one two three four five six seven eight nine ten under a binarized",
            12,
            "one two three four five six seven eight nine ten",
        ),
        (
            "one two three four five six seven eight nine ten eleven in social networks",
            12,
            "one two three four five six seven eight nine ten eleven",
        ),
        ("x: **bold** words here and there", 12, "bold** words here and there"),
        ("Graph networks;", 12, "Graph networks"),
        ("Graph networks - a survey", 12, "Graph networks"),
    ],
)
def test_chosen_phrases(clip, sample, words, phrase):
    assert clip(sample, words) == text._t_clip_rules(sample, words) == phrase


def test_the_phrase_with_a_parenthesis_is_the_rules(clip):
    assert clip("Hierarchical Attention (HAT) is a model", 12) is False
    assert text._t_clip("Hierarchical Attention (HAT) is a model", 12) == "Hierarchical Attention is a model"
