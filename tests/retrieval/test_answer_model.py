"""The fitted answer model (retrieval.answer_model, retrieval.roles) and its fitting recipe
(bench/fit_answer.py): the shipped file, sentence roles, structured labels, the conditional logit,
the answer restricted to given papers, and the gold rule of the benchmarks."""

from __future__ import annotations

import numpy as np
import pytest

from bench import fit_answer as F
from retrieval.answer import FEATURES
from retrieval.answer_model import MODEL_VERSION, AnswerModel, load_model, model_path
from retrieval.models import Paper
from retrieval.roles import ROLE_DIM, ROLES, label_role, role_probabilities


def _paper(pid: str, abstract: str, title: str = "") -> Paper:
    return Paper(id=pid, title=title or pid, authors=("A. Author",), et_al=False, area="Test",
                 abstract=abstract)


def test_the_shipped_model_is_small_versioned_and_matches_the_code():
    path = model_path()
    assert path.is_file() and path.stat().st_size <= 5 * 1024 * 1024
    model = load_model()
    assert model.features == FEATURES
    assert model.role_weights.shape == (ROLE_DIM, len(ROLES))
    assert model.weights.shape == (len(FEATURES),)
    assert len(model.answerable) == len(FEATURES) + 1
    assert 0.0 < model.abstain_below < 1.0
    assert load_model() is model  # read once


def test_save_and_load_round_trip_and_refuse_other_features(tmp_path):
    rng = np.random.default_rng(3)
    model = AnswerModel(
        FEATURES, rng.normal(size=len(FEATURES)), rng.normal(size=(ROLE_DIM, len(ROLES))).astype(np.float32),
        rng.normal(size=len(FEATURES) + 1), 0.25, {"note": "test"},
    )
    path = tmp_path / "m.npz"
    model.save(path)
    back = AnswerModel.load(path, FEATURES)
    assert np.array_equal(back.weights, model.weights)
    assert np.array_equal(back.role_weights, model.role_weights)
    assert np.array_equal(back.answerable, model.answerable)
    assert back.abstain_below == 0.25 and back.meta == {"note": "test"}
    with pytest.raises(ValueError, match="other features"):
        AnswerModel.load(path, FEATURES[:-1])
    other = tmp_path / "old.npz"
    np.savez(other, version=np.array("answer-v0"))
    with pytest.raises(ValueError, match=MODEL_VERSION):
        AnswerModel.load(other)


def test_probabilities_are_a_softmax_over_one_questions_candidates():
    model = AnswerModel(FEATURES, np.ones(len(FEATURES)), np.zeros((ROLE_DIM, len(ROLES)), np.float32))
    x = np.zeros((3, len(FEATURES)))
    x[1, 0] = 2.0
    p = model.probabilities(x)
    assert p.sum() == pytest.approx(1.0) and p.argmax() == 1
    assert not model.abstains(x[1])  # no answerable model: never silent


def test_structured_labels_decide_the_role():
    assert label_role("RESULTS") == "result"
    assert label_role("MAIN OUTCOME MEASURES") == "method"
    assert label_role("BACKGROUND & AIMS") == "background"
    assert label_role("Materials and Methods") == "method"
    assert label_role("结论") == "result"
    assert label_role("NOTE") is None
    probs = role_probabilities(load_model().role_weights, ["We enrolled 40 adults.", "It worked."],
                               ["", "CONCLUSIONS"])
    assert probs[1].tolist() == [0.0, 0.0, 0.0, 1.0, 0.0]
    assert probs[0].sum() == pytest.approx(1.0)


def test_the_role_classifier_reads_cs_abstracts():
    sentences = [
        "Large language models are increasingly used to write code.",
        "However, they often produce programs that do not compile.",
        "In this paper, we aim to reduce compilation errors of generated code.",
        "We train a verifier on compiler feedback and use it to rerank sampled programs.",
        "Experiments show that reranking cuts compilation errors by 40% on three benchmarks.",
    ]
    probs = role_probabilities(load_model().role_weights, sentences)
    roles = [ROLES[i] for i in probs.argmax(axis=1)]
    assert roles[0] == "background"
    assert roles[3] == "method"
    assert roles[4] == "result"


