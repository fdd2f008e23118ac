"""BEIR SciFact retrieval quality of the engine: nDCG@10 and Recall@100 on the 300 test queries.

Documents are ``title + text`` (BEIR convention); queries are read as plain words (no operators);
only queries present in ``qrels.tsv`` are scored (BEIR / pytrec_eval behaviour). Published BM25
figures for comparison: BEIR 0.665, Pyserini 0.679, rank-bm25 0.685, Elasticsearch 0.690.

Usage::

    PYTHONPATH=. python bench/scifact.py [--data ../shared/corpora/scifact] [--k1 1.5 --b 0.75]

Without ``--k1/--b`` it prints the bot's default configuration (BM25Plus k1=1.5 b=0.75 delta=1) and,
for comparison, the Lucene/Pyserini setting k1=0.9 b=0.4 and the other variants. ``--ablations``
also scores the default with one tokenizer choice changed at a time (stemming, stopword list,
hyphen handling).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import defaultdict
from pathlib import Path

from retrieval.index import BM25Params, Index, build_index
from retrieval.models import Paper
from retrieval.query import plain_query
from retrieval.search import rank
from retrieval.tokenize import TOKENIZER_VERSION

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "scifact"  # beside the project


def dcg(relevances: list[int]) -> float:
    """Discounted cumulative gain with the standard log2(rank + 1) discount (rank 1-based)."""
    return sum(rel / math.log2(i + 2) for i, rel in enumerate(relevances))


def ndcg_at_k(ranked: list[str], relevant: set[str], k: int = 10) -> float:
    """Binary-relevance nDCG@k; the ideal DCG puts every relevant document first (up to k)."""
    if not relevant:
        return 0.0
    gains = [1 if doc in relevant else 0 for doc in ranked[:k]]
    ideal = dcg([1] * min(len(relevant), k))
    return dcg(gains) / ideal


def recall_at_k(ranked: list[str], relevant: set[str], k: int = 100) -> float:
    """Share of the relevant documents found in the top k."""
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def load(data: Path) -> tuple[list[Paper], dict[str, str], dict[str, set[str]]]:
    """SciFact corpus (as papers), test queries and test qrels."""
    papers = []
    with (data / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            papers.append(
                Paper(id=str(row["_id"]), title=row.get("title") or "", authors=(), et_al=False, area="",
                      abstract=row.get("text") or "")
            )
    queries = {}
    with (data / "queries_test.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            queries[str(row["_id"])] = row["text"]
    qrels: dict[str, set[str]] = defaultdict(set)
    with (data / "qrels.tsv").open(encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels[qid].add(did)
    return papers, queries, dict(qrels)


def evaluate(index: Index, queries: dict[str, str], qrels: dict[str, set[str]]) -> tuple[float, float, float]:
    """Mean nDCG@10, mean Recall@100 and mean query time (ms) over the queries in qrels."""
    ndcgs, recalls, times = [], [], []
    for qid, relevant in qrels.items():
        started = time.perf_counter()
        docs, _, _ = rank(index, plain_query(queries[qid]).terms, 100)
        times.append((time.perf_counter() - started) * 1000)
        ranked = [index.papers[d].id for d in docs.tolist()]
        ndcgs.append(ndcg_at_k(ranked, relevant, 10))
        recalls.append(recall_at_k(ranked, relevant, 100))
    n = len(ndcgs)
    return sum(ndcgs) / n, sum(recalls) / n, sum(times) / n


LUCENE_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)


def ablations(papers: list[Paper], queries: dict[str, str], qrels: dict[str, set[str]]) -> None:
    """nDCG@10 of the default configuration with one tokenizer choice changed at a time (by patching
    the tokenizer module in this process only), to show what moves the score."""
    import retrieval.tokenize as tok

    original = (tok.analyze_word, tok.stem, tok.STOPWORDS)

    def split_only(surface: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        parts = tok._HYPHEN_RE.split(tok._strip_accents(surface.casefold()))
        split = tuple(tok.stem(p) for p in parts if p and p not in tok.STOPWORDS)
        return split, split

    def joined_only(surface: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        joined = "".join(tok._HYPHEN_RE.split(tok._strip_accents(surface.casefold())))
        token = (tok.stem(joined),) if joined and joined not in tok.STOPWORDS else ()
        return token, token

    variants = [
        ("default tokenizer", {}),
        ("hyphenated words split only", {"analyze_word": split_only}),
        ("hyphenated words joined only", {"analyze_word": joined_only}),
        ("no stemming", {"stem": lambda w: w}),
        ("Lucene's 33 stopwords instead of NLTK's", {"STOPWORDS": LUCENE_STOPWORDS}),
        ("no stopwords", {"STOPWORDS": frozenset()}),
    ]
    print()
    print(f"{'tokenizer ablation (okapi k1=1.5 b=0.75)':45s} {'nDCG@10':>8s} {'R@100':>7s}")
    try:
        for name, patch in variants:
            tok.analyze_word, tok.stem, tok.STOPWORDS = original
            for attr, value in patch.items():
                setattr(tok, attr, value)
            tok._WORD_CACHE.clear()
            tok._STEM_CACHE.clear()
            ndcg, recall, _ = evaluate(build_index(papers, BM25Params()), queries, qrels)
            print(f"{name:45s} {ndcg:8.4f} {recall:7.4f}")
    finally:
        tok.analyze_word, tok.stem, tok.STOPWORDS = original
        tok._WORD_CACHE.clear()
        tok._STEM_CACHE.clear()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--variant", default="okapi", choices=["okapi", "l", "plus"])
    parser.add_argument("--k1", type=float)
    parser.add_argument("--b", type=float)
    parser.add_argument("--ablations", action="store_true", help="also score tokenizer variants")
    args = parser.parse_args()
    papers, queries, qrels = load(args.data)
    missing = [q for q in qrels if q not in queries]
    if missing:
        raise SystemExit(f"{len(missing)} qrels queries have no text")
    print(
        f"SciFact: {len(papers)} documents, {len(qrels)} scored test queries, "
        f"tokenizer {TOKENIZER_VERSION}"
    )
    if args.k1 is not None or args.b is not None:
        configs = [("custom", BM25Params(args.variant, args.k1 or 1.5, 0.75 if args.b is None else args.b))]
    else:
        configs = [
            ("okapi k1=1.5 b=0.75", BM25Params()),
            ("okapi k1=0.9 b=0.4 (Lucene/Pyserini)", BM25Params(k1=0.9, b=0.4)),
            ("okapi k1=1.2 b=0.75", BM25Params(k1=1.2, b=0.75)),
            ("BM25L defaults", BM25Params(variant="l")),
            ("DEFAULT BM25Plus k1=1.5 b=0.75 delta=1", BM25Params(variant="plus")),
        ]
    print(f"{'configuration':40s} {'nDCG@10':>8s} {'R@100':>7s} {'build s':>8s} {'ms/query':>9s}")
    for name, params in configs:
        started = time.perf_counter()
        index = build_index(papers, params)
        build = time.perf_counter() - started
        ndcg, recall, ms = evaluate(index, queries, qrels)
        print(f"{name:40s} {ndcg:8.4f} {recall:7.4f} {build:8.2f} {ms:9.2f}")
    print("published BM25 nDCG@10: BEIR 0.665, Pyserini 0.679, rank-bm25 0.685, Elasticsearch 0.690")
    if args.k1 is None and args.b is None:
        default_ndcg = evaluate(build_index(papers, BM25Params(variant="plus")), queries, qrels)[0]
        verdict = "PASS" if default_ndcg >= 0.690 else "FAIL"
        print(f"target nDCG@10 >= 0.690 with the default configuration: {verdict} ({default_ndcg:.4f})")
    if args.ablations:
        ablations(papers, queries, qrels)


if __name__ == "__main__":
    main()
