"""Build time, cache size/load time, memory and top-10 latency at 10k/100k/1M synthetic abstracts,
against rank-bm25's own ``get_scores`` on the same corpus and queries.

Usage::

    PYTHONPATH=. python bench/latency.py                          # 10k and 100k
    PYTHONPATH=. python bench/latency.py --sizes 10000,100000,1000000

Each phase runs in a fresh subprocess so that one phase's garbage cannot pollute another's memory
figures: ``build`` (parse + tokenize + index + save the cache, as ``open_index`` does on a cold
start), ``serve`` (``open_index`` from the cache, then the queries; RSS measured there) and
``baseline`` (rank-bm25 BM25Okapi built on the same tokens; ``get_scores`` + argsort top-10, and a
check that its top-10 equals ours). Latency is the full ``Index.search(q, 10)`` call, snippets
included. Targets are printed as PASS/FAIL.
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

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

QUERY_SEED = 11
TARGETS_100K = {
    "p50_ms": 5.0, "p99_ms": 20.0, "speedup": 30.0, "build_s": 60.0, "load_s": 3.0, "rss_mb": 600.0,
}
TARGET_1M_P50_MS = 50.0


def rss_mb() -> float:
    """Current resident set size of this process (VmRSS), in MB."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    """Peak resident set size of this process, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


# -- phases (each in its own process) ----------------------------------------------------------------


def phase_build(folder: Path, cache: Path) -> dict:
    from retrieval.index import open_index

    started = time.perf_counter()
    index, report = open_index(folder, cache_dir=cache)
    seconds = time.perf_counter() - started
    assert not report.from_cache
    size = sum(p.stat().st_size for p in cache.glob("*.npz"))
    return {
        "papers": len(index), "terms": len(index.terms), "postings": int(len(index.post_docs)),
        "build_s": seconds, "cache_mb": size / 1e6, "peak_rss_mb": peak_rss_mb(),
    }


def phase_serve(folder: Path, cache: Path, queries: list[str], out: Path) -> dict:
    from retrieval.index import open_index
    from retrieval.search import rank
    from retrieval.tokenize import tokenize

    base = rss_mb()
    started = time.perf_counter()
    index, report = open_index(folder, cache_dir=cache)
    load = time.perf_counter() - started
    assert report.from_cache
    after_load = rss_mb()
    for q in queries[:20]:  # warm-up (tokenizer memo, page faults)
        index.search(q, 10)
    full, ranking, tops = [], [], []
    for q in queries:
        t0 = time.perf_counter()
        results = index.search(q, 10)
        full.append((time.perf_counter() - t0) * 1000)
        tops.append([index.position(h.paper.id) for h in results.hits])
        tokens = tokenize(q)
        t0 = time.perf_counter()
        rank(index, tokens, 10)
        ranking.append((time.perf_counter() - t0) * 1000)
    out.write_text(json.dumps(tops))
    return {
        "load_s": load, "rss_mb": rss_mb(), "rss_after_load_mb": after_load, "rss_interpreter_mb": base,
        "peak_rss_mb": peak_rss_mb(), "p50_ms": statistics.median(full), "p99_ms": percentile(full, 0.99),
        "rank_p50_ms": statistics.median(ranking), "rank_p99_ms": percentile(ranking, 0.99),
        "queries": len(queries),
    }


def phase_baseline(folder: Path, cache: Path, queries: list[str], ours: Path) -> dict:
    import gc

    import numpy as np

    from retrieval.index import open_index, paper_tokens
    from retrieval.tokenize import tokenize

    index, _ = open_index(folder, cache_dir=cache)
    params = index.params
    docs = [paper_tokens(p) for p in index.papers]
    del index
    gc.collect()
    started = time.perf_counter()
    model = params.rank_bm25_model(docs)
    build = time.perf_counter() - started
    del docs
    gc.collect()
    expected = json.loads(ours.read_text())
    times, agree = [], 0
    for q, our_top in zip(queries, expected, strict=False):
        tokens = tokenize(q)
        t0 = time.perf_counter()
        scores = model.get_scores(tokens)
        top = np.argsort(scores)[::-1][:10]
        times.append((time.perf_counter() - t0) * 1000)
        # Our rule: score > 0, ties by corpus order (argsort's order among exact ties is arbitrary).
        cand = np.flatnonzero(scores > 0)
        ref = cand[np.lexsort((cand, -scores[cand]))][:10].tolist()
        agree += ref == our_top
        del top
    return {"build_s": build, "p50_ms": statistics.median(times), "p99_ms": percentile(times, 0.99),
            "queries": len(times), "top10_identical": agree, "peak_rss_mb": peak_rss_mb()}


