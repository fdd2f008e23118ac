"""Sentences: where one ends and the next begins, in abstracts as people paste them.

:func:`sentences` gives each sentence with its span and the structured-abstract label of its section
("BACKGROUND", "RESULTS", "目的" ...): a label starts a new sentence (also glued to the one before:
"in recent years.AIM: To describe ...") and is never part of a sentence's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from retrieval.markup import url_spans

# --------------------------------------------------------------------------------------------------

# Words that end with a period but do not end a sentence when followed by a space (lowercased).
_ABBREVIATIONS = frozenset(
    "e.g i.e cf vs al fig figs eq eqs sec secs tab tabs ref refs no nos dr prof mr mrs ms st approx "
    "resp ca viz inc ltd jr sr vol pp ch chap app eds ed et thm lem def prop cor alg appx w.r.t a.k.a "
    "etc.al u.s".split()
)
#: Full stops of Chinese and Japanese text: they end a sentence whatever follows.
_CJK_STOPS = "\u3002\uff01\uff1f"
_BOUNDARY_CANDIDATE = re.compile(r"[.!?\u2026\n\u3002\uff01\uff1f]")
_CLOSERS = "\"'”’)]"
_DOTTED = re.compile(r"(?:[a-z]\.)+[a-z]")
_SENTENCE_OPENERS = "“\"'‘([$\\*_#@"

# -- structured-abstract labels -------------------------------------------------------------------

#: The words section labels of structured abstracts are made of (PubMed's and journals' headings, as
#: they appear in SciFact's abstracts: "MAIN OUTCOME MEASURES", "METHODOLOGY/PRINCIPAL FINDINGS").
#: A label is a run of these in capitals opening a sentence, holding one of :data:`LABEL_HEADS`.
LABEL_HEADS = frozenset(
    "BACKGROUND BACKGROUNDS OBJECTIVE OBJECTIVES AIM AIMS PURPOSE PURPOSES CONTEXT INTRODUCTION "
    "IMPORTANCE RATIONALE MOTIVATION METHOD METHODS METHODOLOGY MATERIAL MATERIALS DESIGN SETTING "
    "SETTINGS PARTICIPANTS PATIENTS SUBJECTS POPULATION INTERVENTION INTERVENTIONS MEASUREMENT "
    "MEASUREMENTS OUTCOME OUTCOMES MEASURES EXPOSURE EXPOSURES SOURCES SELECTION STRATEGY EXTRACTION "
    "SYNTHESIS REGISTRATION RESULT RESULTS FINDING FINDINGS CONCLUSION CONCLUSIONS INTERPRETATION "
    "SIGNIFICANCE IMPLICATIONS DISCUSSION SUMMARY LIMITATIONS FUNDING AVAILABILITY UNLABELLED "
    "ABSTRACT PROCEDURES APPROACH RELEVANCE HYPOTHESIS HYPOTHESES OBSERVATIONS".split()
)
#: Words that only qualify a head ("MAIN OUTCOME MEASURES", "DATA SOURCES", "METHODS AND RESULTS").
LABEL_WORDS = LABEL_HEADS | frozenset(
    "MAIN PRIMARY SECONDARY DATA STUDY SEARCH TRIAL PRINCIPAL EXPERIMENTAL EVIDENCE REVIEW QUESTION "
    "KEY POINTS CLINICAL AND OF".split()
)
_LABEL_JOINERS = frozenset({"AND", "OF"})
#: Chinese section labels: 背景 background, 目的 aim, 方法 methods, 结果 results, 结论 conclusion, 意义
#: significance, 摘要 abstract (traditional forms too).
CJK_LABELS = ("背景", "目的", "方法", "结果", "結果", "结论", "結論", "意义", "意義", "摘要")
_CAPS_WORD_RE = re.compile(r"([A-Z]{2,})(?:\(S\))?")
_CAPS_GAP_RE = re.compile(r"(?:\s*[/&,]\s*)+|\s+")
_LABEL_END_RE = re.compile(r"\s*[:：]\s*|\s*[.—–-]\s+|\s+")
_TITLE_LABEL_RE = re.compile(
    r"([A-Z][a-z]+(?:\s*[/&]\s*[A-Z][a-z]+|\s+(?:and|of|[A-Z][a-z]+))*)\s*[:：]\s*"
)
_CJK_LABEL_RE = re.compile(
    r"[【\[]?(" + "|".join(CJK_LABELS) + r")(?:[】\]]\s*[:：]?\s*|\s*[:：]\s*|\s+)"
)
#: Where a label glued to the sentence before may start: after a full stop with no space
#: ("years.AIM:"), or after a space when a colon follows ("... 2010 METHODS: We").
_INLINE_LABEL_RE = re.compile(r"(?<=[.!?\s])(?=[A-Z]{2,}[A-Z /&,()]*[:：])|(?<=[.!?。\s])(?=[【\[]?(?:"
                              + "|".join(CJK_LABELS) + r")[】\]]?\s*[:：】\]])")


def match_label(text: str, pos: int = 0, lenient: bool = False) -> tuple[str, int] | None:
    """The structured-abstract label opening ``text`` at ``pos``: (the label as written, normalised
    to single spaces, and where the sentence after it starts), or None.

    A Latin label is the longest run of :data:`LABEL_WORDS` in capitals that holds one of
    :data:`LABEL_HEADS` ("RESULTS Of the 32,441 samples", "CONCLUSION ABPI but not CIMT ...",
    "METHODS AND RESULTS: we ..."), or a title-case one followed by a colon ("Materials and Methods:
    We ..."); a Chinese one is one of :data:`CJK_LABELS` followed by a colon, a bracket or a space.
    Something must follow the label; a lowercase word only after a label of six letters or more
    ("OBJECTIVE to assess"; "AIM is a tool" is about AIM), or any label when ``lenient`` (the text
    has other labels: "AIMS patients with diabetes ...").
    """
    n = len(text)
    c = text[pos] if pos < n else ""
    if not c:
        return None
    if c in "【[" or ord(c) > 0x2E7F:
        m = _CJK_LABEL_RE.match(text, pos)
        return (m.group(1), m.end()) if m and m.end() < n else None
    if not c.isupper():
        return None
    best: tuple[str, int] | None = None
    head = False
    i = pos
    while True:
        w = _CAPS_WORD_RE.match(text, i)
        if w is None or w.group(1) not in LABEL_WORDS:
            break
        head = head or w.group(1) in LABEL_HEADS
        end = _LABEL_END_RE.match(text, w.end())
        if head and w.group(1) not in _LABEL_JOINERS and end is not None and end.end() < n and (
            not text[end.end()].islower() or ":" in end.group() or "：" in end.group()
            or w.end() - pos >= 6 or lenient
        ):
            best = " ".join(text[pos : w.end()].split()), end.end()
        gap = _CAPS_GAP_RE.match(text, w.end())
        if gap is None:
            break
        i = gap.end()
    if best is not None:
        return best
    m = _TITLE_LABEL_RE.match(text, pos)
    if m is None or m.end() >= n:
        return None
    words = [x.upper() for x in re.split(r"[\s/&]+", m.group(1)) if x]
    if all(x in LABEL_WORDS for x in words) and any(x in LABEL_HEADS for x in words):
        return " ".join(m.group(1).split()), m.end()
    return None


def _boundary_at(text: str, i: int) -> tuple[int, int] | None:
    """If a sentence ends at candidate ``text[i]``: (end of the sentence, start of the next one)."""
    n = len(text)
    c = text[i]
    if c == "\n":
        j = i + 1
        while j < n and text[j] in " \t\r":
            j += 1
        return (i, j + 1) if j < n and text[j] == "\n" else None
    j = i
    while j < n and text[j] in ".!?\u2026" + _CJK_STOPS:
        j += 1
    while j < n and text[j] in _CLOSERS:
        j += 1
    if j >= n:
        return n, n
    spaced = text[j].isspace()
    k = j
    while k < n and text[k].isspace():
        k += 1
    if k >= n:
        return j, n
    if c in _CJK_STOPS:
        return j, k
    nxt = text[k]
    if spaced:
        starts_sentence = nxt.isupper() or nxt.isdigit() or nxt in _SENTENCE_OPENERS
        if not starts_sentence and not (ord(nxt) > 127 and not nxt.islower()):
            return None
    elif c not in "?!" and not (nxt.isupper() and k + 1 < n and text[k + 1].islower()):
        # "1.5", "i.i.d.", "Fig.3": no space and no capitalised word after; but a section label
        # glued on ("years.AIM: To describe") starts a sentence all the same.
        return (j, k) if match_label(text, k) else None
    if c == "." and _is_abbreviation(text, i, spaced):
        return None
    return j, k


def _candidates(text: str, start: int) -> list[int]:
    """Where ``_BOUNDARY_CANDIDATE`` matches at or after ``start``, in order: found with str.find
    per character (memchr speed; the regex's class scan costs ~10 us per abstract)."""
    out: list[int] = []
    for char in ".!?\u2026\n" + _CJK_STOPS:
        i = text.find(char, start)
        while i != -1:
            out.append(i)
            i = text.find(char, i + 1)
    out.sort()
    return out


def _label_starts(text: str) -> list[int]:
    """Where a label not preceded by a sentence end begins ("... in 2010 METHODS: We ...")."""
    if ":" not in text and "：" not in text and "】" not in text:
        return []
    return [m.start() for m in _INLINE_LABEL_RE.finditer(text) if match_label(text, m.start())]


_GLUED_AFTER_URL_RE = re.compile(r"[A-Z][a-z]+:\s")


def _boundaries(text: str, start: int = 0) -> list[tuple[int, int]]:
    """All sentence boundaries at or after ``start`` as (sentence end, next sentence start)."""
    urls = url_spans(text)
    out = []
    url_i = 0
    skip_to = start
    labels = [p for p in _label_starts(text) if p > start]
    events = sorted({*_candidates(text, start), *labels})
    label_set = set(labels)
    for i in events:
        if i < skip_to:
            continue
        while url_i < len(urls) and urls[url_i][1] <= i:
            url_i += 1
        if url_i < len(urls) and urls[url_i][0] <= i:
            # Dots inside URLs do not split, unless a capitalised word and a colon follow:
            # the URL ended at a full stop with no space after it ("safe-rlhf.Warning: This ...").
            if text[i] == "." and _GLUED_AFTER_URL_RE.match(text, i + 1):
                out.append((i + 1, i + 1))
                skip_to = i + 1
            continue
        b = (i, i) if i in label_set else _boundary_at(text, i)
        if b is not None:
            out.append(b)
            skip_to = max(b[1], i + 1)
    return out


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a text.

    Attributes:
        text: The sentence, stripped, without the section label that opened it.
        start: Offset of ``text`` in the text that was split (``source[start:end] == text``).
        end: Offset just past ``text``.
        label: The structured-abstract label of the sentence's section ("RESULTS", "MAIN OUTCOME
            MEASURES", "目的"), carried to every sentence until the next label; ``""`` when none.
        labelled: This sentence opened with the label (it is the section's first).
    """

    text: str
    start: int
    end: int
    label: str = ""
    labelled: bool = False


def sentences(text: str) -> list[Sentence]:
    """Split text into sentences, each with its span and its section's label.

    Boundaries are ``.``, ``!``, ``?`` (or ``…``) followed by space and a sentence-like start
    (capital, digit, quote, bracket, markup), or followed directly by a capitalised word
    ("models.Recent" - a missing space in the source) or a section label ("years.AIM:"); ``。！？``;
    blank lines; and a section label with its colon wherever it stands. Abbreviations (e.g., i.e.,
    et al., Fig., Eq., vs.), initials, decimals (1.5), version numbers (3.11) and dots inside URLs do
    not split. A label (see :func:`match_label`) is taken off the sentence it opens.

    Args:
        text: Plain or markdown text.

    Returns:
        Non-empty sentences in order.
    """
    if not text or not isinstance(text, str):
        return []
    spans = []
    start = 0
    for end, nxt in [*_boundaries(text), (len(text), len(text))]:
        spans.append((start, end))
        start = nxt
    out = _labelled(text, spans, lenient=False)
    if any(s.labelled for s in out):
        out = _labelled(text, spans, lenient=True)  # a structured abstract: "AIMS patients with ..."
    return out


def _labelled(text: str, spans: list[tuple[int, int]], lenient: bool) -> list[Sentence]:
    out: list[Sentence] = []
    label = ""
    for start, end in spans:
        sentence = _sentence(text, start, end, label, lenient)
        if sentence is not None:
            label = sentence.label
            out.append(sentence)
    return out


def _sentence(text: str, start: int, end: int, label: str, lenient: bool) -> Sentence | None:
    while start < end and text[start].isspace():
        start += 1
    labelled = False
    found = match_label(text, start, lenient) if start < end else None
    if found is not None and found[1] <= end:
        label, start, labelled = found[0], found[1], True
    while end > start and text[end - 1].isspace():
        end -= 1
    if start >= end:
        return None
    return Sentence(text[start:end], start, end, label, labelled)


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` as strings (see :func:`sentences`; section labels left out)."""
    return [s.text for s in sentences(text)]


def _is_abbreviation(text: str, dot: int, spaced: bool) -> bool:
    space = max(text.rfind(" ", max(0, dot - 30), dot), text.rfind("\n", max(0, dot - 30), dot))
    raw = text[space + 1 : dot]
    word = raw.lstrip("([{\"'“‘*_").lower()
    if not word:
        return False
    if word in _ABBREVIATIONS:
        # "et al." glued to the next sentence ("Dang et al.Lastly") is a boundary all the same
        return spaced or word != "al"
    if len(word) == 1 and word.isalpha():
        return raw[-1].isupper() or spaced  # an initial: "J. Smith"
    # dotted abbreviations: "i.i.d", "a.k.a", "U.S"
    return "." in word and _DOTTED.fullmatch(word) is not None


# --------------------------------------------------------------------------------------------------
# Titles
# --------------------------------------------------------------------------------------------------
#
# A title is built from the opening of the abstract with a handful of regex scans and string finds
# (no tokenizing, no LaTeX conversion of the whole text): titles are derived for every paper when a
# corpus is parsed, so they must cost a few microseconds. bench/titles.py measures them against the
# real ICLR 2024 titles.