def test_a_structured_abstract_label_is_never_quoted():
    from retrieval.index import BM25Params, build_index

    papers = [_paper(
        "rct",
        "BACKGROUND Statins lower cholesterol. OBJECTIVE To test statins after stroke. METHODS We "
        "randomised 400 stroke patients to statins or placebo. RESULTS Recurrent stroke fell by 20% "
        "with statins. CONCLUSIONS Statins prevent recurrent stroke.",
    )] + [_paper(f"f{i:02d}", f"Topic {i} papers study subject {i} with data {i}.") for i in range(20)]
    index = build_index(papers, BM25Params())
    answer = index.answer("Do statins prevent recurrent stroke after a first one?", k=5)
    assert answer.sentences
    for s in answer.sentences:
        assert not s.text.startswith(("RESULTS", "CONCLUSIONS", "METHODS", "BACKGROUND", "OBJECTIVE"))


def test_answer_within_given_papers(seed_index):
    question = "How are sparse autoencoders evaluated for interpretability?"
    free = seed_index.answer(question)
    assert free.sentences
    top = free.sentences[0].paper.id
    others = [p.id for p in seed_index.papers if p.id != top]
    within = seed_index.answer(question, within=others)
    assert all(s.paper.id != top for s in within.sentences)
    only = seed_index.answer(question, within=[top, "no-such-id"])
    assert {s.paper.id for s in only.sentences} <= {top}
    assert seed_index.answer(question, within=[]).sentences == ()


# -- the fitting recipe -----------------------------------------------------------------------------


def test_macro_f1():
    y = np.array([0, 0, 1, 1, 2])
    assert F.macro_f1(y, y, 3) == pytest.approx(1.0)
    assert F.macro_f1(y, np.array([0, 0, 1, 1, 1]), 3) == pytest.approx((1 + 0.8 + 0) / 3)


def _example(x: np.ndarray, gold: list[bool], group: int = 0) -> F.Example:
    """Candidates of one paper (the one the rerank puts first) whose first columns are ``x``."""
    asked = F.Asked("t", f"q{len(x)}-{group}", "q", F.Gold({"p": []}), group)
    wide = np.zeros((len(x), len(F.FEATURES)))
    wide[:, : x.shape[1]] = x
    wide[:, F.FEATURES.index("rules_top_paper")] = 1.0
    return F.Example(asked, wide, np.array(gold), list(range(len(x))), ["p"] * len(x),
                     tuple(f"s{i}" for i in range(len(x))))


def test_the_conditional_logit_learns_which_candidate_answers():
    rng = np.random.default_rng(0)
    data = []
    for q in range(60):
        x = rng.normal(size=(6, 3))
        best = int(np.argmax(x[:, 0] - x[:, 1]))  # the answer: high on feature 0, low on feature 1
        data.append(_example(x, [i == best for i in range(6)], q % 5))
    theta = F.fit_clogit(data, [1.0] * len(data), 1e-4)
    assert theta[0] > 0 > theta[1]
    assert F.score_examples(data, theta)["answer@1"] >= 0.9
    # A question whose answer is not among its candidates teaches nothing.
    same = F.fit_clogit([*data, _example(rng.normal(size=(4, 3)), [False] * 4)], [1.0] * 61, 1e-4)
    assert np.allclose(same, theta)


def test_fitting_is_deterministic():
    rng = np.random.default_rng(1)
    data = [_example(rng.normal(size=(5, 4)), [True, False, False, False, False]) for _ in range(20)]
    assert np.array_equal(F.fit_clogit(data, [1.0] * 20, 1e-3), F.fit_clogit(data, [1.0] * 20, 1e-3))
    x = rng.normal(size=(50, 3))
    y = x[:, 0] > 0
    w = F.fit_logistic(x, y)
    assert np.array_equal(w, F.fit_logistic(x, y)) and w[0] > 0


