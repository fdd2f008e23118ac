"""Query execution over the scoring core (:class:`~retrieval.postings.Postings`) and the catalogue
(:class:`~retrieval.catalogue.Catalogue`): ranked search, snippet spans and similar papers
(extractive answers are in :mod:`retrieval.answer`; :class:`retrieval.index.Index` is the facade).

The hot path is numpy only (score accumulation over postings, boolean filter masks, argpartition);
per-paper Python work (Hit, matched terms, snippet) happens only for the k hits returned.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from retrieval.catalogue import Catalogue
from retrieval.errors import UnknownPaperError
from retrieval.markup import strip_markup
from retrieval.models import Hit, Paper, SearchResults, Snippet
from retrieval.postings import Postings
from retrieval.query import ParsedQuery, QueryWord, parse_query
from retrieval.sentences import split_sentences
from retrieval.tokenize import (
    _ASCII_WORD_RE,
    analyze_word,
    iter_words,
    match_spans,
    surface_words,
    tokenize,
)

__all__ = ["MAX_K", "SNIPPET_LIMIT", "match_counts", "rank", "search", "similar", "snippet_spans"]

#: Largest page size accepted by search/similar.
MAX_K = 100
#: Longest snippet, in characters, markdown included (``bot.render`` cuts it to this).
SNIPPET_LIMIT = 300
#: Distinctive terms of a paper used as the query of :func:`similar`.
SIMILAR_TERMS = 25



def _check_k(k: int, limit: int = MAX_K) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= limit:
        raise ValueError(f"k must be an integer from 1 to {limit}, not {k!r}")


# --------------------------------------------------------------------------------------------------
# Ranking


def match_counts(index: Postings, words: Iterable[Iterable[str]]) -> npt.NDArray[np.int32]:
    """How many of the query ``words`` each paper contains; a word is the set of its index tokens
    (a hyphenated word has several) and counts once when the paper holds any of them."""
    counts = np.zeros(len(index), dtype=np.int32)
    for word in words:
        lists = [index.term_docs(t) for t in dict.fromkeys(word)]
        lists = [d for d in lists if len(d)]
        if not lists:
            continue
        docs = lists[0] if len(lists) == 1 else np.unique(np.concatenate(lists))
        counts[docs] += 1  # doc ids within one list are unique
    return counts


def _filter_mask(
    core: Postings, catalogue: Catalogue, parsed: ParsedQuery, area: str | None, author: str | None
) -> npt.NDArray[np.bool_] | None:
    """Bool mask of papers passing every filter, or None when there is no filter."""
    n = len(core)
    mask: npt.NDArray[np.bool_] | None = None

    def restrict(docs: npt.NDArray[np.int32]) -> None:
        nonlocal mask
        allowed = np.zeros(n, dtype=np.bool_)
        allowed[docs] = True
        mask = allowed if mask is None else mask & allowed

    def remove(docs: npt.NDArray[np.int32]) -> None:
        nonlocal mask
        if mask is None:
            mask = np.ones(n, dtype=np.bool_)
        mask[docs] = False

    areas = [*parsed.areas, *([area] if area and area.strip() else [])]
    if areas:
        ok = catalogue.area_mask(areas)
        allowed = ok[catalogue.doc_area]
        mask = allowed if mask is None else mask & allowed
    for value in parsed.not_areas:
        bad = catalogue.area_mask([value])
        remove(np.flatnonzero(bad[catalogue.doc_area]).astype(np.int32))
    for value in [*parsed.authors, *([author] if author and author.strip() else [])]:
        restrict(catalogue.author_docs(value))
    for value in parsed.not_authors:
        remove(catalogue.author_docs(value))
    for phrase in parsed.phrases:
        restrict(core.phrase_docs(phrase))
    for term in parsed.excluded_terms:
        remove(core.term_docs(term))
    for phrase in parsed.excluded_phrases:
        remove(core.phrase_docs(phrase))
    return mask


def rank(
    index: Postings,
    terms: Sequence[str],
    need: int,
    mask: npt.NDArray[np.bool_] | None = None,
    words: Sequence[Iterable[str]] | None = None,
) -> tuple[npt.NDArray[np.int64], dict[int, float], int]:
    """Top ``need`` docs for ``terms`` among ``mask`` (the kernel is :meth:`Postings.top`).

    The hit rule: every paper that contains a query term is a hit, whatever its score; no other paper
    is. Scores are rank-bm25's ``get_scores(terms)`` exactly, so a hit may score 0 (BM25Okapi's idf is
    0 for a word in exactly half the papers) or less (its epsilon floor is negative in tiny corpora).
    Hits are ordered by score, then by how many query ``words`` they contain, then corpus order.

    Args:
        index: The scoring core (or an Index, which forwards to its core).
        terms: Query tokens, repeats counting twice as in rank-bm25.
        need: How many docs to return.
        mask: Papers allowed (filters), or None for all.
        words: The query words as groups of tokens, for the tie-break (default: each distinct term).

    Returns:
        ``(docs, scores, total)``: the top docs, their scores by doc (``scores[doc]``), and the
        number of hits.
    """
    return index.top(terms, need, mask, words)


def _matched(core: Postings, docs: Sequence[int], words: Sequence[QueryWord]) -> list[tuple[str, ...]]:
    """For each of ``docs``: the query words (surfaces, first occurrence first) it contains."""
    present = {t: _holds(core, t, docs) for word in words for t in word.tokens}
    out: list[list[str]] = [[] for _ in docs]
    for word in words:
        for i, row in enumerate(out):
            if word.surface not in row and any(present[t][i] for t in word.tokens):
                row.append(word.surface)
    return [tuple(row) for row in out]


def _holds(core: Postings, term: str, docs: Sequence[int]) -> list[bool]:
    """Whether each of ``docs`` contains the token ``term``: a long term's bitmap answers with one
    word per doc (its posting list, hundreds of pages, is not searched); a short list is searched
    once for all the docs."""
    tid = core.vocab.get(term)
    if tid is None:
        return [False] * len(docs)
    slot = int(core.long_slot[tid])
    if slot >= 0:
        row = core.long_bits[slot]
        return [bool((int(row[d >> 6]) >> (d & 63)) & 1) for d in docs]
    posting = core.post_docs[int(core.indptr[tid]) : int(core.indptr[tid + 1])]
    found = np.searchsorted(posting, docs).tolist()
    return [j < len(posting) and int(posting[j]) == d for j, d in zip(found, docs, strict=True)]


def search(
    core: Postings,
    catalogue: Catalogue,
    query: str,
    k: int = 10,
    *,
    offset: int = 0,
    area: str | None = None,
    author: str | None = None,
) -> SearchResults:
    """Run a query; see :meth:`retrieval.index.Index.search`."""
    _check_k(k)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset must be an integer >= 0, not {offset!r}")
    parsed = parse_query(query)
    mask = _filter_mask(core, catalogue, parsed, area, author)
    docs, scores, total = rank(core, parsed.terms, offset + k, mask, [w.tokens for w in parsed.words])
    query_stems = _SnippetQuery({t for w in parsed.words for t in w.tokens}, core)
    page = docs[offset : offset + k].tolist()
    hits = []
    for i, (doc, matched) in enumerate(zip(page, _matched(core, page, parsed.words), strict=True)):
        paper = catalogue.papers[doc]  # made here: only the page's papers become objects
        hits.append(
            Hit(
                paper=paper,
                score=float(scores[doc]),
                rank=offset + i + 1,
                matched_terms=matched,
                snippet=_snippet(paper, query_stems, SNIPPET_LIMIT),
            )
        )
    return SearchResults(hits=tuple(hits), total=total, offset=offset, query=query)


def similar(core: Postings, catalogue: Catalogue, paper_id: str, k: int = 5) -> list[Hit]:
    """Papers closest to ``paper_id``; see :meth:`retrieval.index.Index.similar`."""
    _check_k(k)
    pos = catalogue.position(paper_id) if isinstance(paper_id, str) else None
    if pos is None:
        raise UnknownPaperError(str(paper_id))
    source = catalogue.papers[pos]
    counts = Counter(t for t in tokenize(source.indexed_title + "\n" + source.abstract) if t in core.vocab)
    # Positive idf (BM25Plus-style) so that common terms cannot dominate whatever the variant.
    n = len(core)
    weights = {t: c * math.log((n + 1) / max(1, core.df(t))) for t, c in counts.items()}
    top_terms = sorted(weights, key=lambda t: (-weights[t], core.vocab[t]))[:SIMILAR_TERMS]
    if not top_terms:
        return []
    # A representative surface form per stem for matched_terms: its most frequent plain word
    # (a word whose only token it is) in the source paper.
    forms: Counter[tuple[str, str]] = Counter()
    for w in iter_words(source.abstract):
        if len(w.tokens) == 1:
            forms[(w.tokens[0], w.surface)] += 1
    surfaces: dict[str, str] = {}
    for (t, surface), _ in forms.most_common():
        surfaces.setdefault(t, surface)
    words = [QueryWord(surfaces.get(t, t), (t,)) for t in top_terms]
    mask = np.ones(n, dtype=np.bool_)
    mask[pos] = False
    docs, scores, _ = rank(core, top_terms, k, mask)
    query_stems = _SnippetQuery(set(top_terms), core)
    page = docs.tolist()
    hits = []
    for i, (doc, matched) in enumerate(zip(page, _matched(core, page, words), strict=True)):
        paper = catalogue.papers[doc]
        hits.append(
            Hit(
                paper=paper,
                score=float(scores[doc]),
                rank=i + 1,
                matched_terms=matched,
                snippet=_snippet(paper, query_stems, SNIPPET_LIMIT),
            )
        )
    return hits


# --------------------------------------------------------------------------------------------------
# Snippets


_SENTENCE_CACHE: dict[str, tuple[str, list[tuple[int, int]]]] = {}
# Each entry holds an abstract (its key) and its sentence spans, ~3-4 kB: 512 cover the pages users
# page through (~100 pages of 5 hits), and each bot process holds them privately. 4096 grew each
# process by ~12 MB over 2,000 searches at 100k (bench/processes.py) for a hit rate of 3.2 % instead
# of 0.45 % on that bench's distinct queries.
_SENTENCE_CACHE_MAX = 512


def _sentence_spans(paper: Paper) -> tuple[str, list[tuple[int, int]]]:
    """The paper's display abstract as plain text and the (start, end) span of each sentence.

    strip_markup gives the text without its emphasis (LaTeX already turned into Unicode): the
    renderer adds its own **bold** and escapes the rest, so nothing can unbalance it. Memoised
    per abstract text (a bounded dict) because paging re-renders the same hits.
    """
    key = paper.abstract or paper.title
    cached = _SENTENCE_CACHE.get(key)
    if cached is not None:
        return cached
    display = strip_markup(paper.abstract) if paper.abstract else ""
    sentences = [x.strip() for x in split_sentences(display)] if display else []
    sentences = [x for x in sentences if x] or ([paper.title] if paper.title else [])
    spans: list[tuple[int, int]] = []
    pos = 0
    for sentence in sentences:
        spans.append((pos, pos + len(sentence)))
        pos += len(sentence) + 1
    result = (" ".join(sentences), spans)
    if len(_SENTENCE_CACHE) >= _SENTENCE_CACHE_MAX:
        _SENTENCE_CACHE.clear()
    _SENTENCE_CACHE[key] = result
    return result


def _idf(core: Postings | None, term: str) -> float:
    if core is None:
        return 1.0
    return math.log((len(core) + 1) / max(len(core.term_docs(term)), 1))


#: Snowball's exceptional forms whose stem is not the word's opening (dying -> die, lying -> lie,
#: tying -> tie): the extra text a word with that stem holds.
_EXTRA_CORES = {"die": ("dy",), "lie": ("ly",), "tie": ("ty",)}


def stem_cores(stems: Iterable[str]) -> tuple[str, ...] | None:
    """What an ASCII word must contain, lowercased and without hyphens, for one of its tokens to be
    one of ``stems``: each stem but its last character (Snowball changes at most the final letter it
    keeps: study -> studi; apostrophes stay in tokens; hyphen parts are joined or split), plus the
    openings of Snowball's exceptional forms. None when a stem is not ASCII (no shortcut then)."""
    cores: list[str] = []
    for stem in stems:
        if not stem.isascii():
            return None
        cores.append(stem[:-1])
        cores.extend(_EXTRA_CORES.get(stem, ()))
    return tuple(dict.fromkeys(cores))


