"""Extractive answers: the sentences of the top papers that answer a question, with their papers.

:func:`answer` is what :meth:`retrieval.index.Index.answer` runs. It reads the index only through
its public reads (:func:`retrieval.search.rank`, ``term_docs``, ``contains``, ``papers``), so the
index and the ranking kernel can change underneath it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from retrieval.models import Answer, AnswerSentence, Paper
from retrieval.query import ParsedQuery, plain_query
from retrieval.search import rank
from retrieval.text import split_sentences, strip_markup
from retrieval.tokenize import tokenize

if TYPE_CHECKING:
    from retrieval.index import Index

__all__ = ["ANSWER_MIN_SHARE", "ANSWER_PAPERS", "MAX_SENTENCES", "answer", "paper_sentences", "rank_papers"]

#: Most sentences an answer quotes.
MAX_SENTENCES = 10
#: Papers read for an extractive answer.
ANSWER_PAPERS = 5
#: A sentence quoted in an answer scores at least this share of the best quoted sentence.
ANSWER_MIN_SHARE = 0.5
#: Question words whose idf is below this (words in more than ~37 % of the papers) are too common to
#: show that a sentence is about the question; they still add to its score.
ANSWER_GENERIC_IDF = 1.0
#: Tokens of words that frame a question rather than name its topic ("how can X be *made* faster",
#: "what *makes* X *work*"): an answer ignores them unless the question has no other word.
QUESTION_FRAME_TOKENS = frozenset(
    tokenize("make makes made making work works worked working help helps helped helping use uses used using")
    + tokenize("way ways get gets got getting")
)


@lru_cache(maxsize=4096)
def _split(abstract: str, title: str) -> tuple[str, ...]:
    display = strip_markup(abstract) if abstract else ""
    sentences = [x.strip() for x in split_sentences(display)] if display else []
    return tuple(x for x in sentences if x) or ((title,) if title else ())


def paper_sentences(paper: Paper) -> tuple[str, ...]:
    """The sentences of the paper's display abstract (plain text, LaTeX turned into Unicode); the
    title alone when the abstract is empty. Memoised per abstract."""
    return _split(paper.abstract, paper.title)


def _idf(index: Index, term: str) -> float:
    df = len(index.term_docs(term))
    return math.log((len(index) + 1) / max(df, 1))


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _question_words(index: Index, parsed: ParsedQuery) -> list[frozenset[str]]:
    """The distinct words of a question that can match, each as its set of index tokens.

    Words the corpus never uses are left out (they match nothing), and so are words that only frame
    the question (:data:`QUESTION_FRAME_TOKENS`) unless nothing else is left.
    """
    words: list[frozenset[str]] = []
    for word in parsed.words:
        tokens = frozenset(t for t in word.tokens if t in index.vocab)
        if tokens and tokens not in words:
            words.append(tokens)
    topical = [w for w in words if not w <= QUESTION_FRAME_TOKENS]
    return topical or words


def rank_papers(index: Index, question: str, n: int = ANSWER_PAPERS) -> list[int]:
    """Positions of the ``n`` papers that best match ``question``, best first (what :func:`answer`
    reads)."""
    words = _question_words(index, plain_query(question))
    terms = list(dict.fromkeys(t for word in words for t in sorted(word)))
    return rank(index, terms, n)[0].tolist() if terms else []


@dataclass(slots=True, eq=False)
class _Quote:
    """A candidate sentence of an extractive answer."""

    score: float
    order: int
    text: str
    doc: int
    tokens: set[str]
    words: int = 0  # how many distinct topical question words it holds


def answer(index: Index, question: str, k: int = 4) -> Answer:
    """Extractive answer; see :meth:`retrieval.index.Index.answer`.

    Candidate sentences come from the top :data:`ANSWER_PAPERS` papers for the question. Each is
    scored BM25-style against the question terms (idf-weighted, saturated term frequency, length
    normalised by the average candidate sentence length), times a mild prior for the paper's rank.

    What gets quoted is what a careful reader would quote: a sentence that shares one rare word with
    the question ("... a much *faster* alternative") scores well but answers nothing. Counting only
    topical words (not frame words such as "made", not words found in a third of the papers):

    * a paper is a source only if it holds two distinct question words (when the question has two
      and some candidate paper does; when none does, only the word most candidates share counts);
    * its *anchor* is its best sentence holding two of them (when some candidate sentence does);
      its next best sentence may follow, but only quoted together with the anchor, where it reads
      in context;
    * every quoted sentence scores at least :data:`ANSWER_MIN_SHARE` of the best anchor.

    Sentences are taken best first, at most two per paper, none too similar (Jaccard >= 0.6) to one
    already taken: up to ``k``, fewer (even none) when fewer are worth quoting.
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_SENTENCES:
        raise ValueError(f"k must be an integer from 1 to {MAX_SENTENCES}, not {k!r}")
    parsed = plain_query(question)
    words = _question_words(index, parsed)
    terms = list(dict.fromkeys(t for word in words for t in sorted(word)))
    nothing = Answer(question=question, sentences=(), papers=())
    if not terms:
        return nothing
    docs, scores, _ = rank(index, terms, ANSWER_PAPERS)
    quotes = _score_sentences(index, docs.tolist(), scores, terms)
    if not quotes:
        return nothing
    idf = {term: _idf(index, term) for term in terms}
    # Words in a third of the papers or more ("model", "learning", "data") say little about what a
    # sentence is about: only the others count as held question words.
    topical = [w for w in words if max(idf[t] for t in w) >= ANSWER_GENERIC_IDF] or words
    held = {doc: [w for w in topical if any(index.contains(doc, t) for t in w)] for doc in docs.tolist()}
    if len(topical) >= 2 and max(len(ws) for ws in held.values()) < 2:
        # No candidate paper holds two of the question's words, so each is about one of them: keep to
        # the word most of them share, the question's subject ("diffusion", not "faster").
        shared = Counter(w for ws in held.values() for w in ws)
        topical = [max(topical, key=lambda w: shared[w])]  # ties: the word asked about first
        held = {doc: [w for w in ws if w in topical] for doc, ws in held.items()}
    paper_words = {doc: len(ws) for doc, ws in held.items()}
    paper_need = min(2, max(paper_words.values()))
    for quote in quotes:
        quote.words = sum(1 for w in topical if not w.isdisjoint(quote.tokens))
    eligible = [q for q in quotes if paper_words[q.doc] >= paper_need and q.words]
    if not eligible:
        return nothing
    need = min(2, max(q.words for q in eligible))
    # Each paper offers its best sentence holding enough of the question (its anchor), and its next
    # best sentence, which is quoted only together with the anchor.
    anchors: dict[int, _Quote] = {}
    for quote in eligible:
        if quote.words >= need:
            anchors.setdefault(quote.doc, quote)
    floor = ANSWER_MIN_SHARE * max(q.score for q in anchors.values())
    anchors = {doc: q for doc, q in anchors.items() if q.score >= floor}
    pool = [q for q in eligible if q.doc in anchors and q.score >= floor]
    seconds: dict[int, _Quote] = {}
    for quote in pool:
        anchor = anchors[quote.doc]
        if quote is not anchor and quote.doc not in seconds and _jaccard(quote.tokens, anchor.tokens) < 0.6:
            seconds[quote.doc] = quote
    chosen: list[_Quote] = []

    def fits(*new: _Quote) -> bool:
        return len(chosen) + len(new) <= k and all(
            _jaccard(q.tokens, c.tokens) < 0.6 for q in new for c in chosen
        )

    for quote in pool:
        anchor = anchors[quote.doc]
        if quote is anchor and fits(quote):
            chosen.append(quote)
        elif quote is seconds.get(quote.doc):
            if anchor in chosen:
                if fits(quote):
                    chosen.append(quote)
            elif fits(quote, anchor):
                chosen += [quote, anchor]
    chosen.sort(key=lambda q: (-q.score, q.order))
    sentences = tuple(AnswerSentence(text=q.text, paper=index.papers[q.doc], score=q.score) for q in chosen)
    cited: dict[str, Paper] = {}
    for s in sentences:
        cited.setdefault(s.paper.id, s.paper)
    return Answer(question=question, sentences=sentences, papers=tuple(cited.values()))


