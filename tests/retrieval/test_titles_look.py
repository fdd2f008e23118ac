"""The compiled look's shortcuts (retrieval/_keyphrase.c ``look``) give the Python definition's
numbers (text._t_py_look) whatever order the chooser's calls come in.

The C look indexes the region it is handed (every place by its first four bytes) and keeps that
index for the next call with the same str object (the chooser looks at both candidates in one
region); it reads a find in the first sentence from that index when the first sentence opens the
region; it tables the three word sets once when they are frozensets. Each shortcut is checked here
where it could go wrong: regions of the same length in turn, a first sentence that is not the
region's opening, needles at the region's end, overlapping repeats, three-letter stems, other and
changed word sets (test_keyphrase_look.py compares the two on ICLR and generated texts call by call).

Without the compiled pass these tests skip; under CI=true they fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval import titles as text
from retrieval.corpus import load_corpus
from tests.retrieval.fixtures import pasted_corpus
from tests.support.compiled import require_compiled

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "corpora"


@pytest.fixture(scope="module")
def look():
    why = "retrieval._keyphrase.look is not built (pip install -e .)"
    return require_compiled(text._t_look_compiled(), why)


def _c(look, title: str, lower: str, first: str) -> tuple[float, ...]:
    return look(title, lower, first, text._T_CHOOSE_STOP, text._T_CHOOSE_CLAUSE, text._T_GENERIC_WORDS)


def _regions() -> list[str]:
    abstracts = [p.abstract for p in load_corpus(ROOT / "data" / "corpus").papers]
    abstracts += [b.abstract for b in pasted_corpus.BLOCKS]
    iclr = SHARED / "iclr2024" / "papers.jsonl"
    if iclr.is_file():
        with iclr.open(encoding="utf-8") as fh:
            abstracts += [json.loads(line).get("abstract") or "" for line in fh][:400]
    return [r for r in (text._t_head(a).lower() for a in abstracts) if r.isascii()]


def test_regions_in_turn_and_others_first_sentences_give_the_same_look(look):
    """Each candidate of one region, then of the next, then the first again (a fresh str of the
    same text, and the very same object); and each with another region's first sentence."""
    regions = _regions()
    assert len(regions) > 20
    compared = 0
    for a, b in zip(regions, regions[1:], strict=False):
        titles = [" ".join(b.split()[i : i + 7]) for i in (0, 9, 30)] + [" ".join(a.split()[3:9])]
        for lower in (a, b, "".join(list(a)), a):
            end = lower.find(". ")
            first = lower[: end if end > 0 else 400]
            for title in titles:
                for f in (first, b[:200], first[:-1] + "#", ""):
                    assert _c(look, title, lower, f) == text._t_py_look(title, lower, f, {}), (title, f)
                    compared += 1
    assert compared > 1000


def test_regions_of_the_same_length_in_turn(look):
    """Two regions of the same length (one a shuffle of the other's words) asked in turn."""
    a = "graph learning of the networks aaaa bbbb networks graph spectral learning networks"
    b = "spectral bbbb aaaa networks of graph the networks learning graph learning networks"
    assert len(a) == len(b)
    for title in ("Graph networks", "Spectral learning of bbbb", "aaaa networks"):
        for lower in (a, b, a, b):
            want = text._t_py_look(title, lower, lower[:30], {})
            assert _c(look, title, lower, lower[:30]) == want, (title, lower)


def test_needles_at_the_end_overlaps_and_short_stems(look):
    """Counts by the index: a needle that ends the region (or would, but for one character),
    overlapping repeats (str.count does not overlap), stems of three letters (abcs: "abc"), a
    region shorter than four characters."""
    cases = [
        ("Aaaaaa aaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaaa"),
        ("ababab ababababs", "ababababababababab x abababab"),
        ("abcs abcd", "xabcabcxabcdabc"),
        ("Networks", "networks of the network"),
        ("Networks", "networks of the networ"),
        ("Networks learned", "networks learne"),
        ("Graph networks", "graph networks"),
        ("Graph networks", "graph network"),
        ("Uses loss", "use"),
        ("Uses loss", ""),
        ("Data sets", "data sets data"),
        ("Dddd dddd", "dddddddd dddd"),
        ("Abcdefg\x00xy", "graph abcdefg"),  # (a str's data ends in a NUL: the count stops at the end)
        ("Abcdefg\x00xy", "abcdefg\x00 abcdefg"),
    ]
    for title, lower in cases:
        for first in (lower, lower[:-1], lower[:4], lower[:3], "", "zz"):
            assert _c(look, title, lower, first) == text._t_py_look(title, lower, first, {}), (
                title,
                lower,
                first,
            )


_WORDS = (
    "aaaa aaaaa aaaaaaa abab ababab abcs abc graph graphs networks network netw of the a is which ss".split()
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_WORDS), max_size=8),
    st.lists(st.sampled_from(_WORDS + ["", "s", "a"]), max_size=60),
    st.integers(min_value=0, max_value=120),
    st.booleans(),
)
def test_generated_repeats_give_the_same_look(look, title_words, region_words, cut, glue):
    """Regions of few repeated words, glued (no spaces: matches inside and across words) or not."""
    title = " ".join(title_words)
    lower = ("" if glue else " ").join(region_words)
    for first in (lower[:cut], lower[cut:]):
        assert _c(look, title, lower, first) == text._t_py_look(title, lower, first, {})


def test_other_word_sets_give_the_definitions_look(look, monkeypatch):
    """Other sets than the chooser's (a set, a frozenset with a long or non-ASCII word, a changed
    frozenset), each read as the Python definition reads the same sets."""
    lower = "graph networks of the graph learning which graph networks learn fast networks"
    first = lower[:40]
    stop, clause, generic = text._T_CHOOSE_STOP, text._T_CHOOSE_CLAUSE, text._T_GENERIC_WORDS
    variants = [
        (set(stop), set(clause), set(generic)),
        (stop | {"graph"}, clause, generic),
        (stop, clause | {"networks"}, generic - {"the"}),
        (stop | {"x" * 40}, clause | {"y" * 24}, generic | {"learning", "lérning"}),
        (frozenset(), frozenset(), frozenset()),
        (stop, clause, generic),
        (stop | {"graph"}, clause, generic),
        (stop, clause, generic),
    ]
    for title in (
        "Graph networks learn",
        "The learning of graph networks which learn",
        "Fast",
        "x" * 40 + " " + "y" * 24,
    ):
        for sets in variants:
            got = look(title, lower, first, *sets)
            monkeypatch.setattr(text, "_T_CHOOSE_STOP", sets[0])
            monkeypatch.setattr(text, "_T_CHOOSE_CLAUSE", sets[1])
            monkeypatch.setattr(text, "_T_GENERIC_WORDS", sets[2])
            assert got == text._t_py_look(title, lower, first, {}), (title, sets)
            monkeypatch.undo()


def test_a_set_changed_between_calls_is_read_again(look):
    """A (mutable) set is asked each time: a word added to it between two calls counts."""
    lower = "graph networks of the graph learning which graph networks learn fast networks"
    stop, clause, generic = set(text._T_CHOOSE_STOP), set(text._T_CHOOSE_CLAUSE), set(text._T_GENERIC_WORDS)
    before = look("Graph networks", lower, lower[:40], stop, clause, generic)
    stop.add("graph")
    generic.add("networks")
    after = look("Graph networks", lower, lower[:40], stop, clause, generic)
    assert before != after
    assert after[1] == text._T_LOGS[3] and after[6] == 0.5  # "netwo" 3 times, alone; half generic
