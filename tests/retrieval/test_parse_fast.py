"""The build's fast paths for parsing: each gives exactly what its definition gives.

The ASCII paths of the id key and of author-name normalisation, the plain authors line and the ids
are checked against the definitions they stand for, on every ASCII character, random text, the
bundled corpus, the pasted fixtures and line soup.
"""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval.catalogue as catalogue_module
import retrieval.corpus as corpus_module
import retrieval.corpus_fields as fields_module
from retrieval.corpus import HEADER, load_corpus, normalize_name
from tests.retrieval.fixtures import pasted_corpus
from tests.retrieval.test_split import SEEDS

ROOT = Path(__file__).resolve().parents[2]
ASCII = [chr(c) for c in range(128)]
_definition = corpus_module._resolved_ids  # short_ids by its definition


def test_every_ascii_character_keys_and_normalises_as_the_definition_says():
    for c in ASCII:
        for text in (c, f"Ab{c}Cd", f"{c}{c} x{c}Y {c}"):
            assert corpus_module._id_key(text) == corpus_module._unicode_id_key(text), repr(text)
            assert normalize_name(text) == fields_module._unicode_normalize_name(text), repr(text)
    # and the definition is what the fast path claims: NFKC and casefold change only A-Z
    assert all(unicodedata.normalize("NFKC", c).casefold() == c.lower() for c in ASCII)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_text_keys_and_normalises_as_the_definition_says(text):
    assert corpus_module._id_key(text) == corpus_module._unicode_id_key(text)
    assert normalize_name(text) == fields_module._unicode_normalize_name(text)


def test_the_digests_of_the_bundled_corpus_are_the_definitions(monkeypatch):
    fast = load_corpus(ROOT / "data" / "corpus")
    monkeypatch.setattr(corpus_module, "_id_key", corpus_module._unicode_id_key)
    slow = load_corpus(ROOT / "data" / "corpus")
    assert [p.id for p in fast.papers] == [p.id for p in slow.papers]
    assert any(not p.abstract.isascii() for p in fast.papers)
    assert any(p.abstract.isascii() for p in fast.papers)


def test_short_ids_at_once_are_the_definitions(monkeypatch):
    rng = random.Random(3)
    digests = [rng.randbytes(32) for _ in range(5000)]
    fast = corpus_module.short_ids(digests)
    assert fast == corpus_module._resolved_ids(digests, set())
    assert fast == [corpus_module._encode(d, 8) for d in digests]
    calls = []
    monkeypatch.setattr(corpus_module, "_resolved_ids", lambda d, t: calls.append(1) or _definition(d, t))
    assert corpus_module.short_ids(digests) == fast and not calls  # the fast path ran
    # where it does not hold, the definition decides: a shared prefix, a reserved id, a repeat
    shared = [*digests[:50], b"\x00" * 5 + digests[60][5:], b"\x00" * 5 + digests[61][5:]]
    reserved = {fast[7], "zzzzzzzz"}
    for case, taken in ((shared, set()), (digests[:100], reserved), (digests[:10] * 2, set()), ([], set()),
                        ([b"short"], set()), ([b"\x01" * 40, *digests[:3]], set())):  # fmt: skip
        got = corpus_module.short_ids(case, reserved=taken)
        assert got == _definition(case, set(taken))
    assert len(calls) >= 2  # the collision and the reserved id went to the definition
    assert len(set(corpus_module.short_ids(shared))) == len(shared)


def test_the_id_orders_are_pythons_sort():
    rng = random.Random(9)
    pool = "0123456789abcdefghjkmnpqrstvwxyzABC-_. "
    for trial in range(60):
        ids = ["".join(rng.choice(pool) for _ in range(rng.choice([8, 8, 8, 12, rng.randint(0, 20)])))
               for _ in range(rng.randint(0, 400))]  # fmt: skip
        if trial % 5 == 1:
            ids += [ids[0] + "x", ids[0][:-1]] if ids and ids[0] else ["", "a"]  # a key and its prefix
        if trial % 5 == 2:
            ids.append("caf\u00e9" if trial % 2 else "x\x00y")  # not ASCII, or a NUL: Python's sort
        for keys in (ids, [i.casefold() for i in ids]):  # repeats among the folded: stable
            assert catalogue_module._order(keys).tolist() == sorted(range(len(keys)), key=keys.__getitem__)
            assert catalogue_module._order(keys).dtype == np.int32
    keys = ["b", "a\x00", "a", "A"]  # numpy would see "a\x00" and "a" as equal
    assert catalogue_module._order(keys).tolist() == [3, 2, 1, 0]


def test_a_warmed_up_worker_makes_the_same_output(monkeypatch):
    """The build's workers read a paper first while the main process plans (build._warm_up): what
    they make of the corpus afterwards is what a fresh process makes."""
    import retrieval.build as build_module

    monkeypatch.setattr(build_module, "_PROCESS_TOKENIZER", None)
    build_module._warm_up()
    assert build_module._PROCESS_TOKENIZER is not None
    for path in SEEDS:
        warm = build_module.process_file(path, path.name, (HEADER,), keep_tokens=True)
        fresh = build_module.process_file(path, path.name, (HEADER,), keep_tokens=True,
                                          tokenizer=build_module.ChunkTokenizer())  # fmt: skip
        assert warm.keys == fresh.keys and warm.skipped == fresh.skipped
        assert warm.catalogue.text == fresh.catalogue.text
        assert warm.catalogue.title_fold == fresh.catalogue.title_fold
        for a, b in zip(warm.chunks, fresh.chunks, strict=True):
            assert a.terms == b.terms and np.array_equal(a.tokens, b.tokens)
            for field in ("post_docs", "post_tf", "positions", "doc_len", "post_df"):
                assert np.array_equal(getattr(a, field), getattr(b, field)), field



def test_plain_author_lists_are_cleaned_as_each_name_is():
    rng = random.Random(13)
    pool = ["Ada Lovelace", "alan turing", " Grace  Hopper", "Wei Zhang 0001", "Smith1", "Jones2,3", "Kim*",
            "and Bob", "AND Eve", "Andrea Sand", "band X", "Ravi Kumar (IIT Delhi)", "x@y.org", "\u212aarl",
            "Bálint Mucsányi", "李四", "Tab\tName", "No\u00a0Break", "", " ", "O'Neil",
            "Jean-Luc"]  # fmt: skip
    lines = [x.strip() for b in pasted_corpus.BLOCKS for x in b.raw.split("\n") if x.strip()]  # every line
    lines += [x for f in SEEDS for x in f.read_text(encoding="utf-8").split("\n")[2::6]]
    for _ in range(3000):
        names = [rng.choice(pool) for _ in range(rng.randint(1, 6))]
        joined = rng.choice([", ", ",", "; ", " and ", "，"]).join(names)
        lines.append(joined + rng.choice(["", " 等", ", et al."]))
    fast_seen = 0
    for line in lines:
        cut, parts, et_al = fields_module._author_parts(line)
        names = tuple(n for n in map(fields_module._clean_name, parts) if n)
        assert fields_module.parse_authors(line) == (names, et_al), line
        fast_seen += fields_module._plain(cut)
    assert 300 < fast_seen < len(lines) - 300  # both ways ran
