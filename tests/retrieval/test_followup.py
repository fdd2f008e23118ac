"""Follow-up answers (retrieval.followup): answering from given papers only, the subject-change measure,
the shipped model and what bench/chat.py fits it with."""

from __future__ import annotations

import json

import numpy as np
import pytest

from retrieval.answer import FEATURES as FEATURES_ANSWER
from retrieval.answer import answer, candidates, rank_papers
from retrieval.errors import RetrievalError
from retrieval.followup import (
    FEATURES,
    MODEL_PATH,
    FollowUpModel,
    answer_about,
    answer_follow_up,
    is_new_subject,
    load_model,
    sentence_features,
    subject_shift,
)
from retrieval.tokenize import tokenize

SAE = "How are sparse autoencoders evaluated for interpretability?"


def test_within_ranks_only_the_given_papers_with_the_corpus_statistics(seed_index):
    best = rank_papers(seed_index, SAE, 3)
    assert len(best) >= 2
    only = [best[1]]
    restricted = answer(seed_index, SAE, within=only)
    assert restricted.sentences
    assert {s.paper.id for s in restricted.sentences} == {seed_index.papers[best[1]].id}
    # The same question over the whole corpus quotes the best paper first: the restriction changed the answer.
    assert answer(seed_index, SAE).sentences[0].paper.id == seed_index.papers[best[0]].id
    # Word statistics are the whole corpus's: the paper's sentences weigh the question's words as they do
    # unrestricted (only its BM25 share of the best paper and its rank differ).
    free, alone = candidates(seed_index, SAE), candidates(seed_index, SAE, within=only)
    rows = [j for j, (doc, _) in enumerate(free.pairs) if doc == best[1]]
    assert rows and alone.pairs == tuple(free.pairs[j] for j in rows)
    ranks = ("bm25", "rank0", "rank1", "rank2", "rules_paper", "rules_top_paper", "rules_answer")
    same = [i for i, name in enumerate(FEATURES_ANSWER) if name not in ranks]
    assert np.allclose(alone.features[:, same], free.features[rows][:, same])


def test_a_follow_up_is_answered_from_the_cited_papers_only(seed_index):
    first = seed_index.answer(SAE)
    papers = list(first.papers)
    for follow_up in ("how much better is it?", "what data did they use?", "how is it trained?"):
        reply = answer_follow_up(seed_index, papers, follow_up, SAE, [s.text for s in first.sentences])
        assert reply.sentences and reply.question == follow_up
        assert {s.paper.id for s in reply.sentences} <= {p.id for p in papers}
        assert [p.id for p in reply.papers] == list(dict.fromkeys(s.paper.id for s in reply.sentences))
        assert len(reply.sentences) <= 3
        scores = [s.score for s in reply.sentences]
        assert scores == sorted(scores, reverse=True)


def test_answer_about_one_paper_uses_the_answerer_first(seed_index):
    [top] = rank_papers(seed_index, SAE, 1)
    paper = seed_index.papers[top]
    assert answer_about(seed_index, [paper], SAE) == answer(seed_index, SAE, within=[top])
    # A question whose words the abstract lacks still gets the chooser's pick from that paper.
    odd = answer_about(seed_index, [paper], "what data did they use?")
    assert odd.sentences and {s.paper.id for s in odd.sentences} == {paper.id}


def test_features_describe_every_quotable_sentence(seed_index):
    first = seed_index.answer(SAE)
    quoted = [s.text for s in first.sentences]
    rows, matrix = sentence_features(seed_index, list(first.papers), "how much better is it?", SAE, quoted)
    assert matrix.shape == (len(rows), len(FEATURES)) and np.isfinite(matrix).all()
    column = {name: matrix[:, i] for i, name in enumerate(FEATURES)}
    quoted_first = [r.text for r, q in zip(rows, column["quoted_first"], strict=True) if q]
    assert quoted_first == [first.sentences[0].text]
    assert set(column["first"]) <= {0.0, 1.0}
    assert column["position"].min() >= 0 and column["position"].max() <= 1
    own = [r for r, other in zip(rows, column["other_paper"], strict=True) if not other]
    assert own and all(r.paper.id == first.papers[0].id for r in own)


