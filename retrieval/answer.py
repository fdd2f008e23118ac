"""Extractive answers: the sentence of the abstracts that answers a question, with its paper.

:func:`answer` is what :meth:`retrieval.index.Index.answer` runs. It reads the index only through
:class:`AnswerIndex` (``vocab``, ``papers``, ``term_docs``, ``len()`` and the ranking kernel ``top``),
so the index and the kernel can change underneath it, and this module never imports the index (which
imports it).

How a question is answered:

1. **Question words.** Words that only frame a question ("how", "can", "made", "really", "mean" ...,
   :data:`FRAME_WORDS`) never count as topical; what is left picks the papers.
2. **Candidates.** BM25 over the topical words gives :data:`DEPTH` papers (optionally only among
   papers the caller names: ``within``); a paper must hold two topical question words (one when the
   question has only one), or the answer is honest: nothing. Every sentence of every candidate paper
   is a candidate answer.
3. **The choice.** Each candidate sentence is described by :data:`FEATURES` (how much of the
   question's rare words it holds, and its neighbours and paper; its rhetorical role from
   :mod:`retrieval.roles` and its cue phrases against the question's kind; its position; numbers; the
   paper's BM25 score and rank; and the first /ask's hand-set sentence score and paper rerank,
   :func:`rule_scores`) and scored by the answer model, a conditional logit fitted by
   ``bench/fit_answer.py`` on SciFact's annotated evidence sentences and the project's own questions
   (:mod:`retrieval.answer_model`). The answer is the best sentence of the paper the rerank puts first
   (:func:`reply_order`).
4. **Honest silence.** When the answer's probability of answering at all is below the model's fitted
   threshold (:attr:`retrieval.answer_model.AnswerModel.abstain_below`) the answer is nothing.
5. **The reply.** The answer, then up to ``k - 1`` next best sentences of any candidate paper whose
   probability is at least :data:`SUPPORT_SHARE` of the answer's.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np
import numpy.typing as npt

from retrieval.answer_model import AnswerModel, generation, load_model
from retrieval.markup import strip_markup, url_spans
from retrieval.models import Answer, AnswerSentence, Paper
from retrieval.query import plain_query
from retrieval.roles import CUES, ROLES, cue_marks, cue_sets, role_probabilities
from retrieval.sentences import sentences as split_text
from retrieval.tokenize import STOPWORDS, tokenize


class AnswerIndex(Protocol):
    """What :func:`answer` reads of an index (:class:`retrieval.index.Index` is one)."""

    @property
    def vocab(self) -> Mapping[str, int]: ...

    @property
    def papers(self) -> Sequence[Paper]: ...

    def __len__(self) -> int: ...

    def term_docs(self, term: str) -> npt.NDArray[np.integer]: ...

    def top(
        self,
        terms: Sequence[str],
        need: int,
        mask: npt.NDArray[np.bool_] | None = None,
        words: Sequence[Iterable[str]] | None = None,
    ) -> tuple[npt.NDArray[np.int64], dict[int, float], int]: ...


__all__ = [
    "DEFAULT_SENTENCES",
    "DEPTH",
    "FEATURES",
    "KINDS",
    "MAX_SENTENCES",
    "AnswerIndex",
    "Candidates",
    "answer",
    "candidates",
    "clear_caches",
    "paper_sentences",
    "question_kind",
    "rank_papers",
    "reply_order",
    "rule_scores",
    "sentence_roles",
]

#: Sentences quoted by default: the answer and at most two that support it.
DEFAULT_SENTENCES = 3
#: Most sentences an answer may be asked to quote.
MAX_SENTENCES = 10
#: Papers whose sentences are candidate answers.
DEPTH = 8
#: A supporting sentence's probability is at least this share of the answer's. Chosen on the fit half
#: of bench/data/ask_iclr2024.jsonl so that replies quote about as many sentences as the hand-set rules
#: did there (2.62 on average against their 2.66; 0.3 gave 1.70, and answer@3 0.790 instead of 0.851).
SUPPORT_SHARE = 0.02
#: Question words whose idf is below this (in more than ~37 % of the papers: "model", "learning")
#: say little about what a paper is about: they rank, but do not count as held question words.
GENERIC_IDF = 1.0
#: Below this many papers no word is generic: in a corpus of three, a word in two of them still
#: tells them apart.
GENERIC_MIN_PAPERS = 10
#: Words that frame a question rather than name its topic. Stopwords ("how", "why", "does") are
#: dropped by the tokenizer already; these are the content words questions are made of.
FRAME_WORDS = (
    "make makes made making work works worked working help helps helped helping use uses used using "
    "way ways get gets got getting really actually exactly mean means meant meaning people someone "
    "anyone one thing things kind kinds sort much many well good possible able need needs needed "
    "happen happens happened achieve find finds found found tell explain describe know known "
    "doe paper papers study studies author authors approach approaches method methods idea "
    "instead simply exist existing"
)
FRAME_TOKENS = frozenset(tokenize(FRAME_WORDS))
KINDS = ("definition", "method", "finding", "motivation", "other")

# -- questions -----------------------------------------------------------------------------------

_KIND_PATTERNS = [
    ("motivation", re.compile(
        r"^\s*(why|what (makes|causes|explains)|what is the (reason|point|motivation))\b"
    )),
    ("finding", re.compile(
        r"^\s*(how (much|many|well|often|close|fast|far|large|big|good|accurate|strong|robust|"
        r"does .{1,60}\bcompare|do .{1,60}\bcompare)|which|when (does|do|is|are)|"
        r"(does|do|did|is|are|was|were|can|could|will|would|has|have|should)\b)"
    )),
    ("definition", re.compile(
        r"^\s*(what('s| is| are| was| were| does .{1,60}\bmean| do .{1,60}\bmean)|define|definition of|"
        r"meaning of)\b"
    )),
    ("method", re.compile(r"^\s*(how|what (method|technique|approach|way)s?|in what way)\b")),
]


def question_kind(question: str) -> str:
    """``definition``, ``method``, ``finding``, ``motivation`` or ``other`` (a claim, a topic), from
    the opening words."""
    text = " ".join(question.casefold().split())
    for kind, pattern in _KIND_PATTERNS:
        if pattern.search(text):
            return kind
    return "other"


@dataclass(frozen=True, slots=True)
class _Word:
    """A question word that can match: its index tokens, its weight (largest idf of its tokens),
    whether it is topical (not a frame word), generic (in a third of the papers or more) or a name."""

    tokens: frozenset[str]
    topical: bool
    weight: float
    generic: bool
    name: bool = False  # written as a name: "RoboShot", "PCME++", "Skipper" mid-sentence


def _question_words(index: AnswerIndex, question: str) -> list[_Word]:
    words: list[_Word] = []
    seen: set[frozenset[str]] = set()
    names = _names(question)
    for word in plain_query(question).words:
        tokens = frozenset(t for t in word.tokens if t in index.vocab)
        if not tokens or tokens in seen:
            continue
        seen.add(tokens)
        frame = tokens <= FRAME_TOKENS
        weight = max(_idf(index, t) for t in tokens)
        words.append(_Word(tokens, not frame, weight, _generic(index, weight), bool(tokens & names)))
    return words


def _asked(index: AnswerIndex, question: str) -> int:
    """How many distinct topical words the question asks about, the corpus's unknown ones included
    ("how does the weather affect cats?" asks about three, even if only "affect" is indexed); words
    in a third of the papers or more ("model") do not count."""
    count = 0
    seen: set[frozenset[str]] = set()
    for word in plain_query(question).words:
        tokens = frozenset(word.tokens) - STOPWORDS  # "what's" leaves "what"
        if not tokens or tokens in seen or tokens <= FRAME_TOKENS:
            continue
        seen.add(tokens)
        known = [t for t in tokens if t in index.vocab]
        if not known or not _generic(index, max(_idf(index, t) for t in known)):
            count += 1
    return count


_RAW_WORD_RE = re.compile(r"[^\W_][\w+\-.]*[\w+]|[^\W_]")


def _names(question: str) -> frozenset[str]:
    """Tokens of the words the question writes as names: digits or capitals past the first letter
    ("PCME++", "RA-DIT", "LLaMA-2"), or a capital past the question's first word ("Skipper")."""
    out: set[str] = set()
    for i, m in enumerate(_RAW_WORD_RE.finditer(question)):
        w = m.group(0)
        if any(c.isdigit() for c in w) or any(c.isupper() for c in w[1:]) or (i > 0 and w[:1].isupper()):
            out.update(tokenize(w))
    return frozenset(out)


