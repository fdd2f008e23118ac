"""Follow-up questions: a question asked about papers an earlier answer cited.

"How is it trained?", "what data did they use?", "how much better is it?" mean nothing alone; asked in
reply to an answer, they are about the papers that answer cited and the subject of the question it
answered. This module answers them from those papers only, and tells when a follow-up names a new
subject instead (then it is a new question, answered from the whole corpus by
:func:`retrieval.answer.answer`).

Which sentence answers a follow-up is chosen by a conditional-logit model (a softmax over the cited
papers' sentences) fitted by ``bench/chat.py`` on half A of ``bench/data/chat_iclr2024.jsonl`` and shipped
as ``followup_model.json`` beside this module: its features (:data:`FEATURES`) are how much of the
follow-up's own words a sentence holds (weighted by rarity in the corpus and in the paper), how much of
the earlier question it restates, whether the earlier answer quoted it, where it stands in the abstract,
numbers and names in it, and which sentences :func:`retrieval.answer.answer` itself would quote when
asked the follow-up within the cited papers (so a better answerer makes better follow-ups).

A follow-up names a new subject when the words it adds that the cited papers do not hold weigh more
than the model's ``shift_threshold`` (:func:`subject_shift`; fitted on the same half). Words said in
fewer than :data:`MIN_DF` papers of the corpus and not written as names ("we're", "bake") are the
chat's, not a subject's, and do not count.

Everything here reads the index through :class:`~retrieval.answer.AnswerIndex`; "answer from these papers
only" is :func:`retrieval.answer.answer`'s own ``within`` (the whole corpus's word statistics kept).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from retrieval.answer import FRAME_TOKENS, AnswerIndex, answer, paper_sentences
from retrieval.errors import RetrievalError
from retrieval.models import Answer, AnswerSentence, Paper
from retrieval.tokenize import STOPWORDS, tokenize

__all__ = [
    "FEATURES",
    "MODEL_PATH",
    "FollowUpModel",
    "Scored",
    "answer_about",
    "answer_follow_up",
    "is_new_subject",
    "load_model",
    "sentence_features",
    "subject_shift",
]

MODEL_PATH = Path(__file__).with_name("followup_model.json")
#: What the model scores a sentence by (the order of its weights).
FEATURES = (
    "ask_top",  # the answerer's first quote for follow-up + earlier question, within the cited papers
    "ask_score",  # the answerer's score of the sentence for that question, over its best (0 if not quoted)
    "ask_top_alone",  # the answerer's first quote for the follow-up alone, within the cited papers
    "cover_local",  # share of the follow-up's words the sentence holds, weighted by rarity in the paper
    "rare_hit",  # the rarest follow-up word the sentence holds, over the follow-up's rarest word
    "cover",  # share of the follow-up's words the sentence holds, weighted by corpus idf
    "cover_earlier",  # the same for the earlier question's words: restating the subject is no answer
    "quoted_first",  # the earlier answer's first quote
    "quoted",  # one of the earlier answer's quotes
    "first",  # the abstract's opening sentence
    "position",  # where in the abstract, 0 (first) .. 1 (last)
    "number",  # a digit or a small number word: counts, sizes, gains
    "names",  # share of words written as names (datasets, benchmarks, models)
    "other_paper",  # not the first paper the earlier answer cited
    "short",  # fewer than 8 distinct tokens
)
#: A word said in fewer papers than this (and not written as a name) is the chat's, not a subject's.
MIN_DF = 2
#: A follow-up's further sentences each have at least this share of the first's probability (the
#: share /ask used before its own was chosen on the fit half; bench/chat.py measures follow-ups).
SUPPORT_SHARE = 0.3
#: Shortest stem that meets the longer words of its family ("train" / "training").
_MEET_MIN = 4
_NUMBER_RE = re.compile(r"\d|\b(two|three|four|five|six|seven|eight|nine|ten|several|dozens?)\b", re.I)
_WORD_RE = re.compile(r"[^\W_][\w+\-.]*[\w+]|[^\W_]")
_SKIP = STOPWORDS | FRAME_TOKENS


@dataclass(frozen=True, slots=True)
class FollowUpModel:
    """The fitted sentence chooser and subject-change threshold (``followup_model.json``)."""

    weights: Mapping[str, float]
    shift_threshold: float
    fitted_on: str = ""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FollowUpModel:
        """The model a ``followup_model.json`` describes; RetrievalError when it does not fit this code."""
        weights = data.get("weights")
        if not isinstance(weights, dict) or set(weights) != set(FEATURES):
            raise RetrievalError(
                "followup_model.json does not match this code's features: rebuild it with bench/chat.py --fit"
            )
        return cls(
            weights={k: float(v) for k, v in weights.items()},
            shift_threshold=float(data["shift_threshold"]),
            fitted_on=str(data.get("fitted_on", "")),
        )

    def to_json(self) -> dict[str, Any]:
        """What ``followup_model.json`` holds (weights rounded: the file is read by people too)."""
        return {
            "fitted_on": self.fitted_on,
            "features": list(FEATURES),
            "weights": {k: round(self.weights[k], 4) for k in FEATURES},
            "shift_threshold": round(self.shift_threshold, 4),
        }

    @property
    def vector(self) -> npt.NDArray[np.float64]:
        """The weights in :data:`FEATURES` order."""
        return np.array([self.weights[k] for k in FEATURES], dtype=np.float64)


@lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> FollowUpModel:
    """The shipped model (read once per process)."""
    with path.open(encoding="utf-8") as handle:
        return FollowUpModel.from_json(json.load(handle))


# -- words -------------------------------------------------------------------------------------------


def _idf(index: AnswerIndex, term: str) -> float:
    df = len(index.term_docs(term)) if term in index.vocab else 0
    return math.log((len(index) + 1) / max(df, 1))


def _weights(index: AnswerIndex, text: str) -> dict[str, float]:
    """The text's own words (not stopwords, not the words questions are made of) and their corpus idf."""
    return {t: _idf(index, t) for t in dict.fromkeys(tokenize(text)) if t not in _SKIP}


