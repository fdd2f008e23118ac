"""The C look of a title candidate (retrieval/_keyphrase.c ``look``, what the title chooser reads:
retrieval.titles._t_look) gives exactly the Python definition's numbers (text._t_py_look) on every
ASCII text, and declines (None) any other, which the Python path then answers.

Without the compiled pass these tests skip; under CI=true they fail (CI must test what users run)."""

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


def _region(abstract: str) -> tuple[str, str]:
    """The title region lowercased and its first sentence, as the chooser hands them over."""
    lower = text._t_head(abstract).lower()
    end = lower.find(". ")
    return lower, lower[: end if end > 0 else 400]


def _same(look, title: str, lower: str, first: str) -> bool:
    """C's numbers equal Python's (True), or C declined the text (False)."""
    got = look(title, lower, first, text._T_CHOOSE_STOP, text._T_CHOOSE_CLAUSE, text._T_GENERIC_WORDS)
    if got is None:
        return False
    assert got == text._t_py_look(title, lower, first, {}), (title, lower[:100])
    return True


def _candidates(abstract: str, lower: str) -> list[str]:
    """The derived title, the region's opening and some of its windows, and a few odd strings."""
    words = lower.split()
    windows = [" ".join(words[i : i + 9]) for i in range(0, min(len(words), 120), 13)]
    return [text.derive_title(abstract), lower[:120], *windows, "", " , ; ", "(SSL) GNNs' Loss."]


def _check(look, abstracts: list[str], least: float) -> None:
    read = total = 0
    for abstract in abstracts:
        lower, first = _region(abstract)
        for title in _candidates(abstract, lower):
            total += 1
            read += _same(look, title, lower, first)
    assert read >= least * total, (read, total)


def test_bundled_and_pasted_abstracts_give_the_same_look(look):
    abstracts = [p.abstract for p in load_corpus(ROOT / "data" / "corpus").papers]
    abstracts += [b.abstract for b in pasted_corpus.BLOCKS]
    _check(look, abstracts, least=0.6)


@pytest.mark.skipif(not (SHARED / "iclr2024").is_dir(), reason="no ../shared/corpora")
def test_every_iclr_abstract_and_its_real_title_give_the_same_look(look):
    abstracts, read = [], 0
    with (SHARED / "iclr2024" / "papers.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row.get("abstract"):
                abstracts.append(row["abstract"])
                lower, first = _region(row["abstract"])
                read += _same(look, row.get("title") or "", lower, first)
    assert read >= 0.8 * len(abstracts)
    _check(look, abstracts, least=0.8)


_WORDS = (
    "Graph graphs networks network learning Learning LEARNING models model's (GNN) GNNs [SSL] "
    "\"plain\" 'single' a an the of is are which that can while whereas who because "
    "approach framework novel new simple s ss sss abcs loss losses analysis x-y self-supervised abab "
    "ababab ababababs aaaaaa "
    "*bold* ... ,, ; : ( ) we propose This"
).split()
_SEPS = [" ", " ", " ", "  ", ", ", ". ", "; ", "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1f"]  # ASCII


@st.composite
def ascii_texts(draw, least: int, most: int) -> str:
    n = draw(st.integers(min_value=least, max_value=most))
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=n, max_size=n))
    seps = draw(st.lists(st.sampled_from(_SEPS), min_size=n, max_size=n))
    return "".join(w + s for w, s in zip(words, seps, strict=True))


@settings(max_examples=300, deadline=None)
@given(ascii_texts(0, 14), ascii_texts(20, 250), st.integers(min_value=0, max_value=400))
def test_generated_text_gives_the_same_look(look, title, region, cut):
    lower = region.lower()
    assert _same(look, title, lower, lower[:cut])  # every character here is ASCII: C reads it


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=600))
def test_any_text_gives_the_same_look_or_is_declined(look, title, region):
    lower = region.lower()
    declined = not _same(look, title, lower, lower[:50])
    assert declined == (not (title.isascii() and lower.isascii()))
    assert text._t_look(title, lower, lower[:50], {}) == text._t_py_look(title, lower, lower[:50], {})


def test_the_chooser_reads_the_compiled_look(look, monkeypatch):
    calls = []

    def fake(*args):
        calls.append(args[0])
        return look(*args)

    monkeypatch.setattr(text, "_t_look_c", fake)
    lower, first = _region("Graph networks learn. We propose graph networks for graph learning.")
    python = text._t_py_look("Graph networks", lower, first, {})
    assert text._t_look("Graph networks", lower, first, {}) == python
    assert calls == ["Graph networks"]
    monkeypatch.setattr(text, "_t_look_c", None)  # not built: Python answers
    assert text._t_look("Graph networks", lower, first, {}) == python