def _generic(index: AnswerIndex, idf: float) -> bool:
    return idf < GENERIC_IDF and len(index) >= GENERIC_MIN_PAPERS


def _idf(index: AnswerIndex, term: str) -> float:
    return math.log((len(index) + 1) / max(len(index.term_docs(term)), 1))


# -- a paper's sentences -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Text:
    """A paper's abstract as sentences (section labels off), each with its tokens, its section label
    and whether it holds a URL; the paper's tokens, also sorted (for prefix look-ups); the title's."""

    sentences: tuple[str, ...]
    labels: tuple[str, ...]
    tokens: tuple[frozenset[str], ...]
    heads: tuple[frozenset[str], ...]  # tokens of each sentence's first few words
    urls: tuple[bool, ...]
    vocab: frozenset[str]
    ordered: tuple[str, ...]
    title: frozenset[str]


#: Abstracts whose analysis (:func:`_text`) and roles each process keeps. An entry is ~21-25 kB (its
#: sentences, their token sets, the vocabulary, and the abstract it is keyed by, which only the cache
#: keeps alive: papers are made on demand from the mapped index). 512 bound it to ~13 MB: an /ask
#: analyses its 8 candidates (DEPTH), and 512 holds the candidates of the last 64 questions.
TEXT_CACHE_MAX = 512
#: Index terms at a sentence's opening that tell what it is about ("Teacher hacking occurs when ...").
_HEAD_WORDS = 5


