"""Seeded generator of synthetic abstracts for benchmarks and the rank-bm25 equivalence tests.

Words are drawn from one Zipf-like distribution (p(r) ~ 1 / (r + 2.7)^1.07) over a ranked
vocabulary: first the bundled corpus's own words in order of frequency (so stopwords, "model",
"learning" ... are the common ones), then made-up pronounceable words filling the tail. The
vocabulary grows with the corpus like Heaps' law, V = 44 * sqrt(tokens), so rare terms stay rare at
1M documents. Abstracts have 120-250 words in sentences of 12-28 words; areas and author names come
from the bundled corpus. Same seed, same size -> same papers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval.models import Paper

SEED_CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou", "ex", "an")]


@dataclass(frozen=True)
class SeedVocabulary:
    """What the generator borrows from the bundled corpus."""

    words: list[str]  # by decreasing frequency
    areas: list[str]
    authors: list[str]


def read_seed(path: Path = SEED_CORPUS) -> SeedVocabulary:
    """Words, areas and author names of the bundled corpus (its plain 论文检索 layout: blank-line
    separated lines, after the header one area line, one authors line, one abstract line per paper)."""
    counts: Counter[str] = Counter()
    areas: list[str] = []
    authors: list[str] = []
    for file in sorted(p for p in Path(path).rglob("*.txt")):
        lines = [ln.strip() for ln in file.read_text(encoding="utf-8").splitlines() if ln.strip()]
        if lines and lines[0] == "论文检索":
            lines = lines[1:]
        for i in range(0, len(lines) - 2, 3):
            areas.append(lines[i])
            authors.extend(a.strip() for a in lines[i + 1].rstrip(" 等").split(",") if a.strip())
            counts.update(w.lower() for w in _WORD.findall(lines[i + 2]))
    words = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return SeedVocabulary(words=words, areas=sorted(set(areas)), authors=sorted(set(authors)))


def heaps_vocabulary(n_docs: int, mean_len: float = 185.0) -> int:
    """Target vocabulary size for ``n_docs`` abstracts (Heaps' law, K=44, beta=0.5)."""
    return int(44 * (n_docs * mean_len) ** 0.5)


def _made_up_words(count: int, rng: np.random.Generator, taken: set[str]) -> list[str]:
    out: list[str] = []
    seen = set(taken)
    while len(out) < count:
        n = int(rng.integers(2, 5))
        word = "".join(_SYLLABLES[int(i)] for i in rng.integers(0, len(_SYLLABLES), n))
        if rng.random() < 0.08:
            word += str(int(rng.integers(1, 100)))  # some alphanumerics, like "m3dt" or "gpt4"
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


class Generator:
    """Synthetic abstracts of a given corpus size (the vocabulary depends on the size)."""

    def __init__(self, n_docs: int, seed: int = 7, seed_vocab: SeedVocabulary | None = None) -> None:
        self.n_docs = n_docs
        self.seed = seed
        self.seed_vocab = seed_vocab or read_seed()
        rng = np.random.default_rng(seed)
        base = self.seed_vocab.words
        target = max(heaps_vocabulary(n_docs), len(base) + 100)
        self.words = base + _made_up_words(target - len(base), rng, set(base))
        ranks = np.arange(len(self.words), dtype=np.float64)
        weights = 1.0 / (ranks + 2.7) ** 1.07
        self.cdf = np.cumsum(weights / weights.sum())
        self.cdf[-1] = 1.0

    def papers(self, start: int = 0, stop: int | None = None) -> Iterator[Paper]:
        """Papers ``start..stop`` (each paper depends only on the seed and its number)."""
        stop = self.n_docs if stop is None else stop
        sv = self.seed_vocab
        for i in range(start, stop):
            rng = np.random.default_rng([self.seed, i])
            n_words = int(rng.integers(120, 251))
            picks = np.searchsorted(self.cdf, rng.random(n_words), side="right")
            words = [self.words[j] for j in picks.tolist()]
            sentences: list[str] = []
            pos = 0
            while pos < len(words):
                size = int(rng.integers(12, 29))
                chunk = words[pos : pos + size]
                chunk[0] = chunk[0][:1].upper() + chunk[0][1:]
                sentences.append(" ".join(chunk) + ".")
                pos += size
            abstract = " ".join(sentences)
            title_words = words[: int(rng.integers(5, 11))]
            title = " ".join(w[:1].upper() + w[1:] for w in title_words)
            n_auth = int(rng.integers(1, 7))
            authors = tuple(sv.authors[j] for j in rng.integers(0, len(sv.authors), n_auth).tolist())
            area = sv.areas[int(rng.integers(0, len(sv.areas)))]
            yield Paper(
                id=f"syn{i:07d}", title=title, authors=authors, et_al=False, area=area, abstract=abstract,
                source=f"synthetic:{i}",
            )

    def queries(self, count: int, seed: int = 11) -> list[str]:
        """Realistic queries of 2-6 searchable words: about half drawn by corpus frequency (common
        words such as "model", "learning"), the rest uniformly from ranks 200..20,000 (rarer, more
        specific words). Stopwords are redrawn: a user's stopwords cost nothing anyway."""
        from retrieval.tokenize import tokenize

        rng = np.random.default_rng([seed, self.n_docs])
        rare_hi = min(len(self.words), 20_000)
        out: list[str] = []
        for _ in range(count):
            n = int(rng.integers(2, 7))
            words: list[str] = []
            while len(words) < n:
                if rng.random() < 0.5:
                    j = int(np.searchsorted(self.cdf, rng.random(), side="right"))
                else:
                    j = int(rng.integers(200, rare_hi))
                if tokenize(self.words[j]):
                    words.append(self.words[j])
            out.append(" ".join(words))
        return out


def write_corpus(papers: Iterator[Paper] | list[Paper], folder: Path, per_file: int = 20_000) -> list[Path]:
    """Write papers in the bundled plain-text layout (``论文检索`` files; titles are not stored)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    buf: list[str] = []
    count = 0

    def flush() -> None:
        if buf:
            path = folder / f"synthetic_{len(paths):04d}.txt"
            path.write_text("论文检索\n\n" + "\n\n".join(buf) + "\n", encoding="utf-8")
            paths.append(path)
            buf.clear()

    for p in papers:
        buf.append(f"{p.area}\n\n{', '.join(p.authors)}\n\n{p.abstract}")
        count += 1
        if count % per_file == 0:
            flush()
    flush()
    return paths
