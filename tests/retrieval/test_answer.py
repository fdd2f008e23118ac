"""Extractive answers (retrieval.answer): quotes with citations, decoys sharing one word, k."""

from __future__ import annotations

import pytest

from retrieval.answer import ANSWER_MIN_SHARE
from retrieval.errors import EmptyQueryError
from retrieval.models import Paper
from retrieval.text import strip_markup


def test_answer_quotes_two_to_four_sentences_with_citations(seed_index):
    answer = seed_index.answer("How are sparse autoencoders evaluated for interpretability?")
    assert 2 <= len(answer.sentences) <= 4
    first_cited: list[str] = []
    for s in answer.sentences:
        assert s.text in strip_markup(s.paper.abstract)
        if s.paper.id not in first_cited:
            first_cited.append(s.paper.id)
    assert [p.id for p in answer.papers] == first_cited
    per_paper = [s.paper.id for s in answer.sentences]
    assert all(per_paper.count(i) <= 2 for i in per_paper)
    assert len({s.text for s in answer.sentences}) == len(answer.sentences)
    assert any("autoencoder" in s.text.lower() for s in answer.sentences)


def test_answer_respects_k(seed_index):
    assert len(seed_index.answer("offline reinforcement learning policies", k=2).sentences) <= 2


def test_answer_without_matches_and_without_words(seed_index):
    empty = seed_index.answer("zzzyzzx qqqwv?")
    assert empty.sentences == () and empty.papers == ()
    with pytest.raises(EmptyQueryError):
        seed_index.answer("what is the?")


# Twenty-four abstracts: one answers "how can diffusion policies be made faster?"; three decoys share
# a single topical word with it ("faster", "policy", "diffusion" — "made" only frames the question).
_FILLER_TOPICS = [
    ("graph", "Graph neural networks pass messages between neighbouring nodes of a molecule graph."),
    ("speech", "Speech recognisers transcribe spoken audio into text with acoustic encoders."),
    ("vision", "Convolutional image classifiers label photographs of animals and vehicles."),
    ("fairness", "Fairness audits measure demographic parity of credit scoring classifiers."),
    ("privacy", "Differential privacy adds calibrated noise to aggregate statistics of user records."),
    ("optimisation", "Adaptive optimisers rescale gradients by running estimates of their second moments."),
    ("retrieval", "Dense retrievers embed queries and documents into one vector space for search."),
    ("translation", "Machine translation systems map sentences between languages with attention."),
    ("tabular", "Gradient boosted trees remain strong baselines on tabular benchmarks."),
    ("causality", "Causal discovery recovers directed acyclic graphs from observational samples."),
    ("bandits", "Contextual bandits trade exploration against exploitation of known arms."),
    ("theory", "Generalisation bounds relate the margin of a classifier to its test error."),
    ("robotics", "Legged robots learn to walk over rough terrain from proprioceptive signals."),
    ("weather", "Neural weather models forecast temperature fields days ahead."),
    ("chemistry", "Molecular property predictors estimate solubility from chemical structure."),
    ("music", "Symbolic music models compose melodies note by note."),
    ("astronomy", "Telescope surveys classify galaxies by morphology from deep images."),
    ("education", "Knowledge tracing models predict whether a student answers the next exercise."),
    ("agriculture", "Crop yield predictors combine satellite imagery with soil measurements."),
    ("finance", "Volatility models forecast the variance of asset returns from past prices."),
]


def _abstract_paper(pid: str, title: str, abstract: str) -> Paper:
    return Paper(id=pid, title=title, authors=("A. Author",), et_al=False, area="Test", abstract=abstract)


@pytest.fixture(scope="module")
def decoy_index():
    from retrieval.index import BM25Params, build_index

    papers = [
        _abstract_paper(
            f"filler{i:02d}",
            f"A study of {topic}",
            f"{sentence} We study {topic} at scale with careful experiments. "
            f"Results on standard {topic} benchmarks improve over strong baselines.",
        )
        for i, (topic, sentence) in enumerate(_FILLER_TOPICS)
    ]
    papers += [
        _abstract_paper(
            "answer",
            "One-step diffusion policies",
            "Diffusion policies model multimodal robot actions but need many denoising steps per action. "
            "We distil a diffusion policy into a one-step policy that acts twenty times faster. "
            "The distilled policy keeps the success rate of the diffusion teacher on manipulation tasks.",
        ),
        _abstract_paper(
            "decoy-faster",
            "Automated phenotyping",
            "Manual chart review of patient records is slow and costly. "
            "Automated phenotyping from billing codes is a much faster alternative for cohort studies. "
            "We validate the phenotypes against clinician annotations in two hospitals.",
        ),
        _abstract_paper(
            "decoy-policy",
            "Constrained Markov decision processes",
            "We bound the sample complexity of finding a near-optimal policy in constrained MDPs. "
            "Our algorithm plans with an empirical model of the transition kernel. "
            "The bounds are tight up to logarithmic factors in the horizon.",
        ),
        _abstract_paper(
            "other-diffusion",
            "Diffusion models for images",
            "Much progress has been made on diffusion models that generate photorealistic images. "
            "Classifier-free guidance trades sample diversity for fidelity. "
            "We study guidance schedules on large image benchmarks.",
        ),
    ]
    assert len(papers) >= 20  # BM25Okapi needs a real corpus: no zero idf for common words
    return build_index(papers, BM25Params())