def _found(sentence: str, stems: set[str], cores: tuple[str, ...] | None) -> set[str]:
    """The query tokens a sentence holds: exactly ``stems & set(tokenize(sentence))``.

    Analysing (stemming) every word of every hit is most of a snippet's cost, so in ASCII text only
    the words holding one of the stems' ``cores`` (:func:`stem_cores`) are analysed: a word without
    one cannot yield the token, and a sentence without any is skipped whole.
    """
    if cores is None or not sentence.isascii():
        return stems.intersection(tokenize(sentence))
    if not any(core in sentence.lower().replace("-", "") for core in cores):
        return set()
    out: set[str] = set()
    for word in surface_words(sentence):  # the words tokenize() reads, in order
        low = word.lower().replace("-", "")
        if any(core in low for core in cores):
            out.update(stems.intersection(analyze_word(word)[0]))
    return out


def snippet_spans(
    paper: Paper, stems: set[str], index: Postings | None = None, limit: int = SNIPPET_LIMIT
) -> Snippet:
    """Where a hit's snippet comes from: the best one or two sentences of the paper's display
    abstract and the query words in them, as character spans (no markdown; ``bot.render`` draws it).

    Sentences are scored by the idf of the distinct query terms they contain; the best one is kept,
    plus the next best when both fit in ``limit`` characters. Matching is by token, so ``models``
    matches ``model``.

    Args:
        paper: The paper.
        stems: Query tokens (as produced by the tokenizer).
        index: For idf weights (uniform weights without it).
        limit: The length the snippet will be cut to (the second sentence is kept only if it fits).

    Returns:
        The plain display text of the abstract, the chosen sentences' spans (in text order) and the
        query-word matches in them.
    """
    return _snippet(paper, _SnippetQuery(stems, index), limit)


