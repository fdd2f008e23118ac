"""Rhetorical roles of an abstract's sentences, from a classifier fitted on labelled abstracts.

Each sentence of an abstract is ``background``, ``objective``, ``method``, ``result`` or ``other``
(CSAbstruct's scheme, which folds conclusions into ``result``). The classifier is a multinomial
logistic regression over hashed features of the sentence and its place in the abstract: its words and
word pairs, its first words ("we propose", "in this paper", "results show"), the first words of the
sentences either side, its relative position, whether it has numbers. It is fitted by
``bench/fit_answer.py`` on CSAbstruct's train split (tuned on dev) and ships inside the package with
the answer model (:mod:`retrieval.answer_model`); inference is one sum of weight rows per sentence.

A structured abstract's section label ("RESULTS", "Methods:", "目的") is the authors' own statement of
the role: :data:`LABEL_ROLES` maps it, and it overrides the classifier.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "CUES", "CUE_RES", "LABEL_ROLES", "ROLES", "cue_marks", "cue_sets", "label_role", "role_features",
    "role_probabilities",
]

ROLES = ("background", "objective", "method", "result", "other")

#: Section-label words (see :data:`retrieval.sentences.LABEL_HEADS`) and the role they state; the
#: first word of a label that has one decides ("METHODS AND RESULTS" is a method section).
LABEL_ROLES = {
    **dict.fromkeys(
        "BACKGROUND BACKGROUNDS CONTEXT INTRODUCTION IMPORTANCE RATIONALE MOTIVATION 背景".split(),
        "background",
    ),
    **dict.fromkeys("OBJECTIVE OBJECTIVES AIM AIMS PURPOSE PURPOSES HYPOTHESIS HYPOTHESES 目的".split(),
                    "objective"),
    **dict.fromkeys(
        "METHOD METHODS METHODOLOGY MATERIAL MATERIALS DESIGN SETTING SETTINGS PARTICIPANTS PATIENTS "
        "SUBJECTS POPULATION INTERVENTION INTERVENTIONS MEASUREMENT MEASUREMENTS OUTCOME OUTCOMES MEASURES "
        "EXPOSURE EXPOSURES SOURCES SELECTION STRATEGY EXTRACTION SYNTHESIS PROCEDURES APPROACH 方法".split(),
        "method",
    ),
    **dict.fromkeys(
        "RESULT RESULTS FINDING FINDINGS OBSERVATIONS CONCLUSION CONCLUSIONS INTERPRETATION SIGNIFICANCE "
        "IMPLICATIONS DISCUSSION RELEVANCE 结果 結果 结论 結論 意义 意義".split(),
        "result",
    ),
}
_LABEL_WORD_RE = re.compile(r"[A-Za-z]+|[^\W\d_A-Za-z]+")


def label_role(label: str) -> str | None:
    """The role a structured-abstract label states ("MAIN OUTCOME MEASURES" -> ``method``), or None."""
    for word in _LABEL_WORD_RE.findall(label):
        role = LABEL_ROLES.get(word.upper())
        if role is not None:
            return role
    return None


#: Hashed feature space of the role classifier (the fitted weights have this many rows).
ROLE_DIM = 1 << 15
_WORD_RE = re.compile(r"[^\W\d_]+|\d+(?:[.,]\d+)*%?")
_DIGIT_RE = re.compile(r"\d")
_POSITION_BINS = 5
#: Words of a sentence's opening that are features of their own (with their place).
_OPENING = 3
_SHIFT = np.uint64(64 - 15)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
# Feature families, mixed into the word hashes so that "w:model" and "o0:model" land apart.
_UNIGRAM, _BIGRAM, _OPEN, _PREV, _NEXT = (np.uint64(t) for t in (11, 13, 17, 19, 23))
#: Word hashes already computed (bounded: cleared when full).
_WORD_HASHES: dict[str, int] = {}
_WORD_HASHES_MAX = 200_000


def _crc(text: str) -> int:
    # crc32, not hash(): the fitted weights must be found again in every process.
    return zlib.crc32(text.encode("utf-8"))


def _word_hash(word: str) -> int:
    got = _WORD_HASHES.get(word)
    if got is None:
        if len(_WORD_HASHES) >= _WORD_HASHES_MAX:
            _WORD_HASHES.clear()
        got = _WORD_HASHES[word] = _crc(word) + 1  # never 0: 0 stands for "no word"
    return got


def _mix(x: npt.NDArray[np.uint64], family: np.uint64) -> npt.NDArray[np.int64]:
    """Feature ids in ``range(ROLE_DIM)`` of hashed values of one family (multiplicative hashing)."""
    with np.errstate(over="ignore"):
        return (((x ^ (family * _GOLDEN)) * _GOLDEN) >> _SHIFT).astype(np.int64)


def _fixed(name: str) -> int:
    return _crc(name) & (ROLE_DIM - 1)


_BIAS = _fixed("bias")
_POS = [_fixed(f"pos{i}") for i in range(_POSITION_BINS)]
_FIRST, _LAST, _SECOND, _DIGIT = (_fixed(x) for x in ("first", "last", "second", "digit"))
_LEN = [_fixed(f"len{i}") for i in range(6)]


def _words(sentence: str) -> list[str]:
    return ["0" if w[0].isdigit() else w for w in _WORD_RE.findall(sentence.casefold())]


def role_features(sentences: Sequence[str]) -> list[npt.NDArray[np.int64]]:
    """Hashed feature ids of each sentence of one abstract (in order), for the role classifier: its
    words and word pairs, its first words with their place, the first two words of the sentences
    either side, its position fifth, first / second / last, numbers, length. Computed for the whole
    abstract at once (numpy), as /ask reads a few abstracts per question cold."""
    n = len(sentences)
    if not n:
        return []
    words = [_words(x) for x in sentences]
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    h = np.array([_word_hash(w) for ws in words for w in ws], dtype=np.uint64)
    sid = np.repeat(np.arange(n, dtype=np.int64), lengths)
    starts = np.cumsum(lengths) - lengths
    place = np.arange(len(h), dtype=np.int64) - np.repeat(starts, lengths)
    big = np.uint64(1_000_003)
    with np.errstate(over="ignore"):
        second = np.zeros(n, dtype=np.uint64)
        has2 = lengths > 1
        second[has2] = h[starts[has2] + 1]
        first = np.zeros(n, dtype=np.uint64)
        first[lengths > 0] = h[starts[lengths > 0]]
        opening = first * big ^ second
        same = sid[:-1] == sid[1:]
        pairs = (h[:-1] * big ^ h[1:])[same]
    opens = place < _OPENING
    prev = np.r_[np.uint64(0), opening[:-1]].astype(np.uint64)
    nxt = np.r_[opening[1:], np.uint64(0)].astype(np.uint64)
    fixed_ids: list[int] = []
    fixed_sid: list[int] = []
    for i in range(n):
        row = [_BIAS, _POS[min(_POSITION_BINS - 1, i * _POSITION_BINS // n)],
               _LEN[min(int(lengths[i]) // 10, 5)]]
        if i == 0:
            row.append(_FIRST)
        if i == n - 1:
            row.append(_LAST)
        if i == 1:
            row.append(_SECOND)
        if _DIGIT_RE.search(sentences[i]):
            row.append(_DIGIT)
        fixed_ids += row
        fixed_sid += [i] * len(row)
    ids = np.concatenate([
        np.array(fixed_ids, dtype=np.int64), _mix(h, _UNIGRAM), _mix(pairs, _BIGRAM),
        _mix(h[opens] * np.uint64(7) + place[opens].astype(np.uint64), _OPEN),
        _mix(prev, _PREV), _mix(nxt, _NEXT),
    ])
    owner = np.concatenate([
        np.array(fixed_sid, dtype=np.int64), sid, sid[:-1][same], sid[opens], np.arange(n), np.arange(n),
    ])
    keys = np.unique(owner * ROLE_DIM + ids)  # each feature once per sentence, sentences in order
    cuts = np.searchsorted(keys, np.arange(1, n) * ROLE_DIM)
    return [part % ROLE_DIM for part in np.split(keys, cuts)]


def role_probabilities(
    weights: npt.NDArray[np.floating], sentences: Sequence[str], labels: Sequence[str] = ()
) -> npt.NDArray[np.float64]:
    """Probability of each role (columns in :data:`ROLES` order) for each sentence of one abstract.

    Args:
        weights: The fitted classifier, ``(ROLE_DIM, len(ROLES))``.
        sentences: The abstract's sentences in order, section labels taken off.
        labels: Each sentence's section label (``""`` for none); a label's role is certain.
    """
    if not len(sentences):
        return np.zeros((0, len(ROLES)))
    ids = role_features(sentences)
    starts = np.cumsum([0] + [len(x) for x in ids[:-1]])
    logits = np.add.reduceat(weights[np.concatenate(ids)].astype(np.float64), starts, axis=0)
    logits -= logits.max(axis=1, keepdims=True)
    out = np.exp(logits)
    out /= out.sum(axis=1, keepdims=True)
    for i, label in enumerate(labels):
        role = label_role(label) if label else None
        if role is not None:
            out[i] = 0.0
            out[i, ROLES.index(role)] = 1.0
    return out


# -- cue phrases ---------------------------------------------------------------------------------------

#: What a sentence says it does, from cue phrases ("we propose", "we show", "however", "due to"). They
#: were the first /ask's hand-set roles; now they are features of the learned answer choice, with
#: weights fitted per question kind (:data:`retrieval.answer.FEATURES`), because the classifier above,
#: fitted on CS abstracts' five roles, does not tell a stated problem or cause from background, nor a
#: definition from a method: with them the choice's answer@1 over the project's fit-half questions
#: (cross-validated) rose from 0.52 to 0.57, and held on SciFact's folds (0.58 / 0.57).
CUES = ("definition", "propose", "method", "announce", "result", "problem", "cause")
CUE_RES: dict[str, re.Pattern[str] | tuple[re.Pattern[str], ...]] = {
    # code and project pages: no answer to a question
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
    # Two searches, not one alternation: the number's alternative, with no literal to anchor on, made
    # the regex engine try every alternative at every position (69 us a sentence; 7 us split, same marks).
    "result": (re.compile(
        r"\b(we (show|find|found|demonstrate|observe|discover|reveal|prove|uncover|unveil|report|"
        r"establish|verify|confirm|identify|conclude)|(results?|experiments?|evaluations?|analys[ie]s|"
        r"findings?|study) (show|suggest|indicate|demonstrate|reveal|confirm|on)|outperform|"
        r"surpass|improv|achiev|reduc|speedup|faster|competitive|state[- ]of[- ]the[- ]art|"
        r"sota\b|comparable|fall short|does not|do not|cannot|on par|gap\b)"
    ), re.compile(r"\d(\.\d+)?\s*(%|x\b|×|times|fold|points)")),
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
#: which has no common prefix and so is tried at every position.
_META_HINTS = ("http", "github.com", "www.", "url", "code ", "available at", "project page", "warning")


# Each cue's searches: it holds when one of them matches.
_CUE_SEARCHES = {name: cue if isinstance(cue, tuple) else (cue,) for name, cue in CUE_RES.items()}


def cue_sets(sentences: Sequence[str]) -> tuple[frozenset[str], ...]:
    """The cues (:data:`CUE_RES`' names, and ``first`` for the opening sentence) each sentence holds.
    The opening sentence sets the scene: what it says "by" or "via" is the field's way, not the
    paper's method."""
    out = []
    for i, sentence in enumerate(sentences):
        lowered = sentence.casefold()
        found = {
            name for name, searches in _CUE_SEARCHES.items()
            if (name != "meta" or any(hint in lowered for hint in _META_HINTS))
            and any(cue.search(lowered) for cue in searches)
        }
        if i == 0:
            found.add("first")
            found.discard("method")
        out.append(frozenset(found))
    return tuple(out)


def cue_marks(sets: Sequence[frozenset[str]]) -> npt.NDArray[np.float64]:
    """``(len(sets), len(CUES))``: 1 where the sentence holds the cue (``sets``: :func:`cue_sets`)."""
    return np.array([[float(c in found) for c in CUES] for found in sets]).reshape(len(sets), len(CUES))
