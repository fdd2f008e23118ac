"""Derived titles: what a reader sees (a name leads, a long form follows its acronym, a coined term is
named, no dangling word, paired brackets, LaTeX as Unicode, a bounded length, never an error) on the
bundled corpus, the pasted fixture, written abstracts and any text. How close titles come to real ones
is measured by bench/titles.py against the ICLR 2024 titles, not pinned here: a golden table would only
copy what the models print today."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval import titles
from retrieval.corpus import load_corpus
from retrieval.markup import strip_markup
from retrieval.titles import TITLE_LIMIT, derive_title
from retrieval.tokenize import tokenize
from tests.retrieval.fixtures import pasted_corpus

ROOT = Path(__file__).resolve().parents[2]
DANGLING = {"a", "an", "the", "of", "for", "and", "or", "to", "in", "on", "with", "by", "from", "via"}


@pytest.fixture(scope="module")
def abstracts() -> list[str]:
    seeds = [p.abstract for p in load_corpus(ROOT / "data" / "corpus").papers]
    return seeds + [b.abstract for b in pasted_corpus.BLOCKS]


def paired(title: str) -> bool:
    opened: list[str] = []
    for c in title:
        if c in "([":
            opened.append(c)
        elif c in ")]" and (not opened or opened.pop() != "(["[")]".index(c)]):
            return False
    return not opened


def test_every_title_is_a_short_clean_line(abstracts):
    for abstract in abstracts:
        title = derive_title(abstract)
        assert 0 < len(title) <= TITLE_LIMIT, abstract[:60]
        assert "\n" not in title and "$" not in title and "\\" not in title and "*" not in title, title
        assert title.split()[-1].lower() not in DANGLING and title[-1] not in ",;:-(", title
        assert paired(title), title
        first = title.split()[0]
        assert not (first.isascii() and first.isalpha() and first.islower()), title  # capitalised


def test_every_title_word_comes_from_its_abstract(abstracts):
    # extractive: a search for a word of the title finds its paper, and nothing is made up
    for abstract in abstracts:
        words = set(tokenize(derive_title(abstract)))
        assert words and words <= set(tokenize(strip_markup(abstract))), (
            derive_title(abstract),
            abstract[:80],
        )


def test_loaded_papers_carry_the_derived_titles():
    for paper in load_corpus(ROOT / "data" / "corpus").papers:
        assert paper.title_derived and paper.title == derive_title(paper.abstract)


def test_the_version_names_the_rules_and_the_model_file(tmp_path, monkeypatch):
    version = titles.TITLE_RULES_VERSION
    assert version.startswith("titles-") and version == titles.title_rules_version()
    other = tmp_path / "titles_model.json"
    other.write_text(json.dumps({"other": 1}), encoding="utf-8")
    titles.title_rules_version.cache_clear()
    monkeypatch.setattr(titles, "MODEL_PATH", other)
    try:
        assert titles.title_rules_version() != version  # another model file: another version
    finally:
        titles.title_rules_version.cache_clear()


@pytest.mark.parametrize(
    ("abstract", "name"),
    [
        ("Sparse autoencoders are popular for interpretability. We introduce SAEBench, a comprehensive "
         "evaluation suite for sparse autoencoders with eight metrics. SAEBench measures ...", "SAEBench"),
        ("Text-to-image models are slow. In this paper we present FlashGen, a distilled diffusion model "
         "that generates images in one step. FlashGen matches the quality of larger models.", "FlashGen"),
        ("Graph neural networks are hard to certify. We propose GNNCert, a certified defense against "
         "structure perturbations of graph classifiers. GNNCert is provably robust.", "GNNCert"),
    ],
)  # fmt: skip
def test_the_introduced_name_leads_the_title(abstract, name):
    assert derive_title(abstract).startswith(f"{name}: ")


def test_a_long_form_follows_its_acronym():
    abstract = (
        "Offline reinforcement learning needs expressive policies. We propose the Single-Step Completion "
        "Policy (SSCP), which trains a policy to complete a trajectory in one step. SSCP outperforms "
        "diffusion policies on standard offline benchmarks while it is ten times faster."
    )
    assert derive_title(abstract).startswith("SSCP: Single-Step Completion Policy")


@pytest.mark.parametrize(
    ("abstract", "term"),
    [
        ("Post-training of language models relies on distillation. In this paper, we investigate "
         "whether a similar phenomenon, that we call teacher hacking, can occur during knowledge "
         "distillation. This could arise because the teacher is imperfect.", "teacher hacking"),
        ("Large models repeat their own errors. We term this effect hallucination snowballing and "
         "measure it on question answering benchmarks across model sizes.", "hallucination snowballing"),
        ("Training runs fail late. We study a failure, dubbed loss spiking, in the training of deep "
         "networks, and show how a warm-up schedule avoids it.", "loss spiking"),
    ],
)  # fmt: skip
def test_a_term_the_authors_coin_is_named(abstract, term):
    assert term in derive_title(abstract).casefold()


def test_the_bundled_teacher_hacking_paper_names_its_term():
    found = [
        p
        for p in load_corpus(ROOT / "data" / "corpus").papers
        if "that we call teacher hacking" in p.abstract
    ]
    assert found and all("teacher hacking" in p.title.casefold() for p in found)


def test_latex_in_the_kept_words_is_shown_as_unicode():
    abstract = (
        "Diffusion models generate images on a fixed grid. We introduce $\\infty$-Diff, a generative "
        "diffusion model defined in an infinite-dimensional Hilbert space. $\\infty$-Diff samples at "
        "any resolution."
    )
    title = derive_title(abstract)
    assert title.startswith("∞-Diff") and "$" not in title and "\\" not in title


@pytest.mark.parametrize("abstract", ["", "   ", "{}", "()", "$$", "\\", None, 42])
def test_degenerate_abstracts_get_a_title(abstract):
    title = derive_title(abstract)  # type: ignore[arg-type]
    assert title and len(title) <= TITLE_LIMIT and paired(title)


def test_long_unbroken_text_stays_within_the_limit():
    assert len(derive_title("a" * 5000)) <= TITLE_LIMIT
    assert len(derive_title(" ".join(["Transformer-XL-Mega"] * 300))) <= TITLE_LIMIT


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=600))
def test_any_text_gets_a_title_within_the_limit(text):
    title = derive_title(text)
    assert title and len(title) <= TITLE_LIMIT and paired(title)


_OPENINGS = st.sampled_from([
    "We propose ITIT (InTegrating Image Text), a method.",
    "We introduce TAB (Temporal Batch Normalization), a novel method for spiking networks.",
    "Our method, RET (Resilient Text Similarity), is a lightweight deep model.",
    "We study sampling processes (including EDM, DDIM and others) in diffusion models.",
])  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    _OPENINGS,
    st.lists(st.sampled_from(["(", ")", "[", "]", "the", "model", "of", "Net", ",", "."]), max_size=30),
)
def test_generated_titles_pair_their_brackets(opening, rest):
    title = derive_title(f"{opening} {' '.join(rest)} The results improve over baselines by far.")
    assert paired(title), title