class _SnippetQuery:
    """What every hit of one query shares for its snippet: the stems, their idf weights, their
    cores (:func:`stem_cores`, for sentences read by the full tokenizer) and the needles
    :func:`_candidate_words` looks for in ASCII text."""

    __slots__ = ("cores", "needles", "stems", "weights")

    def __init__(self, stems: set[str], index: Postings | None) -> None:
        self.stems = stems
        self.weights = {t: _idf(index, t) for t in stems}
        self.cores = stem_cores(stems)
        # What opens every word (or hyphen or apostrophe part) that yields one of the stems: the
        # stem but its last letter, or the stem itself when it has one letter (Snowball changes at
        # most the last letter it keeps), or an exceptional form's opening; folded like the text.
        # An ASCII word yields only ASCII tokens, so the other stems need none.
        openings = {o for t in stems if t.isascii() for o in (t[:-1] or t, *_EXTRA_CORES.get(t, ()))}
        self.needles = tuple(b" " + o.encode("ascii").translate(_FOLD_WORDS) for o in sorted(openings))


# ASCII bytes -> lowercase letters and digits, everything else (hyphens and apostrophes included) a
# space: in the folded text every word and every part of a word starts after a space.
_FOLD_WORDS = bytes(
    (c | 0x20) if chr(c).isascii() and chr(c).isalpha() else c if chr(c).isdigit() and c < 128 else 32
    for c in range(256)
)
_ASCII_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'-")


