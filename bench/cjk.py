"""How to index Chinese: whole CJK runs, character bigrams, or the jieba segmenter, measured.

A small Chinese corpus (tests/retrieval/fixtures/chinese_corpus.txt: 22 papers with Chinese areas,
authors and abstracts) and 39 known-item queries written as a user would type them
(tests/retrieval/fixtures/chinese_queries.tsv: query, first author of the paper sought; 25 phrases
and 14 single words or sub-words such as 蒸馏 or 重尾). Each way of
cutting CJK text feeds rank-bm25's BM25Okapi with the same tokens for documents and queries (area
and abstract), and the engine's hit rule (a paper holding a query token is a hit). Printed per
method: MRR@10, how many queries find their paper at rank 1 and in the top 10, and tokenizing time.

* ``runs``: each run of CJK characters is one token (paperbot before 2026.2: a query word matched
  only a clause typed exactly alike).
* ``bigrams``: overlapping character bigrams (what paperbot does now, like Lucene's CJKAnalyzer).
* ``jieba``: jieba 0.42 ``cut_for_search`` (dictionary segmentation plus sub-words), when installed
  (``pip install jieba``; not a dependency of paperbot).

Usage::

    PYTHONPATH=. python bench/cjk.py
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import rank_bm25

from retrieval import tokenize as tokenizer_module
from retrieval.corpus import load_corpus
from retrieval.tokenize import tokenize

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "retrieval" / "fixtures"
_CJK = re.compile("[\u3041-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7a3]+")
_PUNCT = re.compile(r"[\W_]+")


def runs(text: str) -> list[str]:
    return _CJK.findall(text) + [t for t in tokenize(_CJK.sub(" ", text))]


def bigrams(text: str) -> list[str]:
    return tokenize(text)


def make_jieba() -> Callable[[str], list[str]] | None:
    try:
        import jieba  # type: ignore[import-not-found]
    except ImportError:
        return None
    jieba.setLogLevel(60)
    started = time.perf_counter()
    jieba.initialize()
    print(f"(jieba loads its dictionary in {time.perf_counter() - started:.2f} s)")

    def cut(text: str) -> list[str]:
        out: list[str] = []
        for run in _CJK.findall(text):
            out += [w for w in jieba.cut_for_search(run) if not _PUNCT.fullmatch(w)]
        return out + tokenize(_CJK.sub(" ", text))

    return cut


def evaluate(name: str, cut: Callable[[str], list[str]]) -> None:
    corpus = load_corpus(FIXTURES / "chinese_corpus.txt")
    papers = corpus.papers
    tokenizer_module._WORD_CACHE.clear()  # noqa: SLF001 (time every method from a cold memo)
    started = time.perf_counter()
    docs = [cut(f"{p.area} {p.abstract}") for p in papers]
    micros = (time.perf_counter() - started) / len(papers) * 1e6
    model = rank_bm25.BM25Okapi(docs)
    sets = [set(d) for d in docs]
    rr, top1, top10 = [], 0, 0
    lines = (FIXTURES / "chinese_queries.tsv").read_text(encoding="utf-8").splitlines()
    for line in lines:
        query, author = line.split("\t")
        tokens = cut(query)
        scores = np.asarray(model.get_scores(tokens))
        counts = np.array([sum(1 for t in set(tokens) if t in s) for s in sets])
        hits = [i for i in np.lexsort((np.arange(len(docs)), -counts, -scores)) if counts[i] > 0][:10]
        target = next(i for i, p in enumerate(papers) if p.authors[0] == author)
        rank = hits.index(target) + 1 if target in hits else 0
        rr.append(1 / rank if rank else 0.0)
        top1 += rank == 1
        top10 += rank > 0
    n = len(lines)
    print(
        f"{name:8s} MRR@10 {sum(rr) / n:.3f}   rank 1: {top1}/{n}   top 10: {top10}/{n}   "
        f"tokenize {micros:.0f} µs/paper"
    )


def main() -> None:
    print(f"{len(load_corpus(FIXTURES / 'chinese_corpus.txt').papers)} Chinese papers, known-item queries:")
    evaluate("runs", runs)
    evaluate("bigrams", bigrams)
    cut = make_jieba()
    if cut is None:
        print("jieba    (not installed: pip install jieba)")
    else:
        evaluate("jieba", cut)


if __name__ == "__main__":
    main()
