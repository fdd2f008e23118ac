"""The pruned ranking kernel (``Postings.top``: MaxScore over short lists, block-max bounds and
bitmaps over long ones) returns rank-bm25's exact top docs and scores (float equality) and the exact
number of hits, whichever terms are long, for every variant, with filters, repeats and the tiny
corpora where BM25Okapi's idf is 0 or negative."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval import postings
from retrieval.index import BM25Params, build_index, paper_tokens
from retrieval.models import Paper
from retrieval.postings import Postings, long_df_for, pruning_arrays
from retrieval.search import rank
from retrieval.tokenize import tokenize
from tests.support.compiled import require_compiled

VARIANTS = [
    BM25Params(),
    BM25Params(variant="l"),
    BM25Params(variant="plus"),
    BM25Params(k1=0.9, b=0.4, epsilon=0.5),
    BM25Params(variant="plus", k1=1.2, b=0.3, delta=0.7),
    BM25Params(variant="l", k1=2.0, b=1.0, delta=0.2),
]


KERNELS = ["numpy", "c"]
_C = postings._kernel  # the C extension, or None when it is not built


def require_c_kernel() -> None:
    """Skip without the C kernel; under CI=true fail instead (CI must test the kernel users run)."""
    require_compiled(_C, postings.KERNEL_UNAVAILABLE or "no C kernel")


@contextlib.contextmanager
def kernel(name: str):
    """Rank with the numpy path or the C one."""
    if name == "c":
        require_c_kernel()
    saved = postings._kernel
    postings._kernel = _C if name == "c" else None
    try:
        yield
    finally:
        postings._kernel = saved


def papers_of(*abstracts: str) -> tuple[Paper, ...]:
    return tuple(
        Paper(id=f"p{i}", title="", authors=("A. Author",), et_al=False, area="Test", abstract=text)
        for i, text in enumerate(abstracts)
    )


def with_long_df(index, long_df: int) -> Postings:
    """The index's core with terms held by at least ``long_df`` docs treated as long."""
    arrays = index.core.arrays()
    arrays.update(pruning_arrays(arrays, index.params, index.avgdl, long_df))
    return Postings(params=index.params, terms=index.terms, arrays=arrays, avgdl=index.avgdl)


def brute_force(model, doc_sets, tokens: list[str], need: int, mask=None):
    """rank-bm25's scores, the hit rule (a doc holding a query token; ties by tokens held, then
    corpus order), the top ``need`` and the number of hits. ``doc_sets``: each doc's set of tokens."""
    scores = np.asarray(model.get_scores(tokens))
    words = list(dict.fromkeys(tokens))
    counts = np.array([sum(1 for w in words if w in doc) for doc in doc_sets])
    hits = np.flatnonzero(counts > 0)
    if mask is not None:
        hits = hits[mask[hits]]
    order = np.lexsort((hits, -counts[hits], -scores[hits]))[:need]
    top = hits[order]
    return top.tolist(), [float(scores[d]) for d in top], len(hits)


def check(core: Postings, model, doc_sets, tokens, need, mask=None, reference=brute_force):
    """``reference``: brute_force, or a memo of it when many checks share one model."""
    docs, scores, total = core.top(tokens, need, mask)
    want_docs, want_scores, want_total = reference(model, doc_sets, tokens, need, mask)
    assert docs.tolist() == want_docs, tokens
    assert [scores[d] for d in docs.tolist()] == want_scores, tokens  # float equality
    assert total == want_total, tokens
    ex_docs, ex_scores, ex_total = core._top_exhaustive(tokens, need, mask)
    assert ex_docs.tolist() == want_docs and ex_total == total
    # Query words of several tokens (a word matched when a paper holds one of them; an unknown token
    # in a word): the same docs, scores and hits as the exhaustive path.
    distinct = list(dict.fromkeys(tokens))
    words = [(*distinct[i : i + 2], "zzunknown") if i % 4 == 0 else tuple(distinct[i : i + 2])
             for i in range(0, len(distinct), 2)]  # fmt: skip
    docs, scores, total = core.top(tokens, need, mask, words)
    ex_docs, ex_scores, ex_total = core._top_exhaustive(tokens, need, mask, words)
    assert docs.tolist() == ex_docs.tolist() and total == ex_total, (tokens, words)
    assert [scores[d] for d in docs.tolist()] == [ex_scores[d] for d in docs.tolist()]


_VOCAB = ["alpha", "beta", "gamma", "delta", "policy", "model", "sparse", "graph", "kernel", "bound"]


