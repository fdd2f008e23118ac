"""The vocabulary is looked up in the stored table (no dict built at open): every term maps to its
id, in any script, through a cache file round trip; unknown terms are absent."""

from __future__ import annotations

import pytest

from retrieval.index import open_index
from retrieval.postings import Vocabulary, vocabulary_arrays


def test_every_term_maps_to_its_id_and_back():
    terms = ["model", "learn", "学习", "naïv", "x\udcff", "", "a" * 300, *(f"t{i}" for i in range(5000))]
    arrays = vocabulary_arrays(terms)
    vocab = Vocabulary(arrays["terms"], arrays["vocab_hash"], len(terms))
    assert len(vocab) == len(terms) and list(vocab) == terms
    for tid, term in enumerate(terms):
        assert vocab[term] == tid and vocab.get(term) == tid and term in vocab and vocab.term(tid) == term
        assert vocab.get(term) == tid  # from the memo this time
    for unknown in ["modell", "t5000", "学", "zzz", "T1"]:
        assert unknown not in vocab and vocab.get(unknown) is None and vocab.get(unknown, -1) == -1
        with pytest.raises(KeyError):
            vocab[unknown]
    assert 3 not in vocab and vocab.get(None) is None  # type: ignore[arg-type]
    with pytest.raises(IndexError):
        vocab.term(len(terms))


def test_an_empty_vocabulary():
    arrays = vocabulary_arrays([])
    vocab = Vocabulary(arrays["terms"], arrays["vocab_hash"], 0)
    assert len(vocab) == 0 and list(vocab) == [] and vocab.get("a") is None


def test_a_stored_vocabulary_answers_like_the_built_one(tmp_path):
    abstracts = ["Sparse autoencoders for language models.", "学习 表示 with naïve Bayes — Über alles.",
                 "Flow-matching policies; diffusion."]  # fmt: skip
    text = "论文检索\n\n" + "\n\n".join(f"ML\nA. Author\n{a}" for a in abstracts) + "\n"
    (tmp_path / "c.txt").write_text(text, encoding="utf-8")
    built, _ = open_index(tmp_path / "c.txt", cache_dir=tmp_path / "cache")
    loaded, report = open_index(tmp_path / "c.txt", cache_dir=tmp_path / "cache")
    assert report.from_cache
    terms = list(built.terms)
    assert terms == list(loaded.terms) and len(terms) > 10
    for tid, term in enumerate(terms):
        assert loaded.vocab[term] == tid and loaded.terms[tid] == term
    assert loaded.terms[-1] == terms[-1] and loaded.terms[:3] == terms[:3]
    assert loaded.search("学习", 5).total == 1 and loaded.search("naive", 5).total == 1
