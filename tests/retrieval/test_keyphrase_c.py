"""The C word pass of keyphrase.describe (retrieval/_keyphrase.c) answers exactly as the Python path
(keyphrase._describe, the definition) on every text it accepts: generated text full of the cases the
word loop distinguishes, and every bundled, pasted, ICLR 2024 and SciFact abstract with and without a
name. A text it declines (a character it does not read) is answered by the Python path.

Without the compiled pass these tests skip; under CI=true they fail (CI must test what users run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval import keyphrase
from retrieval.corpus import _parse_text, load_corpus
from tests.retrieval.fixtures import pasted_corpus
from tests.support.compiled import require_compiled

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "corpora"


@pytest.fixture(scope="module")
def c_pass():
    return require_compiled(keyphrase._c_pass(), keyphrase.C_UNAVAILABLE or "no C keyphrase pass")


def _head(abstract: str) -> str:
    return " " + " ".join(abstract.split())


def _names(head: str) -> list[str | None]:
    """No name, an empty one, and words of the text as the name (a plural one too)."""
    words = [w.strip(".,;:()") for w in head.split()]
    picked = [w for w in words[2:40:9] if w]
    return [None, "", *picked, *(w + "s" for w in picked[:1])]


def _same(c_pass, head: str, name: str | None) -> bool:
    """The C answer equals the Python one (True), or C declined the text (False)."""
    got = c_pass.describe(head, name)
    if got is None:
        return False
    assert got == keyphrase._describe(head, name), (head[:200], name)
    return True


def _check_all(c_pass, abstracts: list[str], least: float, every_name: bool = True) -> None:
    """Each abstract as derive_title hands it over, with every name of :func:`_names` (or, for the
    big corpora, with none and with one, in turn); the bundled ones also raw (newlines, no space)."""
    read = total = 0
    for i, abstract in enumerate(abstracts):
        heads = (_head(abstract), abstract) if every_name else (_head(abstract),)
        for head in heads:
            names = _names(head)
            for name in names if every_name else [names[min(i % 2 * 2, len(names) - 1)]]:
                total += 1
                read += _same(c_pass, head, name)
    assert read >= least * total  # (the rest has a character the C pass leaves to Python)


def test_the_c_pass_is_what_describe_uses(c_pass, monkeypatch):
    head = _head(load_corpus(ROOT / "data" / "corpus").papers[0].abstract)
    calls = []
    real = c_pass.describe

    class Spy:
        def describe(self, head, name):
            calls.append(head)
            return real(head, name)

    monkeypatch.setattr(keyphrase, "_c", Spy())
    assert keyphrase.describe(head) == keyphrase._describe(head)
    assert calls == [head]


def test_bundled_and_pasted_abstracts_give_the_same_phrase(c_pass):
    abstracts = [p.abstract for p in load_corpus(ROOT / "data" / "corpus").papers]
    abstracts += [b.abstract for b in pasted_corpus.BLOCKS]
    _check_all(c_pass, abstracts, least=0.9)


@pytest.mark.skipif(not (SHARED / "iclr2024").is_dir(), reason="no ../shared/corpora")
def test_every_iclr_abstract_gives_the_same_phrase(c_pass):
    text = (SHARED / "iclr2024" / "abstracts.txt").read_text(encoding="utf-8")
    records, _ = _parse_text(text, "iclr")
    with (SHARED / "iclr2024" / "papers.jsonl").open(encoding="utf-8") as fh:
        papers = [json.loads(line).get("abstract") or "" for line in fh]
    _check_all(c_pass, [r.abstract for r in records] + papers, least=0.97, every_name=False)


@pytest.mark.skipif(not (SHARED / "iclr2024").is_dir(), reason="no ../shared/corpora")
def test_every_iclr_abstract_with_its_titles_name_gives_the_same_phrase(c_pass):
    # the name a real title opens with ("GOLF: Gradual Optimization Learning Framework ..."), whose
    # capitals the rank looks for among a phrase's initials; and the same name lowercased, and a
    # second capital less
    read = total = 0
    with (SHARED / "iclr2024" / "papers.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            title, abstract = row.get("title") or "", row.get("abstract") or ""
            name = title.split(":", 1)[0].strip() if ":" in title[:40] else ""
            if not abstract or not name:
                continue
            for each in (name, name.lower(), name[:1] + name[2:]):
                total += 1
                read += _same(c_pass, _head(abstract), each)
    assert total >= 2000 and read >= 0.97 * total


@pytest.mark.skipif(not (SHARED / "scifact").is_dir(), reason="no ../shared/corpora")
def test_every_scifact_abstract_gives_the_same_phrase(c_pass):
    with (SHARED / "scifact" / "corpus.jsonl").open(encoding="utf-8") as fh:
        abstracts = [json.loads(line)["text"] for line in fh]
    _check_all(c_pass, abstracts, least=0.97, every_name=False)


# Generated text: the words and marks the word loop tells apart (break words, connectors, subjects
# and the verb after them, "that" + an -s verb, -ly adverbs and their exceptions, plurals, capitals,
# parenthesised acronyms and parentheses of several words, possessives, $\epsilon$-terms, dashes, a
# sentence end glued to the next word, the statement's "we propose"), with non-ASCII letters, title
# case, spaces str.split knows.
_WORDS = (
    "we propose introduce present design designs presented developed that constructs which it then "
    "also learning learnings models model method methods graph graphs networks network policy policies "
    "attention loss losses analysis bus status data for of via with in on from under through and the a "
    "an to is are significantly family only apply anomaly robust deep sparse transformer Transformer "
    "LLMs GNN GNNs HOI (HOI) (HOI), [GAN]. (Safe RLHF), [two words] (of Tree parsing.Tree averaging. "
    "voters' authors’ x 3D 2 "
    "$\\epsilon$-greedy $x$ paper work study This We In Our, — – “quoted” ‘single’ e.g. i.e. "
    "résumé Ñandú ǅemal µm naïve ß straße Ωmega ΔSGD θ-net α ugly July holy daily "
    "self-supervised Graph-Neural -x- x- Learning spelling (G-L) Élan"
).split() + [
    # phrases of the same words in another order: candidates of equal value (the first one wins)
    "graph networks", "networks graph", "sparse attention policy", "policy sparse attention",
]
_SEPS = [" ", " ", " ", " ", "  ", ", ", ". ", "; ", ": ", "\u00a0", "\u2009", "\x1c", " (", ") "]


@st.composite
def texts(draw) -> str:
    n = draw(st.integers(min_value=40, max_value=320))
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=n, max_size=n))
    seps = draw(st.lists(st.sampled_from(_SEPS), min_size=n, max_size=n))
    return " " + "".join(w + s for w, s in zip(words, seps, strict=True))


_GENERATED_NAMES = [None, "", "MoFit", "GNN", "models", "Tree", "résumé", "SGL", "GSL", "EL", "ÉL"]


@settings(max_examples=300, deadline=None)
@given(texts(), st.sampled_from(_GENERATED_NAMES))
def test_generated_text_gives_the_same_phrase(c_pass, head, name):
    assert _same(c_pass, head, name)  # every character here is one the C pass reads


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=0, max_size=1800), st.one_of(st.none(), st.text(max_size=12)))
def test_any_text_gives_the_same_phrase_or_is_declined(c_pass, head, name):
    _same(c_pass, head, name)
    assert isinstance(keyphrase.describe(head, name), str)


@pytest.mark.parametrize("char", ["\u0130", "\u0131", "\u017f", "\u212a", "\u03a3", "\u4e2d", "\U0001d4aa"])
def test_a_character_it_does_not_read_is_left_to_python(c_pass, char):
    head = _head(load_corpus(ROOT / "data" / "corpus").papers[0].abstract)
    assert c_pass.describe(head, None) is not None
    declined = head[:50] + char + head[50:]
    assert c_pass.describe(declined, None) is None
    assert keyphrase.describe(declined) == keyphrase._describe(declined)
    assert c_pass.describe(head, "Name" + char) is None
    far = head + " " + char  # past the characters describe reads: read
    if len(head) >= 1500:
        assert c_pass.describe(far, None) == keyphrase._describe(far)


def test_without_the_compiled_pass_python_answers_and_says_why():
    code = (
        "import sys; sys.modules['retrieval._keyphrase'] = None\n"
        "from retrieval import keyphrase as k\n"
        "head = ' ' + ' '.join(['graph learning for robust policies, and we propose models.'] * 12)\n"
        "assert k.describe(head) == k._describe(head) != ''\n"
        "assert k._c is None and 'not built' in k.C_UNAVAILABLE, k.C_UNAVAILABLE\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


@pytest.mark.parametrize(
    "head",
    [
        " " + "a b " * 750,  # the most words 1,500 characters can hold
        " " + " ".join(f"w{i}" for i in range(1500)),  # the most distinct ones
        " " + "ab. " * 400,
        " " + "x—y " * 400,  # every dash spaced out: the longest text
        " " + "abc.Def " * 200,  # every full stop glued to a sentence
    ],
)
def test_extreme_texts_give_the_same_phrase(c_pass, head):
    for name in (None, "w3", "b"):
        assert _same(c_pass, head, name)


@pytest.mark.parametrize("glue", ["é", "ñ", "Ω", "µ", "_", "3", "ǅ"])
def test_a_subject_glued_to_a_word_character_opens_no_statement(c_pass, glue):
    """\\bwe: "ñwe propose ..." is not a statement (the C pass notes where a subject may open as it
    reads the text, non-ASCII word characters included); "(we propose" and "—we" are."""
    abstracts = [p.abstract for p in load_corpus(ROOT / "data" / "corpus").papers]
    abstracts += [b.abstract for b in pasted_corpus.BLOCKS]
    read = 0
    for abstract in abstracts:
        head = _head(abstract)
        for subject in (" we ", " We ", " this paper ", " this work ", " our study "):
            if subject not in head:
                continue
            for variant in (f" {glue}{subject[1:]}", f" ({subject[1:]}", f" —{subject[1:]}"):
                read += _same(c_pass, head.replace(subject, variant), None)
    assert read >= 20