@lru_cache(maxsize=TEXT_CACHE_MAX)
def _text(abstract: str, title: str) -> _Text:
    display = strip_markup(abstract) if abstract else ""
    # One line per sentence: a quote is shown as one line, whatever line breaks the abstract had.
    found = [(" ".join(s.text.split()), s.label) for s in split_text(display)] if display else []
    found = [(t, label) for t, label in found if t] or ([(title, "")] if title else [])
    texts = tuple(t for t, _ in found)
    ordered_tokens = [tokenize(x) for x in texts]
    tokens = tuple(frozenset(t) for t in ordered_tokens)
    heads = tuple(frozenset(t[:_HEAD_WORDS]) for t in ordered_tokens)
    title_tokens = frozenset(tokenize(title))
    vocab = frozenset().union(*tokens, title_tokens)
    return _Text(
        texts, tuple(label for _, label in found), tokens, heads,
        tuple(bool(url_spans(x)) for x in texts), vocab, tuple(sorted(vocab)), title_tokens,
    )


@lru_cache(maxsize=TEXT_CACHE_MAX)
def _cues(abstract: str, title: str) -> tuple[tuple[frozenset[str], ...], npt.NDArray[np.float64]]:
    """The cues of the abstract's sentences (:func:`retrieval.roles.cue_sets`) and their marks
    (:func:`retrieval.roles.cue_marks`): read only for the papers that become candidates."""
    sets = cue_sets(_text(abstract, title).sentences)
    return sets, cue_marks(sets)


@lru_cache(maxsize=TEXT_CACHE_MAX)
def _roles(abstract: str, title: str, model: int) -> npt.NDArray[np.float64]:
    """Role probabilities of the abstract's sentences under the model in use (``model``: its
    :func:`~retrieval.answer_model.generation`, so that another model does not read stale roles)."""
    text = _text(abstract, title)
    return role_probabilities(load_model().role_weights, text.sentences, text.labels)


def _model() -> AnswerModel:
    model = load_model()
    if model.features != FEATURES:
        raise ValueError("the answer model was fitted on other features than this code computes; refit it "
                         "(bench/fit_answer.py)")
    return model


def clear_caches() -> None:
    """Forget every analysed abstract (their roles depend on the model in use)."""
    _text.cache_clear()
    _cues.cache_clear()
    _roles.cache_clear()


def paper_sentences(paper: Paper) -> tuple[str, ...]:
    """The sentences of the paper's display abstract (plain text, LaTeX turned into Unicode, section
    labels left out); the title alone when the abstract is empty. Memoised per abstract."""
    return _text(paper.abstract, paper.title).sentences


def sentence_roles(paper: Paper) -> list[dict[str, float]]:
    """The probability of each rhetorical role (:data:`retrieval.roles.ROLES`) for each sentence of
    :func:`paper_sentences`, in order."""
    probs = _roles(paper.abstract, paper.title, generation())
    return [dict(zip(ROLES, map(float, row), strict=True)) for row in probs]


_NEGATIONS = ("dis", "un", "non", "in", "im", "ir", "mis")
_NEGATION_HEADS = frozenset(n[:2] for n in _NEGATIONS)
#: Shortest stem that meets longer ones of its family.
_MEET_MIN = 4


