"""Extractive answers (retrieval.answer): the answer sentence first with its citation, question kinds and
sentence roles, decoys sharing one word, honest silence, stability across corpus size; and the data
checks of bench/ask.py."""

from __future__ import annotations

import pytest

from retrieval.answer import DEFAULT_SENTENCES, question_kind, rank_papers
from retrieval.errors import EmptyQueryError
from retrieval.markup import strip_markup
from retrieval.models import Paper


def test_answer_leads_with_the_best_sentence_then_at_most_two_that_support_it(seed_index):
    answer = seed_index.answer("How are sparse autoencoders evaluated for interpretability?")
    assert 1 <= len(answer.sentences) <= DEFAULT_SENTENCES == 3
    first_cited: list[str] = []
    for s in answer.sentences:
        assert s.text in " ".join(strip_markup(s.paper.abstract).split())
        if s.paper.id not in first_cited:
            first_cited.append(s.paper.id)
    assert [p.id for p in answer.papers] == first_cited
    assert len({s.text for s in answer.sentences}) == len(answer.sentences)
    # The answer is the best sentence of the best paper for the question; support follows, best first.
    [top] = rank_papers(seed_index, answer.question, 1)
    assert answer.sentences[0].paper.id == seed_index.papers[top].id
    support = [s.score for s in answer.sentences[1:]]
    assert support == sorted(support, reverse=True)
    assert any(w in answer.sentences[0].text.lower() for w in ("autoencoder", "sae"))


def test_answer_respects_k(seed_index):
    assert len(seed_index.answer("offline reinforcement learning policies", k=2).sentences) <= 2
    assert len(seed_index.answer("how are sparse autoencoders evaluated?", k=1).sentences) == 1
    with pytest.raises(ValueError):
        seed_index.answer("sparse autoencoders", k=0)


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
    assert answer.sentences[0].paper.id == "answer"
    assert answer.sentences[0].text.startswith("We distil a diffusion policy into a one-step policy")
    quoted = {s.paper.id for s in answer.sentences}
    assert not quoted & {"decoy-faster", "decoy-policy", "other-diffusion"}
    assert all("faster alternative" not in s.text for s in answer.sentences)


@pytest.mark.xfail(strict=True, reason=(
    "issue 32: for 'how can diffusion policies be made faster' the learned choice quotes SSCP's "
    "'We further extend SSCP to goal-conditioned RL' (the right paper, not the method); the hand-set rules "
    "were tuned on this question. bench/ask.py compares both on questions neither was tuned on."
))
def test_the_issue_examples_on_the_bundled_corpus(seed_index):
    """The method question quotes the method, not the opening background; the definition question
    quotes where the term is introduced, not where it is mitigated."""
    faster = seed_index.answer("how can diffusion policies be made faster at inference?")
    assert faster.sentences[0].paper.id == "y13x62p7"  # SSCP
    assert faster.sentences[0].text.startswith("We propose the Single-Step Completion Policy")
    assert all("phenotype" not in s.text for s in faster.sentences)
    hacking = seed_index.answer("what is teacher hacking?")
    assert "that we call teacher hacking" in hacking.sentences[0].text
    assert "mitigates" not in hacking.sentences[0].text


def test_nothing_when_no_paper_holds_two_topical_words_of_the_question(seed_index):
    """No bundled paper mentions both "diffusion" and "faster" ("get" only frames the question):
    say nothing rather than dress a background sentence up as the answer."""
    assert seed_index.answer("how do diffusion models get faster?").sentences == ()
    # Words the corpus never uses still count: only "affect" is indexed here.
    assert seed_index.answer("how does the weather affect cats?").sentences == ()
    # Nothing but frame words: nothing to answer about.
    assert seed_index.answer("how does it work?").sentences == ()
    assert seed_index.answer("what makes it good?").sentences == ()
    # One topical word asked about, one held: that is an answer.
    assert seed_index.answer("what are sparse autoencoders?").sentences


def test_a_corpus_of_one_or_two_papers_is_answered():
    from retrieval.index import BM25Params, build_index

    one = build_index([_abstract_paper(
        "solo", "Solo",
        "Reward models score responses of language models. We train reward models on preference pairs.",
    )], BM25Params())
    answer = one.answer("how are reward models trained?")
    assert answer.sentences and answer.sentences[0].text.startswith("We train reward models")
    assert one.answer("how do diffusion models get faster?").sentences == ()


def test_question_kinds():
    assert question_kind("What is teacher hacking?") == "definition"
    assert question_kind("what do people mean by LLM hallucinations?") == "definition"
    assert question_kind("How can diffusion policies be made faster?") == "method"
    assert question_kind("how does SliceGPT make models smaller?") == "method"
    assert question_kind("How much faster is it?") == "finding"
    assert question_kind("Does RLHF help reasoning?") == "finding"
    assert question_kind("how does RTRL compare with IMPALA?") == "finding"
    assert question_kind("Why do web agents struggle?") == "motivation"
    assert question_kind("sparse autoencoders") == "other"


def _tiny_index(abstracts: dict[str, str]):
    from retrieval.index import BM25Params, build_index

    papers = [_abstract_paper(pid, pid, text) for pid, text in abstracts.items()]
    papers += [
        _abstract_paper(f"filler{i:02d}", f"A study of {topic}", sentence)
        for i, (topic, sentence) in enumerate(_FILLER_TOPICS)
    ]
    return build_index(papers, BM25Params())


def test_stems_that_should_meet_do():
    index = _tiny_index({
        "prefs": "Feedback for alignment is collected as ratings or rankings of responses. "
                 "We find that preferences inferred from ratings and rankings disagree for most annotators. "
                 "Annotators rate long responses higher.",
    })
    answer = index.answer("Do ratings and rankings of responses agree?")
    assert "disagree for most annotators" in answer.sentences[0].text


def test_frame_words_never_pick_the_paper():
    index = _tiny_index({
        "people": "Many people use chatbots every day. People ask chatbots about health.",
        "halluc": "Language models produce fluent but false claims, known as hallucinations. "
                  "We reduce hallucinations with retrieval.",
    })
    assert rank_papers(index, "what do people really mean by hallucinations?", 1) == [
        index.position("halluc")
    ]


def test_sentence_choice_does_not_swing_with_the_rest_of_the_corpus(seed_papers, synth_papers):
    """The same question over the bundled corpus and over it plus 5,000 other abstracts quotes the
    same first sentence of the same paper."""
    from retrieval.index import BM25Params, build_index

    small = build_index(seed_papers, BM25Params())
    big = build_index([*seed_papers, *synth_papers], BM25Params())
    questions = [
        "how can diffusion policies be made faster at inference?",
        "what is teacher hacking?",
        "How are sparse autoencoders evaluated for interpretability?",
        "why do reward models get hacked?",
    ]
    for q in questions:
        a, b = small.answer(q), big.answer(q)
        assert a.sentences and b.sentences
        assert a.sentences[0].paper.id == b.sentences[0].paper.id
        assert a.sentences[0].text == b.sentences[0].text


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