def test_a_quote_answers_when_it_overlaps_a_gold_sentence_on_half_the_shorter():
    abstract = "Background here. RESULTS The rate fell by 20% (p < 0.05). Conclusions follow."
    gold_text = "RESULTS The rate fell by 20% (p < 0.05)."
    norm = F.norm_text(abstract)
    at = norm.find(F.norm_text(gold_text))
    gold = F.Gold({"p": [(at, at + len(F.norm_text(gold_text)))]})
    paper = _paper("p", abstract)
    assert F.quote_hits(gold, paper, "The rate fell by 20% (p < 0.05).")  # label off: still the sentence
    assert not F.quote_hits(gold, paper, "Background here.")
    assert not F.quote_hits(gold, _paper("other", abstract), "The rate fell by 20% (p < 0.05).")


def test_hand_rules_are_counted(tmp_path):
    from bench.ask import count_hand_rules

    assert count_hand_rules(model_path().parents[1] / "answer.py")[0] >= 0
    src = (
        'import re\nA = 0.25\nB = 1\nC = re.compile("x")\n'
        'D = "one two three".split()\nE = ("a", "b", "c")\n'
    )
    path = tmp_path / "m.py"
    path.write_text(src)
    assert count_hand_rules(path) == (1, 3)


# -- the rules' view and the reply order --------------------------------------------------------------


def test_cue_sets_name_what_each_sentence_says_it_does():
    from retrieval.roles import CUES, cue_marks, cue_sets

    sets = cue_sets([
        "Training is done by gradient descent.",  # the opening: the field's way, not the paper's method
        "We propose Foo, which is trained by distillation.",
        "Code is available at github.com/foo/foo.",
        "However, the cost remains prohibitive.",
    ])
    assert "first" in sets[0] and "method" not in sets[0]
    assert {"propose", "method"} <= sets[1]
    assert "meta" in sets[2] and "meta" not in sets[1]
    assert "problem" in sets[3]
    marks = cue_marks(sets)
    assert marks.shape == (4, len(CUES)) and marks[1, CUES.index("propose")] == 1.0
    assert marks[0, CUES.index("method")] == 0.0


def test_the_candidates_mark_the_rules_answer(seed_index):
    """The hand-set rules (bench/answer_rules.py) and the learned choice's ``rules_answer`` feature are one
    implementation: the candidate it marks is the rules' first quote."""
    from bench import answer_rules
    from retrieval.answer import FEATURES, candidates

    answered = 0
    for question in ("How are sparse autoencoders evaluated for interpretability?",
                     "Why are diffusion policies slow at inference?", "What is teacher hacking?"):
        rules = answer_rules.answer(seed_index, question)
        answered += bool(rules.sentences)
        found = candidates(seed_index, question)
        marked = [j for j in range(len(found.pairs)) if found.features[j, FEATURES.index("rules_answer")]]
        if not rules.sentences:
            assert not marked
            continue
        assert len(marked) == 1
        doc = found.pairs[marked[0]][0]
        assert seed_index.papers[doc].id == rules.sentences[0].paper.id
        assert found.texts[marked[0]] == rules.sentences[0].text
    assert answered >= 2


def test_the_answer_comes_from_the_paper_the_rerank_puts_first():
    from retrieval.answer import FEATURES, reply_order

    x = np.zeros((5, len(FEATURES)))
    x[[2, 3], FEATURES.index("rules_top_paper")] = 1.0
    scores = np.array([5.0, 4.0, 1.0, 3.0, 2.0])
    assert reply_order(x, scores) == [3, 0, 1, 4, 2]
    assert reply_order(np.zeros((3, len(FEATURES))), np.array([1.0, 3.0, 2.0])) == [1, 2, 0]


def test_the_abstain_threshold_decides_most_questions_right():
    # Each question one vote: silencing 0.1 costs no answerable question; silencing 0.3 as well would
    # cost 0.2 too (a tie), and the lowest threshold wins ties.
    t = F.abstain_threshold([0.9, 0.8, 0.7, 0.2], [0.1, 0.3, 0.75])
    assert 0.1 < t <= 0.2
    assert F.abstain_threshold([0.9, 0.8], [0.1, 0.2]) > 0.2  # both absent ones silenced, no real one
    assert F.abstain_threshold([0.9, 0.8], []) == 0.0
