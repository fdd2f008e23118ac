"""BM25Okapi or BM25Plus as the default ranking? Both measured in one run, on two tasks.

* **SciFact** (BEIR, 5,183 abstracts, 300 test queries with judgments): nDCG@10 and Recall@100,
  documents ``title + text``, as bench/scifact.py scores it.
* **ICLR 2024 known-item search**: the 1,996 title-less abstracts of
  ``../shared/corpora/iclr2024/abstracts.txt`` loaded as paperbot loads a corpus (their derived
  titles are shown, not indexed), queried with each paper's real title from ``papers.jsonl`` (a
  user looking for a paper they know). MRR@10 and the share found in the top 10.

Both use the engine's ranking (``retrieval.search.rank``, its hit rule included) with rank-bm25's
parameters: BM25Okapi k1=1.5 b=0.75 epsilon=0.25 and BM25Plus k1=1.5 b=0.75 delta=1.

Usage::

    PYTHONPATH=. python bench/variants.py [--data ../shared/corpora]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python bench/variants.py` from the project root, like the others
    sys.path.insert(0, str(ROOT))

from bench.scifact import evaluate as scifact_evaluate  # noqa: E402
from bench.scifact import load as scifact_load  # noqa: E402
from retrieval.corpus import load_corpus  # noqa: E402
from retrieval.index import BM25Params, Index, build_index  # noqa: E402
from retrieval.models import Paper  # noqa: E402
from retrieval.query import plain_query  # noqa: E402
from retrieval.search import rank  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
VARIANTS = [("BM25Okapi", BM25Params()), ("BM25Plus", BM25Params(variant="plus"))]


def known_items(data: Path) -> tuple[tuple[Paper, ...], list[tuple[str, int]]]:
    """The ICLR corpus as loaded by paperbot, and (real title, position of its paper) pairs."""
    papers = load_corpus(data / "iclr2024" / "abstracts.txt").papers
    by_abstract = {" ".join(p.abstract.split()): i for i, p in enumerate(papers)}
    pairs = []
    with (data / "iclr2024" / "papers.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            pos = by_abstract.get(" ".join((row.get("abstract") or "").split()))
            if pos is not None and row.get("title"):
                pairs.append((row["title"], pos))
    return papers, pairs


def mrr_at_10(index: Index, pairs: list[tuple[str, int]]) -> tuple[float, float]:
    """Mean reciprocal rank of the sought paper (0 beyond rank 10) and the share in the top 10."""
    total, found = 0.0, 0
    for title, pos in pairs:
        terms = plain_query(title).terms
        if not terms:
            continue
        docs = rank(index, terms, 10)[0].tolist()
        if pos in docs:
            total += 1 / (docs.index(pos) + 1)
            found += 1
    return total / len(pairs), found / len(pairs)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    sci_papers, queries, qrels = scifact_load(args.data / "scifact")
    iclr_papers, pairs = known_items(args.data)
    print(
        f"SciFact: {len(sci_papers)} documents, {len(qrels)} judged test queries. "
        f"ICLR 2024: {len(iclr_papers)} abstracts, {len(pairs)} real titles as known-item queries."
    )
    print(f"{'variant':10s} {'SciFact nDCG@10':>16s} {'R@100':>7s} {'ICLR MRR@10':>12s} {'top-10':>7s}")
    for name, params in VARIANTS:
        ndcg, recall, _ = scifact_evaluate(build_index(sci_papers, params), queries, qrels)
        mrr, top10 = mrr_at_10(build_index(iclr_papers, params), pairs)
        print(f"{name:10s} {ndcg:16.4f} {recall:7.4f} {mrr:12.4f} {top10:7.1%}")


if __name__ == "__main__":
    main()
