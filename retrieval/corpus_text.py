"""Read the plain-text corpus format: papers as people paste them from PDFs, web pages and chat.

A paper is, in this order: an optional **title** line, an optional **area** line (``Area · Subarea``
or ``Area``), the **authors** line (comma-separated; a trailing ``等`` or ``et al.`` means the list
is cut), then the **abstract**, over any number of lines. Blank lines may separate the fields and
must separate the papers (a file without any blank line has one line per field). A title can be
given in two ways: a ``Title:`` line (``标题：``), which is always the title, or the line above the
area line. A single line above the authors is the area when it reads as one (an ``X · Y`` line, a
spelling used as an area elsewhere in the file, or one to four capitalised words), else the title.

Roles come from the whole block, not from each line's shape alone: the file is segmented by dynamic
programming into papers and skipped runs of lines at the least cost. Every well-formed paper costs
nothing; the costs below say how unlikely a line is in each role (running text as the authors, an
``X · Y`` line as the abstract, a name list as the title...). Inside a paragraph (lines without a
blank line between them) every line after the abstract's first is the abstract's, whatever its
shape (lowercase, ``and``, a comma, a digit, a bullet, a table row, a line of names); a new paper
starts inside a paragraph only at a ``Title:`` line or at an ``X · Y`` line (which an abstract
takes in only at a high cost). After a blank line the abstract goes on only with a table, a
list, a line that continues the sentence (lowercase, a comma, ``and``...), after a line ending with
``:``, or with the text after a table or a list. Whatever cannot be placed is reported as
``file:line: field: why``, never loaded as a paper.

PDF debris: an ``Abstract`` / ``摘要`` heading line (or the same word as a label before the text),
a ``Keywords:`` / ``Index Terms—`` line, an arXiv identifier line (``arXiv:2401.01234v2 [cs.LG] 5
Jan 2024``, which becomes the paper's link) and affiliation lines after the authors (``1University
of ...``, ``*Equal contribution``, e-mail addresses) are left out of the fields; affiliation marks on
names (digits, superscripts, ``* † ‡ ∗``) are dropped from the names
(:func:`retrieval.corpus_fields.parse_authors`). Words a PDF broke at a line end are joined by
:mod:`retrieval.hyphenation`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass

from retrieval.corpus_fields import (
    Record,
    area_key,
    clean_area,
    clean_line,
    parse_authors,
    preview,
    split_lines,
)
from retrieval.english import plural
from retrieval.hyphenation import join_break, own_words
from retrieval.models import SkippedBlock

__all__ = ["HEADER", "PieceLines", "join_lines", "known_areas", "parse_text", "segment", "text_lines"]

HEADER = "论文检索"

# What a line costs in each role (integers: the piece checks compare sums exactly).
_SKIP = 10  # per skipped line (a line of text inside a paragraph: _SKIP_MORE)
_SKIP_MORE = 2
_NO = 1_000_000  # never
# Never: a field taken from running text, a table or a list (what cannot be placed is reported)
_PROSE_IN_FIELD = _NO
_TABLE_IN_FIELD = _NO
_SEPARATOR_IN_AUTHORS = 1_000_000  # "X · Y" as the authors: an area line never is
_SEPARATOR_AS_TITLE = 40  # "X · Y" as the title
_KNOWN_AREA_AS_TITLE = 30  # a spelling used as an area elsewhere in the file, as the title
_NAMES_AS_TITLE = 30  # a list of names as the title
_NAME_AS_TITLE = 12  # one short name ("Angela Dai") as the title
_NAME_AFTER_AREA = 20  # ... right under another paper's area line
_TITLE = 4  # a title line without a "Title:" label (the area, when a line could be either, is cheaper)
_SHORT_TITLE = 6  # ... of one or two words
_SWAPPED = 4  # the area line above the title line
_LIST_AS_AREA = 35  # a list of 4+ items without an area separator as the area
_LONG_AREA = 30  # an area line over _AREA_MAX characters
_LOWERCASE_FIELD = 20  # a title or area starting in lowercase (the rest of a sentence)
_SENTENCE_FIELD = 12  # an area ending with a full stop
_TITLE_FULL_STOP = 8  # a title ending with one (a few do; a sentence alone is likelier)
_SENTENCES = re.compile(r"[a-z]{2}\. [A-Z][a-z]+ [a-z]")  # "... models. We show ...": running text
_TITLE_LIKE_AREA = 10  # an area with ":" or "?" or lowercase words (a title's shape)
_CONTINUED_TITLE = 15  # an area line after a line ending with "for", ":", ... (the title goes on)
_NOT_A_NAME = _NO  # an authors line holding a word no name holds ("that", "we", "the")
_ONE_WORD_AUTHOR = 12  # a lone one-word name ("Robotics" is more likely an area above lost authors)
_ODD_NAME = 8  # an authors line with a name of unusual shape (lowercase, long)
_AREA_LIKE_IN_ABSTRACT = 15  # a short line that reads as an area, inside a paste without blank lines
_LOWERCASE_LIST = 20  # an authors line whose names are mostly lowercase phrases
_SENTENCE_AUTHORS = 10  # an authors line ending with a full stop
_AREA_IN_ABSTRACT = 40  # an abstract (first line, or a line a paper could start at) that is "X · Y"
_TITLE_IN_ABSTRACT = 100  # a "Title:" line inside an abstract
_LIST_AS_ABSTRACT = 40  # an abstract that is a short comma list of names (an authors line)
_SHORT_ABSTRACT = 12  # an abstract that starts with a short line that is no sentence (more than a
# skipped line: two stray short lines are not a paper)
_ODD_ABSTRACT = 2  # an abstract that starts with a line that is no sentence
_MID_PARAGRAPH = 1  # a paper starting without a blank line before it (less than skipping a line there)
_ATTACH_CONTINUATION = 2  # an abstract going on after a blank line with a continuing line
_ATTACH_LOWERCASE = 4  # ... after a finished sentence, with text starting in lowercase
_ATTACH_AFTER_TABLE = 8  # ... with text after a table or list (dearer than a title line)
_AREA_MAX = 200

_SPACED_SEPARATOR = re.compile(r"\s(?:·|•|∙|->|→)\s")


def _separated(line: str) -> bool:
    """An ``X · Y`` line's separator in it (the string tests first: most lines have none)."""
    return ("·" in line or "•" in line or "∙" in line or "->" in line or "→" in line) and (
        _SPACED_SEPARATOR.search(line) is not None
    )