def test_the_subject_shift_counts_only_words_the_cited_papers_lack(seed_index):
    papers = list(seed_index.answer(SAE).papers)
    assert subject_shift(seed_index, papers, "how much better is it?") < subject_shift(
        seed_index, papers, "how does offline reinforcement learning avoid distribution shift?"
    )
    held = "how do they extract the latents?"
    assert {"extract", "latent"} <= {t for p in papers for t in tokenize(p.abstract)}
    assert subject_shift(seed_index, papers, held) == 0.0  # held by the papers
    assert subject_shift(seed_index, papers, "what about zzyzx qwerty?") == 0.0  # the corpus never says these
    model = FollowUpModel({k: 0.0 for k in FEATURES}, shift_threshold=0.5)
    new = "offline reinforcement learning distribution shift policies"
    assert is_new_subject(seed_index, papers, new, model)
    assert not is_new_subject(seed_index, papers, held, model)
    assert is_new_subject(seed_index, [], "anything", model)  # nothing to continue from


def test_the_shipped_model_matches_the_code(tmp_path):
    model = load_model()
    assert set(model.weights) == set(FEATURES) and model.shift_threshold > 0
    assert "half A" in model.fitted_on
    data = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    assert FollowUpModel.from_json(data) == model
    again = FollowUpModel.from_json(model.to_json())
    assert again.vector.tolist() == pytest.approx(model.vector.tolist(), abs=1e-4)
    stale = dict(data, weights={k: v for k, v in data["weights"].items() if k != FEATURES[0]})
    with pytest.raises(RetrievalError, match="bench/chat.py --fit"):
        FollowUpModel.from_json(stale)


def test_empty_papers_give_no_answer(seed_index):
    assert answer_follow_up(seed_index, [], "how is it trained?").sentences == ()


# -- bench/chat.py: its data checks and its fit -----------------------------------------------------------


def test_the_conversations_file_is_sound():
    from bench.ask import DEFAULT_CORPUS, _norm, load_source
    from bench.chat import DEFAULT_DATA, check, load_conversations
    from retrieval.corpus import load_corpus

    if not (DEFAULT_CORPUS / "papers.jsonl").exists():
        pytest.skip(f"{DEFAULT_CORPUS} is not available")
    conversations = load_conversations(DEFAULT_DATA)
    served = {_norm(p.abstract) for p in load_corpus(DEFAULT_CORPUS / "abstracts.txt").papers}
    assert check(conversations, load_source(DEFAULT_CORPUS), served) == []
    halves = {c.half for c in conversations}
    assert halves == {"A", "B"}


def test_the_conversation_check_catches_copied_and_invented_gold():
    from bench.chat import Conversation, check

    abstract = "Signal delay occurs when there is a lag between an agent's perception and its actions."
    source = {"p1": {"abstract": abstract, "title": "T"}}
    served = {"signaldelayoccurswhenthereisalagbetweenanagentsperceptionanditsactions"}
    copied = Conversation("c001", "continue", "term", "what is signal delay?", "p1",
                          "so is there a lag between an agent's perception?", "p1", (abstract,))
    invented = Conversation("c002", "continue", "method", "what is signal delay?", "p1", "how?", "p1",
                            ("agents act quickly",))
    request = Conversation("a001", "continue", "authors", "what is signal delay?", "p1", "who wrote it?",
                           None, ())
    problems = check([copied, invented, request], source, served)
    assert any(p.startswith("c001: shares 7 consecutive words") for p in problems)
    assert any(p.startswith("c002: gold is not verbatim") for p in problems)
    assert not any(p.startswith("a001") for p in problems)
    assert "only 2 continuing conversations with a gold (at least 40)" in problems
    assert "only 0 conversations that change subject (at least 10)" in problems


def test_the_fit_finds_the_feature_that_marks_the_gold_sentence():
    from bench.chat import fit_logit

    rng = np.random.default_rng(0)
    groups = []
    for _ in range(40):
        x = rng.normal(size=(8, len(FEATURES)))
        gold = int(rng.integers(8))
        x[gold, 3] += 3.0  # the gold sentence is the one high on feature 3
        groups.append((x, np.eye(8)[gold]))
    w = fit_logit(groups, l2=0.1)
    assert int(np.argmax(np.abs(w))) == 3 and w[3] > 1.0
    assert np.allclose(w, fit_logit(groups, l2=0.1))  # deterministic
