"""/recommend quality and speed: precision@10 on ICLR 2024 with sub-areas as ground truth, and the
latency of a 50-paper list at 100k abstracts.

Quality: 200 seeded "users" each saved 5 papers of one sub-area ("Area · Subarea" with at least 15
papers, chosen uniformly, so small sub-areas count as much as large ones). A recommendation is
relevant when it is in the user's sub-area; precision@10 over the 10 first recommendations, saved
papers excluded. Methods, side by side on the same users:

* ``last-similar`` — the baseline: /similar of the last paper saved (``Index.similar``);
* ``similar-fusion`` — reciprocal-rank fusion of /similar of every saved paper;
* ``profile-N`` — retrieval.recommend (a Rocchio profile of the saved papers' tf-idf vectors, its N
  heaviest terms as a weighted BM25 query); N = 60 is what /recommend uses.

Speed: a synthetic corpus of 100,000 abstracts (bench/_synth.py), lists of 50 random papers, the
time of ``recommend(index, list, 25)`` (cold: no vector cache; warm: the list's vectors cached).

    python bench/recommend.py [--variant okapi|l|plus] [--users 200] [--seed 7] [--size 100000] [--lists 30]
                              [--no-latency] [--no-quality] [--work DIR]

Reads ../shared/corpora/iclr2024/papers.jsonl from there (never copied into the project).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from retrieval.corpus import load_corpus  # noqa: E402
from retrieval.index import build_index  # noqa: E402
from retrieval.recommend import PROFILE_TERMS, ProfileCache, recommend  # noqa: E402

if TYPE_CHECKING:
    from retrieval.index import Index
    from retrieval.models import Paper

Method = Callable[["Index", list[str]], list[str]]
ICLR = ROOT.parent / "shared" / "corpora" / "iclr2024" / "papers.jsonl"
SAVED = 5
K = 10
MIN_AREA = 15


def users(papers: Sequence[Paper], n_users: int, seed: int) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """``(sub-area, 5 saved ids in saving order)`` per user, seeded."""
    by_area: dict[str, list[str]] = defaultdict(list)
    for p in papers:
        if p.area and " · " in p.area:
            by_area[p.area].append(p.id)
    eligible = sorted(a for a, ids in by_area.items() if len(ids) >= MIN_AREA)
    rng = random.Random(seed)
    out = []
    for _ in range(n_users):
        area = rng.choice(eligible)
        out.append((area, rng.sample(by_area[area], SAVED)))
    return out, eligible


def precision(recommended: list[str], area_of: dict[str, str], area: str) -> float:
    return sum(area_of.get(pid) == area for pid in recommended[:K]) / K


def last_similar(index: Index, saved: list[str]) -> list[str]:
    skip = set(saved)
    return [h.paper.id for h in index.similar(saved[-1], K + SAVED) if h.paper.id not in skip][:K]


def similar_fusion(index: Index, saved: list[str]) -> list[str]:
    skip = set(saved)
    fused: dict[str, float] = defaultdict(float)
    for pid in saved:
        for h in index.similar(pid, 50):
            if h.paper.id not in skip:
                fused[h.paper.id] += 1.0 / (60 + h.rank)
    return [pid for pid, _ in sorted(fused.items(), key=lambda kv: -kv[1])[:K]]


def profile(n_terms: int) -> Method:
    def run(index: Index, saved: list[str]) -> list[str]:
        return [r.paper.id for r in recommend(index, saved, K, n_terms=n_terms)]

    run.__name__ = f"profile-{n_terms}"
    return run


def quality(n_users: int, seed: int, variant: str | None) -> None:
    from bench.ask import served_params

    params = served_params(variant)
    corpus = load_corpus(ICLR)
    index = build_index(corpus.papers, params)
    area_of = {p.id: p.area for p in corpus.papers}
    people, eligible = users(corpus.papers, n_users, seed)
    print(
        f"ICLR 2024 ({params.key()}): {len(index):,} papers; {len(people)} users x {SAVED} saved papers "
        f"of one of {len(eligible)} sub-areas (>= {MIN_AREA} papers each); "
        f"precision@{K}, same sub-area = relevant"
    )
    methods = [last_similar, similar_fusion, profile(30), profile(PROFILE_TERMS), profile(120)]
    results = {}
    for method in methods:
        started = time.perf_counter()
        values = [precision(method(index, saved), area_of, area) for area, saved in people]
        ms = (time.perf_counter() - started) * 1000 / len(people)
        name = method.__name__.replace("_", "-")
        results[name] = statistics.fmean(values)
        print(f"  {name:<16} precision@10 {results[name]:.3f}  ({ms:.1f} ms/user)")
    ours = results[f"profile-{PROFILE_TERMS}"]
    base = results["last-similar"]
    print(
        f"/recommend (profile-{PROFILE_TERMS}) vs last-similar: {100 * ours:.1f} vs {100 * base:.1f} "
        f"= {100 * (ours - base):+.1f} points (target: >= +10)"
    )


def latency(size: int, n_lists: int, seed: int, work: Path, variant: str | None) -> None:
    from bench._synth import Generator, write_corpus
    from bench.ask import served_params
    from retrieval.index import open_index

    params = served_params(variant)

    folder, cache = work / f"corpus-{size}", work / f"cache-{size}"
    started = time.perf_counter()
    if not folder.exists():
        write_corpus(Generator(size, seed=7).papers(), folder)
    index, report = open_index(folder, params, cache_dir=cache)
    how = "opened from its cache" if report.from_cache else "built"
    took = time.perf_counter() - started
    print(f"synthetic ({params.key()}): {len(index):,} abstracts, index {how} in {took:.0f} s")
    rng = random.Random(seed)
    ids = [index.papers[i].id for i in range(len(index))]
    cold, warm = [], []
    for _ in range(n_lists):
        saved = rng.sample(ids, 50)
        cache_ = ProfileCache(index)
        t0 = time.perf_counter()
        recommend(index, saved, 25, cache=cache_)
        t1 = time.perf_counter()
        recommend(index, saved, 25, cache=cache_)
        t2 = time.perf_counter()
        cold.append((t1 - t0) * 1000)
        warm.append((t2 - t1) * 1000)

    def pct(values: list[float], q: float) -> float:
        return sorted(values)[min(len(values) - 1, round(q * (len(values) - 1)))]

    print(
        f"  50-paper list, top 25: cold p50 {pct(cold, 0.5):.1f} ms p99 {pct(cold, 0.99):.1f} ms · "
        f"warm (vectors cached) p50 {pct(warm, 0.5):.1f} ms p99 {pct(warm, 0.99):.1f} ms (target: <= 50 ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--lists", type=int, default=30)
    parser.add_argument("--variant", choices=("okapi", "l", "plus"), default=None,
                        help="BM25 variant (default: the bot's, from config/paperbot.toml)")
    parser.add_argument("--no-latency", action="store_true")
    parser.add_argument("--no-quality", action="store_true")
    parser.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "paperbot-bench-recommend",
        help="where the synthetic corpus and its index cache are kept between runs",
    )
    args = parser.parse_args()
    if not args.no_quality:
        quality(args.users, args.seed, args.variant)
    if not args.no_latency:
        latency(args.size, args.lists, args.seed, args.work, args.variant)


if __name__ == "__main__":
    main()
