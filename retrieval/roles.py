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

__all__ = ["LABEL_ROLES", "ROLES", "label_role", "role_features", "role_probabilities"]

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


def _hash(feature: str) -> int:
    # crc32, not hash(): the fitted weights must be found again in every process.
    return zlib.crc32(feature.encode("utf-8")) & (ROLE_DIM - 1)


def _words(sentence: str) -> list[str]:
    return ["0" if w[0].isdigit() else w for w in _WORD_RE.findall(sentence.casefold())]


def role_features(sentences: Sequence[str]) -> list[list[int]]:
    """Hashed feature ids of each sentence of one abstract (in order), for the role classifier."""
    n = len(sentences)
    words = [_words(s) for s in sentences]
    opening = [" ".join(w[:2]) for w in words]
    out = []
    for i, ws in enumerate(words):
        feats = ["bias", f"pos{min(_POSITION_BINS - 1, i * _POSITION_BINS // max(n, 1))}"]
        if i == 0:
            feats.append("first")
        if i == n - 1:
            feats.append("last")
        if i == 1:
            feats.append("second")
        if _DIGIT_RE.search(sentences[i]):
            feats.append("digit")
        feats.append(f"len{min(len(ws) // 10, 5)}")
        feats += [f"w:{w}" for w in ws]
        feats += [f"b:{a} {b}" for a, b in zip(ws, ws[1:], strict=False)]
        feats += [f"o{k}:{w}" for k, w in enumerate(ws[:_OPENING])]
        feats.append(f"prev:{opening[i - 1]}" if i else "prev:<s>")
        feats.append(f"next:{opening[i + 1]}" if i + 1 < n else "next:</s>")
        out.append(sorted({_hash(f) for f in feats}))
    return out


def role_probabilities(
    weights: npt.NDArray[np.floating], sentences: Sequence[str], labels: Sequence[str] = ()
) -> npt.NDArray[np.float64]:
    """Probability of each role (columns in :data:`ROLES` order) for each sentence of one abstract.

    Args:
        weights: The fitted classifier, ``(ROLE_DIM, len(ROLES))``.
        sentences: The abstract's sentences in order, section labels taken off.
        labels: Each sentence's section label (``""`` for none); a label's role is certain.
    """
    out = np.zeros((len(sentences), len(ROLES)))
    for i, ids in enumerate(role_features(sentences)):
        logits = weights[ids].sum(axis=0, dtype=np.float64)
        logits -= logits.max()
        p = np.exp(logits)
        out[i] = p / p.sum()
    for i, label in enumerate(labels):
        role = label_role(label) if label else None
        if role is not None:
            out[i] = 0.0
            out[i, ROLES.index(role)] = 1.0
    return out