@pytest.mark.parametrize("name", KERNELS)
@settings(max_examples=150, deadline=None)
@given(
    docs=st.lists(st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=8), min_size=1, max_size=12),
    query=st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=5),
    params=st.sampled_from(VARIANTS),
    long_df=st.integers(1, 13),
    need=st.integers(1, 8),
    mask_seed=st.one_of(st.none(), st.integers(0, 2**16)),
)
def test_tiny_corpora_equal_rank_bm25_whichever_terms_are_long(
    name, docs, query, params, long_df, need, mask_seed
):
    papers = papers_of(*(" ".join(d) for d in docs))
    index = build_index(papers, params)
    docs_tokens = [paper_tokens(p) for p in papers]
    model = params.rank_bm25_model(docs_tokens)
    core = with_long_df(index, long_df)
    mask = None
    if mask_seed is not None:
        mask = np.random.default_rng(mask_seed).random(len(papers)) < 0.6
    with kernel(name):
        check(core, model, [set(d) for d in docs_tokens], tokenize(" ".join(query)), need, mask)


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("params", VARIANTS[:3], ids=lambda p: p.variant)
def test_zero_and_negative_idf_words_are_hits_on_the_long_path(params, name):
    # Every word in two or three of three papers: BM25Okapi's idf is negative (floor included) or 0.
    papers = papers_of("policy gradient", "policy gradient search", "policy search", "alpha beta", "alpha")
    docs_tokens = [paper_tokens(p) for p in papers]
    model = params.rank_bm25_model(docs_tokens)
    index = build_index(papers, params)
    for long_df in (1, 2, 3, 6):
        core = with_long_df(index, long_df)
        for query in ["gradient", "policy", "gradient search", "search alpha", "policy policy beta"]:
            for need in (1, 2, 5):
                with kernel(name):
                    check(core, model, [set(d) for d in docs_tokens], tokenize(query), need)


class Reference:
    """brute_force memoized for models that outlive the module (the session's): the kernels and the
    long-term thresholds are all checked against one brute-force answer per (query, need, mask)."""

    def __init__(self) -> None:
        self.memo: dict = {}

    def __call__(self, model, doc_sets, tokens, need, mask=None):
        key = (id(model), tuple(tokens), need, None if mask is None else mask.tobytes())
        if key not in self.memo:
            self.memo[key] = brute_force(model, doc_sets, tokens, need, mask)
        return self.memo[key]


@pytest.fixture(scope="module")
def reference():
    return Reference()


@pytest.fixture(scope="module")
def synth_model(synth_tokens, synth_rank_bm25):
    return synth_rank_bm25(BM25Params()), [set(d) for d in synth_tokens]


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("long_df", [None, 40, 1])
def test_generated_corpus_top_10_equals_rank_bm25(
    synth_index, synth_model, synth_generator, reference, long_df, name
):
    model, doc_sets = synth_model
    core = synth_index.core if long_df is None else with_long_df(synth_index, long_df)
    if long_df is None:
        assert int(np.count_nonzero(core.long_slot >= 0)) > 0  # the default has long terms here
    queries = synth_generator.queries(40, seed=3) + ["learning model learning", "models data", "the model"]
    mask = np.random.default_rng(5).random(len(synth_index)) < 0.3
    compared = 0
    for i, query in enumerate(queries):
        tokens = tokenize(query)
        if not tokens:
            continue
        with kernel(name):
            check(core, model, doc_sets, tokens, 10, mask if i % 4 == 0 else None, reference)
        compared += 1
    assert compared >= 40


def test_long_lists_are_skipped_not_read(synth_index, monkeypatch):
    monkeypatch.setattr(postings, "_kernel", None)
    """A rare word plus common ones: only a fraction of the hits is scored exactly (the pruning does
    something), and the answer is still the exhaustive one."""
    core = synth_index.core
    df = np.diff(core.indptr)
    n = len(core)
    common = [core.terms[t] for t in np.argsort(-df)[4:5].tolist()]
    rare = next(core.terms[t] for t in range(len(df)) if 30 <= df[t] <= 60)
    assert all(core.long_slot[core.vocab[t]] >= 0 for t in common) and df[core.vocab[rare]] < long_df_for(n)
    scored: list[int] = []
    exact = Postings._exact_top

    def counting(self, docs, *args):
        scored.append(len(docs))
        return exact(self, docs, *args)

    monkeypatch.setattr(Postings, "_exact_top", counting)
    tokens = [rare, *common]
    docs, scores, total = rank(core, tokens, 10)
    want = core._top_exhaustive(tokens, 10)
    assert docs.tolist() == want[0].tolist() and total == want[2]
    assert [scores[d] for d in docs.tolist()] == [want[1][d] for d in want[0].tolist()]
    assert total > n // 3 and sum(scored) < total // 10, (sum(scored), total)


@pytest.fixture(scope="module")
def variant_models(synth_papers, synth_tokens):
    """The first 1,500 synthetic papers indexed, and fitted by rank-bm25, for every variant."""
    papers, docs_tokens = synth_papers[:1500], list(synth_tokens[:1500])
    doc_sets = [set(d) for d in docs_tokens]
    return [(build_index(papers, p), p.rank_bm25_model(docs_tokens), doc_sets) for p in VARIANTS]


@pytest.mark.parametrize("name", KERNELS)
def test_scores_are_float_equal_to_rank_bm25_for_every_variant(variant_models, reference, name):
    for index, model, doc_sets in variant_models:
        for query in ["learning model learning", "sparse graph kernel", "method data task bound", "the of"]:
            for need in (1, 10, 50):
                with kernel(name):
                    check(index.core, model, doc_sets, tokenize(query), need, reference=reference)