def _child(args: list[str]) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")},
    )
    if proc.returncode != 0:
        raise SystemExit(f"phase {args[0]} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- driver ----------------------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def run_size(n: int, work: Path, n_queries: int, n_baseline: int) -> dict:
    from bench._synth import Generator, write_corpus

    folder = work / f"corpus-{n}"
    cache = work / f"cache-{n}"
    shutil.rmtree(cache, ignore_errors=True)
    gen = Generator(n, seed=7)
    if not folder.exists():
        t0 = time.perf_counter()
        write_corpus(gen.papers(), folder, per_file=20_000)
        print(f"  generated {n:,} abstracts in {time.perf_counter() - t0:.1f} s", flush=True)
    queries = gen.queries(n_queries, seed=QUERY_SEED)
    qfile = work / f"queries-{n}.json"
    qfile.write_text(json.dumps(queries))
    tops = work / f"tops-{n}.json"
    build = _child(["build", str(folder), str(cache)])
    print(f"  build: {build}", flush=True)
    serve = _child(["serve", str(folder), str(cache), str(qfile), str(tops)])
    print(f"  serve: {serve}", flush=True)
    bq = work / f"bqueries-{n}.json"
    bq.write_text(json.dumps(queries[:n_baseline]))
    base = _child(["baseline", str(folder), str(cache), str(bq), str(tops)])
    print(f"  rank-bm25: {base}", flush=True)
    return {"n": n, "build": build, "serve": serve, "base": base}


def report(rows: list[dict]) -> None:
    print()
    head = (
        f"{'papers':>9} {'terms':>9} {'postings':>11} {'build s':>8} {'cache MB':>9} {'load s':>7} "
        f"{'RSS MB':>7} {'p50 ms':>7} {'p99 ms':>7} {'rank p50':>8} {'bm25 p50':>9} {'speedup':>8} "
        f"{'top10=':>7}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        b, s, base = r["build"], r["serve"], r["base"]
        speedup = base["p50_ms"] / s["p50_ms"]
        print(
            f"{r['n']:>9,} {b['terms']:>9,} {b['postings']:>11,} {b['build_s']:>8.1f} {b['cache_mb']:>9.1f} "
            f"{s['load_s']:>7.2f} {s['rss_mb']:>7.0f} {s['p50_ms']:>7.2f} {s['p99_ms']:>7.2f} "
            f"{s['rank_p50_ms']:>8.2f} {base['p50_ms']:>9.1f} {speedup:>7.0f}x "
            f"{base['top10_identical']:>3}/{base['queries']:<3}"
        )
    print()
    print("latency: full Index.search(q, k=10) incl. snippets; 'rank p50': scoring + top-10 only;")
    print("bm25 p50: rank-bm25 BM25Okapi.get_scores + argsort top-10; speedup = bm25 p50 / our p50;")
    print("RSS: serving process after cache load + queries (fresh subprocess); build includes parse+save.")
    for r in rows:
        b, s, base = r["build"], r["serve"], r["base"]
        speedup = base["p50_ms"] / s["p50_ms"]
        if r["n"] == 100_000:
            t = TARGETS_100K
            checks = [
                (f"p50 {s['p50_ms']:.2f} ms <= {t['p50_ms']} ms", s["p50_ms"] <= t["p50_ms"]),
                (f"p99 {s['p99_ms']:.2f} ms <= {t['p99_ms']} ms", s["p99_ms"] <= t["p99_ms"]),
                (f"{speedup:.0f}x faster than rank-bm25 >= {t['speedup']:.0f}x", speedup >= t["speedup"]),
                (f"build {b['build_s']:.1f} s <= {t['build_s']:.0f} s", b["build_s"] <= t["build_s"]),
                (f"cache load {s['load_s']:.2f} s <= {t['load_s']:.0f} s", s["load_s"] <= t["load_s"]),
                (f"RSS {s['rss_mb']:.0f} MB <= {t['rss_mb']:.0f} MB", s["rss_mb"] <= t["rss_mb"]),
                (f"top-10 identical to rank-bm25 on {base['top10_identical']}/{base['queries']} queries",
                 base["top10_identical"] == base["queries"]),
            ]
        elif r["n"] == 1_000_000:
            checks = [
                (f"p50 {s['p50_ms']:.2f} ms <= {TARGET_1M_P50_MS} ms", s["p50_ms"] <= TARGET_1M_P50_MS),
                (f"top-10 identical to rank-bm25 on {base['top10_identical']}/{base['queries']} queries",
                 base["top10_identical"] == base["queries"]),
            ]
        else:
            checks = [
                (f"top-10 identical to rank-bm25 on {base['top10_identical']}/{base['queries']} queries",
                 base["top10_identical"] == base["queries"]),
            ]
        for text, ok in checks:
            print(f"  {r['n']:>9,}: {verdict(ok)}  {text}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in {"build", "serve", "baseline"}:
        phase, rest = sys.argv[1], sys.argv[2:]
        if phase == "build":
            result = phase_build(Path(rest[0]), Path(rest[1]))
        elif phase == "serve":
            queries = json.loads(Path(rest[2]).read_text())
            result = phase_serve(Path(rest[0]), Path(rest[1]), queries, Path(rest[3]))
        else:
            queries = json.loads(Path(rest[2]).read_text())
            result = phase_baseline(Path(rest[0]), Path(rest[1]), queries, Path(rest[3]))
        print(json.dumps(result))
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes")
    parser.add_argument("--queries", type=int, default=300, help="queries per size")
    parser.add_argument("--baseline-queries", type=int, default=0,
                        help="queries for rank-bm25 (default: all, 20 at 1M)")
    parser.add_argument("--workdir", type=Path, help="keep generated corpora here (default: a temp dir)")
    args = parser.parse_args()
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="paperbot-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for n in sizes:
            print(f"== {n:,} abstracts", flush=True)
            n_base = args.baseline_queries or (20 if n >= 1_000_000 else args.queries)
            rows.append(run_size(n, work, args.queries, min(n_base, args.queries)))
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    report(rows)


if __name__ == "__main__":
    main()
