"""The vocabulary is looked up in the stored table (no dict built at open): every term maps to its
id, in any script, through a cache file round trip; unknown terms are absent."""

from __future__ import annotations

import random

import numpy as np
import pytest

from retrieval import postings
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


def test_the_c_table_is_the_term_by_term_table(monkeypatch):
    """The C kernel's probe_table fills the table the Python loop (the definition) fills: the same
    slot for every term, collisions and wrap-around included."""
    if postings._kernel is None:
        pytest.skip(postings.KERNEL_UNAVAILABLE or "no C kernel")
    rng = random.Random(5)
    alphabet = "abcdefgxyz-'é学\udcff"
    sets = [[], ["a"], [""], ["model", "learn", "学习", "naïv", "x\udcff", "", "a" * 300]]
    sets += [list(dict.fromkeys("".join(rng.choices(alphabet, k=rng.randint(1, 9))) for _ in range(n)))
             for n in (3, 50, 700, 20_000)]  # fmt: skip
    for terms in sets:
        encoded = [postings._encode(t) for t in terms]
        size = 1 << max(4, (2 * len(encoded)).bit_length())
        got = vocabulary_arrays(terms)
        want = postings._probe_table(encoded, size)
        assert got["vocab_hash"].dtype == want.dtype and np.array_equal(got["vocab_hash"], want)
        # a full wrap-around: every term hashed to the last slot
        table = np.full(16, -1, np.int32)
        hashes = np.full(min(len(terms), 15), 15, np.uint32)
        postings._kernel.probe_table(table, hashes)
        k = len(hashes)  # id 0 in slot 15, then ids 1.. from slot 0 on
        assert table.tolist() == ([*range(1, k), *[-1] * (16 - k), 0] if k else [-1] * 16)
    monkeypatch.setattr(postings, "_kernel", None)
    assert np.array_equal(vocabulary_arrays(sets[-1])["vocab_hash"], got["vocab_hash"])


def test_a_wrong_probe_table_raises():
    if postings._kernel is None:
        pytest.skip(postings.KERNEL_UNAVAILABLE or "no C kernel")
    probe = postings._kernel.probe_table
    u32 = np.zeros(4, np.uint32)
    for table, hashes in [(np.full(4, -1, np.int32), u32),  # no empty slot left
                          (np.full(6, -1, np.int32), u32[:2]),  # not a power of two
                          (np.full(8, 0, np.int32), u32),  # not empty
                          (np.full(8, -1, np.int64), u32),  # an int64 table
                          (np.full(8, -1, np.int32), u32.astype(np.int64))]:  # fmt: skip
        with pytest.raises(ValueError):
            probe(table, hashes)