def _family(word: _Word, text: _Text) -> frozenset[str]:
    """The paper's tokens that match the word: its own tokens and, stems meeting, those of the same
    family — one a prefix of the other, the shorter of at least :data:`_MEET_MIN` letters
    ("disagre" / "disagr", "slow" / "slowli"), or one the other negated ("agre" / "disagre": a
    sentence saying they disagree answers whether they agree)."""
    vocab, ordered = text.vocab, text.ordered
    out = set(word.tokens & vocab)
    for t in word.tokens:
        if len(t) < _MEET_MIN:
            continue
        i = bisect_left(ordered, t)
        while i < len(ordered) and ordered[i].startswith(t):
            out.add(ordered[i])
            i += 1
        for k in range(_MEET_MIN, len(t)):
            if t[:k] in vocab:
                out.add(t[:k])
        for neg in _NEGATIONS:
            if neg + t in vocab:
                out.add(neg + t)
        if t[:2] in _NEGATION_HEADS:
            for neg in _NEGATIONS:
                if t.startswith(neg) and len(t) - len(neg) >= _MEET_MIN and t[len(neg):] in vocab:
                    out.add(t[len(neg):])
    return frozenset(out)


# -- the first /ask's hand-set sentence score (one feature of the learned choice) ------------------

#: Role bonus added to a sentence's coverage, by question kind.
_RULE_ROLES = ("first", "definition", "is_a", "propose", "method", "announce", "result", "problem", "cause")
_BONUS = {
    # role:        first  defin. is_a  propose method announce result problem cause
    "definition": (0.00, 0.45, 0.30, 0.00, 0.00, -0.10, -0.10, -0.05, 0.00),
    "method":     (-0.25, 0.00, 0.00, 0.25, 0.30, -0.30, -0.10, -0.20, 0.05),
    "finding":    (-0.25, -0.05, 0.00, -0.10, -0.05, -0.30, 0.35, 0.00, 0.05),
    "motivation": (-0.15, 0.00, 0.00, -0.15, -0.10, -0.30, 0.10, 0.30, 0.25),
    "other":      (0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00),
}
#: Scale of the role bonuses against the coverage (0..1) of the question's words.
ROLE_WEIGHT = 1.5
#: A sentence that announces or asks the question ("we explore ways to ...", "How can we ...?", the
#: opening sentence) is usually answered by the next one: it inherits this share of their coverage.
_INHERIT = 0.8
#: Extra bonus for a sentence with a number when the question asks "how much / how many".
_QUANT_BONUS = 0.25
#: Weight of a corpus-generic word ("model") in the rarity-weighted coverage.
_GENERIC_SHARE = 0.33
#: Two adjacent sentences holding the question's words count this share in the rules' paper rerank.
_PAIR_SHARE = 0.9

_IS_A_RE = re.compile(
    r"\b(is|are|refers to|means|describes|occurs|happens|arises)\b( a| an| the| one)?\b|, (a|an) "
)


def _is_a(sentence: str, families: Sequence[frozenset[str]]) -> bool:
    """"X is/are a ...", "X, a ...", "X (ABBR) is ...": the sentence opens by saying what a question
    word is."""
    head = sentence.casefold()[:120]
    m = _IS_A_RE.search(head)
    if not m:
        return False
    before = frozenset(tokenize(head[: m.start()]))
    return any(not f.isdisjoint(before) for f in families if f)

#: Roles an announcement does not take on: "we study why X fails" states no problem or cause.
_RESTATED = frozenset({"problem", "cause"})
_CONTRAST_RE = re.compile(
    r"(however|but|yet|unfortunately|nevertheless|nonetheless|despite|although)\b", re.IGNORECASE
)
_ANAPHOR_RE = re.compile(
    r"\b(we (call|term|name|dub|define|refer to)|(is|are) (called|termed|dubbed|known as|referred to as))"
    r" (this|these|such|it|them)\b|^(this|these|such) (\w+ ){0,3}(is|are) (called|termed|known|referred)"
)

