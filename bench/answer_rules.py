"""Today's hand-set rules for /ask, as they stood before the answer choice was learned (retrieval/answer.py
at main 4ed0df4; the question words, kinds and stem families it shares with the learned answerer are
imported from there, the ablation switches are gone): kept only so that bench/ask.py can print them
beside the learned choice in the same run. Nothing in the bot imports this module. Their sentence
score (cue phrases, the bonus table) lives in retrieval.answer.rule_scores, where the learned choice
reads it as one of its features.

How they answer: BM25 candidates reranked by sentence-level evidence; each sentence's rhetorical role
from hand-written cue phrases and its position; a bonus table of role against question kind; the best
sentence of the best paper first, then at most two that support it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

# The question words, their kinds and stem families are shared with the learned answerer.
from retrieval.answer import (
    _PAIR_SHARE,
    _QUANT_RE,
    AnswerIndex,
    _family,
    _question_words,
    _Word,
    question_kind,
    rule_scores,
)
from retrieval.answer import _asked as _asked
from retrieval.markup import strip_markup
from retrieval.models import Answer, AnswerSentence, Paper
from retrieval.roles import cue_sets
from retrieval.sentences import split_sentences
from retrieval.tokenize import tokenize

#: Sentences quoted by default: the answer and at most two that support it.
DEFAULT_SENTENCES = 3
#: Most sentences an answer may be asked to quote.
MAX_SENTENCES = 10
#: Papers BM25 hands to the sentence-evidence rerank.
RERANK_DEPTH = 8
#: Weight of the sentence evidence against the (max-normalised) BM25 score in the rerank.
EVIDENCE_WEIGHT = 1.0
#: A runner-up paper supports the answer when its rerank score is at least this share of the best.
RUNNER_UP_SHARE = 0.85
#: A supporting sentence scores at least this share of the answer sentence.
SUPPORT_SHARE = 0.3
# -- sentences and their roles -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Text:
    """A paper's abstract as sentences, each with its tokens; the paper's tokens, also sorted (for
    prefix look-ups)."""

    sentences: tuple[str, ...]
    tokens: tuple[frozenset[str], ...]
    vocab: frozenset[str]
    ordered: tuple[str, ...]


#: Abstracts whose analysis (:func:`_text`) and roles each process keeps. An entry of ``_text`` is
#: ~21-23 kB (its sentences, their token sets, the vocabulary, and the abstract it is keyed by, which
#: only the cache keeps alive: papers are made on demand from the mapped index), measured with
#: tracemalloc on ICLR 2024 and SciFact abstracts; ``_roles`` adds ~3.5-3.9 kB. 16,384 entries could
#: grow to ~350 MB per bot process. 512 bound it to ~11 MB + 2 MB: an /ask analyses its 8
#: candidates (RERANK_DEPTH) several times over, which any bound keeps, and 512 holds the candidates of
#: the last 64 questions. Over SciFact's 1,109 questions plus 300 asked again, answers took 6.53 ms CPU
#: with 512 entries, 6.38 with 1,024 and 4.37 with 16,384 (a miss costs ~2.2-2.6 ms CPU at load 9).
TEXT_CACHE_MAX = 512


@lru_cache(maxsize=TEXT_CACHE_MAX)
def _text(abstract: str, title: str) -> _Text:
    display = strip_markup(abstract) if abstract else ""
    # One line per sentence: a quote is shown as one line, whatever line breaks the abstract had.
    texts = [" ".join(x.split()) for x in split_sentences(display)] if display else []
    texts = [x for x in texts if x] or ([title] if title else [])
    tokens = tuple(frozenset(tokenize(x)) for x in texts)
    vocab = frozenset().union(*tokens, tokenize(title))
    return _Text(tuple(texts), tokens, vocab, tuple(sorted(vocab)))


@lru_cache(maxsize=TEXT_CACHE_MAX)
def _roles(abstract: str, title: str) -> tuple[frozenset[str], ...]:
    return cue_sets(_text(abstract, title).sentences)


def paper_sentences(paper: Paper) -> tuple[str, ...]:
    """The sentences of the paper's display abstract (plain text, LaTeX turned into Unicode); the
    title alone when the abstract is empty. Memoised per abstract."""
    return _text(paper.abstract, paper.title).sentences


def sentence_roles(paper: Paper) -> list[frozenset[str]]:
    """The rhetorical roles found in each sentence of the paper (``first``, ``meta``, ``definition``,
    ``propose``, ``method``, ``announce``, ``result``, ``problem``, ``cause``), in sentence order."""
    return list(_roles(paper.abstract, paper.title))


# -- the paper ranking ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Candidate:
    doc: int
    paper: Paper
    bm25: float  # share of the best BM25 score
    families: list[frozenset[str]]  # per question word, the paper's tokens that match it
    evidence: float = 0.0
    score: float = 0.0
    held: int = 0


def _candidates(index: AnswerIndex, words: Sequence[_Word], depth: int) -> list[_Candidate]:
    """BM25 candidates for the question's topical words, reranked by sentence-level evidence."""
    topical = [i for i, w in enumerate(words) if w.topical]
    terms = list(dict.fromkeys(t for i in topical for t in sorted(words[i].tokens)))
    if not terms:
        return []
    # The ranking kernel (what retrieval.search.rank forwards to): rank-bm25's scores, the hit rule.
    docs, scores, _ = index.top(terms, depth)
    if not len(docs):
        return []
    top = float(scores[docs[0]]) or 1.0
    total = sum(words[i].weight for i in topical) or 1.0
    out = []
    for doc in docs.tolist():
        paper = index.papers[doc]
        text = _text(paper.abstract, paper.title)
        families = [_family(w, text) if w.topical else frozenset() for w in words]
        held = [i for i in topical if families[i] and not words[i].generic]
        held_count = len(held) + sum(1 for i in held if words[i].name)  # a name tells as much as two words
        # Evidence: the largest share of the question's weight held by one sentence (or, a little
        # less, by two adjacent ones).
        best = 0.0
        prev: set[int] = set()
        for tokens in text.tokens:
            here = {i for i in topical if families[i] and not families[i].isdisjoint(tokens)}
            best = max(best, sum(words[i].weight for i in here) / total,
                       _PAIR_SHARE * sum(words[i].weight for i in here | prev) / total)
            prev = here
        c = _Candidate(doc, paper, float(scores[doc]) / top, families, best, held=held_count)
        c.score = c.bm25 + (EVIDENCE_WEIGHT * c.evidence if True else 0.0)
        out.append(c)
    out.sort(key=lambda c: (-c.score, -c.bm25, c.doc))
    return out