def test_the_c_kernel_is_built_and_answers(synth_index):
    """The C kernel is importable (or, outside CI, the test says why it is not) and top() runs it."""
    require_c_kernel()
    assert postings.compiled_kernel() == "c"
    core = synth_index.core
    calls = []
    real = core._c_kernel()

    class Spy:
        def top(self, *args):
            calls.append(1)
            return real.top(*args)

    core._c = Spy()
    try:
        docs, scores, total = core.top(["model", "learn"], 10)
    finally:
        core._c = real
    assert calls == [1] and len(docs) == 10 and total > 10
    with kernel("numpy"):
        want = core.top(["model", "learn"], 10)
    assert docs.tolist() == want[0].tolist() and scores == want[1] and total == want[2]


def test_a_stale_c_kernel_is_never_called_numpy_ranks_with_one_warning(synth_index, monkeypatch):
    """A build left from older _kernel.c (another INTERFACE, or none: built before the constant) is
    dropped by compiled_kernel() with one warning naming the rebuild; top() ranks with numpy."""
    require_c_kernel()
    core = synth_index.core
    with kernel("numpy"):
        want = core.top(["model", "learn"], 10)

    class Stale:
        def top(self, *args):
            raise TypeError("words must be a sequence")  # what an old build said to today's call

    for interface, said in ((postings.KERNEL_INTERFACE - 1, f"interface {postings.KERNEL_INTERFACE - 1},"),
                            (None, "interface none,")):  # fmt: skip
        monkeypatch.setattr(postings, "_kernel", _C)
        monkeypatch.setattr(postings, "KERNEL_UNAVAILABLE", None)
        monkeypatch.setattr(postings, "KERNEL_STALE", False)
        if interface is None:
            monkeypatch.delattr(_C, "INTERFACE")
        else:
            monkeypatch.setattr(_C, "INTERFACE", interface)
        monkeypatch.setattr(core, "_c", Stale())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert postings.compiled_kernel() == "numpy"
            assert postings.compiled_kernel() == "numpy"  # decided once: no second warning
            docs, scores, total = core.top(["model", "learn"], 10)
        why = postings.KERNEL_UNAVAILABLE
        assert [str(w.message) for w in caught] == [f"ranking with numpy, about 4x slower: {why}"]
        assert caught[0].category is RuntimeWarning
        assert "is stale" in why and said in why and "`pip install -e .`" in why and _C.__file__ in why
        assert postings._kernel is None and postings.KERNEL_STALE
        assert docs.tolist() == want[0].tolist() and scores == want[1] and total == want[2]
        monkeypatch.undo()
    assert postings.compiled_kernel() == "c" and _C.INTERFACE == postings.KERNEL_INTERFACE


#: The check in .ci/run after pip install: the C kernel is built *and* of this code's interface.
CI_KERNEL_CHECK = (
    "from retrieval import postings; "
    "raise SystemExit(None if postings.compiled_kernel() == 'c' else f'ci: {postings.KERNEL_UNAVAILABLE}')"
)


def test_the_ci_check_fails_on_a_stale_kernel_and_passes_on_the_built_one():
    assert CI_KERNEL_CHECK in (Path(__file__).parents[2] / ".ci" / "run").read_text()
    stale = (
        "import sys, types; m = types.ModuleType('retrieval._kernel'); m.Kernel = None; m.INTERFACE = 1\n"
        "sys.modules['retrieval._kernel'] = m\n"
    )
    run = subprocess.run([sys.executable, "-c", stale + CI_KERNEL_CHECK], capture_output=True, text=True)
    assert run.returncode == 1 and "stale" in run.stderr and "pip install -e ." in run.stderr
    assert run.stderr.count("RuntimeWarning") == 1  # the one warning, then the check's own line
    require_c_kernel()
    assert subprocess.run([sys.executable, "-c", CI_KERNEL_CHECK], capture_output=True).returncode == 0


def test_without_the_c_kernel_the_numpy_path_ranks_and_says_why():
    """An install without a C compiler: the import fails, the reason is kept, numpy answers."""
    code = (
        "import sys; sys.modules['retrieval._kernel'] = None\n"
        "from retrieval import postings\n"
        "from retrieval.index import build_index\n"
        "from retrieval.models import Paper\n"
        "papers = [Paper(id=f'p{i}', title='', authors=('A',), et_al=False, area='T', abstract=t)\n"
        "          for i, t in enumerate(['sparse graph', 'graph kernel', 'kernel'])]\n"
        "docs, scores, total = build_index(papers).core.top(['graph'], 5)\n"
        "print(postings.compiled_kernel(), docs.tolist(), total)\n"
        "print(postings.KERNEL_UNAVAILABLE)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    first, why = out.splitlines()
    assert first.split(" ", 1)[0] == "numpy" and first.endswith(" 2") and "[0, 1]" in first
    assert "retrieval/_kernel.c" in why and "C compiler" in why