def _score_sentences(
    index: Index, docs: list[int], scores: npt.NDArray[np.float64], terms: Sequence[str]
) -> list[_Quote]:
    """The sentences of ``docs`` that match some term, scored, best first (see :func:`answer`)."""
    if not docs:
        return []
    top_score = float(scores[docs[0]])
    candidates: list[tuple[str, int, Counter[str], float]] = []
    for rank_i, doc in enumerate(docs):
        prior = 0.8 + 0.2 * float(scores[doc]) / top_score if top_score > 0 else 1.0
        for sentence in paper_sentences(index.papers[doc]):
            tokens = tokenize(sentence)
            if len(tokens) < 4:  # headings, "Code is available." and other fragments
                continue
            candidates.append((sentence, doc, Counter(tokens), prior - 0.001 * rank_i))
    if not candidates:
        return []
    avg_len = sum(sum(c.values()) for _, _, c, _ in candidates) / len(candidates)
    k1, b = 1.2, 0.75
    idf = {term: _idf(index, term) for term in terms}
    quotes: list[_Quote] = []
    for order, (sentence, doc, counts, prior) in enumerate(candidates):
        length = sum(counts.values())
        value = 0.0
        for term in idf:
            tf = counts.get(term, 0)
            if tf:
                value += idf[term] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg_len))
        if value > 0:
            quotes.append(_Quote(value * prior, order, sentence, doc, set(counts)))
    quotes.sort(key=lambda q: (-q.score, q.order))
    return quotes
