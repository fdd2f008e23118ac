"""Words broken at the end of a line: join a typesetter's hyphenation, keep a real hyphen.

A PDF copy ends a line with ``representa-`` and starts the next with ``tion``, but also with
``self-`` then ``supervised``. Which it was is decided with evidence, in this order:

1. ``pre- and post-training``: a hyphen before ``and``/``or``/``to`` is a suspended compound; the
   space stays.
2. The paper's own text: when the same word occurs elsewhere in it unbroken, solid
   (``representation``) or hyphenated (``self-supervised``), that spelling wins (the commoner one
   when both occur).
3. The shape: a hyphen inside a link, after a digit or another hyphen (``state-of-the-`` ``art``),
   or before a capital, a digit or another hyphenated part (``GR1-`` ``Manipulation``, ``Plug-``
   ``and-Play``) is a real one: typesetters hyphenate lowercase words.
4. An acronym before the hyphen (``CPU-`` ``based``) is never a typesetter's break; then the
   vocabulary of machine-learning abstracts (:data:`LEXICON`, fitted on half of the ICLR 2024
   abstracts by ``bench/hyphen_lexicon.py``): the commoner of the two spellings there, or a second
   part that compounds are hyphenated with as a rule there (``-based``, ``-aware``).
5. An English word list (pyspellchecker's, a maintained MIT-licensed package whose English list
   holds about 160,000 words with their frequencies): the solid word when it is one (or one with an
   inflection: ``timestamp`` + ``ed``); the hyphen when both halves are words and the solid form is
   not (``cross-`` ``entropy``).
6. Otherwise the pieces are joined: a typesetter's break leaves fragments (``representa``).

The decision depends only on the two pieces and the paper's own words, never on which other papers
are loaded with it, so a paper reads the same in any corpus and in any piece of a split file.
``bench/pdf_paste.py`` measures it (words restored exactly) on the held-out half of ICLR 2024.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from importlib import resources

__all__ = ["LEXICON", "join_break", "own_words", "word_core"]

#: The fitted vocabulary: ``retrieval/data/hyphen_lexicon.tsv`` (word, count), loaded on first use.
LEXICON = "hyphen_lexicon.tsv"

# A hyphen before these keeps its space: "pre- and post-training", "first- or second-order".
_SUSPENDED = frozenset({"and", "or", "to", "nor", "vs", "vs.", "versus", "und", "&"})
_EDGE = re.compile(r"^[^\w$]+|[^\w]+$")
_ENDINGS = ("s", "es", "ed", "d", "ing", "er", "ers")
_lock = threading.Lock()
_lexicon: dict[str, int] | None = None
_words: Mapping[str, int] | None = None


def word_core(token: str) -> str:
    """A token without the punctuation around it, lowercased: ``"(Self-Supervised),"`` ->
    ``"self-supervised"``."""
    return _EDGE.sub("", token).lower()


def own_words(tokens: Iterable[str]) -> Counter[str]:
    """The evidence of a paper's own text: how often each word (:func:`word_core`) occurs."""
    return Counter(word_core(t) for t in tokens)


def _load_lexicon() -> dict[str, int]:
    global _lexicon
    with _lock:
        if _lexicon is None:
            table: dict[str, int] = {}
            text = resources.files("retrieval.data").joinpath(LEXICON).read_text(encoding="utf-8")
            for line in text.splitlines():
                word, _, count = line.partition("\t")
                if word and count.isdigit():
                    table[word] = int(count)
            _lexicon = table
    return _lexicon


def _load_words() -> Mapping[str, int]:
    global _words
    with _lock:
        if _words is None:
            from spellchecker import SpellChecker  # ~0.5 s: only when a broken word needs it

            _words = SpellChecker(language="en").word_frequency.dictionary
    return _words


def join_break(left: str, right: str, own: Mapping[str, int]) -> str:
    """Join two lines' text where ``left`` ends with a hyphen after a letter or digit.

    Args:
        left: The text up to and including the hyphen at the end of a line.
        right: The next line's text.
        own: The paper's own words (:func:`own_words` of its other tokens).

    Returns:
        ``left`` without its hyphen + ``right`` (a hyphenated word joined), ``left + right`` (a real
        hyphen kept) or ``left + " " + right`` (a suspended compound).
    """
    tail = left.rsplit(None, 1)[-1]  # the broken token, hyphen included
    head = right.split(None, 1)[0] if right.strip() else ""
    if not head or head.lower() in _SUSPENDED:
        return f"{left} {right}"
    return left + right if _keeps_hyphen(tail, head, own) else left[:-1] + right


def _keeps_hyphen(tail: str, head: str, own: Mapping[str, int]) -> bool:
    """Whether ``tail`` (ending with "-") + ``head`` is a hyphenated word (see the module docstring)."""
    first = word_core(tail[:-1])
    second = word_core(head)
    solid, hyphenated = first + second, f"{first}-{second}"
    a, b = own.get(solid, 0), own.get(hyphenated, 0)
    if a or b:
        return b > a
    stem = tail[:-1]
    if "://" in stem or "www." in stem or "/" in stem or "@" in stem:
        return True  # a link: typesetters do not hyphenate links
    if not second or not head[:1].isalpha() or head[:1].isupper() or "-" in head.rstrip("-"):
        return True
    if not stem[-1:].isalpha() or "-" in stem:
        return True
    part = re.split(r"[^\w]", stem)[-1]
    if sum(c.isupper() for c in part) >= 2:
        return True  # an acronym is never broken by a typesetter: "CPU-" "based", "KL-" "divergence"
    lexicon = _load_lexicon()
    a, b = lexicon.get(solid, 0), lexicon.get(hyphenated, 0)
    if a or b:
        return b > a
    if lexicon.get("-" + second, 0):
        return True  # a compound's second part, hyphenated as a rule: "-based", "-aware", "-free"
    words = _load_words()
    if solid in words or any(solid.endswith(end) and solid[: -len(end)] in words for end in _ENDINGS):
        return False  # a word, or one with an inflection ("timestamp" + "ed")
    return first in words and second in words