def rule_scores(
    sentences: Sequence[str], tokens: Sequence[frozenset[str]], cues: Sequence[frozenset[str]],
    words: Sequence[_Word], families: Sequence[frozenset[str]], kind: str, quant: bool,
) -> list[float | None]:
    """The first /ask's hand-set score of each sentence of one paper (None: not quotable, a code or
    project-page sentence or one under four words): how much of the question it covers, each word
    weighted by its rarity within the paper (a third for corpus-generic ones), plus the bonus of its
    cues (:func:`retrieval.roles.cue_sets`) for the question's kind. The learned choice reads it as one
    feature (``rules_score``): with it the choice beat these rules on questions neither was tuned on.

    Args:
        sentences, tokens, cues: The paper's sentences, their tokens and cues.
        words: The question's words; ``families``: per word, the paper's tokens that match it (empty
            for a frame word).
        kind: :func:`question_kind`; ``quant``: the question asks "how much / how many".
    """
    n = len(sentences)
    holds = [[not f.isdisjoint(t) if f else False for f in families] for t in tokens]
    weights: dict[int, float] = {}
    for i, w in enumerate(words):
        sf = sum(1 for h in holds if h[i]) if w.topical else 0
        if sf:
            weights[i] = math.log(1 + n / sf) * (_GENERIC_SHARE if w.generic else 1.0)
    total = sum(weights.values()) or 1.0
    row = _BONUS.get(kind, _BONUS["other"])
    bonus = {role: b * ROLE_WEIGHT for role, b in zip(_RULE_ROLES, row, strict=True)}
    covers = [sum(wt for i, wt in weights.items() if h[i]) / total for h in holds]
    # A sentence restates the question when it announces it ("we explore ways to ..."), asks it, or
    # (the question naming the method) introduces the method the question names: "How does RoboShot
    # work?" is not answered by "We propose RoboShot, a method that ...".
    names = [i for i, w in enumerate(words) if w.name]
    restates = [
        "announce" in r or sentence.endswith("?")
        or ("propose" in r and "method" not in r and any(h[i] for i in names))
        for sentence, r, h in zip(sentences, cues, holds, strict=True)
    ]
    scored: list[float] = []
    for pos, sentence in enumerate(sentences):
        cover = covers[pos]
        if kind in ("method", "finding", "motivation") and pos > 0 and restates[pos - 1]:
            cover = max(cover, _INHERIT * covers[pos - 1])
        if kind == "motivation" and pos > 0 and _CONTRAST_RE.match(sentence):
            # "X is widely used. However, X ...": the problem is stated against the sentence before.
            cover = max(cover, _INHERIT * covers[pos - 1])
        here = cues[pos] - _RESTATED if "announce" in cues[pos] else cues[pos]
        extra = sum(bonus[role] for role in _RULE_ROLES if role in here)  # fixed order: same float sum
        if restates[pos] and "announce" not in cues[pos]:
            extra += bonus["announce"] - bonus["propose"]
        if kind == "definition" and _is_a(sentence, families):
            extra += bonus["is_a"]
        if quant and _NUMBER_RE.search(sentence):
            extra += _QUANT_BONUS
        if cover == 0.0:
            extra = min(extra, 0.0)  # a sentence sharing no word with the question answers it only by luck
        scored.append(cover + extra)
    if kind == "definition":
        # "We term this condition X": what X is was said in the sentence before.
        for pos in range(1, n):
            if _ANAPHOR_RE.search(sentences[pos].casefold()) and scored[pos] >= scored[pos - 1]:
                scored[pos - 1] = scored[pos] + 0.01
    return [
        s if "meta" not in cues[pos] and len(tokens[pos]) >= 4 else None for pos, s in enumerate(scored)
    ]


# -- candidates and their features ---------------------------------------------------------------

_KIND_CUES = ("first", *CUES)
#: What the answer model reads of a candidate sentence, in the order of its weights.
FEATURES = (
    # how much of the question the sentence holds: corpus-idf share, in-paper-rarity share, share of
    # the question's words, and the same for its neighbours and a pair with one of them
    "cover", "cover_local", "held", "cover_prev", "cover_next", "cover_pair", "cover_gap", "nothing",
    "head_hit", "name_hit",
    # the paper: BM25 score as a share of the best, rank, the question's share it holds anywhere,
    # in its title, and in its best sentence; the share of the question's topical words it holds, the
    # words the corpus does not know counted ("sourdough" in a corpus of ML abstracts)
    "bm25", "rank0", "rank1", "rank2", "paper_cover", "title_cover", "paper_best", "asked_held",
    # the sentence: position, length, numbers, a question, a URL, a structured section
    "position", "first", "last", "length", "number", "number_quant", "asks", "url", "labelled",
    # its rhetorical role, alone and against the question's kind
    *(f"role_{r}" for r in ROLES),
    *(f"{k}_{r}" for k in KINDS for r in ROLES),
    # its cue phrases (retrieval.roles.CUES), alone and, with the opening sentence, against the
    # question's kind; the sentence before announces what the paper studies ("we explore why ...")
    *(f"cue_{c}" for c in CUES),
    *(f"{k}_cue_{c}" for k in KINDS for c in _KIND_CUES),
    "prev_announces",
    # the first /ask's hand-set rules (rule_scores): the sentence's score, whether it is its paper's
    # best, the paper's rerank score as a share of the best, whether the rules rank it first, and
    # whether the sentence is the rules' answer
    "rules_score", "rules_best", "rules_paper", "rules_top_paper", "rules_answer",
)
_INDEX = {name: i for i, name in enumerate(FEATURES)}
_NUMBER_RE = re.compile(r"\d")
_QUANT_RE = re.compile(r"^\s*how (much|many|fast|far|large|big|close|often)\b")


