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


# -- queries and documents normalise alike ---------------------------------------------------------

APOSTROPHES = ["O'Brien's", "O\u2019Brien\u2019s", "O\u2018Brien\u2018s", "O\u02bcBrien\u02bcs"]


def test_apostrophes_of_every_kind_are_one_word_in_queries_and_documents():
    for form in APOSTROPHES:
        assert tokenize(form) == ["o'brien"], form
        assert [w.tokens for w in iter_words(form)] == [("o'brien",)], form
    # Quotes around a word are not apostrophes.
    assert [w.surface for w in iter_words("the \u2018model\u2019 works")] == ["the", "model", "works"]


def test_nfc_and_nfd_forms_are_the_same_word():
    nfc = "Jos\u00e9 N\u00fa\u00f1ez"
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfd != nfc
    assert tokenize(nfd) == tokenize(nfc) == ["jose", "nunez"]
    assert [w.tokens for w in iter_words(nfd)] == [w.tokens for w in iter_words(nfc)]
    assert [nfd[w.start : w.end] for w in iter_words(nfd)] == nfd.split()


def test_invisible_characters_inside_words_are_ignored():
    for joiner in "\u00ad\u200b\u200c\u200d\u2060\ufeff":
        text = f"trans{joiner}former models"
        assert tokenize(text) == tokenize("transformer models"), repr(joiner)
        words = list(iter_words(text))
        assert [text[w.start : w.end] for w in words] == [f"trans{joiner}former", "models"]
        assert tokenize(f"flow-{joiner}matching") == tokenize("flow-matching")


def test_marks_do_not_split_words_of_other_scripts():
    assert len(list(iter_words("\u0939\u093f\u0928\u094d\u0926\u0940 \u092d\u093e\u0937\u093e"))) == 2
    assert len(tokenize("\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22")) == 1  # Thai vowel marks


_NOISY_CHARS = "abU-' \\\u2019\u2018\u00e9\u00d9\u0300\u0301\u0308\u200b\u00ad\u2060xN"
_NOISY = st.text(alphabet=st.sampled_from(list(_NOISY_CHARS)))


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), _NOISY))
def test_spans_and_tokens_agree_on_any_form(text):
    # NFC, NFD and text strewn with invisible characters and curly apostrophes: the words found on
    # the raw text give exactly tokenize's tokens, and tokenize does not depend on the form.
    for form in (text, unicodedata.normalize("NFC", text), unicodedata.normalize("NFD", text)):
        assert [t for w in iter_words(form) for t in w.tokens] == tokenize(form), repr(form)
    assert tokenize(unicodedata.normalize("NFD", text)) == tokenize(unicodedata.normalize("NFC", text))


def test_search_finds_a_paper_whatever_form_the_query_or_the_document_uses():
    from retrieval.index import BM25Params, build_index
    from retrieval.models import Paper

    abstracts = [
        "We revisit O\u2019Brien\u2019s estimator for sparse regression.",  # curly apostrophes
        unicodedata.normalize("NFD", "Caf\u00e9 networks by Jos\u00e9 N\u00fa\u00f1ez."),  # NFD
        "A trans\u200bformer with zero\u00adwidth noise.",  # invisible characters inside words
        "Unrelated diffusion policies.",
    ]
    papers = tuple(
        Paper(id=f"p{i}", title="", authors=("A",), et_al=False, area="T", abstract=a)
        for i, a in enumerate(abstracts)
    )
    index = build_index(papers, BM25Params())
    cases = {
        "O\u2019Brien\u2019s": "p0", "O'Brien's": "p0", "o\u2019brien": "p0",
        "N\u00fa\u00f1ez caf\u00e9": "p1", "nunez": "p1",
        unicodedata.normalize("NFD", "N\u00fa\u00f1ez"): "p1",
        "transformer": "p2", "zerowidth": "p2", "trans\u200bformer": "p2",
    }
    for query, want in cases.items():
        hits = index.search(query, 5).hits
        assert [h.paper.id for h in hits] == [want], repr(query)
        assert hits[0].snippet.matches, repr(query)  # the word is found again for highlighting


# -- Chinese, Japanese, Korean ---------------------------------------------------------------------


def test_cjk_runs_are_character_bigrams():
    assert tokenize("强化学习") == ["强化", "化学", "学习"]
    assert tokenize("图") == ["图"]
    assert tokenize("GPT模型") == ["gpt", "模型"]
    assert phrase_tokens("离线强化学习") == tokenize("离线强化学习")


def test_cjk_matches_are_highlighted_as_the_query_word_not_the_clause():
    from retrieval.tokenize import match_spans

    text = "离线强化学习只能使用固定的数据集训练策略，分布外动作的价值容易被高估。"
    spans = match_spans(text, set(tokenize("强化学习 高估")))
    assert [text[a:b] for a, b, _ in spans] == ["强化学习", "高估"]


def test_chinese_queries_find_their_paper_first():
    """The known-item queries of bench/cjk.py (phrases and single words) on the Chinese fixture:
    every one finds its paper at rank 1 (whole CJK runs, the previous tokenization, found 2 of 39)."""
    from pathlib import Path

    from retrieval.corpus import load_corpus
    from retrieval.index import BM25Params, build_index

    fixtures = Path(__file__).parent / "fixtures"
    index = build_index(load_corpus(fixtures / "chinese_corpus.txt").papers, BM25Params())
    lines = (fixtures / "chinese_queries.tsv").read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 30
    for line in lines:
        query, author = line.split("\t")
        hits = index.search(query, 3).hits
        assert hits and hits[0].paper.authors[0] == author, query
        assert hits[0].snippet.matches, query
    area_hits = index.search("图神经网络 area:机器学习", 10).hits  # a Chinese area filter too
    assert {h.paper.authors[0] for h in area_hits} == {"杨帆", "许晨"}
    assert all(h.paper.top_area == "机器学习" for h in area_hits)


def test_memo_limit_bounds_the_word_memos_and_empties_one_past_it(monkeypatch):
    import retrieval.tokenize as tok

    monkeypatch.setattr(tok, "_WORD_CACHE_MAX", tok._WORD_CACHE_MAX)  # restored after the test
    monkeypatch.setattr(tok, "_WORD_CACHE", {})
    monkeypatch.setattr(tok, "_STEM_CACHE", {})
    words = [f"memoword{i}s" for i in range(300)]
    expected = [tok.analyze_word(w) for w in words]
    assert len(tok._WORD_CACHE) == 300 and len(tok._STEM_CACHE) == 300
    tok.memo_limit(100)
    assert tok._WORD_CACHE == {} and tok._STEM_CACHE == {}
    assert [tok.analyze_word(w) for w in words] == expected  # same tokens, memo bounded
    assert 0 < len(tok._WORD_CACHE) <= 100 and 0 < len(tok._STEM_CACHE) <= 100
    tok.memo_limit(1000)  # a memo under the new bound is kept
    assert 0 < len(tok._WORD_CACHE) <= 100
