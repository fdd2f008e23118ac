"""Sentences: where one ends and the next begins, in abstracts as people paste them."""

from __future__ import annotations

import re

from retrieval.markup import url_spans

# --------------------------------------------------------------------------------------------------

# Words that end with a period but do not end a sentence when followed by a space (lowercased).
_ABBREVIATIONS = frozenset(
    "e.g i.e cf vs al fig figs eq eqs sec secs tab tabs ref refs no nos dr prof mr mrs ms st approx "
    "resp ca viz inc ltd jr sr vol pp ch chap app eds ed et thm lem def prop cor alg appx w.r.t a.k.a "
    "etc.al u.s".split()
)
_BOUNDARY_CANDIDATE = re.compile(r"[.!?\u2026\n]")
_CLOSERS = "\"'”’)]"
_DOTTED = re.compile(r"(?:[a-z]\.)+[a-z]")
_SENTENCE_OPENERS = "“\"'‘([$\\*_#@"


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
    while j < n and text[j] in ".!?\u2026":
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
    nxt = text[k]
    if spaced:
        starts_sentence = nxt.isupper() or nxt.isdigit() or nxt in _SENTENCE_OPENERS
        if not starts_sentence and not (ord(nxt) > 127 and not nxt.islower()):
            return None
    elif c not in "?!" and not (nxt.isupper() and k + 1 < n and text[k + 1].islower()):
        return None  # "1.5", "i.i.d.", "Fig.3": no space and no capitalised word after
    if c == "." and _is_abbreviation(text, i, spaced):
        return None
    return j, k


def _candidates(text: str, start: int) -> list[int]:
    """Where ``_BOUNDARY_CANDIDATE`` matches at or after ``start``, in order: found with str.find
    per character (memchr speed; the regex's class scan costs ~10 us per abstract)."""
    out: list[int] = []
    for char in ".!?\u2026\n":
        i = text.find(char, start)
        while i != -1:
            out.append(i)
            i = text.find(char, i + 1)
    out.sort()
    return out


def _boundaries(text: str, start: int = 0) -> list[tuple[int, int]]:
    """All sentence boundaries at or after ``start`` as (sentence end, next sentence start)."""
    urls = url_spans(text)
    out = []
    url_i = 0
    skip_to = start
    for i in _candidates(text, start):
        if i < skip_to:
            continue
        while url_i < len(urls) and urls[url_i][1] <= i:
            url_i += 1
        if url_i < len(urls) and urls[url_i][0] <= i:
            continue  # dots inside URLs
        b = _boundary_at(text, i)
        if b is not None:
            out.append(b)
            skip_to = b[1]
    return out


def split_sentences(text: str) -> list[str]:
    """Split text into sentences.

    Boundaries are ``.``, ``!``, ``?`` (or ``…``) followed by space and a sentence-like start (capital,
    digit, quote, bracket, markup), or followed directly by a capitalised word ("models.Recent" - a
    missing space in the source), and blank lines. Abbreviations (e.g., i.e., et al., Fig., Eq.),
    initials, decimals (1.5) and dots inside URLs do not split.

    Args:
        text: Plain or markdown text.

    Returns:
        Stripped, non-empty sentences in order (terminal punctuation kept).
    """
    if not text or not isinstance(text, str):
        return []
    sentences: list[str] = []
    start = 0
    for end, nxt in _boundaries(text):
        sentence = text[start:end].strip()
        if sentence:
            sentences.append(sentence)
        start = nxt
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


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