@dataclass(frozen=True, slots=True)
class Candidates:
    """The candidate answers to one question: ``(doc, sentence position)`` pairs, their papers'
    :data:`FEATURES` rows, and the text of each sentence."""

    question: str
    pairs: tuple[tuple[int, int], ...]
    features: npt.NDArray[np.float64]
    texts: tuple[str, ...]


def _ranked(
    index: AnswerIndex, question: str, depth: int, within: Collection[int] | None = None
) -> tuple[list[_Word], int, list[tuple[int, float, int]]]:
    """The question's words, how many topical words it asks about (:func:`_asked`), and the candidate
    papers (doc, BM25 share of the best, how many of those words they hold) that hold two of them
    (one when it asks about one), in BM25 order."""
    words = _question_words(index, question)
    asked = _asked(index, question)
    topical = [w for w in words if w.topical]
    terms = list(dict.fromkeys(t for w in topical for t in sorted(w.tokens)))
    if not asked or not terms:  # "how does it work?": nothing but frame words and words most papers use
        return words, asked, []
    mask = None
    if within is not None:
        mask = np.zeros(len(index), dtype=bool)
        mask[[d for d in within if 0 <= d < len(index)]] = True
    docs, scores, _ = index.top(terms, depth, mask)
    if not len(docs):
        return words, asked, []
    best = float(scores[int(docs[0])]) or 1.0
    need = min(2, asked)
    out = []
    for doc in docs.tolist():
        paper = index.papers[doc]
        text = _text(paper.abstract, paper.title)
        held = [w for w in topical if not w.generic and _family(w, text)]
        if len(held) + sum(1 for w in held if w.name) >= need:  # a name tells as much as two words
            out.append((doc, float(scores[doc]) / best, len(held)))
    return words, asked, out


