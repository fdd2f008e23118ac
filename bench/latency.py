"""Index figures at 100k (and 1M) synthetic abstracts, side by side with rank-bm25, rank-bm25-rs and
tantivy on the same corpus and the same query tokens, in the same run.

Usage::

    python bench/latency.py                              # 100k
    python bench/latency.py --sizes 100000,1000000       # and 1M (needs ~10 GB free, ~15 min)
    pip install -e '.[bench]'                            # rank-bm25-rs and tantivy (else skipped)

Every phase runs in a fresh subprocess, one after the other (never two at once), so that memory
figures are the phase's own:

* ``build``: ``open_index`` on the corpus with no cache (parse, tokenize, index, write the cache
  file): wall time and peak RSS.
* ``cold``: a fresh ``python`` that imports the library, opens the index from its cache file and
  answers one query with a rendered page of 5 hits; wall time measured from outside, imports
  included (median of 3).
* ``serve``: the index opened from the cache (its heap then frozen out of the cyclic GC's reach, as
  the bot does), then every query twice: a page of 5 hits with their
  snippets rendered (``Index.search(q, 5)`` + ``bot.render.snippet``), and ranking alone
  (``retrieval.search.rank(core, tokens, 10)``: tokens in, top-10 docs and scores out). RSS after.
* ``rank-bm25`` / ``rank-bm25-rs``: the model built on the very tokens the index holds,
  ``get_scores`` + the top 10 under paperbot's hit rule; their top-10 docs and scores must equal
  ours exactly (float equality).
* ``tantivy``: the same tokens (joined by spaces, whitespace tokenizer) in an on-disk tantivy index;
  a query is a boolean SHOULD of term queries, top 10 by tantivy's own BM25.

Targets (issue 12) are printed PASS/FAIL. The machine is shared and noisy: compare ratios of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

QUERY_SEED = 11
TARGETS = {
    100_000: {"cold_s": 1.0, "rss_mb": 250.0, "page_p50_ms": 1.5, "page_p99_ms": 5.0, "build_s": 12.0},
    1_000_000: {
        "cold_s": 3.0, "rss_mb": 1500.0, "page_p50_ms": 10.0, "build_s": 150.0, "build_peak_mb": 4096.0,
    },
}
RANK_VS_TANTIVY = 1.5


def rss_mb() -> float:
    """Current resident set size of this process (VmRSS), in MB."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def timings(values: list[float]) -> dict:
    return {"p50_ms": statistics.median(values), "p99_ms": percentile(values, 0.99), "n": len(values)}


# -- phases (each in its own process) ----------------------------------------------------------------


def phase_build(folder: Path, cache: Path) -> dict:
    import logging

    from retrieval import build
    from retrieval.index import open_index
    from retrieval.titlefile import title_file_path, wait_for_writers

    stages: list[str] = []

    class Stages(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith("built the index"):
                stages.append(record.getMessage())

    logging.getLogger("retrieval.index").addHandler(Stages())
    logging.getLogger("retrieval.index").setLevel(logging.INFO)
    started = time.perf_counter()
    index, report = open_index(folder, cache_dir=cache)
    seconds = time.perf_counter() - started
    assert not report.from_cache
    size = sum(p.stat().st_size for p in cache.iterdir())  # the index file
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest worker's peak
    n_workers = build.MAX_WORKERS if workers else 0
    # The derived titles are written after the build, in the background (retrieval/titlefile.py):
    # waited for here, so that the next phases run alone and serve them from the file.
    titles_file = title_file_path(Path(str(report.extra["cache"])))
    while index.papers.title_file() is None:  # (a rebuild's cache folder holds the previous one)
        time.sleep(0.05)
    titles_s = time.perf_counter() - started - seconds
    wait_for_writers()
    titles_mb = titles_file.stat().st_size / 1e6
    return {"papers": len(index), "terms": len(index.terms), "postings": int(len(index.post_docs)),
            "build_s": seconds, "cache_mb": size / 1e6, "titles_s": titles_s, "titles_mb": titles_mb,
            "main_peak_rss_mb": peak_rss_mb(),
            "worker_peak_rss_mb": workers, "workers": n_workers,
            # an upper bound of the build's total: every process at its own peak at the same time
            "peak_rss_mb": peak_rss_mb() + n_workers * workers, "stages": stages[-1:]}  # fmt: skip


COLD = """
import sys
from pathlib import Path
from bot import render
from retrieval.index import open_index
index, report = open_index(Path(sys.argv[1]), cache_dir=Path(sys.argv[2]))
assert report.from_cache
page = index.search(sys.argv[3], 5)
print(len(page.hits), sum(len(render.snippet(h.snippet)) for h in page.hits))
"""


def phase_cold(folder: Path, cache: Path, query: str) -> dict:
    walls = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", COLD, str(folder), str(cache), query], check=True,
                       capture_output=True, cwd=ROOT)  # fmt: skip
        walls.append(time.perf_counter() - started)
    return {"cold_s": statistics.median(walls), "cold_runs_s": walls}


