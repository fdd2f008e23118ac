"""The tokenizer: case, stopwords, stemming, LaTeX, hyphens, numbers, Unicode, spans."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.tokenize import (
    STOPWORDS,
    TOKENIZER_VERSION,
    analyze_document,
    iter_words,
    phrase_tokens,
    tokenize,
)


def test_lowercase_stopwords_and_stemming():
    assert tokenize("The Models are Learning") == ["model", "learn"]
    assert tokenize("the of and a an is") == []
    assert "the" in STOPWORDS and "model" not in STOPWORDS


def test_plural_and_possessive_share_a_stem():
    assert tokenize("model models model's Model’s") == ["model"] * 4


def test_latex_commands_dropped_arguments_kept():
    assert tokenize(r"We propose the \textit{Single-Step Completion Policy}") == [
        "propos", "singlestep", "singl", "step", "complet", "polici",
    ]
    assert tokenize(r"an $\epsilon$-optimal policy with $\ell_p$ norm") == ["optim", "polici", "p", "norm"]
    assert "textit" not in tokenize(r"\textit{x}") and "epsilon" not in tokenize(r"$\epsilon$")


def test_hyphenated_words_are_indexed_joined_and_split():
    assert tokenize("flow-matching") == ["flowmatch", "flow", "match"]
    assert tokenize("state-of-the-art") == ["stateoftheart", "state", "art"]
    # The phrase stream keeps only the parts, so "flow-matching" and "flow matching" agree.
    assert phrase_tokens("flow-matching objective") == phrase_tokens("flow matching objective")


def test_numbers_and_alphanumerics_kept():
    assert tokenize("3D m3dt Qwen3-30B-A3B 2024") == [
        "3d", "m3dt", "qwen330ba3b", "qwen3", "30b", "a3b", "2024",
    ]


def test_unicode_case_and_accents():
    assert tokenize("Schölkopf SCHÖLKOPF Scholkopf") == ["scholkopf"] * 3
    assert tokenize("Straße") == tokenize("STRASSE")
    assert tokenize("模型 学习") == ["模型", "学习"]  # CJK runs are kept as words (no segmentation)


def test_markdown_and_punctuation_ignored():
    expected = ["spars", "autoencod", "sae", "link", "x"]
    assert tokenize("**Sparse** _autoencoders_ (SAEs), [link](x)!") == expected


def test_version_is_a_nonempty_string():
    assert isinstance(TOKENIZER_VERSION, str) and TOKENIZER_VERSION


def test_analyze_document_matches_the_two_functions():
    text = r"Flow-matching \emph{policies} for offline RL; 3D Gaussian state-of-the-art."
    assert analyze_document(text) == (tokenize(text), phrase_tokens(text))


def test_iter_words_spans_point_into_the_text():
    text = "Sparse Auto-Encoders rock"
    words = list(iter_words(text))
    assert [text[w.start : w.end] for w in words] == ["Sparse", "Auto-Encoders", "rock"]
    assert words[1].surface == "auto-encoders"
    assert [text[s:e] for s, e, _ in words[1].parts] == ["Auto", "Encoders"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_iter_words_tokens_equal_tokenize(text):
    # Spans are defined on the text itself, so the property is stated for NFC text (what every
    # corpus file and Discord message is in practice).
    text = unicodedata.normalize("NFC", text)
    assert [t for w in iter_words(text) for t in w.tokens] == tokenize(text)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_tokens_are_lowercase_and_nonempty(text):
    # (A stem may equal a stopword, e.g. "isns" -> "isn"; only the words themselves are dropped.)
    for token in tokenize(text):
        assert token and token == token.casefold()


def test_every_stopword_is_dropped():
    assert tokenize(" ".join(STOPWORDS)) == []
    assert tokenize(" ".join(w.upper() for w in STOPWORDS)) == []