def candidates(
    index: AnswerIndex, question: str, within: Collection[int] | None = None, depth: int = DEPTH
) -> Candidates:
    """Every candidate answer to ``question`` with its features (what the answer model scores, and
    what ``bench/fit_answer.py`` fits it on).

    Args:
        index: The index to answer from.
        question: The question, in plain words.
        within: Corpus positions of the only papers to answer from (all when None).
        depth: How many papers (BM25 order) give candidates.
    """
    words, asked, papers = _ranked(index, question, depth, within)
    kind = question_kind(question)
    quant = bool(_QUANT_RE.search(question.casefold()))
    topical = [i for i, w in enumerate(words) if w.topical]
    total = sum(words[i].weight for i in topical) or 1.0
    pairs: list[tuple[int, int]] = []
    rows: list[npt.NDArray[np.float64]] = []
    texts: list[str] = []
    kind_at = KINDS.index(kind)
    rerank: list[float] = []
    for rank, (doc, bm25, held_words) in enumerate(papers):
        paper = index.papers[doc]
        text = _text(paper.abstract, paper.title)
        roles = _roles(paper.abstract, paper.title, generation())
        cues, marks = _cues(paper.abstract, paper.title)
        n = len(text.sentences)
        families = {i: _family(words[i], text) for i in topical}
        families = {i: f for i, f in families.items() if f}
        holds = [[i for i, f in families.items() if not f.isdisjoint(tokens)] for tokens in text.tokens]
        cover = [sum(words[i].weight for i in h) / total for h in holds]
        # In-paper rarity: a word in every sentence is the paper's subject and picks no sentence.
        local = {i: math.log(1 + n / max(1, sum(1 for h in holds if i in h))) for i in families}
        local_total = sum(local.values()) or 1.0
        paper_best = max(cover, default=0.0)
        cover_pair_prev = [
            sum(words[i].weight for i in set(holds[pos]) | set(holds[pos - 1] if pos else ())) / total
            for pos in range(n)
        ]
        x = np.zeros((n, len(FEATURES)))
        x[:, _INDEX["bm25"]] = bm25
        if rank < 3:
            x[:, _INDEX[f"rank{rank}"]] = 1.0
        x[:, _INDEX["paper_cover"]] = sum(words[i].weight for i in families) / total
        x[:, _INDEX["title_cover"]] = sum(
            words[i].weight for i, f in families.items() if not f.isdisjoint(text.title)
        ) / total
        x[:, _INDEX["paper_best"]] = paper_best
        x[:, _INDEX["asked_held"]] = min(1.0, held_words / asked)
        names = [i for i in families if words[i].name]
        for pos in range(n):
            h = holds[pos]
            row = x[pos]
            row[_INDEX["cover"]] = cover[pos]
            row[_INDEX["cover_local"]] = sum(local[i] for i in h) / local_total
            row[_INDEX["held"]] = len(h) / max(1, len(topical))
            prev = holds[pos - 1] if pos else []
            nxt = holds[pos + 1] if pos + 1 < n else []
            row[_INDEX["cover_prev"]] = cover[pos - 1] if pos else 0.0
            row[_INDEX["cover_next"]] = cover[pos + 1] if pos + 1 < n else 0.0
            row[_INDEX["cover_pair"]] = max(
                sum(words[i].weight for i in set(h) | set(prev)),
                sum(words[i].weight for i in set(h) | set(nxt)),
            ) / total
            row[_INDEX["cover_gap"]] = cover[pos] - paper_best
            row[_INDEX["nothing"]] = float(not h)
            row[_INDEX["head_hit"]] = float(any(not families[i].isdisjoint(text.heads[pos]) for i in h))
            row[_INDEX["name_hit"]] = float(any(i in h for i in names))
            row[_INDEX["position"]] = pos / (n - 1) if n > 1 else 0.0
            row[_INDEX["first"]] = float(pos == 0)
            row[_INDEX["last"]] = float(pos == n - 1)
            row[_INDEX["length"]] = math.log1p(len(text.tokens[pos]))
            number = bool(_NUMBER_RE.search(text.sentences[pos]))
            row[_INDEX["number"]] = float(number)
            row[_INDEX["number_quant"]] = float(number and quant)
            row[_INDEX["asks"]] = float(text.sentences[pos].endswith("?"))
            row[_INDEX["url"]] = float(text.urls[pos])
            row[_INDEX["labelled"]] = float(bool(text.labels[pos]))
        start = _INDEX["role_background"]
        x[:, start : start + len(ROLES)] = roles
        kstart = _INDEX[f"{KINDS[0]}_{ROLES[0]}"] + kind_at * len(ROLES)
        x[:, kstart : kstart + len(ROLES)] = roles
        start = _INDEX[f"cue_{CUES[0]}"]
        x[:, start : start + len(CUES)] = marks
        kstart = _INDEX[f"{KINDS[0]}_cue_first"] + kind_at * len(_KIND_CUES)
        if n:
            x[0, kstart] = 1.0
        x[:, kstart + 1 : kstart + len(_KIND_CUES)] = marks
        x[1:, _INDEX["prev_announces"]] = marks[:-1, CUES.index("announce")]
        # The hand-set rules' view: the sentence's score, whether it is the paper's best, and the
        # paper's rerank score (BM25 share + the question's share one sentence or a pair holds).
        rule = rule_scores(text.sentences, text.tokens, cues, words,
                           [families.get(i, frozenset()) for i in range(len(words))], kind, quant)
        quotable = [pos for pos in range(n) if rule[pos] is not None]
        x[quotable, _INDEX["rules_score"]] = [rule[pos] for pos in quotable]
        if quotable:
            x[min(quotable, key=lambda pos: (-rule[pos], pos)), _INDEX["rules_best"]] = 1.0
        pair_best = max((cover_pair_prev[pos] for pos in range(n)), default=0.0)
        rerank.append(bm25 + max(paper_best, _PAIR_SHARE * pair_best))
        rows.append(x)
        pairs += [(doc, pos) for pos in range(n)]
        texts += text.sentences
    if rows:
        # The rules' answer: their best sentence of their best paper (rerank order, BM25 on ties).
        top = min(range(len(rows)), key=lambda r: (-rerank[r], -papers[r][1], papers[r][0]))
        best = max(rerank) or 1.0
        for r, x in enumerate(rows):
            x[:, _INDEX["rules_paper"]] = rerank[r] / best
        rows[top][:, _INDEX["rules_top_paper"]] = 1.0
        rows[top][:, _INDEX["rules_answer"]] = rows[top][:, _INDEX["rules_best"]]
    features = np.concatenate(rows) if rows else np.zeros((0, len(FEATURES)))
    return Candidates(question, tuple(pairs), features, tuple(texts))