def test_answer_does_not_quote_a_sentence_sharing_one_word_with_the_question(decoy_index):
    answer = decoy_index.answer("how can diffusion policies be made faster?")
    quoted = {s.paper.id for s in answer.sentences}
    assert 2 <= len(answer.sentences) <= 4
    assert "answer" in quoted
    assert not quoted & {"decoy-faster", "decoy-policy", "other-diffusion"}
    assert all("faster alternative" not in s.text for s in answer.sentences)
    best = answer.sentences[0].score
    assert all(s.score >= ANSWER_MIN_SHARE * best for s in answer.sentences)


def test_answer_on_the_bundled_corpus_skips_the_unrelated_faster_sentence(seed_index):
    answer = seed_index.answer("how can diffusion policies be made faster?")
    assert 2 <= len(answer.sentences) <= 4
    assert [p.id for p in answer.papers] == ["y13x62p7"]  # SSCP: single-step completion policies
    assert all("phenotype" not in s.text for s in answer.sentences)


def test_answer_keeps_to_the_subject_when_no_paper_relates_the_question_words(seed_index):
    """No bundled paper mentions both "diffusion" and "faster": quote about the subject most of the
    candidate papers share (diffusion), not the one sentence that happens to say "faster"."""
    answer = seed_index.answer("how do diffusion models get faster?")
    assert 2 <= len(answer.sentences) <= 4
    assert all("diffusion" in s.text.lower() for s in answer.sentences)


# -- the evaluation data of bench/ask.py ------------------------------------------------------------


def test_shared_run_counts_consecutive_words_names_aside():
    from bench.ask import shared_run

    gold = "We find that the assertiveness of an output skews the perceived rate of factuality errors."
    assert shared_run("Does assertiveness skew how people rate errors?", gold)[0] == 1
    assert shared_run("Why does the perceived rate of factuality errors rise?", gold) == (
        6, "the perceived rate of factuality errors",
    )
    # A name written as one (capitals, digits) breaks a run; so does a listed name.
    named = "SliceGPT can remove up to 25% of the model parameters"
    assert shared_run("How much can SliceGPT remove?", named)[0] == 1
    term = "we propose sum-product-set networks, an extension of probabilistic circuits"
    assert shared_run("What are sum-product-set networks?", term)[0] == 4
    assert shared_run("What are sum-product-set networks?", term, ["sum-product-set networks"])[0] == 0


def test_the_question_file_is_sound():
    from bench.ask import DEFAULT_CORPUS, DEFAULT_DATA, _norm, check_questions, load_questions, load_source
    from retrieval.corpus import load_corpus

    if not (DEFAULT_CORPUS / "papers.jsonl").exists():
        pytest.skip(f"{DEFAULT_CORPUS} is not available")
    questions = load_questions(DEFAULT_DATA)
    served = {_norm(p.abstract) for p in load_corpus(DEFAULT_CORPUS / "abstracts.txt").papers}
    assert check_questions(questions, load_source(DEFAULT_CORPUS), served) == []


def test_the_question_check_catches_copied_and_invented_gold(tmp_path):
    from bench.ask import Question, check_questions

    abstract = "Signal delay occurs when there is a lag between an agent's perception and its actions."
    source = {"p1": {"abstract": abstract, "title": "T"}}
    served = {"signaldelayoccurswhenthereisalagbetweenanagentsperceptionanditsactions"}
    copied = Question("q1", "definition", "When is there a lag between an agent's perception?", "p1",
                      (abstract,))
    invented = Question("q2", "method", "How do agents act?", "p1", ("agents act quickly",))
    unknown = Question("q3", "why", "Why?", "p9", ("x",))
    problems = check_questions([copied, invented, unknown], source, served)
    assert any(p.startswith("q1: shares 7 consecutive words") for p in problems)
    assert any(p.startswith("q2: gold is not verbatim") for p in problems)
    assert any(p.startswith("q3: kind 'why'") for p in problems)
    assert any(p.startswith("q3: paper p9 is not in papers.jsonl") for p in problems)
    assert "only 3 questions (at least 80)" in problems