def phase_serve(folder: Path, cache: Path, queries: list[str], out: Path) -> dict:
    import gc

    from bot import render
    from retrieval import postings
    from retrieval.index import open_index
    from retrieval.search import rank
    from retrieval.tokenize import tokenize

    started = time.perf_counter()
    index, report = open_index(folder, cache_dir=cache)
    load = time.perf_counter() - started
    assert report.from_cache
    gc.freeze()  # as the bot does once its index is loaded (bot.engine._freeze_heap)
    core = index.core
    token_lists = [tokenize(q) for q in queries]
    # The numpy path first (the fallback where the C kernel is not built), then the kernel the bot
    # runs (the C one when built).
    kernel = postings._kernel
    postings._kernel = None
    numpy_rank = []
    for tokens in token_lists[:20]:
        rank(core, tokens, 10)
    for tokens in token_lists:
        t0 = time.perf_counter()
        rank(core, tokens, 10)
        numpy_rank.append((time.perf_counter() - t0) * 1000)
    postings._kernel = kernel
    for q in queries[:20]:  # warm-up (tokenizer memo, page faults)
        for h in index.search(q, 5).hits:
            render.snippet(h.snippet)
    page, page_cpu, ranking, tops = [], [], [], []
    for q, tokens in zip(queries, token_lists, strict=True):
        t0, c0 = time.perf_counter(), time.thread_time()
        for h in index.search(q, 5).hits:
            render.snippet(h.snippet)
        page.append((time.perf_counter() - t0) * 1000)
        # the same page's CPU time: what the wall time would be without other processes' load
        page_cpu.append((time.thread_time() - c0) * 1000)
        t0 = time.perf_counter()
        docs, scores, _ = rank(core, tokens, 10)
        ranking.append((time.perf_counter() - t0) * 1000)
        tops.append([[int(d), float(scores[d])] for d in docs])
    out.write_text(json.dumps({"tokens": token_lists, "tops": tops}))
    return {"load_s": load, "rss_mb": rss_mb(), "peak_rss_mb": peak_rss_mb(),
            "page": timings(page), "page_cpu": timings(page_cpu), "rank": timings(ranking),
            "kernel": postings.compiled_kernel(), "rank_numpy": timings(numpy_rank)}  # fmt: skip


def _reference_top(scores: Any, docs_tokens_hit: tuple[Any, Any], k: int = 10) -> list[list]:
    """Top k under paperbot's hit rule from a full score array and the docs holding a query token."""
    import numpy as np

    hits, counts = docs_tokens_hit
    values = scores[hits]
    order = np.lexsort((hits, -counts, -values))[:k]
    return [[int(hits[i]), float(values[i])] for i in order]


def _hit_sets(index: Any, tokens: list[str], words: list[list[str]]) -> tuple[Any, Any]:
    import numpy as np

    from retrieval.search import match_counts

    counts = match_counts(index.core, words)
    hits = np.flatnonzero(counts > 0)
    return hits, counts[hits]


def phase_model(name: str, folder: Path, cache: Path, ours: Path, n_queries: int) -> dict:
    """rank-bm25 or rank-bm25-rs on the index's own tokens; exactness against our top 10."""
    import gc

    import numpy as np

    from retrieval.index import open_index, paper_tokens
    from retrieval.query import parse_query

    if name == "rank-bm25":
        from rank_bm25 import BM25Okapi
    else:
        from rank_bm25_rs import BM25Okapi
    index, _ = open_index(folder, cache_dir=cache)
    docs = [paper_tokens(p) for p in index.papers]
    base = rss_mb()
    started = time.perf_counter()
    model = BM25Okapi(docs, k1=index.params.k1, b=index.params.b, epsilon=index.params.epsilon)
    build = time.perf_counter() - started
    del docs
    gc.collect()
    expected = json.loads(ours.read_text())
    queries = json.loads((ours.parent / ours.name.replace("tops", "queries")).read_text())
    times, agree, compared = [], 0, 0
    for q, tokens, our_top in zip(queries, expected["tokens"], expected["tops"], strict=True):
        if compared >= n_queries:
            break
        t0 = time.perf_counter()
        scores = np.asarray(model.get_scores(tokens))
        top = np.argpartition(-scores, 10)[:10]
        times.append((time.perf_counter() - t0) * 1000)
        del top
        words = [list(w.tokens) for w in parse_query(q).words]
        agree += _reference_top(scores, _hit_sets(index, tokens, words)) == our_top
        compared += 1
    return {"build_s": build, **timings(times), "top10_identical": agree, "compared": compared,
            "rss_mb": rss_mb() - base}  # fmt: skip