_CJK_RE = re.compile("[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_TITLE_LABEL = re.compile(r"^(?:title|标题|题目)\s*[:：]\s*", re.I)
_AREA_LABEL = re.compile(r"^(?:area|subject area|领域)\s*[:：]\s*", re.I)
_AUTHORS_LABEL = re.compile(r"^(?:authors?|作者)\s*[:：]\s*", re.I)
_ABSTRACT_LABEL = re.compile(r"^(?:abstract|摘\s*要)\s*(?:[:：.—–]|-{1,2}(?=\s))\s*", re.I)
_ABSTRACT_HEADING = re.compile(r"^(?:abstract|摘\s*要)\s*[:：.—–-]?$", re.I)
_KEYWORDS = re.compile(r"^(?:key\s*-?\s*words?|index\s+terms|关键词|关键字)\s*(?:[:：.—–]|-{1,2})", re.I)
_ARXIV_LINE = re.compile(
    r"^arxiv:\s*(\d{4}\.\d{4,5}(?:v\d+)?|[a-z-]+(?:\.[a-z]{2})?/\d{7}(?:v\d+)?)(?:\s*\[[\w.\- ]+\])?"
    r"(?:\s+\d{1,2}\s+[a-z]{3}\w*\s+\d{4})?$",
    re.I,
)
# A PDF's affiliation or footnote line after the names: a mark, then an institution, a note or an
# e-mail address ("1University of Oxford, 2DeepMind", "∗Equal contribution", "{a,b}@x.org").
_AFFILIATION_LINE = re.compile(
    r"^[\d¹²³⁴⁵⁶⁷⁸⁹⁰*†‡§¶∗⋆♠♣♥♦{]+\s?\S.*(?:univ|institut|college|school|department|dept\.|lab|"
    r"research|inc\.|ltd|corporation|company|center|centre|academy|hospital|google|microsoft|meta|"
    r"deepmind|openai|nvidia|amazon|contribution|correspond|work done|大学|研究|[\w.+-]+@[\w-]+\.\w)",
    re.I,
)
_AFFILIATION_START = "0123456789¹²³⁴⁵⁶⁷⁸⁹⁰*†‡§¶∗⋆♠♣♥♦{"
_DIGIT = re.compile(r"\d")
_BULLET = re.compile(r"^(?:[-*•·–]\s|\(?\d{1,2}[.)]\s|\([a-z]\)\s|[a-z][.)]\s)")
_CONTINUES = re.compile(r"^(?:[a-z]|[,;:)\]}%]|\d|(?:and|or|but|nor|as well as)\s)")
# Words no author name holds: a line with one of them is running text, not a list of names.
_NOT_NAME_WORDS = frozenset(
    "the a an that this these those we our us it its is are was were be been being has have had "
    "which who whom whose what when where how why show shows showed shown propose proposes proposed "
    "present presents study studies studied find found use uses used using can could may might will "
    "would should must not no than then there their they them such into onto from with without for "
    "by on in to at as of via over under between both also only while however thus hence".split()
)
_NAME_PARTICLES = frozenset(
    "de da del della der den di do dos du la le van von ten ter bin ibn al el y e zu af".split()
)
_SMALL_WORDS = frozenset("and of for the in on to with or a an & / - ·".split())
_TITLE_GOES_ON = frozenset("a an the of for in on to with and or via from by at as towards toward".split())


def _is_cjk(c: str) -> bool:
    """CJK ideographs, kana, Hangul, and CJK and full-width punctuation."""
    return "\u3000" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" or "\uf900" <= c <= "\ufaff" or (
        "\uff00" <= c <= "\uffef"
    )


def _sentence_end(line: str) -> bool:
    """A finished sentence somewhere: a lowercase word and ``.`` before a space or the end, ``!``,
    ``?`` or CJK sentence punctuation (string scans, no regex: this runs on every line)."""
    i = line.find(". ")
    while i != -1:
        if i >= 2 and line[i - 1].islower() and line[i - 2].isalpha():
            return True
        i = line.find(". ", i + 2)
    if len(line) >= 3 and line[-1] == "." and line[-2].islower() and line[-3].isalpha():
        return True
    if "? " in line or "! " in line or line[-1:] in "?!":
        return True
    return not line.isascii() and ("。" in line or "！" in line or "？" in line)


def _prose(line: str) -> bool:
    """Reads as running text (an abstract): sentences, not a short field or a list of names."""
    words = line.count(" ") + 1
    if words >= 8:
        commas = line.count(",") + line.count("，") + line.count("、")
        if words > 4 * (commas + 1) and _sentence_end(line):
            return True
    if line.isascii() or _CJK_RE.search(line) is None:
        return False
    commas = line.count(",") + line.count("，") + line.count("、")
    cjk = len(_CJK_RE.findall(line))
    return cjk >= 12 and ("。" in line or (cjk >= 40 and cjk > 6 * (commas + 1)))


def _ends_sentence(line: str) -> bool:
    return line[-1:] in ".!?。！？"


def _list_like(line: str) -> bool:
    """A short comma list (two commas or more, few words per item): an authors line's shape."""
    commas = line.count(",") + line.count("，") + line.count("、")
    return commas >= 2 and line.count(" ") + 1 <= 4 * (commas + 1)


def _is_table(line: str) -> bool:
    return line[:1] == "|" and line.count("|") >= 2


_AREA_LINE_LABEL = re.compile(r"(?im)^[ \t]*(?:area|subject area|领域)\s*[:：]")


def known_areas(text: str) -> frozenset[str]:
    """The area keys a file's ``X · Y`` and ``Area:`` lines give (and their top levels): the
    evidence that a bare line elsewhere in it is an area. Computed from the whole file's text, so
    that every piece of a split file reads with the same evidence."""
    starts: set[int] = set()
    areas: set[str] = set()
    for mark in ("·", "•", "∙", "->", "→"):  # str.find, far faster than a regex over the file
        at = text.find(mark)
        while at != -1:
            start = text.rfind("\n", 0, at) + 1
            if start not in starts:
                end = text.find("\n", at)
                raw = text[start : len(text) if end == -1 else end]
                if raw in areas or _separated(raw):
                    areas.add(raw)
                    starts.add(start)
                at = text.find(mark, at + 1) if end == -1 else text.find(mark, end)
            else:
                at = text.find("\n", at)
                at = -1 if at == -1 else text.find(mark, at)
    for m in _AREA_LINE_LABEL.finditer(text):
        starts.add(m.start())
    keys: set[str] = set()
    seen: set[str] = set()
    for start in starts:
        end = text.find("\n", start)
        raw = text[start : len(text) if end == -1 else end]
        if raw in seen:
            continue
        seen.add(raw)
        line = clean_line(raw)
        if not line or len(line) > _AREA_MAX:
            continue
        if _prose(line) or "\n" in line:
            continue
        key = area_key(_AREA_LABEL.sub("", line))
        if key:
            keys.add(key)
            keys.add(key.split(" · ", 1)[0])
    return frozenset(keys)


