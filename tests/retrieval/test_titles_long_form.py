"""The compiled long form of an acronym (retrieval/_titlescan.c ``long_form``, what text._long_form
asks first) gives the rules' answer (text._long_form_rules: the window of words before "(X)", the
initials, then Schwartz & Hearst, the lead and marks stripped, the shape checks) for every ASCII
pair, and declines (False) any other, which the rules then answer.

Checked at every parenthesis of the bundled, pasted and ICLR abstracts (with the words before it
as the name's rules cut them), on generated text made of what the rules tell apart (initials,
hyphens, plural acronyms, leads, marks, all of str's ASCII spaces) and on arbitrary text.
Without the compiled pass these tests skip; under CI=true they fail."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval import titles as text
from tests.support.compiled import require_compiled
from tests.support.corpora import ICLR, bundled_and_pasted_abstracts, iclr_abstracts


@pytest.fixture(scope="module")
def long_form():
    text._t_scan()
    return require_compiled(text._t_long_form_c, "retrieval._titlescan is not built (pip install -e .)")


def _same(long_form, abbr: str, before: str) -> bool:
    """C's answer is the rules' (True), or C declined (False)."""
    got = long_form(abbr, before)
    if got is False:
        return False
    assert got == text._long_form_rules(abbr, before), (abbr, before[-80:])
    return True


def _pairs(abstract: str) -> list[tuple[str, str]]:
    """Each "(...)" of the title region: what is inside (and its first word) and what is before."""
    head = text._t_head(abstract)
    out = []
    for m in re.finditer(r"\(([^()]{1,30})\)", head):
        before = head[max(0, m.start() - 200) : m.start()]
        inside = m.group(1)
        out += [(inside, before), (inside.split()[0] if inside.split() else inside, before.rstrip())]
    return out


def _abstracts() -> list[str]:
    return bundled_and_pasted_abstracts() + iclr_abstracts()


def test_every_parenthesis_of_the_abstracts_gives_the_same_long_form(long_form):
    read = total = found = 0
    for abstract in _abstracts():
        for abbr, before in _pairs(abstract):
            total += 1
            if _same(long_form, abbr, before):
                read += 1
                found += long_form(abbr, before) is not None
    assert total > (3000 if ICLR.exists() else 150) and read >= 0.9 * total, (read, total)
    assert found > total / 10  # (not only None)


_WORDS = (
    "the The THE an An a A our Our novel Novel new New test-time Test-Time adaptation adaptive "
    "sampling Sampling adversarial Super Experts experts single-step Single-Step Completion completion "
    "Policy policy graph Graph neural networks Networks self-supervised learning Learning of for and "
    'in to x X xs abc ABC 3D 3d t-SNE GPT-4 "quoted" *bold* _under_ “curly” a,b , ; - -- ( ) ss'
).split()
_SPACES = [" ", " ", " ", "  ", "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1f", "-", " - "]
_ABBRS = (
    "TTA",
    "AAS",
    "SEs",
    "SSCP",
    "GNN",
    "GNNs",
    "SSL",
    "ABC",
    "Abc",
    "abc",
    "A",
    "AB",
    "A1",
    "3D",
    "X-Y",
    "GPT-4",
    "s",
    "Ss",
    "SS",
    "ASs",
    "ANN",
    "TNP",
    "NSA",
    "NN",
    "",
    "-",
    "T-SNE",
    "LLMs",
    "ATs",
    "AdaNP",
)


@st.composite
def befores(draw) -> str:
    n = draw(st.integers(min_value=0, max_value=24))
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=n, max_size=n))
    seps = draw(st.lists(st.sampled_from(_SPACES), min_size=n, max_size=n))
    return "".join(w + s for w, s in zip(words, seps, strict=True))


@settings(max_examples=800, deadline=None)
@given(st.sampled_from(_ABBRS) | st.text("ABCDEFGNSTXabcdefs1-", max_size=7), befores())
def test_generated_text_gives_the_same_long_form(long_form, abbr, before):
    ascii_ = abbr.isascii() and before.isascii()
    assert _same(long_form, abbr, before) == ascii_
    assert _same(long_form, abbr, before.rstrip()) == ascii_


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12), st.text(max_size=120))
def test_any_text_gives_the_same_long_form_or_is_declined(long_form, abbr, before):
    assert _same(long_form, abbr, before) == (abbr.isascii() and before.isascii())
    text._long_form.cache_clear()
    assert text._long_form(abbr, before) == text._long_form_rules(abbr, before)


@pytest.mark.parametrize(
    ("abbr", "before", "long"),
    [
        ("SSCP", "we propose the Single-Step Completion Policy ", "Single-Step Completion Policy"),
        ("TTA", "methods for test-time adaptation", "test-time adaptation"),
        ("AAS", "we use an adversarial adaptive sampling", "adversarial adaptive sampling"),
        ("SEs", "the so-called Super Experts", "Super Experts"),
        (
            "IRAD",
            "we propose implicit representation-driven image resampling",
            "implicit representation-driven image resampling",
        ),
        ("GNN", "a novel\tgraph neural network", "graph neural network"),
        ("ABC", "the Abc xyz", None),  # (it opens with the acronym)
        ("ABC", '*"Alpha Beta Cee"*', "Alpha Beta Cee"),
        ("AB", "alpha, beta", None),  # (a comma)
        # the last word's last part opens with the last initial (Schwartz & Hearst: "adaptive-sampling")
        ("AAS", "an adversarial adaptive-sampling", "adversarial adaptive-sampling"),
        # the initials are read in the last 12 * 3 + 40 characters (here 47)
        (
            "AAS",
            "adversarialbxyzxyz adaptivexxxxxx samplingxxxxx",
            "adversarialbxyzxyz adaptivexxxxxx samplingxxxxx",
        ),
        ("TAB", "_the alpha beta", "alpha beta"),  # ("_" stripped before the lead)
        ("TAB", "we use The Alpha Beta", "Alpha Beta"),  # (the lead in any case)
        ("Ss", "super sample", "super sample"),  # (not a plural: two letters)
    ],
)
def test_chosen_long_forms(long_form, abbr, before, long):
    assert long_form(abbr, before) == text._long_form_rules(abbr, before) == long


_FEW = 'a b ab ba abab x a-b b-a Ab AB Ba s ss as the The an our new Novel A-B ab-x x-ab , " * _ -'.split()


@st.composite
def dense_befores(draw) -> str:
    """Few letters, so that initials and letters are found (and missed) in many ways."""
    n = draw(st.integers(min_value=0, max_value=20))
    words = draw(st.lists(st.sampled_from(_FEW), min_size=n, max_size=n))
    seps = draw(st.lists(st.sampled_from(_SPACES), min_size=n, max_size=n))
    return "".join(w + s for w, s in zip(words, seps, strict=True))


@settings(max_examples=1500, deadline=None)
@given(st.text("ABabs-", max_size=9), dense_befores())
def test_dense_generated_text_gives_the_same_long_form(long_form, abbr, before):
    assert _same(long_form, abbr, before)
    assert _same(long_form, abbr, before.rstrip())