def phase_tantivy(folder: Path, cache: Path, ours: Path, work: Path) -> dict:
    import tantivy

    from retrieval.index import open_index, paper_tokens

    index, _ = open_index(folder, cache_dir=cache)
    token_docs = [" ".join(paper_tokens(p)) for p in index.papers]
    del index
    path = work / "tantivy"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    base = rss_mb()
    started = time.perf_counter()
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
    schema = builder.build()
    tindex = tantivy.Index(schema, path=str(path))
    writer = tindex.writer(heap_size=256_000_000)
    for text in token_docs:
        writer.add_document(tantivy.Document(body=text))
    writer.commit()
    writer.wait_merging_threads()
    build = time.perf_counter() - started
    del token_docs
    tindex = tantivy.Index.open(str(path))
    tindex.reload()
    searcher = tindex.searcher()
    expected = json.loads(ours.read_text())
    queries = []
    for tokens in expected["tokens"]:
        terms = list(dict.fromkeys(tokens))
        queries.append(tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", t)) for t in terms]
        ))  # fmt: skip
    for q in queries[:20]:
        searcher.search(q, 10)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        searcher.search(q, 10).hits  # noqa: B018 - the result is what is timed
        times.append((time.perf_counter() - t0) * 1000)
    size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return {"build_s": build, **timings(times), "rss_mb": rss_mb() - base, "index_mb": size / 1e6}


def _child(args: list[str]) -> dict:
    load = os.getloadavg()
    proc = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, check=False, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")},
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"phase {args[0]} failed:\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["load_avg"] = [round(x, 1) for x in (load[0], os.getloadavg()[0])]  # 1-min load before, after
    return result


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


# -- driver ----------------------------------------------------------------------------------------


def run_size(
    n: int, work: Path, n_queries: int, baseline_queries: int, with_rank_bm25: bool, peers_wanted: bool = True
) -> dict:
    from bench._synth import Generator, write_corpus

    folder = work / f"corpus-{n}"
    cache = work / f"cache-{n}"
    shutil.rmtree(cache, ignore_errors=True)
    (folder / EXTRA).unlink(missing_ok=True)  # an interrupted run's
    gen = Generator(n, seed=7)
    if not (folder / ".complete").exists():
        shutil.rmtree(folder, ignore_errors=True)
        t0 = time.perf_counter()
        write_corpus(gen.papers(), folder, per_file=20_000)
        (folder / ".complete").write_text("ok")
        print(f"  generated {n:,} abstracts in {time.perf_counter() - t0:.1f} s", flush=True)
    queries = gen.queries(n_queries, seed=QUERY_SEED)
    (work / f"queries-{n}.json").write_text(json.dumps(queries))
    tops = work / f"tops-{n}.json"
    row: dict = {"n": n}
    row["build"] = _child(["build", str(folder), str(cache)])
    print(f"  build: {row['build']}", flush=True)
    row["cold"] = _child(["cold", str(folder), str(cache), queries[0]])
    print(f"  cold: {row['cold']}", flush=True)
    row["serve"] = _child(["serve", str(folder), str(cache), str(work / f"queries-{n}.json"), str(tops)])
    print(f"  serve: {row['serve']}", flush=True)
    peers = [("rank-bm25", "rank_bm25", with_rank_bm25 and peers_wanted),
             ("rank-bm25-rs", "rank_bm25_rs", peers_wanted)]  # fmt: skip
    for name, module, wanted in peers:
        if wanted and _installed(module):
            row[name] = _child(["model", name, str(folder), str(cache), str(tops), str(baseline_queries)])
            print(f"  {name}: {row[name]}", flush=True)
    if peers_wanted and _installed("tantivy"):
        row["tantivy"] = _child(["tantivy", str(folder), str(cache), str(tops), str(work)])
        print(f"  tantivy: {row['tantivy']}", flush=True)
        shutil.rmtree(work / "tantivy", ignore_errors=True)
    row["rebuild"] = rebuild(n, folder, cache, work)
    print(f"  rebuild: {row['rebuild']}", flush=True)
    return row


