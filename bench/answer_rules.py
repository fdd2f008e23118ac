"""Today's hand-set rules for /ask, as they stood before the answer choice was learned (retrieval/answer.py
at main 4ed0df4; the question words, kinds and stem families it shares with the learned answerer are
imported from there, the ablation switches are gone): kept only so that bench/ask.py can print them
beside the learned choice in the same run. Nothing in the bot imports this module.

How they answer: BM25 candidates reranked by sentence-level evidence; each sentence's rhetorical role
from hand-written cue phrases and its position; a bonus table of role against question kind; the best
sentence of the best paper first, then at most two that support it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

# The question words, their kinds and stem families are shared with the learned answerer.
from retrieval.answer import (
    AnswerIndex,
    _family,
    _question_words,
    _Word,
    question_kind,
)
from retrieval.answer import _asked as _asked
from retrieval.markup import strip_markup
from retrieval.models import Answer, AnswerSentence, Paper
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

_CUES = {
    "meta": re.compile(
        r"(https?://|github\.com|www\.|\burl\b|\bcode (is|are|will be|and [\w ]+ (are|is|will be)) "
        r"(publicly |freely |made )?(available|released)|\bavailable at\b|\bproject page\b|\bwarning\b)"
    ),
    "definition": re.compile(
        r"\b(we (call|term|name|dub|coin|refer to|define)|(is|are) (called|termed|dubbed|named|known as|"
        r"referred to as|defined as)|termed|dubbed|coined|referred to as|known as|refers? to|"
        r"is defined|defined as|a notion|the notion|the concept of|namely|i\.e\.|that is,|occurs? when|"
        r"happens? when|"
        r"arises? when)"
    ),
    "propose": re.compile(r"\b(we ((further|also|then|first|here|now|thus|therefore|\w+ly) )?(propose|"
                          r"introduce|present|develop|design|devise)|this (paper|work) "
                          r"(proposes|introduces|presents))\b"),
    "method": re.compile(
        r"\b(we (use|employ|adopt|build|construct|combine|apply|derive|transform|reformulate|frame|model|"
        r"represent|decompose|learn|train|incorporate|exploit|utilize|leverage|extend|integrate|"
        r"formulate|define)|our (method|approach|framework|model|algorithm|technique|system|key|solution) "
        r"(is|uses|employs|relies|operates|consists|combines|learns|works)|key (idea|insight|component)|"
        r"specifically|central to|is based on|based on|relies on|consists? of|comprises?|is built|"
        r"by (\w+ly )?(\w+ing)|which (uses|employs|leverages|combines)|employs|leverages|incorporates|equips|"
        r"first,|then|(two|three|four) (\w+ )?(stages|steps|components|phases)|operates|works by|proceeds|"
        r"instead of|rather than|is trained|are trained|is learned|are learned)\b"
    ),
    "announce": re.compile(
        r"\b(we ((further|also|then|first|here|now|\w+ly) )?(explore|study|investigate|examine|analy[sz]e|"
        r"consider|ask|aim|seek|focus|revisit|tackle|address|delve|take a|turn to)|"
        r"this (paper|work|study) (serves|explores|studies|investigates|"
        r"examines|addresses|aims|focuses)|in this (paper|work|study), we (explore|study|investigate|"
        r"examine|consider|aim|focus|revisit|tackle|address|delve)|"
        # A gap in knowledge restates a why-question rather than answering it.
        r"(is|are|remains?) (still |yet |largely |poorly |not (yet |well |fully )?)?(understood|unclear|"
        r"unknown|unexplained|elusive|open|to be established)|little is known|it is (not clear|unclear))\b"
    ),
    "result": re.compile(
        r"(\bwe (show|find|found|demonstrate|observe|discover|reveal|prove|uncover|unveil|report|"
        r"establish|verify|confirm|identify|conclude)|\b(results?|experiments?|evaluations?|analys[ie]s|"
        r"findings?|study) (show|suggest|indicate|demonstrate|reveal|confirm|on)|\boutperform|"
        r"\bsurpass|\bimprov|\bachiev|\breduc|\bspeedup|\bfaster|\bcompetitive|\bstate[- ]of[- ]the[- ]art|"
        r"\bsota\b|\bcomparable|\bfall short|\bdoes not|\bdo not|\bcannot|\bon par|\bgap\b|"
        r"\d+(\.\d+)?\s*(%|x\b|×|times|fold|points))"
    ),
    "problem": re.compile(
        r"\b(however|but|yet|although|though|despite|unfortunately|suffers?|challeng\w*|limitations?|"
        r"limited|fails?|failure|lacks?|lacking|bottlenecks?|expensive|costly|impractical|difficult|"
        r"hard|prohibitive|remains?|unclear|struggles?|hinders?|hindered|cannot|vulnerable|prone|"
        r"problems?|issues?|obstacles?|burden|inefficient|unstable|overlook\w*|neglect\w*|"
        r"poorly|inadequate|insufficient|costs?|restrict\w*|mismatch|enormous|huge|heavy|slow|intractable|"
        r"infeasible|weak|requires?|requirement)\b"
    ),
    "cause": re.compile(
        r"\b(because|due to|since|owing to|as a result|caused|causes?|stems?|arises?|explains?|explained|"
        r"mechanisms?|reasons?|leads? to|leading to|results? in|driven by|attribut\w+|contributed to|"
        r"thereby|so that|makes? (it|them))\b"
    ),
}
#: A literal every match of the ``meta`` cue contains: a sentence with none of them skips that regex,
#: which has no common prefix and so is tried at every position (the dearest cue but one, cold).
_META_HINTS = ("http", "github.com", "www.", "url", "code ", "available at", "project page", "warning")
_NUMBER_RE = re.compile(r"\d")
_QUANT_RE = re.compile(r"^\s*how (much|many|fast|far|large|big|close|often)\b")

#: Role bonus added to a sentence's coverage, by question kind.
_ROLES = ("first", "definition", "is_a", "propose", "method", "announce", "result", "problem", "cause")
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
    out = []
    for i, text in enumerate(_text(abstract, title).sentences):
        lowered = text.casefold()
        roles = {
            name for name, cue in _CUES.items()
            if (name != "meta" or any(hint in lowered for hint in _META_HINTS)) and cue.search(lowered)
        }
        if i == 0:
            # The opening sentence sets the scene: what it says "by" or "via" is the field's way,
            # not the paper's method (unless it says "we propose").
            roles.add("first")
            roles.discard("method")
        out.append(frozenset(roles))
    return tuple(out)


def paper_sentences(paper: Paper) -> tuple[str, ...]:
    """The sentences of the paper's display abstract (plain text, LaTeX turned into Unicode); the
    title alone when the abstract is empty. Memoised per abstract."""
    return _text(paper.abstract, paper.title).sentences


def sentence_roles(paper: Paper) -> list[frozenset[str]]:
    """The rhetorical roles found in each sentence of the paper (``first``, ``meta``, ``definition``,
    ``propose``, ``method``, ``announce``, ``result``, ``problem``, ``cause``), in sentence order."""
    return list(_roles(paper.abstract, paper.title))


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
                       0.9 * sum(words[i].weight for i in here | prev) / total)
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


#: Roles an announcement does not take on: "we study why X fails" states no problem or cause.
_RESTATED = frozenset({"problem", "cause"})
_CONTRAST_RE = re.compile(
    r"(however|but|yet|unfortunately|nevertheless|nonetheless|despite|although)\b", re.IGNORECASE
)
_ANAPHOR_RE = re.compile(
    r"\b(we (call|term|name|dub|define|refer to)|(is|are) (called|termed|dubbed|known as|referred to as))"
    r" (this|these|such|it|them)\b|^(this|these|such) (\w+ ){0,3}(is|are) (called|termed|known|referred)"
)


def _sentence_scores(
    index: AnswerIndex, cand: _Candidate, words: Sequence[_Word], kind: str, quant: bool
) -> list[tuple[float, int, str]]:
    """(score, position, sentence) of the paper's quotable sentences, best first."""
    paper = cand.paper
    text = _text(paper.abstract, paper.title)
    roles = _roles(paper.abstract, paper.title)
    n = len(text.sentences)
    families = cand.families
    holds = [[not f.isdisjoint(tokens) if f else False for f in families] for tokens in text.tokens]
    # Word weights: rarity within this paper (a word in every sentence is the paper's subject and
    # picks no sentence), a third for corpus-generic words; or, ablated, the corpus idf.
    weights: dict[int, float] = {}
    for i, w in enumerate(words):
        if not w.topical:
            continue
        if True:
            sf = sum(1 for h in holds if h[i])
            if sf:
                weights[i] = math.log(1 + n / sf) * (0.33 if w.generic else 1.0)
        else:
            weights[i] = w.weight
    total = sum(weights.values()) or 1.0
    use_roles = True
    row = _BONUS.get(kind, _BONUS["other"]) if use_roles else _BONUS["other"]
    bonus = {role: b * ROLE_WEIGHT for role, b in zip(_ROLES, row, strict=True)}
    if not True:
        bonus["definition"] = bonus["is_a"] = 0.0
    covers = [sum(wt for i, wt in weights.items() if h[i]) / total for h in holds]
    # A sentence restates the question when it announces it ("we explore ways to ..."), asks it, or
    # (the question naming the method) introduces the method the question names: "How does RoboShot
    # work?" is not answered by "We propose RoboShot, a method that ...".
    names = [i for i, w in enumerate(words) if w.name]
    restates = [
        "announce" in r or sentence.endswith("?")
        or ("propose" in r and "method" not in r and any(h[i] for i in names))
        for sentence, r, h in zip(text.sentences, roles, holds, strict=True)
    ]
    scored: list[float] = []
    for pos, sentence in enumerate(text.sentences):
        cover = covers[pos]
        if use_roles and kind in ("method", "finding", "motivation") and pos > 0 and restates[pos - 1]:
            cover = max(cover, _INHERIT * covers[pos - 1])
        if use_roles and kind == "motivation" and pos > 0 and _CONTRAST_RE.match(sentence):
            # "X is widely used. However, X ...": the problem is stated against the sentence before.
            cover = max(cover, _INHERIT * covers[pos - 1])
        here = roles[pos] - _RESTATED if "announce" in roles[pos] else roles[pos]
        extra = sum(bonus.get(role, 0.0) for role in here)
        if restates[pos] and "announce" not in roles[pos]:
            extra += bonus["announce"] - bonus["propose"]
        if kind == "definition" and bonus["is_a"] and _is_a(sentence, families):
            extra += bonus["is_a"]
        if quant and use_roles and _NUMBER_RE.search(sentence):
            extra += _QUANT_BONUS
        if cover == 0.0:
            extra = min(extra, 0.0)  # a sentence sharing no word with the question answers it only by luck
        scored.append(cover + extra)
    if kind == "definition" and use_roles and True:
        # "We term this condition X": what X is was said in the sentence before.
        for pos in range(1, n):
            if _ANAPHOR_RE.search(text.sentences[pos].casefold()) and scored[pos] >= scored[pos - 1]:
                scored[pos - 1] = scored[pos] + 0.01
    out = [
        (scored[pos], pos, sentence)
        for pos, sentence in enumerate(text.sentences)
        if "meta" not in roles[pos] and len(text.tokens[pos]) >= 4
    ]
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