def _meets(term: str, tokens: frozenset[str] | set[str]) -> bool:
    """The term, or a word of its family (one stem a prefix of the other, the shorter of 4+ letters)."""
    if term in tokens:
        return True
    if len(term) < _MEET_MIN:
        return False
    return any(len(t) >= _MEET_MIN and (t.startswith(term) or term.startswith(t)) for t in tokens)


def _cover(weights: Mapping[str, float], tokens: frozenset[str]) -> float:
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if _meets(t, tokens)) / total if total else 0.0


def _is_name(word: str, position: int) -> bool:
    """A word written as a name: digits, capitals past its first letter, or a capital mid-sentence (the
    rule retrieval.answer and bench/ask.py apply to questions)."""
    return any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:]) or (
        position > 0 and word[:1].isupper()
    )


def _name_share(text: str) -> float:
    words = _WORD_RE.findall(text)
    return sum(1 for i, w in enumerate(words) if _is_name(w, i)) / max(len(words), 1)


def _names(text: str) -> frozenset[str]:
    """Tokens of the words the text writes as names."""
    return frozenset(t for i, w in enumerate(_WORD_RE.findall(text)) if _is_name(w, i) for t in tokenize(w))


def _key(text: str) -> str:
    """A sentence as letters and digits only: a quote read back from a message matches its sentence."""
    return re.sub(r"[\W_]+", "", text.casefold())[:60]


# -- the subject ---------------------------------------------------------------------------------------


def subject_shift(index: AnswerIndex, papers: Sequence[Paper], followup: str) -> float:
    """How much new subject ``followup`` brings: the summed weight (idf over the largest idf the corpus
    has, so the figure does not grow with the corpus) of its words that none of ``papers`` holds. Words
    the corpus has in fewer than :data:`MIN_DF` papers count only when written as names."""
    held: set[str] = set()
    for paper in papers:
        for sentence in paper_sentences(paper):
            held.update(tokenize(sentence))
        held.update(tokenize(paper.title))
    names = _names(followup)
    scale = math.log(len(index) + 1) or 1.0
    shift = 0.0
    for term in dict.fromkeys(tokenize(followup)):
        if term in _SKIP or _meets(term, held):
            continue
        df = len(index.term_docs(term)) if term in index.vocab else 0
        if df < MIN_DF and term not in names:
            continue
        shift += _idf(index, term) / scale
    return shift


def is_new_subject(
    index: AnswerIndex, papers: Sequence[Paper], followup: str, model: FollowUpModel | None = None
) -> bool:
    """True when ``followup`` names a subject the cited ``papers`` do not hold (see :func:`subject_shift`)."""
    model = model or load_model()
    return not papers or subject_shift(index, papers, followup) > model.shift_threshold


# -- the sentence chooser ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate sentence: its paper, position in the abstract and text."""

    paper: Paper
    position: int
    text: str


def _answerer_picks(
    index: AnswerIndex, docs: list[int], question: str
) -> dict[tuple[str, str], tuple[int, float]]:
    """What :func:`retrieval.answer.answer` quotes for ``question`` within ``docs``: (paper id, sentence
    key) -> (its rank among the quotes, its score over the first's)."""
    try:
        found = answer(index, question, 10, within=docs)
    except (RetrievalError, ValueError):  # only frame words: the answerer has nothing to say
        return {}
    if not found.sentences:
        return {}
    top = found.sentences[0].score or 1.0
    picks: dict[tuple[str, str], tuple[int, float]] = {}
    for rank, s in enumerate(found.sentences):
        picks.setdefault((s.paper.id, _key(s.text)), (rank, s.score / top))
    return picks