def _ranked(
    index: AnswerIndex, question: str, depth: int = RERANK_DEPTH
) -> tuple[list[_Word], list[_Candidate]]:
    """The question's words, and the candidate papers that bear on it (holding two of its topical
    words, one when it asks about one), best first."""
    words = _question_words(index, question)
    asked = _asked(index, question)
    if not asked:  # "how does it work?": nothing but frame words and words most papers use
        return words, []
    need = min(2, asked)
    return words, [c for c in _candidates(index, words, depth) if c.held >= need]


def rank_papers(index: AnswerIndex, question: str, n: int = 5) -> list[int]:
    """Positions of the (at most ``n``) papers that bear on ``question``, best first: the ranking
    :func:`answer` reads, not /search's."""
    return [c.doc for c in _ranked(index, question, max(RERANK_DEPTH, n))[1][:n]]


# -- sentence choice -----------------------------------------------------------------------------


def _sentence_scores(
    index: AnswerIndex, cand: _Candidate, words: Sequence[_Word], kind: str, quant: bool
) -> list[tuple[float, int, str]]:
    """(score, position, sentence) of the paper's quotable sentences, best first."""
    paper = cand.paper
    text = _text(paper.abstract, paper.title)
    cues = _roles(paper.abstract, paper.title)
    scores = rule_scores(text.sentences, text.tokens, cues, words, cand.families, kind, quant)
    out = [(score, pos, text.sentences[pos]) for pos, score in enumerate(scores) if score is not None]
    out.sort(key=lambda x: (-x[0], x[1]))
    return out


def answer(index: AnswerIndex, question: str, k: int | None = None) -> Answer:
    """Extractive answer; see :meth:`retrieval.index.Index.answer` and the module docstring.

    The first sentence is the answer (the best sentence of the best paper); up to ``k - 1`` more
    support it: the paper's next best sentences (at least :data:`SUPPORT_SHARE` of the answer's
    score) and the best sentence of a runner-up paper whose rerank score is at least
    :data:`RUNNER_UP_SHARE` of the best. No sentence when no paper holds two topical question words
    (one, when the question has only one).
    """
    k = DEFAULT_SENTENCES if k is None else k
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_SENTENCES:
        raise ValueError(f"k must be an integer from 1 to {MAX_SENTENCES}, not {k!r}")
    nothing = Answer(question=question, sentences=(), papers=())
    words, candidates = _ranked(index, question)
    if not candidates:
        return nothing
    kind = question_kind(question)
    quant = bool(_QUANT_RE.search(question.casefold()))
    best = candidates[0]
    ranked = _sentence_scores(index, best, words, kind, quant)
    if not ranked:
        return nothing
    top_score = ranked[0][0]
    chosen: list[tuple[float, Paper, str]] = [(top_score, best.paper, ranked[0][2])]
    support = [(score, best.paper, s) for score, _, s in ranked[1:] if score >= SUPPORT_SHARE * top_score]
    for other in candidates[1:3]:
        if other.score >= RUNNER_UP_SHARE * best.score:
            theirs = _sentence_scores(index, other, words, kind, quant)
            score = theirs[0][0] * other.score / best.score if theirs else 0.0
            if score >= SUPPORT_SHARE * top_score:
                support.append((score, other.paper, theirs[0][2]))
    support.sort(key=lambda x: -x[0])
    chosen += support[: k - 1]
    sentences = tuple(
        AnswerSentence(text=text, paper=paper, score=score) for score, paper, text in chosen
    )
    cited: dict[str, Paper] = {}
    for sentence in sentences:
        cited.setdefault(sentence.paper.id, sentence.paper)
    return Answer(question=question, sentences=sentences, papers=tuple(cited.values()))
