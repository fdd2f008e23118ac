"""The build tokenizer's C path (retrieval._kernel's SurfaceTable and chunk_arrays) gives exactly the
chunks of its numpy path (the definition): the same terms in the same order and the same arrays,
with the same dtypes, chunk after chunk (a tokenizer that already knows some of the words, as in a
worker process), on every corpus at hand and on generated text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval.build as build_module
from retrieval import postings
from retrieval.build import ChunkTokenizer, TokenChunk
from retrieval.corpus import load_corpus
from retrieval.index import build_index
from retrieval.tokenize import surface_bytes
from tests.retrieval.fixtures import pasted_corpus
from tests.support.compiled import require_compiled

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "corpora"
CHINESE = Path(__file__).parent / "fixtures" / "chinese_corpus.txt"
FIELDS = TokenChunk.__slots__


@pytest.fixture(autouse=True)
def require_c_tokenizer() -> None:
    """Skip without the C kernel; under CI=true fail instead (CI must test the path users run)."""
    require_compiled(postings._kernel, postings.KERNEL_UNAVAILABLE or "no C kernel")


def assert_same_chunk(want: TokenChunk, got: TokenChunk) -> None:
    assert got.terms == want.terms
    for name in FIELDS[1:]:
        a, b = getattr(want, name), getattr(got, name)
        if a is None or b is None:
            assert a is None and b is None, name
            continue
        assert a.dtype == b.dtype, name
        assert np.array_equal(a, b), name


def assert_same_chunks(docs: list[tuple[str, str]], sizes: tuple[int, ...] = (1_000_000,)) -> int:
    """Chunk ``docs`` in runs of each size with both paths (one tokenizer each per size, so later
    chunks meet known and new words); returns the number of chunks compared."""
    compared = 0
    for size in sizes:
        numpy_path, c_path = ChunkTokenizer(native=False), ChunkTokenizer(native=True)
        for at in range(0, max(len(docs), 1), size):
            part = docs[at : at + size]
            keep = compared % 2 == 0
            assert_same_chunk(numpy_path.chunk(part, keep_tokens=keep), c_path.chunk(part, keep_tokens=keep))
            compared += 1
    return compared


def pairs(papers) -> list[tuple[str, str]]:
    return [(p.title, p.abstract) for p in papers]


def test_the_default_is_the_c_path_and_numpy_is_the_fallback(monkeypatch):
    assert ChunkTokenizer()._table is not None
    assert ChunkTokenizer(native=False)._table is None
    monkeypatch.setattr(postings, "_kernel", None)  # not built, or stale (dropped by postings)
    assert ChunkTokenizer()._table is None
    with pytest.raises(RuntimeError, match="not available"):
        ChunkTokenizer(native=True)


def test_the_bundled_corpus(seed_papers):
    assert assert_same_chunks(pairs(seed_papers), (1, 7, 1000)) > 3


def test_the_pasted_fixture_and_the_chinese_corpus(tmp_path):
    path = tmp_path / "pasted.txt"
    path.write_text(pasted_corpus.text(), encoding="utf-8")
    papers = load_corpus(path).papers + load_corpus(CHINESE).papers
    assert len(papers) > 30
    assert_same_chunks(pairs(papers), (1, 5, 1000))


def test_the_synthetic_corpus(synth_papers):
    assert_same_chunks(pairs(synth_papers), (1500, 10_000))


def jsonl_pairs(path: Path, title: str, text: str) -> list[tuple[str, str]]:
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [(row.get(title) or "", row.get(text) or "") for row in rows]


@pytest.mark.skipif(not (SHARED / "iclr2024").is_dir(), reason="no ../shared/corpora")
def test_the_iclr_abstracts():
    docs = jsonl_pairs(SHARED / "iclr2024" / "papers.jsonl", "title", "abstract")
    assert len(docs) > 2000
    assert_same_chunks(docs, (700, 10_000))


@pytest.mark.skipif(not (SHARED / "scifact").is_dir(), reason="no ../shared/corpora")
def test_the_scifact_abstracts():
    docs = jsonl_pairs(SHARED / "scifact" / "corpus.jsonl", "title", "text")
    assert len(docs) > 5000
    assert_same_chunks(docs, (2000,))  # chunk after chunk (one chunk of all: the ICLR test)


WORDS = [
    "", " ", "-", "--", "'", "a", "Z", "0", "x-y", "co-operate", "it's", "'quoted'", "-lead", "trail-",
    "the", "of", "and-the", "ab" * 7, "c" * 16, "d" * 17, "e" * 40, "long-" + "f" * 20, "é", "Über",
    "naïve", "Schölkopf’s", "深度残差网络", "𝑨𝑩", "İstanbul", "\\emph{x}", "$\\alpha$", "a\u2010b",
    "a\u2011b", "\t", "\n", ".", ",", "(", "_", "x_y", "3-D", "AAA", "Aaa",
]
TEXT = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join),
    st.lists(st.sampled_from(WORDS), max_size=30).map("".join),
    st.text(max_size=60),
    st.text(alphabet=st.characters(max_codepoint=127), max_size=60),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(TEXT, TEXT), max_size=6), min_size=1, max_size=4))
def test_generated_text_chunk_after_chunk(chunks):
    numpy_path, c_path = ChunkTokenizer(native=False), ChunkTokenizer(native=True)
    for i, docs in enumerate(chunks):
        assert_same_chunk(numpy_path.chunk(docs, keep_tokens=i % 2 == 0),
                          c_path.chunk(docs, keep_tokens=i % 2 == 0))  # fmt: skip


def test_the_table_grows_and_reads_every_word_back():
    """More words than the table's first size (16k slots at most half full): it grows, pending
    words included, and a later chunk finds them all."""
    docs = [(f"w{i}x", " ".join(f"word{i * 7 + j}long{'z' * (j % 20)}" for j in range(7)))
            for i in range(6000)]  # fmt: skip
    numpy_path, c_path = ChunkTokenizer(native=False), ChunkTokenizer(native=True)
    assert_same_chunk(numpy_path.chunk(docs), c_path.chunk(docs))
    assert c_path._table.size() == len(numpy_path._surface) > 40_000 and not c_path._surface
    assert_same_chunk(numpy_path.chunk(docs[::-1]), c_path.chunk(docs[::-1]))


def test_a_failed_scan_leaves_the_table_as_it_was():
    tokenizer = ChunkTokenizer(native=True)
    tokenizer.chunk([("alpha beta", "gamma")])
    size = tokenizer._table.size()
    with pytest.raises(TypeError):
        tokenizer.chunk([("delta epsilon " * 3000, "zeta"), (None, "eta")])  # type: ignore[list-item]
    assert tokenizer._table.size() == size

    def broken(text):
        raise ValueError("broken")

    with pytest.raises(ValueError, match="broken"):
        tokenizer._table.scan([" ".join(f"n{i}" for i in range(20_000)), "é"], broken)
    assert tokenizer._table.size() == size
    docs = [("delta alpha", " ".join(f"n{i}" for i in range(20_000))), ("gamma é", "")]
    reference = ChunkTokenizer(native=False)
    reference.chunk([("alpha beta", "gamma")])
    assert_same_chunk(reference.chunk(docs, keep_tokens=True), tokenizer.chunk(docs, keep_tokens=True))


def test_the_fast_ascii_reading_is_surface_bytes():
    """C reads an ASCII field without a backslash whose joiners all join; the others go through
    surface_bytes: each kind gives the words surface_bytes gives."""
    table = postings._kernel.SurfaceTable(build_module._KEEP_SURFACE, build_module._SHAPE)
    texts = ["Deep-Learning it's OK", "x -y", "--", "a'", "'a", "tab\tand\nnew", "AbC_dEf 12-3", "a\\b c",
             "über-fast", "", " ", "don't-stop co-op"]  # fmt: skip
    sid, words, new = table.scan(texts, surface_bytes)
    table.resolve(np.arange(len(new), dtype=np.int64), np.frombuffer(sid, dtype=np.int64))
    got = [new[i] for i in np.frombuffer(sid, dtype=np.int64).tolist()]
    want = [w for text in texts for w in surface_bytes(text).split(b" ") if w]
    assert got == want
    assert np.frombuffer(words, dtype=np.int64).tolist() == [len(surface_bytes(t).split()) for t in texts]


def test_a_phrase_term_outside_the_index_terms_goes_to_numpy(monkeypatch):
    """chunk_arrays leaves a chunk whose phrase stream holds a term none of its index tokens is to
    the numpy path (no word analysis gives one today; the tables are forged here)."""
    tokenizer = ChunkTokenizer(native=True)
    tokenizer.chunk([("alpha", "beta")])
    tokenizer._phrase_flat[0] = tokenizer._vocab["beta"]  # alpha's phrase token is now "beta"
    calls = []
    real = tokenizer._from_surface_ids
    monkeypatch.setattr(tokenizer, "_from_surface_ids", lambda *a: calls.append(1) or real(*a))
    chunk = tokenizer.chunk([("alpha", "gamma")])
    assert calls and chunk.terms == ["alpha", "gamma"]


def test_damaged_tables_raise_instead_of_reading_out_of_bounds():
    kernel = postings._kernel
    q = lambda *v: np.asarray(v, dtype=np.int64)  # noqa: E731
    ok = (q(0, 1), q(1, 1), q(0, 1), q(1, 1), q(0, 1), q(1, 1), 2, False)
    assert kernel.chunk_arrays(*ok) is not None
    for at, bad in [(0, q(0, 2)), (0, q(-1, 0)), (1, q(2, 1)), (1, q(-1, 3)), (2, q(0, 5)), (3, q(1, 2)),
                    (4, q(0, -1)), (5, q(1, -1)), (1, q(1, 1, 0))]:  # fmt: skip
        args = list(ok)
        args[at] = bad
        with pytest.raises(ValueError):
            kernel.chunk_arrays(*args)
    with pytest.raises(ValueError):
        kernel.chunk_arrays(q(0, 1), q(1, 1), q(0, 1), q(1, 1), q(0, 1), q(1, 1), 1, False)


def test_the_whole_build_is_the_same_index(seed_papers, synth_papers, monkeypatch):
    papers = tuple(seed_papers) + tuple(synth_papers[:1200])
    c_index = build_index(papers, chunk_docs=500, use_rank_bm25=False)
    monkeypatch.setattr(postings, "_kernel", None)
    numpy_index = build_index(papers, chunk_docs=500, use_rank_bm25=False)
    assert c_index.terms == numpy_index.terms
    a, b = c_index.arrays(), numpy_index.arrays()
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].dtype == b[name].dtype and np.array_equal(a[name], b[name]), name


def test_a_stale_kernel_build_tokenizes_with_numpy_after_the_one_warning():
    """A _kernel left from older source (another INTERFACE) is dropped by retrieval.postings with its
    one warning; the build tokenizer then takes the numpy path and gives the same chunk."""
    stale = (
        "import sys, types, warnings; m = types.ModuleType('retrieval._kernel'); m.Kernel = None\n"
        "m.INTERFACE = 2; m.SurfaceTable = m.chunk_arrays = None; sys.modules['retrieval._kernel'] = m\n"
        "warnings.simplefilter('always')\n"
        "from retrieval.build import ChunkTokenizer\n"
        "t = ChunkTokenizer(); assert t._table is None\n"
        "c = t.chunk([('Deep-learning models', 'We learn naïve models.')])\n"
        "print(c.terms, c.post_docs.tolist(), c.positions.tolist())\n"
    )
    run = subprocess.run([sys.executable, "-c", stale], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("RuntimeWarning") == 1 and "is stale" in run.stderr
    want = ChunkTokenizer(native=True).chunk([("Deep-learning models", "We learn naïve models.")])
    assert run.stdout.strip() == f"{want.terms} {want.post_docs.tolist()} {want.positions.tolist()}"


def test_a_word_with_an_index_token_and_no_phrase_token():
    """ "the-of" gives the index token "theof" and no phrase token (both parts are stopwords); the
    next surface word learnt ("theof") starts its phrase tokens where "the-of"'s would be: a word is
    a single-token word only with one index and one phrase token, the same."""
    docs = [[("the-of", "")], [("theof", "")], [("the-of theof", "of-the x"), ("ofthe", "theof the-of")]]
    numpy_path, c_path = ChunkTokenizer(native=False), ChunkTokenizer(native=True)
    for part in docs:
        want, got = numpy_path.chunk(part, keep_tokens=True), c_path.chunk(part, keep_tokens=True)
        assert_same_chunk(want, got)
    assert want.stream_len.tolist() == [2 + 2, 2 + 2]  # "theof" and "x"; "ofthe" and "theof"


def numpy_scatter(out, cursor, ids, counts, values, base, advance):
    """The definition: build._destinations and one fancy assignment (the cursor advanced or not)."""
    before = cursor.copy()
    dest = build_module._destinations(cursor, ids, counts)
    out[dest] = values + base if base else values
    if not advance:
        cursor[:] = before


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_c_scatter_is_the_numpy_scatter(data):
    dtype = data.draw(st.sampled_from([np.uint16, np.int32, np.uint32, np.int64]))
    n_terms = data.draw(st.integers(1, 40))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    # several chunks, each with distinct ids in any order, filling a CSR array exactly
    chunks = [rng.permutation(n_terms)[: rng.integers(0, n_terms + 1)].astype(np.int32) for _ in range(4)]
    counts = [rng.integers(0, 6, len(ids)).astype(np.int32) for ids in chunks]
    total = np.zeros(n_terms, np.int64)
    for ids, c in zip(chunks, counts, strict=True):
        total[ids] += c
    start = np.concatenate([[0], np.cumsum(total)[:-1]]).astype(np.int64)
    signed = np.dtype(dtype).kind == "i"
    want, got = np.zeros(int(total.sum()), dtype), np.zeros(int(total.sum()), dtype)
    want_cursor, got_cursor = start.copy(), start.copy()
    for ids, c in zip(chunks, counts, strict=True):
        values = rng.integers(0, 60_000, int(c.sum())).astype(dtype)
        base = int(rng.integers(0, 2**20)) if signed and rng.random() < 0.7 else 0
        advance = bool(rng.random() < 0.8)
        numpy_scatter(want, want_cursor, ids, c, values, base, advance)
        postings._kernel.scatter(got, got_cursor, ids, c, values, base, advance)
        assert np.array_equal(want_cursor, got_cursor)
    assert np.array_equal(want, got)


def test_a_wrong_scatter_raises_instead_of_writing_out_of_bounds():
    scatter = postings._kernel.scatter
    i32, i64 = (lambda *v: np.array(v, np.int32)), (lambda *v: np.array(v, np.int64))
    out = np.zeros(4, np.int32)
    cases = [
        (out, i64(0, 2), i32(2), i32(1), i32(7), 0),  # id past the cursor
        (out, i64(0, 2), i32(-1), i32(1), i32(7), 0),  # negative id
        (out, i64(0, 3), i32(1), i32(2), i32(7, 8), 0),  # run past the end of out
        (out, i64(-1, 2), i32(0), i32(1), i32(7), 0),  # negative slot
        (out, i64(0, 2), i32(0), i32(2), i32(7), 0),  # counts more than the values
        (out, i64(0, 2), i32(0), i32(1), i32(7, 8), 0),  # values left over
        (out, i64(0, 2), i32(0, 1), i32(1), i32(7), 0),  # one count per id
        (out, i64(0, 2), i32(0), i32(1), np.array([7], np.int64), 0),  # other item type
        (out, i64(0, 2), i32(0), i32(1), np.array([7], np.uint32), 0),  # other signedness
        (np.zeros(4, np.uint16), i64(0, 2), i32(0), i32(1), np.array([7], np.uint16), 5),  # base, unsigned
        (np.zeros(4, np.float64), i64(0, 2), i32(0), i32(1), np.array([7.0]), 0),
        (out, i32(0, 2), i32(0), i32(1), i32(7), 0),  # int32 cursor
        (out, np.array([0, 9, 2, 9], np.int64)[::2], i32(0), i32(1), i32(7), 0),  # not contiguous
    ]
    for case in cases:
        before = out.copy()
        with pytest.raises(ValueError):
            scatter(*case, True)
        assert np.array_equal(out, before)
    with pytest.raises(ValueError):  # read-only out
        ro = np.zeros(4, np.int32)
        ro.flags.writeable = False
        scatter(ro, i64(0, 2), i32(0), i32(1), i32(7), 0, True)


def stored(chunk: TokenChunk, worker: int, numbers: dict[str, int], path: Path):
    """The chunk as a worker stores it (its postings and positions in ``path``), and its new terms."""
    spans = []
    with open(path, "ab") as f:
        for arr in (chunk.post_docs, chunk.post_tf, chunk.positions):
            spans.append((f.tell(), arr.dtype.str, len(arr)))
            f.write(np.ascontiguousarray(arr).tobytes())
    first = len(numbers)
    new = [t for t in chunk.terms if t not in numbers]
    numbers.update((t, first + i) for i, t in enumerate(new))
    ids = np.array([numbers[t] for t in chunk.terms], np.int32)
    max_tf = int(chunk.post_tf.max()) if len(chunk.post_tf) else 0
    out = build_module.StoredChunk(worker, ids, chunk.doc_len, chunk.stream_len, chunk.post_df,
                                   chunk.pos_count, max_tf, str(path), spans, chunk.tokens)  # fmt: skip
    return out, (worker, first, new)


@pytest.mark.parametrize("how", ["memory", "spill", "stored"])
def test_the_merge_with_the_c_scatter_is_the_numpy_merge(seed_papers, synth_papers, tmp_path, how):
    docs = pairs(tuple(seed_papers) + tuple(synth_papers[:900]))
    tokenizer = ChunkTokenizer()
    chunks = [tokenizer.chunk(docs[at : at + 150], keep_tokens=True) for at in range(0, len(docs), 150)]
    chunks.append(tokenizer.chunk([], keep_tokens=True))
    merged = []
    for native in (False, True):
        spill = open(tmp_path / f"spill{native}", "w+b") if how == "spill" else None  # noqa: SIM115
        merger = build_module.Merger(keep_tokens=True, spill=spill, native=native)
        assert (merger._scatter is None) == (not native)
        numbers: dict[int, dict[str, int]] = {1: {}, 2: {}}
        for i, chunk in enumerate(chunks):
            if how == "stored":  # two workers, their chunks interleaved
                worker = 1 + i % 2
                chunk, terms = stored(chunk, worker, numbers[worker], tmp_path / f"w{worker}{native}")
                merger.add_worker_terms(terms)
            merger.add(chunk)
        merged.append(merger.finish())
        if spill is not None:
            spill.close()
    want, got = merged
    assert got.terms == want.terms and got.docs_tokens == want.docs_tokens
    for name in build_module.Merged.__slots__:
        a, b = getattr(want, name), getattr(got, name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert len(got.post_docs) > 10_000


def test_the_merge_takes_numpy_without_the_c_scatter(monkeypatch):
    assert build_module.Merger()._scatter is postings._kernel.scatter
    monkeypatch.setattr(postings, "_kernel", None)
    assert build_module.Merger()._scatter is None
    with pytest.raises(RuntimeError, match="not available"):
        build_module.Merger(native=True)