# --------------------------------------------------------------------------------------------------
# What each line costs in each role
# --------------------------------------------------------------------------------------------------

_PLAIN, _TITLE_L, _AREA_L, _AUTHORS_L, _ABSTRACT_L, _TABLE, _BULLET_K, _AFFILIATION = range(8)


class _Lines:
    """The lines of a file (or a piece of it) and, computed on first use, their costs per role."""

    def __init__(
        self, lines: Sequence[str], gap: Sequence[bool], known: Collection[str], headed: Collection[int] = ()
    ) -> None:
        self.lines = lines
        self.gap = gap
        self.known = known
        n = len(lines)
        self.prose = [_prose(x) for x in lines]
        self.kind = [_kind(x) for x in lines]
        for i in headed:  # the text after an "Abstract" heading
            if i < n and self.kind[i] == _PLAIN:
                self.kind[i] = _ABSTRACT_L
        self.sep = [_separated(x) for x in lines]
        self._area: list[int | None] = [None] * n
        self._title: list[int | None] = [None] * n
        self._authors: list[int | None] = [None] * n
        self.names: dict[int, tuple[tuple[str, ...], bool]] = {}  # parse_authors of lines read so

    def name_like(self, i: int) -> bool:
        """A short list of names (what the title and the abstract must not be)."""
        return self.authors_cost(i) == 0 and not self.prose[i]

    def is_known(self, i: int) -> bool:
        return bool(self.known) and area_key(_AREA_LABEL.sub("", self.lines[i])) in self.known

    @staticmethod
    def _cached(table: list[int | None], i: int, compute: Callable[[int], int]) -> int:
        cost = table[i]
        if cost is None:
            cost = table[i] = compute(i)
        return cost

    def area_cost(self, i: int) -> int:
        """What line ``i`` costs as a paper's area."""
        return self._cached(self._area, i, self._area_cost)

    def _labelled(self, i: int, label: int, prose: bool = True) -> int | None:
        """What line ``i`` costs in the role its ``label`` kind stands for when its kind decides it
        (0 with that label, never with another one, a table row or a list item, nor as running text
        when ``prose``), else None."""
        kind = self.kind[i]
        if kind == label:
            return 0
        if kind != _PLAIN:
            return _NO if kind in (_TITLE_L, _AREA_L, _AUTHORS_L, _ABSTRACT_L) else _TABLE_IN_FIELD
        return _PROSE_IN_FIELD if prose and self.prose[i] else None

    def _area_cost(self, i: int) -> int:
        decided = self._labelled(i, _AREA_L)
        if decided is not None:
            return decided
        line = self.lines[i]
        if len(line) > _AREA_MAX:
            return _LONG_AREA
        if sum(c.isalpha() for c in line[:40]) < 2:
            return _NO  # "12345": no words
        if self.sep[i] or self.is_known(i):
            return 0
        if _list_like(line) and line.count(",") + line.count("，") >= 3:
            return _LIST_AS_AREA
        cost = 0
        if _CONTINUES.match(line) and not line[:1].isdigit() or line[-1:] in ",，;；、":
            cost += _LOWERCASE_FIELD
        if line[-1:] == ".":
            cost += _SENTENCE_FIELD
        words = _words(line)
        if len(words) >= 7:
            cost += 12
        elif len(words) >= 5:
            cost += 8
        elif len(words) >= 3:
            cost += 3 + (10 if self.known else 0)  # not one of the file's areas
        elif len(words) == 2 and self.known:
            cost += 6
        if ":" in line or "?" in line or any(
            w[:1].islower() and w.lower() not in _SMALL_WORDS for w in words[1:]
        ):
            cost += _TITLE_LIKE_AREA
        return cost

    def title_cost(self, i: int) -> int:
        """What line ``i`` costs as a paper's title."""
        return self._cached(self._title, i, self._title_cost)

    def _title_cost(self, i: int) -> int:
        decided = self._labelled(i, _TITLE_L, prose=False)
        if decided is not None:
            return decided
        line = self.lines[i]
        if sum(c.isalpha() for c in line[:40]) < 2:
            return _NO  # "12345": no words
        # a question ("What's in a Prior? Learned ...") is a title's; two sentences are not
        if _SENTENCES.search(line) or line[-1:] == "." and line.count(" ") >= 15:
            return _PROSE_IN_FIELD
        if self.sep[i]:
            return _SEPARATOR_AS_TITLE
        if self.is_known(i):
            return _KNOWN_AREA_AS_TITLE
        cost = _TITLE
        if line[-1:] in ",，;；、":
            cost += _LOWERCASE_FIELD
        if self.authors_cost(i) == 0 and ("," in line or "，" in line or "、" in line):
            names = parse_authors(line)[0]
            if len(names) > 1 and all(len(n.split()) <= 3 for n in names):
                cost += _NAMES_AS_TITLE
        first = line.split(None, 1)[0]
        if _CONTINUES.match(line) and not line[:1].isdigit() and first.islower() and first[-1:] != ":":
            # (not "iTransformer: ..." nor "fairret: ...")
            cost += _LOWERCASE_FIELD
        if line[-1:] == "." and not line.endswith("et al."):
            cost += _TITLE_FULL_STOP
        if len(line) > 300:
            cost += _LONG_AREA
        return cost

    def lone_title_cost(self, i: int) -> int:
        """What line ``i`` costs more as a title with no area line under it (then the area and the
        authors are the other readings): a line of one or two words, or one that reads as a name."""
        line = self.lines[i]
        words = line.split()
        if _CJK_RE.search(line):
            return _SHORT_TITLE if len(line) <= 8 else 0
        if len(words) > 3:
            return 0
        cost = _SHORT_TITLE if len(words) <= 2 else 0
        small = any(w.lower() in _SMALL_WORDS for w in words)
        if len(words) <= 2 and self.authors_cost(i) == 0 and not small:
            cost += _NAME_AS_TITLE  # "Angela Dai"
        return cost

    def authors_cost(self, i: int) -> int:
        """What line ``i`` costs as a paper's authors line."""
        return self._cached(self._authors, i, self._authors_cost)

    def _authors_cost(self, i: int) -> int:
        decided = self._labelled(i, _AUTHORS_L)
        if decided is not None:
            return decided
        line = self.lines[i]
        if self.sep[i]:
            return _SEPARATOR_IN_AUTHORS
        names, et_al = parse_authors(line)
        self.names[i] = (names, et_al)
        if not names:
            return _NOT_A_NAME
        odd = 0
        for name in names:
            shape = _name_shape(name)
            if shape == 2:
                return _NOT_A_NAME
            odd += shape
        # a few odd names ("jun chen") in a list are still a list of names; one alone is doubtful,
        # and a list of mostly lowercase phrases is a sentence's ("Window attention, position
        # embeddings, and high resolution finetuning")
        # a list of mostly lowercase phrases: an English list ("X, Y, and Z") or phrases of three
        # words or more, not lowercase names ("chenjie cao, xinlin ren, Yanwei Fu")
        phrases = 2 * odd > len(names) > 1 and (" and " in line or any(len(n.split()) >= 3 for n in names))
        cost = _LOWERCASE_LIST if phrases else _ODD_NAME if odd and len(names) == 1 else 0
        if len(names) == 1 and " " not in names[0].strip() and not _CJK_RE.search(line):
            cost = max(cost, _ONE_WORD_AUTHOR)
        if line[-1:] == "." and not re.search(r"(?:\bal|\b[A-Z])\.$", line):
            cost += _SENTENCE_AUTHORS
        return cost

    def abstract_cost(self, i: int) -> int:
        """What line ``i`` costs as an abstract's first line."""
        line, kind = self.lines[i], self.kind[i]
        if kind == _ABSTRACT_L or self.prose[i]:
            return 0
        if len(line) >= 200 and not self.sep[i] and not _list_like(line):
            return 0
        if kind in (_TITLE_L, _AREA_L, _AUTHORS_L):
            return _NO
        if kind == _AFFILIATION:
            return _AREA_IN_ABSTRACT
        if kind != _PLAIN:
            return _SHORT_ABSTRACT
        if self.sep[i] or self.is_known(i):
            return _AREA_IN_ABSTRACT
        if self.authors_cost(i) == 0 and (_list_like(line) or len(self.names.get(i, ((),))[0]) >= 2):
            return _LIST_AS_ABSTRACT  # a list of names: an authors line
        if len(line) < 60 and not _ends_sentence(line) and self.area_cost(i) <= 3:
            return _AREA_IN_ABSTRACT  # "Social Aspects": an area line, not an abstract
        short = len(line) < 15 if _CJK_RE.search(line) else len(line) < 40
        return _SHORT_ABSTRACT if short else _ODD_ABSTRACT