def _scored(index: AnswerIndex, question: str, within: Collection[int] | None,
            model: AnswerModel) -> tuple[Candidates, npt.NDArray[np.float64]]:
    """The candidates and each one's probability of being the answer (softmax of the model's scores)."""
    found = candidates(index, question, within)
    if not found.pairs:
        return found, np.zeros(0)
    return found, model.probabilities(found.features)


def reply_order(features: npt.NDArray[np.float64], scores: npt.NDArray[np.float64]) -> list[int]:
    """Candidate rows (of :func:`candidates`' ``features``) in reply order: first the best-scoring
    sentence of the paper the rerank puts first (BM25 plus the question's share one sentence or a
    pair of them holds: the paper today's /ask answered from, ``rules_top_paper``), then every other
    candidate by score (ties: candidate order). The paper stays the rerank's because the learned choice
    picked another paper more often wrongly than rightly: over the fit half's folds, paper@1 0.900
    against 0.913, answer@1 0.565 against 0.570."""
    order = sorted(range(len(scores)), key=lambda j: (-scores[j], j))
    top = features[:, _INDEX["rules_top_paper"]] > 0
    first = next((j for j in order if top[j]), None)
    if first is None:
        return order
    return [first, *(j for j in order if j != first)]


def rank_papers(index: AnswerIndex, question: str, n: int = 5) -> list[int]:
    """Positions of the (at most ``n``) papers that bear on ``question``, best first, by their best
    candidate sentence in :func:`reply_order`: the paper of :func:`answer`'s first sentence first."""
    found, probs = _scored(index, question, None, _model())
    docs = [found.pairs[j][0] for j in reply_order(found.features, probs)]
    return list(dict.fromkeys(docs))[:n]


def answer(
    index: AnswerIndex, question: str, k: int | None = None, *, within: Collection[int] | None = None
) -> Answer:
    """The extractive answer to ``question``: the sentence that answers it, then up to ``k - 1`` that
    support it, with their papers; nothing when no paper bears on it.

    Args:
        index: The index to answer from.
        question: The question, in plain words.
        k: Most sentences to quote, 1 to :data:`MAX_SENTENCES` (default :data:`DEFAULT_SENTENCES`).
        within: Corpus positions of the only papers to answer from ("ask about this paper", a
            follow-up on the papers an answer cited); all papers when None.

    Returns:
        The answer: its sentences (the best first; each with its paper and its probability of being
        the answer, as ``score``) and the papers they cite, in order of first citation. Empty when no
        paper holds two of the question's topical words (one when it has only one), or when even the
        best sentence is unlikely to answer (:attr:`~retrieval.answer_model.AnswerModel.abstain_below`).

    Raises:
        ValueError: ``k`` out of range.
        EmptyQueryError: The question has no searchable word.
        QueryError: The question is too long.
    """
    k = DEFAULT_SENTENCES if k is None else k
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_SENTENCES:
        raise ValueError(f"k must be an integer from 1 to {MAX_SENTENCES}, not {k!r}")
    model = _model()
    found, probs = _scored(index, question, within, model)
    nothing = Answer(question=question, sentences=(), papers=())
    if not len(probs):
        return nothing
    order = reply_order(found.features, probs)
    top = float(probs[order[0]])
    if model.abstains(found.features[order[0]]):
        return nothing
    chosen: list[AnswerSentence] = []
    seen: set[str] = set()
    for j in order:
        if len(chosen) == k or (chosen and probs[j] < SUPPORT_SHARE * top):
            break
        text = found.texts[j]
        if text in seen:
            continue
        seen.add(text)
        chosen.append(AnswerSentence(text=text, paper=index.papers[found.pairs[j][0]], score=float(probs[j])))
    cited: dict[str, Paper] = {}
    for sentence in chosen:
        cited.setdefault(sentence.paper.id, sentence.paper)
    return Answer(question=question, sentences=tuple(chosen), papers=tuple(cited.values()))