def sentence_features(
    index: AnswerIndex,
    papers: Sequence[Paper],
    followup: str,
    earlier: str = "",
    quoted: Sequence[str] = (),
    positions: Sequence[int] | None = None,
) -> tuple[list[Scored], npt.NDArray[np.float64]]:
    """The quotable sentences of ``papers`` (in order) and their :data:`FEATURES` rows.

    Args:
        index: The index the papers are in (their word statistics).
        papers: The papers the earlier answer cited, its first paper first.
        followup: The follow-up question.
        earlier: The question the earlier answer answered ("" when there was none: one paper asked about).
        quoted: The sentences the earlier answer quoted, its answer first (as shown; matched loosely).
        positions: The papers' positions in ``index`` (looked up by id when omitted).
    """
    if positions is None:
        positions = [p for p in (_position(index, paper.id) for paper in papers) if p is not None]
    docs = list(positions)
    asked = _answerer_picks(index, docs, f"{followup} {earlier}".strip()) if docs else {}
    alone = _answerer_picks(index, docs, followup) if docs else {}
    mine = _weights(index, followup)
    theirs = _weights(index, earlier) if earlier else {}
    quoted_keys = [_key(q) for q in quoted]
    rarest = max(mine.values(), default=0.0)
    rows: list[Scored] = []
    table: list[list[float]] = []
    for rank, paper in enumerate(papers):
        sentences = paper_sentences(paper)
        tokens = [frozenset(tokenize(s)) for s in sentences]
        local: dict[str, float] = {}
        for term in mine:
            holding = sum(1 for t in tokens if _meets(term, t))
            if holding:
                local[term] = math.log(1 + len(sentences) / holding)
        last = max(len(sentences) - 1, 1)
        keys = [_key(x) for x in sentences]
        for pos, (text, toks) in enumerate(zip(sentences, tokens, strict=True)):
            if len(toks) < 4:
                continue
            key = keys[pos]
            pick = asked.get((paper.id, key))
            hit = [w for t, w in mine.items() if _meets(t, toks)]
            features = {
                "ask_top": 1.0 if pick is not None and pick[0] == 0 else 0.0,
                "ask_score": pick[1] if pick is not None else 0.0,
                "ask_top_alone": 1.0 if alone.get((paper.id, key), (1,))[0] == 0 else 0.0,
                "cover_local": _cover(local, toks),
                "rare_hit": max(hit) / rarest if hit and rarest else 0.0,
                "cover": _cover(mine, toks),
                "cover_earlier": _cover(theirs, toks),
                "quoted_first": 1.0 if quoted_keys and key == quoted_keys[0] else 0.0,
                "quoted": 1.0 if key in quoted_keys else 0.0,
                "first": 1.0 if pos == 0 else 0.0,
                "position": pos / last,
                "number": 1.0 if _NUMBER_RE.search(text) else 0.0,
                "names": _name_share(text),
                "other_paper": 1.0 if rank else 0.0,
                "short": 1.0 if len(toks) < 8 else 0.0,
            }
            rows.append(Scored(paper, pos, text))
            table.append([features[name] for name in FEATURES])
    matrix = np.array(table, dtype=np.float64).reshape(len(table), len(FEATURES))
    return rows, matrix


def _position(index: AnswerIndex, paper_id: str) -> int | None:
    position = getattr(index, "position", None)
    if position is not None:
        return position(paper_id)  # type: ignore[no-any-return]
    return next((i for i, p in enumerate(index.papers) if p.id == paper_id), None)


def answer_follow_up(
    index: AnswerIndex,
    papers: Sequence[Paper],
    followup: str,
    earlier: str = "",
    quoted: Sequence[str] = (),
    *,
    k: int = 3,
    model: FollowUpModel | None = None,
) -> Answer:
    """The follow-up's answer from ``papers`` only: the sentence the model ranks first, then at most
    ``k - 1`` more whose probability is at least :data:`SUPPORT_SHARE` of the first's.
    No sentence when the papers have none worth quoting (empty abstracts)."""
    model = model or load_model()
    rows, matrix = sentence_features(index, papers, followup, earlier, quoted)
    if not rows:
        return Answer(question=followup, sentences=(), papers=())
    scores = matrix @ model.vector
    order = sorted(range(len(rows)), key=lambda i: (-scores[i], rows[i].position))
    probs = np.exp(scores - scores.max())
    chosen = [order[0]] + [i for i in order[1:] if probs[i] >= SUPPORT_SHARE * probs[order[0]]][: k - 1]
    sentences = tuple(
        AnswerSentence(text=rows[i].text, paper=rows[i].paper, score=float(scores[i])) for i in chosen
    )
    cited: dict[str, Paper] = {}
    for sentence in sentences:
        cited.setdefault(sentence.paper.id, sentence.paper)
    return Answer(question=followup, sentences=sentences, papers=tuple(cited.values()))


def answer_about(index: AnswerIndex, papers: Sequence[Paper], question: str, *, k: int = 3) -> Answer:
    """A question asked of ``papers`` alone (``/ask question paper:``, "Ask about this paper"): what
    :func:`retrieval.answer.answer` quotes within them, as a whole question deserves; when it finds
    nothing there (the question's words are not the abstract's), the follow-up chooser's pick."""
    docs = [p for p in (_position(index, paper.id) for paper in papers) if p is not None]
    if docs:
        found = answer(index, question, k, within=docs)
        if found.sentences:
            return found
    return answer_follow_up(index, papers, question, k=k)