def _words(line: str) -> list[str]:
    """A line's words, a run of CJK characters counting one word per three characters."""
    if not _CJK_RE.search(line):
        return line.split()
    out: list[str] = []
    for w in line.split():
        cjk = len(_CJK_RE.findall(w))
        out += [w] * max(1, -(-cjk // 3))
    return out


def _kind(line: str) -> int:
    c = line[0]
    if c in "Tt标题" and _TITLE_LABEL.match(line) and len(line) > 6:
        return _TITLE_L
    if c in "Aa领作摘" or c in "Ss":
        if _AREA_LABEL.match(line):
            return _AREA_L
        if _AUTHORS_LABEL.match(line):
            return _AUTHORS_L
        if _ABSTRACT_LABEL.match(line):
            return _ABSTRACT_L
    if c == "|" and _is_table(line):
        return _TABLE
    if c in "-*•·–(" or c.isdigit() or c.islower():
        if _BULLET.match(line):
            return _BULLET_K
    if c in _AFFILIATION_START and len(line) < 300 and _AFFILIATION_LINE.match(line):
        return _AFFILIATION
    return _PLAIN


def _name_shape(name: str) -> int:
    """0: reads as a person's or a team's name; 1: unusual (lowercase, very long, digits); 2: holds
    a word no name holds (running text)."""
    if ":" in name or "?" in name or "!" in name:
        return 2  # a title's or a sentence's, never a name's
    words = name.split()
    if 0 < len(words) <= 6 and all(w[:1].isupper() for w in words) and _DIGIT.search(name) is None:
        return 0  # the common case, at once
    words = name.replace(".", ". ").split()
    if not words:
        return 1
    if _CJK_RE.search(name):  # 2-4 characters for most Chinese names, a few more for others
        size = len(name.replace(" ", ""))
        return 0 if size <= 8 else 1 if size <= 12 else 2
    odd = False
    for w in words:
        bare = w.strip(".,'’")
        if bare in _NOT_NAME_WORDS:  # as written: "A" is an initial, "a" is an article
            return 2
        if w[:1].isupper() or bare.lower() in _NAME_PARTICLES or (len(w) <= 2 and w.endswith(".")):
            continue
        odd = True
    if len(words) > 9 or _DIGIT.search(name):
        return 2 if len(words) > 12 else 1
    return 1 if odd else 0


# --------------------------------------------------------------------------------------------------
# Segmentation
# --------------------------------------------------------------------------------------------------


#: (header cost, title lines, area line, authors lines, the abstract's first line)
_Layout = tuple[int, "tuple[int, int] | None", "int | None", "tuple[int, int]", int]


@dataclass(slots=True)
class _Paper:
    start: int  # first line (the title's, the area's or the authors')
    title: tuple[int, int] | None
    area: int | None
    authors: tuple[int, int]
    abstract: tuple[int, int]


@dataclass(slots=True)
class PieceLines:
    """Where a piece's text is in its file (see :func:`retrieval.corpus.read_piece`)."""

    first_number: int  # the line number of its text's first line
    proper_number: int  # the line number where the piece proper starts (after a blank line)
    more: bool  # the file goes on after the piece
    known: frozenset[str] = frozenset()  # the whole file's :func:`known_areas`
    at_cut: bool = False  # its text starts where the previous piece proper starts (a paper starts)
    ok: bool = False  # set by the parse: the split holds (see :func:`segment`)


def _header_layouts(f: _Lines, i: int, n: int, more: bool, bound: list[int]) -> Iterator[_Layout]:
    """The ways a paper can start at line ``i``: (cost of its header, title lines, area line,
    authors lines, the abstract's first line). Title and area are optional; the authors may wrap
    over lines of the same paragraph that end with a comma. A way that costs ``bound[0]`` or more
    (what the best reading from ``i`` found so far costs, less what every way costs more) is not
    looked at further: it cannot be better. On a tie the first way wins: the seed format's area
    and authors first."""
    gap, lines, prose = f.gap, f.lines, f.prose

    def finish(cost: int, title: tuple[int, int] | None, area: int | None, a: int) -> _Layout | None:
        if cost >= bound[0]:
            return None
        first = a
        while (a + 2 < n or more) and a + 1 < n and not gap[a + 1] and lines[a][-1:] in ",，" and (
            not prose[a + 1]
        ):
            a += 1
        if a + 1 >= n:
            return None
        cost += f.authors_cost(first)
        for k in range(first + 1, a + 1):
            cost += min(f.authors_cost(k), _PROSE_IN_FIELD)
        if cost >= bound[0]:
            return None
        s = a + 1
        while s + 1 < n and not gap[s] and f.kind[s] == _AFFILIATION:
            s += 1  # affiliation lines after the names: left out
        cost += f.abstract_cost(s)
        return (cost, title, area, (first, a), s) if cost < bound[0] else None

    if i + 1 < n:
        layout = finish(f.area_cost(i), None, i, i + 1)
        if layout is not None:
            yield layout
    layout = finish(0, None, None, i)
    if layout is not None:
        yield layout
    if i + 1 >= n or f.title_cost(i) >= bound[0] and f.area_cost(i) >= bound[0]:
        return
    layout = finish(f.title_cost(i) + f.lone_title_cost(i), (i, i), None, i + 1)
    if layout is not None:
        yield layout
    if i + 2 < n:
        goes_on = lines[i].rsplit(None, 1)[-1].lower() in _TITLE_GOES_ON or lines[i][-1:] in ":-–"
        if f.title_cost(i) < bound[0]:
            area_next = f.area_cost(i + 1) + (_CONTINUED_TITLE if goes_on else 0)
            if i > 0 and (f.sep[i - 1] or f.is_known(i - 1)) and f.lone_title_cost(i) >= _NAME_AS_TITLE:
                # a name under an area line ("Theory · X" + "Niklaus Wirth") is the authors of a
                # block whose abstract is missing, not the title of the paper after it
                area_next += _NAME_AFTER_AREA
            if lines[i][-1:] == "." and (f.sep[i + 1] or f.is_known(i + 1)):
                area_next -= _TITLE_FULL_STOP  # above a clear area line: a title, full stop or not
            layout = finish(f.title_cost(i) + area_next, (i, i), i + 1, i + 2)
            if layout is not None:
                yield layout
        if f.area_cost(i) < bound[0]:
            layout = finish(f.area_cost(i) + f.title_cost(i + 1) + _SWAPPED, (i + 1, i + 1), i, i + 2)
            if layout is not None:
                yield layout
        if f.title_cost(i) < bound[0] and not gap[i + 1] and not _ends_sentence(lines[i]) and (
            f.kind[i + 1] == _PLAIN
        ):
            two = f.title_cost(i) + max(f.title_cost(i + 1) - _TITLE, 0) + (0 if goes_on else _TITLE)
            layout = finish(two + _SHORT_TITLE, (i, i + 1), None, i + 2)
            if layout is not None:
                yield layout
            if i + 3 < n:
                layout = finish(two + f.area_cost(i + 2), (i, i + 1), i + 2, i + 3)
                if layout is not None:
                    yield layout


def segment(
    lines: Sequence[str],
    gap: Sequence[bool],
    continuations: bool,
    known: Collection[str] = frozenset(),
    *,
    more: bool = False,
    begin: int = 0,
    at_cut: bool = False,
) -> tuple[list[_Paper | tuple[int, int]], bool]:
    """Papers and skipped runs ``(first, last)`` covering every line from ``begin``, in order.

    ``gap[i]``: a blank line comes before line ``i``. ``continuations``: the file has blank lines
    (without any, each field is one line). ``known``: :func:`known_areas` of the whole file.

    A piece of a file (see :func:`retrieval.corpus.read_piece`): ``more`` says that the file goes on
    after ``lines`` past a blank line, and ``begin`` is where the piece proper starts (the lines
    before it, the end of the previous piece, are read only to check the split). The second value
    says whether the segmentation from ``begin`` is the whole file's: a paper starts at ``begin``,
    no way of reading a paper that starts before ``begin`` reaches it (every segmentation passes
    through ``begin``), and the abstract before it cannot go on into it. Then the previous piece,
    read with ``more``, segments its lines as the whole file does (the costs are integers: the sums
    are exact), provided its own check holds. ``at_cut``: ``lines`` start where a piece proper
    starts (every reading of the file passes there, when that piece's check holds).
    """
    return _segment(_Lines(lines, gap, known), continuations, more=more, begin=begin, at_cut=at_cut)


@dataclass(slots=True)
class _Stops:
    """Where each paragraph ends, where a paper may start inside one, and where an abstract meets
    either (``next_stop[i]``: the first such line after ``i``)."""

    para_end: list[int]
    strong: list[bool]
    next_stop: list[int]


def _stops(f: _Lines, continuations: bool) -> _Stops:
    lines, gap, prose, kind = f.lines, f.gap, f.prose, f.kind
    n = len(lines)
    para_end = [0] * n
    for i in range(n - 1, -1, -1):
        para_end[i] = i if i + 1 == n or gap[i + 1] else para_end[i + 1]
    # where a paper may start: after a blank line (any line, in a file without blank lines), or
    # inside a paragraph at a "Title:" line or at a short "X · Y" line
    strong = [False] * n
    if continuations:
        for i in range(1, n):
            if gap[i]:
                continue
            if kind[i] in (_TITLE_L, _ABSTRACT_L):
                strong[i] = True
                if kind[i] == _ABSTRACT_L:  # an abstract starts: its paper's header is just before
                    for j in range(i - 1, max(i - 5, 0), -1):
                        if kind[j] == _PLAIN and not prose[j]:
                            strong[j] = not gap[j] or strong[j]
                        if gap[j]:
                            break
            elif kind[i] == _PLAIN and f.sep[i] and not prose[i] and _area_shaped(lines[i]):
                strong[i] = True
            elif _lost_title(f, i) or _lost_authors(f, i):
                strong[i] = True
    next_stop = [0] * (n + 1)
    next_stop[n] = n
    for i in range(n - 1, -1, -1):
        nxt = i + 1
        next_stop[i] = nxt if nxt >= n or gap[nxt] or strong[nxt] else next_stop[nxt]
    return _Stops(para_end, strong, next_stop)


def _sentence_title(f: _Lines, i: int) -> bool:
    """Line ``i`` reads as a sentence but is a title: a question, or a line above an area line, not
    right under an authors line (there it is an abstract)."""
    if f.title_cost(i) >= _NO or i > 0 and f.authors_cost(i - 1) == 0:
        return False
    return f.lines[i][-1:] == "?" or i + 1 < len(f.lines) and (f.sep[i + 1] or f.is_known(i + 1))


def _lost_authors(f: _Lines, i: int) -> bool:
    """Line ``i``, after a finished sentence, is a list of people's names (two or more, each of two
    to four capitalised words) before more text: a paper's authors pasted without the blank line
    before them."""
    line = f.lines[i]
    if f.kind[i] != _PLAIN or f.prose[i] or i + 1 >= len(f.lines):
        return False
    if "," not in line and " and " not in line:
        return False
    if not _ends_sentence(f.lines[i - 1]) or f.authors_cost(i) != 0:
        return False
    names = f.names[i][0]
    return len(names) >= 2 and all(2 <= len(n.split()) <= 4 and _name_shape(n) == 0 for n in names)


def _area_shaped(line: str) -> bool:
    """An ``X · Y`` line shaped like an area (short capitalised levels), not a sentence with an
    arrow in it ("accuracy 90.6% → 90.9% with")."""
    if len(line) > 150 or _ends_sentence(line) or "%" in line or ":" in line:
        return False
    levels = _SPACED_SEPARATOR.split(line)
    return len(line.split()) <= 16 and all(
        level and len(level.split()) <= 10 and (level[0].isupper() or level[0].isdigit() or _is_cjk(level[0]))
        for level in (x.strip() for x in levels)
    )


def _lost_title(f: _Lines, i: int) -> bool:
    """Line ``i`` ends a paragraph after a finished sentence, reads as a title, and an area or
    authors line follows after a blank line: a title pasted without the blank line before it."""
    lines, n = f.lines, len(f.lines)
    if i + 1 >= n or not f.gap[i + 1] or f.kind[i] != _PLAIN or f.prose[i]:
        return False
    if not _ends_sentence(lines[i - 1]):
        return False
    if _ends_sentence(lines[i]) or "://" in lines[i] or f.title_cost(i) + f.lone_title_cost(i) > 10:
        return False
    return f.sep[i + 1] or f.is_known(i + 1) or f.authors_cost(i + 1) == 0


def _positional(f: _Lines, stops: _Stops, begin: int) -> list[_Paper] | None:
    """The papers from line ``begin`` on when every one is an area line, an authors line and an
    abstract paragraph, each after a blank line, all as they should be (the seed format), else
    None. Such a reading costs nothing, and the segmentation takes it (it tries the area and the
    authors first, and the abstract to its paragraph's end first): reading it so is only faster."""
    gap, kind = f.gap, f.kind
    n = len(f.lines)
    papers: list[_Paper] = []
    i = begin
    while i < n:
        s = i + 2
        if s >= n or not (gap[i] and gap[i + 1] and gap[s]) or kind[i] not in (_PLAIN, _AREA_L) or f.prose[i]:
            return None
        if f.area_cost(i) or f.authors_cost(i + 1) or f.abstract_cost(s):
            return None
        e = stops.para_end[s]
        if stops.next_stop[s] != e + 1:
            return None
        papers.append(_Paper(i, None, i, (i + 1, i + 1), (s, e)))
        i = e + 1
    return papers


def _segment(
    f: _Lines, continuations: bool, *, more: bool = False, begin: int = 0, at_cut: bool = False
) -> tuple[list[_Paper | tuple[int, int]], bool]:
    """:func:`segment` of lines whose costs ``f`` gives."""
    n = len(f.lines)
    gap, prose, kind = f.gap, f.prose, f.kind
    if not continuations and n > 3:
        # no blank line at all: one line per field (compact papers), or one paper whose abstract
        # wraps over lines (a single paste): the reading that costs less, an abstract paying for
        # the lines it takes in that read as areas (ties: one line per field)
        compact = _choices(f, _stops(f, False), False, more, 0, n)[1]
        if _choices(f, _stops(f, True), True, more, 0, n, suspicious=True)[1] < compact:
            continuations = True
    stops = _stops(f, continuations)
    fast = _positional(f, stops, begin) if continuations else None
    # the piece check: the paragraph before ``begin`` (and three lines a header can take before it)
    first = begin - 1
    while first > 0 and not gap[first]:
        first -= 1
    first = max(0, first - 3)
    if fast is not None:
        if begin == 0:
            return list(fast), True
        # the lines from ``begin`` cost nothing: a reading of the window that would run into them
        # costs at least its own part, so with nothing after ``begin`` the window's choices are
        # the whole file's whenever none of them runs into ``begin``
        choice = _choices(f, stops, continuations, more, first, begin)[0]
        ok = (
            bool(fast)
            and (first > 0 or at_cut)
            and all(_ends_before(choice[i], begin) for i in range(first, begin))
            and _attach_cost(f, begin - 1, begin) >= _NO
        )
        return list(fast), ok
    choice = _choices(f, stops, continuations, more, 0, n)[0]
    ok = True
    if begin > 0:
        # the whole file's reading passes through ``begin`` when no paper chosen from the window
        # runs into it, and the abstract before it cannot go on into it (then no paper from
        # further back can reach it)
        ok = (
            begin < n
            and gap[begin]
            and isinstance(choice[begin], _Paper)
            and (first > 0 or at_cut)
            and all(_ends_before(choice[i], begin) for i in range(first, begin))
            and _attach_cost(f, begin - 1, begin) >= _NO
        )
    out: list[_Paper | tuple[int, int]] = []
    i = begin
    while i < n:
        pick = choice[i]
        if pick is None:
            # a skipped run ends after running text: an abstract closes whatever block it ends
            # (within a paragraph, or plain lines after a blank line: not tables and lists)
            if out and isinstance(out[-1], tuple) and out[-1][1] == i - 1 and not prose[i - 1] and (
                not gap[i] or kind[i] == kind[i - 1] == _PLAIN
            ):
                out[-1] = (out[-1][0], i)
            else:
                out.append((i, i))
            i += 1
        else:
            out.append(pick)
            i = pick.abstract[1] + 1
    return out, ok


def _choices(
    f: _Lines, stops: _Stops, continuations: bool, more: bool, lo: int, hi: int, *, suspicious: bool = False
) -> tuple[list[_Paper | None], int]:
    """The least-cost reading from each line in ``[lo, hi)`` (None: skip the line), the lines from
    ``hi`` on costing nothing, and what the reading from ``lo`` costs. ``suspicious``: an abstract
    pays for each short line it takes in that reads as an area (to weigh a file without blank
    lines as one wrapped paper against one line per field; it changes no segmentation otherwise)."""
    lines, gap, prose, kind = f.lines, f.gap, f.prose, f.kind
    n = len(lines)
    taken = [0] * (n + 1)  # taken[i]: what the lines before i cost an abstract that takes them in
    if suspicious:
        for i in range(n):
            odd = not prose[i] and len(lines[i]) < 60 and not _ends_sentence(lines[i]) and f.area_cost(i) <= 6
            taken[i + 1] = taken[i] + (_AREA_LIKE_IN_ABSTRACT if odd else 0)
    strong, next_stop = stops.strong, stops.next_stop
    best = [0] * (n + 1)
    choice: list[_Paper | None] = [None] * n
    for i in range(hi - 1, lo - 1, -1):
        # (a line inside a paragraph costs less to skip when it reads as text, not as a field)
        cheap = continuations and not gap[i] and (prose[i] or len(lines[i]) >= 60)
        cost = (_SKIP_MORE if cheap else _SKIP) + best[i + 1]
        pick: _Paper | None = None
        can_start = (gap[i] or strong[i] or not continuations) and kind[i] in (
            _PLAIN,
            _TITLE_L,
            _AREA_L,
            _AUTHORS_L,
        ) and (not prose[i] or _sentence_title(f, i))
        if can_start:
            start_cost = _MID_PARAGRAPH if continuations and not gap[i] else 0
            bound = [cost - start_cost]
            for head, title, area, authors, s in _header_layouts(f, i, n, more, bound):
                total = head + start_cost
                if not continuations:  # one line per field
                    if total + best[s + 1] < cost:
                        cost, pick = total + best[s + 1], _Paper(i, title, area, authors, (s, s))
                        bound[0] = cost - start_cost
                    continue
                e = next_stop[s] - 1
                while True:
                    if total + taken[e + 1] - taken[s + 1] + best[e + 1] < cost:
                        cost = total + taken[e + 1] - taken[s + 1] + best[e + 1]
                        bound[0] = cost - start_cost
                        pick = _Paper(i, title, area, authors, (s, e))
                    nxt = e + 1
                    if nxt >= n:
                        break
                    if gap[nxt]:
                        extra = _attach_cost(f, e, nxt)
                    elif kind[nxt] in (_TITLE_L, _ABSTRACT_L):  # a strong start
                        extra = _TITLE_IN_ABSTRACT
                    elif strong[nxt]:
                        extra = _AREA_IN_ABSTRACT
                    else:  # pragma: no cover - next_stop stops only at a gap or a strong start
                        extra = 0
                    if extra >= _NO:
                        break
                    total += extra
                    if total >= cost:
                        break
                    e = next_stop[nxt] - 1
        best[i] = cost
        choice[i] = pick
    return choice, best[lo]


def _ends_before(pick: _Paper | None, line: int) -> bool:
    return pick is None or pick.abstract[1] < line


def _attach_cost(f: _Lines, last: int, nxt: int) -> int:
    """What it costs the abstract ending at line ``last`` to go on with the paragraph starting at
    ``nxt`` (after a blank line)."""
    line, kind = f.lines[nxt], f.kind[nxt]
    if kind in (_TABLE, _BULLET_K) or f.lines[last][-1:] in ":：":
        return 0
    if kind != _PLAIN or f.sep[nxt]:
        return _NO
    if f.kind[last] in (_TABLE, _BULLET_K):
        # the text after a table or a list: a sentence (a title line is dearer to take in)
        return _ATTACH_AFTER_TABLE if not (_ends_sentence(line) or f.prose[nxt]) else _ATTACH_CONTINUATION
    if not _ends_sentence(f.lines[last]):
        # the sentence goes on: "... an accuracy of" + "93.5% on ImageNet", "and we ...", ", while"
        return _ATTACH_CONTINUATION if _CONTINUES.match(line) else _NO
    if line[:1].islower() and line.count(" ") >= 3:
        return _ATTACH_LOWERCASE  # a new sentence starting in lowercase ("iPhone", "k-means")
    return _NO


# --------------------------------------------------------------------------------------------------
# Fields
# --------------------------------------------------------------------------------------------------


def _list_item(line: str, before: str) -> bool:
    """A bulleted list item (it keeps its own line in the abstract): "• " or "* ", or "- " after a
    line ending with ":" or a sentence or after another item ("- " after a line that goes on is a
    dash in the sentence: "... classifiers" + "- on the tail ...")."""
    if line[:2] in ("• ", "* "):
        return True
    if line[:2] != "- ":
        return False
    last = before.rsplit("\n", 1)[-1]
    return before[-1:] in ":：" or _ends_sentence(before) or last[:2] in ("- ", "• ", "* ")


def join_lines(parts: Sequence[str]) -> str:
    """Lines of one field joined: a space between words, none between CJK characters or before a
    line that starts with a comma or a full stop, a newline
    before and after table rows and list items, and a word broken at a line end joined back (or its
    real hyphen kept: :func:`retrieval.hyphenation.join_break`, with the field's own words as
    evidence)."""
    if len(parts) == 1:
        return parts[0]
    own = None
    out = parts[0]
    for k in range(1, len(parts)):
        part = parts[k]
        if _is_table(part) or _is_table(parts[k - 1]) or _list_item(part, out):
            out += "\n" + part
        elif (out[-2:] == "--" or out[-1:] in "—–") and out.rstrip("-—–")[-1:] not in ("", " "):
            out += part  # "search---" + "which": a dash glued to its words on both sides
        elif out[-1:] == "-" and out[-2:-1] not in ("", " ") and out.rstrip("-")[-1:] not in ("", " "):
            if own is None:
                own = _own_words(parts)
            out = join_break(out, part, own)
        elif _is_cjk(out[-1:] or " ") and _is_cjk(part[:1] or " ") or part[:1] in ",;:.!?":
            out += part  # no space between CJK characters, nor before a comma that starts a line
        else:
            out += " " + part
    return out


def _own_words(parts: Sequence[str]):  # noqa: ANN202 (a Counter)
    """The words of a field's lines, less those a line break cut (the evidence for joining them)."""
    tokens: list[str] = []
    for k, part in enumerate(parts):
        words = part.split()
        if k > 0 and parts[k - 1][-1:] == "-":
            words = words[1:]
        if part[-1:] == "-":
            words = words[:-1]
        tokens += words
    return own_words(tokens)


def _field(lines: Sequence[str], span: tuple[int, int]) -> str:
    first, last = span
    return lines[first] if first == last else join_lines(lines[first : last + 1])


def _skipped_reason(
    f: _Lines, numbers: Sequence[int], first: int, last: int, after_abstract: bool, more: bool = False
) -> tuple[int, str]:
    """Where and why a run of lines could not be read as a paper: ``(line number, "field: why")``."""
    lines = f.lines
    run = lines[first : last + 1]
    count = len(run)
    expected = "expected an optional title line, an optional area line, the authors line, then the abstract"
    if f.kind[first] in (_TABLE, _BULLET_K):
        what = "a table" if f.kind[first] == _TABLE else "a list"
        return numbers[first], f"block: {what} on its own, {preview(run[0])}, not after an abstract"
    if last == len(lines) - 1 and not more and count <= 3 and not any(f.prose[first : last + 1]):
        field = "authors" if count == 1 else "abstract"
        ends = f"the file ends after {preview(run[-1])} (an incomplete block)"
        return numbers[first], f"{field}: missing: {ends}"
    if count >= 2 and not any(f.gap[first + 1 : last + 1]):  # one paragraph
        hint = "; if it goes on from the abstract above, remove the blank line before it"
        hint = hint if after_abstract else ""
        what = f"a paragraph of {count} lines from {preview(run[0])}"
        return numbers[first], f"block: {what} with no authors line before it{hint}"
    if count == 1:
        if f.prose[first]:
            hint = (
                "; if it goes on from the abstract above, remove the blank line before it"
                if after_abstract
                else f" ({expected})"
            )
            return numbers[first], f"block: an abstract on its own, {preview(run[0])}{hint}"
        return numbers[first], f"block: a line on its own, {preview(run[0])} ({expected})"
    if count == 2:
        one, two = run
        p1, p2 = f.prose[first], f.prose[first + 1]
        if p2 and not p1:
            what = "the area " if f.sep[first] or f.is_known(first) else ""
            why = f"the line after {what}{preview(one)} is the abstract"
            return numbers[first + 1], f"authors: missing: {why}"
        if not p1 and not p2:
            return numbers[first], (
                f"abstract: missing: the 2 lines {preview(one)} and {preview(two)} are not followed by "
                f"an abstract ({expected})"
            )
    for offset, line in enumerate(run[:3]):
        if f.prose[first + offset] and offset < count - 1:
            return numbers[first + offset], (
                f"authors: found running text {preview(line)} where the authors line belongs; "
                f"{plural(count, 'line')} skipped ({expected})"
            )
    lines_from = f"{plural(count, 'line')} from {preview(run[0])}"
    return numbers[first], f"block: {lines_from} could not be read ({expected})"


def _strip_label(pattern: re.Pattern[str], text: str) -> str:
    return pattern.sub("", text, count=1) or text


@dataclass(slots=True)
class TextLines:
    """The lines a text's fields are read from (see :func:`text_lines`)."""

    lines: list[str]
    numbers: list[int]  # each line's number in the file
    gap: list[bool]  # a blank line comes before it
    arxiv: list[tuple[int, str]]  # an arXiv identifier line's id, with the index of the next line
    headed: set[int]  # lines right after an "Abstract" heading: an abstract starts there


def text_lines(text: str, headers: Sequence[str] = (HEADER,), first_number: int = 1) -> TextLines:
    """The lines a text's fields are read from. Blank lines, header lines and PDF debris (an
    ``Abstract`` heading, a ``Keywords:`` line) are left out; an arXiv identifier line is left out
    too, and its id listed with the index of the next line kept."""
    lines: list[str] = []
    numbers: list[int] = []
    gap: list[bool] = []
    arxiv: list[tuple[int, str]] = []
    headed: set[int] = set()
    blank = True
    header_set = {h.strip() for h in headers if h.strip()}
    for number, raw in enumerate(split_lines(text), start=first_number):
        line = clean_line(raw)
        if not line:
            blank = True
            continue
        if line in header_set or line.rstrip(" :：") in header_set:
            blank = True
            continue
        c = line[0]
        if c in "AaKkIi摘关" and len(line) < 200:
            if _ABSTRACT_HEADING.match(line):
                headed.add(len(lines))
                continue  # PDF debris: not a field (but an abstract starts after it)
            if _KEYWORDS.match(line):
                continue  # PDF debris: neither a field nor a paper boundary
            m = _ARXIV_LINE.match(line)
            if m:
                arxiv.append((len(lines), m.group(1)))
                continue
        lines.append(line)
        numbers.append(number)
        gap.append(blank)
        blank = False
    return TextLines(lines, numbers, gap, arxiv, headed)


def parse_text(
    text: str, source: str, headers: Sequence[str] = (HEADER,), piece: PieceLines | None = None
) -> tuple[list[Record], list[SkippedBlock]]:
    """Parse the plain-text format (see the module docstring). For a piece of a file, ``piece``
    says where ``text`` is in it (and gets whether the split holds).

    Returns:
        The papers read, and the runs of lines that could not be read, each a block.
    """
    first = 1 if piece is None else piece.first_number
    read = text_lines(text, headers, first)
    lines, numbers, gap, arxiv = read.lines, read.numbers, read.gap, read.arxiv
    known = known_areas(text) if piece is None else piece.known
    f = _Lines(lines, gap, known, read.headed)
    begin = 0
    if piece is None:
        continuations = any(gap[1:])  # a file without any blank line has one line per field
        parts, _ = _segment(f, continuations)
    else:  # a file split at a blank line has blank lines
        begin = bisect.bisect_left(numbers, piece.proper_number)
        parts, piece.ok = _segment(f, True, more=piece.more, begin=begin, at_cut=piece.at_cut)
        # an arXiv line at the very end goes to the paper after it, in the next piece: read whole
        if piece.more and arxiv and arxiv[-1][0] >= len(lines):
            piece.ok = False
    more = piece is not None and piece.more
    records: list[Record] = []
    skipped: list[SkippedBlock] = []
    areas: dict[str, str] = {}  # clean_area of each area line (a file has few distinct ones)
    # an arXiv line belongs to the first paper that ends after it (the lines before a piece proper
    # belong to the previous piece's papers)
    links = iter([x for x in arxiv if x[0] >= begin])
    link = next(links, None)
    previous_end = -2
    for part in parts:
        if isinstance(part, tuple):
            after = previous_end == part[0] - 1
            number, reason = _skipped_reason(f, numbers, *part, after, more)
            skipped.append(SkippedBlock(source, number, reason))
            continue
        url = None
        while link is not None and link[0] <= part.abstract[1]:
            url = url or f"https://arxiv.org/abs/{link[1]}"
            link = next(links, None)
        title = None
        if part.title is not None:
            title = _strip_label(_TITLE_LABEL, _field(lines, part.title)).strip() or None
        area = ""
        if part.area is not None:
            raw_area = _strip_label(_AREA_LABEL, lines[part.area])
            area = areas.get(raw_area) or areas.setdefault(raw_area, clean_area(raw_area))
        a0, a1 = part.authors
        if a0 == a1 and a0 in f.names:
            names, et_al = f.names[a0]
        else:
            names, et_al = parse_authors(_field(lines, part.authors))
        abstract = _field(lines, part.abstract)
        if f.kind[part.abstract[0]] == _ABSTRACT_L:
            abstract = _strip_label(_ABSTRACT_LABEL, abstract)
        where = f"{source}:{numbers[part.start]}"
        records.append(Record(where, None, title, names, et_al, area, abstract, url))
        previous_end = part.abstract[1]
    return records, skipped
