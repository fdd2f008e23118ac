"""Derived titles from both the key phrase and the rules' phrase (retrieval.titles' chooser block):
a title with no name is the key phrase and the core of the rules' phrase (_t_key_and_rule,
_t_rule_core), a term the rules' phrase opens with leads the key phrase (_t_term_and_key), and the
chooser (_t_rules_win, _t_choice, _t_look) takes the rules' phrase or the key phrase's title by what
each looks like in the text. The key phrase is a fake hook here, so each test says what it is."""

from __future__ import annotations

import pytest

from retrieval import titles as text
from retrieval.titles import TITLE_LIMIT, derive_title
from tests.retrieval.conftest import SAEBENCH

_NO_NAME = (
    "Preference data is noisy. We study diverging preferences in human-labeled preference datasets, "
    "which we find to be common. Diverging preferences matter."
)


def test_without_a_name_the_key_phrase_is_followed_by_the_statements_core(hook):
    # the key phrase misses a word the text repeats ("diverging") that the statement's object has
    _, answer = hook
    answer["value"] = "noisy preference data"
    title = derive_title(_NO_NAME)
    key, _, core = title.partition(": ")
    assert key == "Noisy preference data"
    assert core and "diverging" in core.lower() and len(core.split()) <= text._T_RULE_WORDS
    assert _NO_NAME.lower().find(core.lower()) != -1  # the statement's own words, in its order


@pytest.mark.parametrize(
    "abstract",
    [
        _NO_NAME.replace(" Diverging preferences matter.", ""),  # "diverging" said once: not the topic
        "Preference data is noisy. We study noisy preference data, which we find to be common.",
    ],
)
def test_without_a_new_repeated_word_the_key_phrase_stands_alone(hook, abstract):
    _, answer = hook
    answer["value"] = "noisy preference data"
    assert derive_title(abstract) == "Noisy preference data"


def test_the_statements_core_is_added_only_when_both_fit(hook):
    _, answer = hook
    answer["value"] = "noisy preference data " + "of many words " * 4  # fits alone, not with the core
    title = derive_title(_NO_NAME)
    assert len(answer["value"]) < TITLE_LIMIT < len(answer["value"]) + len(": Diverging preferences")
    assert ":" not in title and title == _capitalize_first(answer["value"].strip())


def _capitalize_first(s: str) -> str:
    return s[:1].upper() + s[1:]


def test_with_a_name_the_key_phrase_gets_no_core(hook):
    # the appositive's "evaluation" is repeated and not in the key phrase: the name is the title's lead
    _, answer = hook
    answer["value"] = "sparse autoencoder metrics"
    abstract = SAEBENCH.replace("a comprehensive evaluation", "an evaluation")
    abstract = abstract.replace("It has", "Its evaluation has")
    assert derive_title(abstract) == "SAEBench: Sparse autoencoder metrics"


@pytest.mark.parametrize(
    ("phrase", "core"),
    [
        ("Sampling complex distributions is an important objective", "Sampling complex distributions"),
        ("In deep metric learning, the triplet loss", "deep metric learning"),  # a comma ends it
        ("Problem of curriculum RL in practice", "curriculum RL"),  # generic opening words go
        ("Transformers with a single layer", ""),  # the cap cut "a single ...": one word is left
        ("Graph neural networks (GNNs) over-smooth", "Graph neural networks"),  # a parenthesis ends it
        ("Convergence bounds for", "Convergence bounds"),  # no dangling last word
        ("Naive", ""),
    ],
)
def test_the_core_of_the_rules_phrase(phrase, core):
    assert text._t_rule_core(phrase) == core


# -- the chooser: the rules' phrase or the key phrase's title ---------------------------------------

_RESIDUAL = (
    "Graph neural networks suffer from over-smoothing when they grow deep. We propose residual message "
    "scaling for deep graph neural networks. Residual message scaling keeps node features apart, and "
    "residual scaling of messages makes deep graph networks trainable."
)
_TEMPERING = (
    "Sampling complex distributions is an important objective in many fields. Parallel tempering of "
    "restricted Boltzmann machines mixes slowly. We stack restricted Boltzmann machines to speed up "
    "parallel tempering of restricted Boltzmann machines."
)


def test_the_chooser_keeps_a_statement_the_text_repeats_over_a_key_phrase_said_once(hook):
    _, answer = hook
    answer["value"] = "node features apart"  # said once, late
    assert derive_title(_RESIDUAL) == "Residual message scaling for deep graph neural networks"


def test_the_chooser_takes_a_repeated_key_phrase_over_the_first_sentence(hook):
    # the rules found no statement: their phrase is the opening sentence, the key phrase the topic
    _, answer = hook
    answer["value"] = "parallel tempering of restricted Boltzmann machines"
    assert derive_title(_TEMPERING) == "Parallel tempering of restricted Boltzmann machines"


def test_the_choice_follows_what_each_candidate_looks_like():
    head = text._t_head(_RESIDUAL)
    rules = "Residual message scaling for deep graph neural networks"
    choice = text._t_choice
    base = choice(head, rules, "Node features apart", False, False)
    # a key phrase of words the text repeats, from its first sentence, takes the rules' lead away
    assert choice(head, rules, "Deep graph neural networks", False, False) < base
    # the same rules' phrase counts less when it is only the text's opening (the rules' last resort)
    opening = text._t_head("Residual message scaling for deep graph neural networks is hard. " + _RESIDUAL)
    assert choice(opening, rules, "Node features apart", False, False) < choice(
        " Deep nets. " + opening, rules, "Node features apart", False, False
    )
    assert text._t_rules_win(head, rules, "Node features apart", False, False) is (base > 0)


def test_a_term_the_rules_phrase_opens_with_leads_the_key_phrase():
    term = text._t_term_and_key
    phrase = "Beam Enumeration to exhaustively enumerate the most probable sub-sequences"
    assert term(phrase, "probable sub-sequences of generative models") == (
        "Beam Enumeration: Probable sub-sequences of generative models"
    )
    long = "probable sub-sequences of language-based molecular generative models for sample efficiency"
    title = term(phrase, long)  # cut before its own last connector to fit
    assert title == "Beam Enumeration: Probable sub-sequences of language-based molecular generative models"
    assert len(title) <= TITLE_LIMIT
    assert term(phrase, "beam enumeration of sub-sequences") == ""  # the key phrase has the term
    assert term(phrase, "x" * 80 + " sub-sequences") == ""  # no connector to cut at
    assert term("To exhaustively enumerate", "probable sub-sequences") == ""  # no term


def test_the_look_of_a_candidate():
    lower = text._t_head(_RESIDUAL).lower()
    first = lower[: lower.find(". ")]
    repeated = text._t_look("Residual message scaling", lower, first, {})
    once = text._t_look("Node features apart", lower, first, {})
    opening = text._t_look("Graph neural networks suffer", lower, first, {})
    generic = text._t_look("A novel framework approach", lower, first, {})
    assert repeated[1] > once[1] and repeated[2] == 1.0 and once[2] == 0.0  # said often / 3 times or more
    assert opening[3] == 1.0 and repeated[3] == 0.0  # in the first sentence
    assert opening[4] < repeated[4] < once[4] < 1.0  # where it starts
    assert text._t_look("Words nowhere", lower, first, {})[4] == 1.0
    assert generic[6] > 0.5 > once[6] and generic[7] < once[7]  # generic words, content words
    assert text._t_look("which is that", lower, first, {})[5] == 3.0  # clause words
    assert text._t_look("", lower, first, {}) == (0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