def _ascii_matches(text: str, a: int, b: int, q: _SnippetQuery) -> list[tuple[int, int, tuple[str, ...]]]:
    """``match_spans(text[a:b], q.stems)`` shifted by ``a``, for ASCII text without a backslash.

    Only the words that can yield a query token are cut out and analysed: those where a core
    opens the word or one of its parts (found with ``bytes.find`` in the folded text), and the
    hyphenated words whose joined form holds one (the joined form's stem may run across a hyphen).
    The cost follows the number of such words, not the length of the abstract.
    """
    out: list[tuple[int, int, tuple[str, ...]]] = []
    stems = q.stems
    for start, end in _candidate_words(text, a, b, q):
        raw = text[start:end]
        index = analyze_word(raw)[0]
        hit = tuple(t for t in index if t in stems)
        if not hit:
            continue
        if len(index) == 1 or index[0] in stems or "-" not in raw:
            out.append((start, end, hit))
            continue
        pos = start
        for piece in raw.split("-"):
            piece_hit = tuple(t for t in analyze_word(piece)[1] if t in stems)
            if piece_hit:
                out.append((pos, pos + len(piece), piece_hit))
            pos += len(piece) + 1
    return out


def _word_at(text: str, p: int, a: int, b: int) -> tuple[int, int] | None:
    """The span of the word (as the tokenizer reads ASCII ``text[a:b]``) holding ``text[p]``, if any."""
    if p == a or text[p - 1] not in _WORD_JOINERS:
        if p == a or text[p - 1] not in _ASCII_WORD_CHARS:  # a word starts at p, if any
            w = _ASCII_WORD_RE.match(text, p, b)
            return w.span() if w is not None else None
    s = p
    chars = _ASCII_WORD_CHARS
    while s > a and text[s - 1] in chars:
        s -= 1
    # text[s - 1] is no word character (or s is the start): the words found from s are those found
    # from the start of the text; the first one ending after p is the only one that can hold p.
    search = _ASCII_WORD_RE.search
    w = search(text, s, b)
    while w is not None and w.end() <= p:
        w = search(text, w.end(), b)
    if w is None or w.start() > p:
        return None
    return w.span()


_WORD_JOINERS = frozenset("'-")
# As _FOLD_WORDS, but hyphens deleted: a hyphenated word reads as its joined form.
_FOLD_JOINED = bytes(45 if c == 45 else x for c, x in enumerate(_FOLD_WORDS))