EXTRA = "zz-rebuild-extra.txt"


def rebuild(n: int, folder: Path, cache: Path, work: Path) -> dict:
    """A reindex after 1 % new papers arrived (one more file): the build again, its cache in place.
    The extra file is removed after (the corpus stays the one generated)."""
    from bench._synth import Generator, write_corpus

    extra = work / f"extra-{n}"
    shutil.rmtree(extra, ignore_errors=True)
    (written,) = write_corpus(Generator(max(1, n // 100), seed=8).papers(), extra, per_file=n)
    try:
        shutil.move(written, folder / EXTRA)
        return _child(["build", str(folder), str(cache)])
    finally:
        (folder / EXTRA).unlink(missing_ok=True)
        shutil.rmtree(extra, ignore_errors=True)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def report(rows: list[dict]) -> None:
    print()
    head = f"{'':>14} {'build s':>8} {'peak MB':>8} {'cold s':>7} {'RSS MB':>7} {'page p50':>9} " \
           f"{'page p99':>9} {'rank p50':>9} {'rank p99':>9} {'top10 = ours':>13}"  # fmt: skip
    for r in rows:
        print(f"== {r['n']:,} abstracts ({r['build']['terms']:,} terms, {r['build']['postings']:,} postings, "
              f"cache {r['build']['cache_mb']:.0f} MB)")  # fmt: skip
        print(head)
        b, c, s = r["build"], r["cold"], r["serve"]
        if "main_peak_rss_mb" in b:
            print(f"build peak RSS: main {b['main_peak_rss_mb']:.0f} MB + {b['workers']} worker(s) x "
                  f"{b['worker_peak_rss_mb']:.0f} MB (largest) = at most {b['peak_rss_mb']:.0f} MB; "
                  f"{' '.join(b.get('stages', []))}")  # fmt: skip
        if "titles_s" in b:
            print(f"derived titles: written to their file ({b['titles_mb']:.0f} MB) "
                  f"{b['titles_s']:.1f} s after the build, by a process of its own at a low priority "
                  "(the index answers meanwhile)")  # fmt: skip
        print(f"{'paperbot':>14} {b['build_s']:>8.1f} {b['peak_rss_mb']:>8.0f} {c['cold_s']:>7.2f} "
              f"{s['rss_mb']:>7.0f} {s['page']['p50_ms']:>9.3f} {s['page']['p99_ms']:>9.3f} "
              f"{s['rank']['p50_ms']:>9.3f} {s['rank']['p99_ms']:>9.3f} {'':>13}")  # fmt: skip
        if "rank_numpy" in s:
            num = s["rank_numpy"]
            print(f"{'(numpy kernel)':>14} {'':>8} {'':>8} {'':>7} {'':>7} {'':>9} {'':>9} "
                  f"{num['p50_ms']:>9.3f} {num['p99_ms']:>9.3f} {'':>13}")  # fmt: skip
        for name in ("rank-bm25", "rank-bm25-rs", "tantivy"):
            p = r.get(name)
            if p is None:
                print(f"{name:>14}  (not installed or skipped)")
                continue
            same = f"{p['top10_identical']}/{p['compared']}" if "compared" in p else "(own BM25)"
            print(f"{name:>14} {p['build_s']:>8.1f} {'':>8} {'':>7} {p['rss_mb']:>7.0f} {'':>9} {'':>9} "
                  f"{p['p50_ms']:>9.3f} {p['p99_ms']:>9.3f} {same:>13}")  # fmt: skip
        print("page: search(q, 5) + snippets rendered; rank: tokens -> exact top-10 and scores "
              f"({s.get('kernel', 'numpy')} kernel).")
        if "page_cpu" in s:
            print(f"page CPU time (the same pages, other processes' load left out): p50 "
                  f"{s['page_cpu']['p50_ms']:.3f} ms, p99 {s['page_cpu']['p99_ms']:.3f} ms.")
        print("Peers' RSS: what their model/index added to the process; rank-bm25* p50: get_scores + top-10.")
        t = TARGETS.get(r["n"])
        checks = []
        if t:
            checks += [
                (f"cold start {c['cold_s']:.2f} s <= {t['cold_s']} s", c["cold_s"] <= t["cold_s"]),
                (f"serving RSS {s['rss_mb']:.0f} MB <= {t['rss_mb']:.0f} MB", s["rss_mb"] <= t["rss_mb"]),
                (f"page of 5 p50 {s['page']['p50_ms']:.2f} ms <= {t['page_p50_ms']} ms",
                 s["page"]["p50_ms"] <= t["page_p50_ms"]),
                (f"build {b['build_s']:.1f} s <= {t['build_s']:.0f} s", b["build_s"] <= t["build_s"]),
            ]  # fmt: skip
            if "page_p99_ms" in t:
                checks.append((f"page of 5 p99 {s['page']['p99_ms']:.2f} ms <= {t['page_p99_ms']} ms",
                               s["page"]["p99_ms"] <= t["page_p99_ms"]))  # fmt: skip
            if "build_peak_mb" in t:
                checks.append((f"build peak RSS {b['peak_rss_mb']:.0f} MB <= {t['build_peak_mb']:.0f} MB",
                               b["peak_rss_mb"] <= t["build_peak_mb"]))  # fmt: skip
        if "tantivy" in r:
            ratio = s["rank"]["p50_ms"] / r["tantivy"]["p50_ms"]
            text = f"ranking p50 {ratio:.2f}x tantivy's <= {RANK_VS_TANTIVY}x"
            checks.append((text, ratio <= RANK_VS_TANTIVY))
            if "rank_numpy" in s:
                ratio = s["rank_numpy"]["p50_ms"] / r["tantivy"]["p50_ms"]
                text = f"ranking p50 with the numpy kernel {ratio:.2f}x tantivy's <= {RANK_VS_TANTIVY}x"
                checks.append((text, ratio <= RANK_VS_TANTIVY))
        for name in ("rank-bm25", "rank-bm25-rs"):
            if name in r:
                p = r[name]
                text = f"top-10 docs and scores identical to {name} on {p['top10_identical']}/{p['compared']}"
                checks.append((text + " queries", p["top10_identical"] == p["compared"]))
        if "rebuild" in r:
            rb = r["rebuild"]
            print(f"rebuild after {rb['papers'] - b['papers']:,} new papers (one more file): "
                  f"{rb['build_s']:.1f} s, "
                  f"against {b['build_s']:.1f} s for the first build; peak RSS at most "
                  f"{rb['peak_rss_mb']:.0f} MB")
        for text, ok in checks:
            print(f"  {r['n']:>9,}: {verdict(ok)}  {text}")
        print()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in {"build", "cold", "serve", "model", "tantivy"}:
        phase, rest = sys.argv[1], sys.argv[2:]
        if phase == "build":
            result = phase_build(Path(rest[0]), Path(rest[1]))
        elif phase == "cold":
            result = phase_cold(Path(rest[0]), Path(rest[1]), rest[2])
        elif phase == "serve":
            queries = json.loads(Path(rest[2]).read_text())
            result = phase_serve(Path(rest[0]), Path(rest[1]), queries, Path(rest[3]))
        elif phase == "model":
            result = phase_model(rest[0], Path(rest[1]), Path(rest[2]), Path(rest[3]), int(rest[4]))
        else:
            result = phase_tantivy(Path(rest[0]), Path(rest[1]), Path(rest[2]), Path(rest[3]))
        print(json.dumps(result))
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100000", help="comma-separated corpus sizes (default 100000)")
    parser.add_argument("--queries", type=int, default=300, help="queries per size")
    parser.add_argument("--baseline-queries", type=int, default=0,
                        help="queries checked against rank-bm25(-rs) (default: all; 50 at 1M)")
    parser.add_argument("--no-rank-bm25-at-1m", action="store_true",
                        help="skip the pure-Python rank-bm25 at 1M (~10 GB); rank-bm25-rs still runs")
    parser.add_argument("--skip-peers", action="store_true",
                        help="paperbot's phases only (quick runs; the ratios need the peers)")
    parser.add_argument("--workdir", type=Path, help="keep generated corpora here (default: a temp dir)")
    args = parser.parse_args()
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="paperbot-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for n in sizes:
            print(f"== {n:,} abstracts", flush=True)
            n_base = args.baseline_queries or (50 if n >= 1_000_000 else args.queries)
            with_rank_bm25 = not (n >= 1_000_000 and args.no_rank_bm25_at_1m)
            rows.append(run_size(n, work, args.queries, min(n_base, args.queries), with_rank_bm25,
                                 not args.skip_peers))  # fmt: skip
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    report(rows)


if __name__ == "__main__":
    main()