def _candidate_words(text: str, a: int, b: int, q: _SnippetQuery) -> list[tuple[int, int]]:
    """Spans of the words of ASCII ``text[a:b]`` that can yield one of the query's tokens (a superset
    of those that do), in text order."""
    raw = text[a:b].encode("ascii")
    folded = b" " + raw.translate(_FOLD_WORDS)
    starts: set[int] = set()
    for needle in q.needles:
        i = folded.find(needle)
        while i != -1:
            starts.add(a + i)  # folded[i] is the space before text[a + i]
            i = folded.find(needle, i + 1)
    if b"-" in raw:
        # A joined form's stem may run across hyphens: look for the cores in the text without its
        # hyphens too, and map what is found back (the k-th hyphen at h sits at h - k there).
        joined = b" " + raw.translate(_FOLD_JOINED, b"-")
        shifted: list[int] = []
        h = raw.find(b"-")
        while h != -1:
            shifted.append(h - len(shifted))
            h = raw.find(b"-", h + 1)
        for needle in q.needles:
            i = joined.find(needle)
            while i != -1:
                starts.add(a + i + bisect.bisect_right(shifted, i))
                i = joined.find(needle, i + 1)
    out: list[tuple[int, int]] = []
    last = a
    for p in sorted(starts):
        if p < last:
            continue  # inside the previous word
        span = _word_at(text, p, a, b)
        if span is not None:
            out.append(span)
            last = span[1]
    return out


def _snippet(paper: Paper, q: _SnippetQuery, limit: int) -> Snippet:
    """:func:`snippet_spans` with the query's shared part computed once."""
    text, spans = _sentence_spans(paper)
    if not spans:
        return Snippet(text="", sentences=(), matches=())
    stems, weights, cores = q.stems, q.weights, q.cores
    # The sentences holding a query token: their tokens, and their matches (None for a sentence read
    # by the full tokenizer: other scripts, LaTeX left in the text; its spans are found only if
    # it is chosen). A sentence without a token scores 0.
    found: dict[int, set[str]] = {}
    matched: dict[int, list[tuple[int, int, tuple[str, ...]]] | None] = {}
    if stems:
        fast = "\\" not in text  # LaTeX commands left in the text are for the full tokenizer
        if fast and text.isascii():  # one scan of the whole text, its matches dealt to sentences
            starts = [a for a, _ in spans]
            for m in _ascii_matches(text, 0, len(text), q):
                i = bisect.bisect_right(starts, m[0]) - 1
                if i in found:
                    found[i].update(m[2])
                    matched[i].append(m)  # type: ignore[union-attr]
                else:
                    found[i] = set(m[2])
                    matched[i] = [m]
        else:
            for i, (a, b) in enumerate(spans):
                if fast and text[a:b].isascii():
                    sentence_matches = _ascii_matches(text, a, b, q)
                    if sentence_matches:
                        found[i] = {t for _, _, hit in sentence_matches for t in hit}
                        matched[i] = sentence_matches
                elif tokens := _found(text[a:b], stems, cores):
                    found[i] = tokens
                    matched[i] = None
    # The best sentence: the highest sum of idf weights (all positive) of the distinct tokens it
    # holds, the earliest on a tie; the first sentence when none holds a token.
    # math.fsum: exactly rounded, so the order a set yields its tokens in (it varies with the hash
    # seed) never decides a tie between two sentences holding the same tokens.
    score = {i: math.fsum(weights[t] for t in f) for i, f in found.items()}
    best = max(score, key=lambda i: (score[i], -i)) if score else 0
    chosen = [best]

    def length(i: int) -> int:
        return spans[i][1] - spans[i][0]

    if score and len(spans) > 1:
        # A second sentence: the one adding most weight of terms the best one lacks (only a sentence
        # holding a token can); if none adds anything, the one that follows the best.
        lacking = found[best]
        gain = {i: math.fsum(weights[t] for t in f - lacking) for i, f in found.items() if i != best}
        second = max(gain, key=lambda i: (gain[i], score[i], -abs(i - best))) if gain else -1
        if second < 0 or gain[second] == 0:
            second = best + 1 if best + 1 < len(spans) else best - 1
        if length(best) + length(second) + 3 <= limit:
            chosen = sorted([best, second])
    matches: list[tuple[int, int]] = []
    for i in chosen:
        if i not in found:
            continue
        sentence_matches = matched[i]
        if sentence_matches is None:
            a, b = spans[i]
            matches.extend((a + x, a + y) for x, y, _ in match_spans(text[a:b], stems, cores))
        else:
            matches.extend((x, y) for x, y, _ in sentence_matches)
    return Snippet(text=text, sentences=tuple(spans[i] for i in chosen), matches=tuple(matches))
