"""Read a corpus of paper abstracts: the plain-text seed format and JSON Lines.

Plain text (``*.txt``)
    An optional ``论文检索`` header line, then per paper three non-empty lines: the area
    (``Area · Subarea`` or ``Area``), the authors (comma-separated, a trailing ``等`` meaning "et al.")
    and the abstract. Blank lines between blocks and between the lines of a block are ignored. Lines
    are recognised by their shape, so one malformed block is skipped (reported as a
    :class:`~retrieval.models.SkippedBlock`) without shifting the blocks after it.

JSON Lines (``*.jsonl``)
    One object per line with ``id``/``_id``, ``title``, ``abstract``/``text``, ``authors`` (list or
    comma string), ``area`` and ``url``; only the abstract is required.

Paper ids
    Records that carry an id keep it verbatim. Others get :func:`paper_id`: 8 characters of lowercase
    Crockford base32 of a SHA-256 over the normalised authors and abstract, so whitespace edits, CRLF,
    renamed or re-ordered files do not change it. If two *different* papers share those 8 characters,
    the one with the smaller full hash keeps them and the other gets 12 characters (16, 20, ... in the
    astronomically unlikely case that is taken too); see :func:`short_ids`.

Duplicates
    A paper whose content id was already seen (same authors and abstract, in any file), or a record
    repeating an explicit id, is dropped; the first one is kept and the drop is reported.

Areas
    Compared with :func:`area_key` (case, accents, punctuation and "&"/"and" ignored), so spellings
    that differ only by an Oxford comma are one area; every paper gets the most common spelling
    (ties: the first seen), with the levels joined by exactly ``" · "``.
"""

from __future__ import annotations

import bisect
import codecs
import functools
import hashlib
import itertools
import json
import logging
import os
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from retrieval.english import plural
from retrieval.errors import CorpusError
from retrieval.markup import strip_markup
from retrieval.models import AREA_SEPARATOR, Paper, SkippedBlock
from retrieval.titles import derive_title

logger = logging.getLogger(__name__)

__all__ = [
    "PARSER_VERSION",
    "Corpus",
    "area_key",
    "clean_area",
    "content_digest",
    "corpus_files",
    "load_corpus",
    "long_id_key",
    "normalize_name",
    "normalize_url",
    "paper_id",
    "parse_authors",
    "short_ids",
]

#: Bump whenever what the loader produces from the same files can change (fields, ids, areas,
#: skipped blocks): it is part of the index cache key, with the tokenizer and title-rules versions.
PARSER_VERSION = "parser-2026.1-positional"
HEADER = "论文检索"
TEXT_SUFFIXES = frozenset({".txt"})
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lowercase: no i, l, o, u
ID_LENGTH = 8
LONG_ID_LENGTH = 12


@dataclass(frozen=True)
class Corpus:
    """Everything :func:`load_corpus` read.

    Attributes:
        papers: Distinct papers in file order (files sorted by name), then line order.
        files: The files read, as display paths (relative to the working directory when inside it).
        duplicates: Number of blocks/records dropped because the paper or its id was already loaded.
        duplicate_details: One line per duplicate: ``"file:line: duplicate of <id> (first seen
            file:line)"``, or ``"file:line: duplicate id <id> (first seen file:line)"`` when only the
            explicit id repeats.
        skipped: Blocks and records that could not be parsed (or fields that were dropped), each
            ``file:line: field: why``.
        cp1252_files: Files that were not valid UTF-8 and were read as Windows-1252.
        ignored_files: Files of a corpus folder not read because of their extension.
    """

    papers: tuple[Paper, ...]
    files: tuple[str, ...]
    duplicates: int
    duplicate_details: tuple[str, ...]
    skipped: tuple[SkippedBlock, ...]
    cp1252_files: tuple[str, ...] = ()
    ignored_files: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------------
# Normalisation and ids
# --------------------------------------------------------------------------------------------------

_NON_WORD = re.compile(r"[\W_]+")
_AREA_SEP = re.compile(r"\s*(?:·|•|∙|->|→)\s*")
# ASCII whitespace and punctuation, deleted from the id key at C speed (bytes.translate)
_ASCII_NOISE = bytes(c for c in range(128) if not chr(c).isalnum())
# common non-ASCII punctuation that NFKC leaves alone (curly quotes, dashes)
_UNICODE_NOISE = ("\u2018", "\u2019", "\u201c", "\u201d", "\u2010", "\u2013", "\u2014", "\u2212", "\u00b7")


# ASCII letters lowercased (what NFKC and casefold do to an ASCII text), for bytes.translate
_ASCII_FOLD = bytes(range(256)).lower()


def _id_key(text: str) -> bytes:
    """Case-, width-, whitespace- and punctuation-insensitive key of a text (bytes).

    Whitespace and punctuation are deleted outright (not collapsed): "model-based" and "model based"
    give the same key, which is what an id that survives re-wrapping and re-typing needs.
    """
    if text.isascii():  # NFKC leaves ASCII alone and casefolds only A-Z: one C pass (most texts)
        return text.encode("ascii").translate(_ASCII_FOLD, _ASCII_NOISE)
    return _unicode_id_key(text)


def _unicode_id_key(text: str) -> bytes:
    """:func:`_id_key` by its definition (any text)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    for mark in _UNICODE_NOISE:
        if mark in folded:
            folded = folded.replace(mark, "")
    return folded.encode("utf-8", "surrogatepass").translate(None, _ASCII_NOISE)


def content_digest(authors: Sequence[str], abstract: str) -> bytes:
    """SHA-256 of the normalised authors and abstract (the basis of :func:`paper_id`).

    Normalisation: NFKC, casefold, whitespace and punctuation removed, so only the letters and
    digits and their order matter (CRLF, re-wrapping, "models.Recent" vs "models. Recent" and
    typographic quotes do not change the digest).

    Args:
        authors: Author names in source order.
        abstract: The abstract as given.

    Returns:
        The 32-byte digest.
    """
    h = hashlib.sha256(b"\x1f".join(_id_key(a) for a in authors))
    h.update(b"\x1e")
    h.update(_id_key(abstract))
    return h.digest()


#: Every 10-bit value as its two base32 characters.
_PAIRS = [a + b for a in ID_ALPHABET for b in ID_ALPHABET]


def _encode(digest: bytes, length: int) -> str:
    """The first ``length`` base32 characters (5 bits each) of ``digest``."""
    if length == 8 and len(digest) >= 5:  # every paper's id: 4 table look-ups (~3x faster)
        v = int.from_bytes(digest[:5], "big")
        return _PAIRS[v >> 30] + _PAIRS[(v >> 20) & 1023] + _PAIRS[(v >> 10) & 1023] + _PAIRS[v & 1023]
    bits = int.from_bytes(digest, "big") >> (len(digest) * 8 - 5 * length)
    chars = []
    for _ in range(length):
        chars.append(ID_ALPHABET[bits & 31])
        bits >>= 5
    return "".join(reversed(chars))


def paper_id(authors: Sequence[str], abstract: str) -> str:
    """Short, typeable id of a paper derived from its normalised content.

    Args:
        authors: Author names in source order.
        abstract: The abstract as given (whitespace, case and punctuation do not matter).

    Returns:
        8 characters of lowercase Crockford base32 (``0-9`` and ``a-z`` without ``i l o u``).
        :func:`load_corpus` lengthens it to 12 characters for the rare paper whose 8 characters
        collide with another paper's (see :func:`short_ids`).
    """
    return _encode(content_digest(authors, abstract), ID_LENGTH)


def short_ids(digests: Sequence[bytes], reserved: Iterable[str] = ()) -> list[str]:
    """Ids for content digests, resolving 8-character collisions deterministically.

    Among digests sharing their first 8 characters, the smallest digest keeps the 8-character id and
    each other gets 12 characters (or more, in steps of 4, until unique). The result does not depend
    on the order of ``digests``. Equal digests get equal ids.

    Args:
        digests: :func:`content_digest` values.
        reserved: Ids already taken (explicit ids from JSON records); a content id never equals one.

    Returns:
        One id per digest, in the same order.
    """
    taken = set(reserved)
    if digests and set(map(len, digests)) == {32}:  # content digests: the common case at C speed
        ids = _prefix_ids(digests)
        if len(set(ids)) == len(set(digests)) and taken.isdisjoint(ids):  # no collision, nothing taken
            return ids
    return _resolved_ids(digests, taken)


_ID_BYTES = np.frombuffer(ID_ALPHABET.encode("ascii"), dtype=np.uint8)


def _prefix_ids(digests: Sequence[bytes]) -> list[str]:
    """:func:`_encode` (8 characters) of each 32-byte digest, at once."""
    head = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(len(digests), 32)[:, :5].astype(np.uint64)
    bits = (head[:, 0] << 32) | (head[:, 1] << 24) | (head[:, 2] << 16) | (head[:, 3] << 8) | head[:, 4]
    shifts = np.arange(35, -1, -5, dtype=np.uint64)  # 8 characters of 5 bits, the first the highest
    text = _ID_BYTES[(bits[:, None] >> shifts) & np.uint64(31)].tobytes().decode("ascii")
    return [text[k : k + ID_LENGTH] for k in range(0, len(text), ID_LENGTH)]


def _resolved_ids(digests: Sequence[bytes], taken: set[str]) -> list[str]:
    """:func:`short_ids` by its definition (any digests; ``taken``: the reserved ids, updated)."""
    groups: dict[str, list[bytes]] = {}
    for d in set(digests):
        groups.setdefault(_encode(d, ID_LENGTH), []).append(d)
    assigned: dict[bytes, str] = {}
    rest: list[list[bytes]] = []  # groups (in prefix order) with a member still without an id
    # every 8-character winner first, so a longer id can never be claimed by another group's winner
    for prefix in sorted(groups):
        members = groups[prefix]
        if len(members) > 1:
            members.sort()
            rest.append(members)
        if prefix not in taken:
            assigned[members[0]] = prefix
            taken.add(prefix)
        elif len(members) == 1:
            rest.append(members)
    for members in rest:
        for d in members:
            if d in assigned:
                continue
            length = LONG_ID_LENGTH
            while _encode(d, length) in taken and length < 48:
                length += 4
            assigned[d] = _encode(d, length)
            taken.add(assigned[d])
    return [assigned[d] for d in digests]


def normalize_name(s: str) -> str:
    """Accent- and case-insensitive form of an author name, for author filters.

    Args:
        s: A name ("Bálint Mucsányi").

    Returns:
        Casefolded, accents stripped (NFKD), whitespace collapsed: ``"balint mucsanyi"``.
    """
    if s.isascii():  # NFKD leaves ASCII alone (no accents to strip), casefold lowers only A-Z
        return " ".join(s.lower().split())
    return _unicode_normalize_name(s)


def _unicode_normalize_name(s: str) -> str:
    """:func:`normalize_name` by its definition (any text)."""
    decomposed = unicodedata.normalize("NFKD", s)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(stripped.casefold().split())


def clean_area(area: str) -> str:
    """Display form of an area: whitespace collapsed, levels joined by exactly ``" · "``.

    Args:
        area: An area as written in a source (``·``, ``•``, ``->`` or ``→`` between levels).

    Returns:
        ``"Theory · Learning Theory"`` for ``"Theory·Learning Theory"``, ``"Theory  ·  Learning
        Theory"`` or ``"Theory->Learning Theory"``; ``""`` for an empty area.
    """
    parts = [" ".join(p.split()) for p in _AREA_SEP.split(area)]
    return AREA_SEPARATOR.join(p for p in parts if p)


@functools.lru_cache(maxsize=8192)
def area_key(area: str) -> str:
    """Comparison key of an area (or of what a user typed in an ``area:`` filter).

    Case, accents, width, punctuation and ``&`` vs ``and`` are ignored; the levels stay apart, so
    ``"Social Aspects · Accountability, Transparency, and Interpretability"`` and ``"social aspects ·
    accountability transparency and interpretability"`` have the same key.

    Args:
        area: An area or part of one.

    Returns:
        Lowercase words joined by single spaces, levels joined by ``" · "`` (``""`` for no words).
    """
    parts = []
    for part in _AREA_SEP.split(area.replace("&", " and ")):
        words = normalize_name(_NON_WORD.sub(" ", unicodedata.normalize("NFKC", part)))
        if words:
            parts.append(words)
    return AREA_SEPARATOR.join(parts)


# --------------------------------------------------------------------------------------------------
# Authors
# --------------------------------------------------------------------------------------------------

_ET_AL = re.compile(r"(?:[\s,;，、]*(?:等人?|et\.?\s*al\.?|and\s+others|…|\.\.\.))+[\s,;，、]*$", re.I)
_AUTHOR_SPLIT = re.compile(r"\s*(?:[,;，、；]|\s&\s|\s+and\s+)\s*")
# An affiliation in brackets after a name ("Ravi Kumar (IIT Delhi)"): dropped, it is not the name.
_AFFILIATION = re.compile(r"\s*[(（\[【][^()（）\[\]【】]*[)）\]】]")
# Affiliation and footnote marks around a name: digits (Smith1, Jones2,3; a DBLP number such as
# "Wei Zhang 0001"), superscripts, * † ‡ § ¶ # and friends.
_MARKS = "*†‡§¶#♠♣♥♦✉∗⋆⁰¹²³⁴⁵⁶⁷⁸⁹"
_NAME_EDGE = re.compile(rf"^[\s\d{_MARKS}]+|[\s\d{_MARKS},.]*[\d{_MARKS}][\s\d{_MARKS},.]*$")
_EMAIL = re.compile(r"<?[\w.+-]+@[\w-]+(?:\.[\w-]+)+>?")
_LABEL = re.compile(r"^(?:authors?|作者)\s*[:：]\s*", re.I)


_HAS_MARK = re.compile(rf"[\d{_MARKS}]")


def _clean_name(name: str) -> str:
    if _HAS_MARK.search(name) is not None:
        name = _NAME_EDGE.sub("", name)
    if name[:4].lower() == "and ":
        name = name[4:]
    return " ".join(name.split()) if ("  " in name or "\t" in name or "\u00a0" in name) else name.strip()


def parse_authors(line: str) -> tuple[tuple[str, ...], bool]:
    """Split an authors line into names, the way people paste them.

    ``et al.``/``et al``/``等`` at the end set ``et_al``; commas (also full-width ``，`` and ``、``),
    semicolons, `` and `` and `` & `` separate names; affiliation marks (``Alice Smith1``, ``Bob
    Jones2,3``, ``Smith*``, ``Jones†``, superscripts), DBLP numbers (``Wei Zhang 0001``), e-mail
    addresses and bracketed affiliations (``Ravi Kumar (IIT Delhi)``) are dropped from the names.

    Args:
        line: ``"A. Smith, B. Jones 等"``.

    Returns:
        ``(names, et_al)``: stripped non-empty names in order, and whether the list was truncated.
    """
    line, parts, et_al = _author_parts(line)
    if _plain(line):  # then _clean_name is str.strip for every name
        return tuple(filter(None, map(str.strip, parts))), et_al
    names = (_clean_name(n) for n in parts)
    return tuple(n for n in names if n), et_al


def _plain(line: str) -> bool:
    """No name of the line has a mark, an "and " to drop or a run of spaces to collapse."""
    return _HAS_MARK.search(line) is None and "and " not in line.lower() and not (
        "  " in line or "\t" in line or "\u00a0" in line
    )


def _author_parts(line: str) -> tuple[str, list[str], bool]:
    """An authors line without its label, "et al.", affiliations and e-mails; its names before
    :func:`_clean_name`; and whether it ended with "et al."."""
    et_al = False
    if line[:8].lower().startswith(("author", "作者")):
        line = _LABEL.sub("", line)
    tail = line[-16:]
    # the marker can only be at the end; test for its characters before running the regex
    if "等" in tail or "al" in tail or "AL" in tail or "…" in tail or "..." in tail or "others" in tail:
        m = _ET_AL.search(line, max(0, len(line) - 40))
        if m:
            et_al = True
            line = line[: m.start()]
    if "(" in line or "（" in line or "[" in line or "【" in line:
        line = _AFFILIATION.sub("", line)
    if "@" in line:
        line = _EMAIL.sub("", line)
    # the common case, a plain comma list, without the regex (this runs once per paper)
    if ";" in line or "，" in line or "、" in line or "；" in line or "&" in line or " and " in line:
        return line, _AUTHOR_SPLIT.split(line), et_al
    return line, line.split(","), et_al


def _authors_from_list(items: list[object]) -> tuple[tuple[str, ...], bool]:
    names: list[str] = []
    for item in items:
        if isinstance(item, dict):
            item = item.get("name") or " ".join(str(item.get(k, "")) for k in ("first", "last"))
        if item is None:
            continue
        name = " ".join(str(item).split())
        if name:
            names.append(name)
    et_al = False
    if names:
        m = _ET_AL.search(names[-1])
        if m:
            et_al = True
            last = names.pop()[: m.start()].strip(" ,")
            if last:
                names.append(last)
    return tuple(names), et_al


# --------------------------------------------------------------------------------------------------
# Reading the plain-text format by position
# --------------------------------------------------------------------------------------------------
#
# A paper is three fields in order: area line, authors line, abstract (its first line and every
# following line of the same paragraph: an abstract pasted over several lines is one abstract).
# Fields and papers are separated by blank lines; a file without any blank line has one line per
# field. Roles come from position only. Shapes matter only to re-synchronise when a block has the
# wrong number of lines: the file is segmented by dynamic programming into papers and skipped lines
# at the least cost, where the costs below make any well-formed file read positionally (cost 0) and
# only a gross misfit -- prose in the area or authors slot, an area-looking line as an abstract --
# make a different alignment cheaper. Skipped lines are reported as ``file:line: field: why``.

_SKIP_COST = 10  # per skipped line
_PROSE_IN_FIELD = 50  # an abstract-like line as the area or the authors
_LONG_AREA = 30  # an area line over _AREA_MAX characters
_SEPARATOR_IN_AUTHORS = 35  # "X · Y" as the authors line
_SHORT_ABSTRACT = 5  # an abstract that does not read as prose (legal, but suspicious)
_AREA_IN_ABSTRACT = 40  # an abstract (first or continuation line) that is an "X · Y" line
_LIST_AS_ABSTRACT = 40  # an abstract that is a short comma list (an authors line)
_LIST_AS_AREA = 35  # a list of 4+ items without an area separator as the area (an authors line)
_FIELD_IN_ABSTRACT = 8  # a short, unpunctuated continuation after a finished sentence
_AREA_LIKE_IN_ABSTRACT = 15  # a short Title Case continuation ("Social Aspects"): a lost area line
_MID_PARAGRAPH = 2  # a paper starting without a blank line before it
_MAX_ABSTRACT_LINES = 200
_AREA_MAX = 200

_SPACED_SEPARATOR = re.compile(r"\s(?:·|•|∙|->|→)\s")


def _is_cjk(c: str) -> bool:
    """CJK ideographs, kana, Hangul, and CJK and full-width punctuation."""
    return "\u3000" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" or "\uf900" <= c <= "\ufaff" or (
        "\uff00" <= c <= "\uffef"
    )


_CJK_RE = re.compile("[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


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


_SMALL_WORDS = frozenset("and of for the in on to with or a an & / - ·".split())


def _title_case(line: str) -> bool:
    words = line.split()
    return len(words) <= 8 and all(w[:1].isupper() or w[:1].isdigit() or w in _SMALL_WORDS for w in words)


def _ends_sentence(line: str) -> bool:
    return line[-1:] in ".!?。！？"


def _join_lines(parts: Sequence[str]) -> str:
    """Lines of one field joined: a space between words, none between CJK characters, and a word
    broken by a hyphen at the end of a PDF line ("bench-" + "mark") joined back with its hyphen."""
    out = parts[0]
    for part in parts[1:]:
        if out[-1:] == "-" and out[-2:-1].isalpha() and part[:1].islower():
            out += part
        elif _is_cjk(out[-1:] or " ") and _is_cjk(part[:1] or " "):
            out += part
        else:
            out += " " + part
    return out


def _field_text(lines: Sequence[str], span: tuple[int, int]) -> str:
    """The field on ``lines[first..last]`` (``span``), joined (a one-line field as it is)."""
    first, last = span
    return lines[first] if first == last else _join_lines(lines[first : last + 1])


_ABSTRACT_LABEL = re.compile(r"^(?:abstract|摘要)\s*[:：.]\s*", re.I)


@dataclass(slots=True)
class _Paper:
    area: int
    authors: tuple[int, int]  # first and last line of the authors field
    abstract: tuple[int, int]


def _list_like(line: str) -> bool:
    """A short comma list (two commas or more, few words per item): an authors line's shape."""
    commas = line.count(",") + line.count("，") + line.count("、")
    return commas >= 2 and line.count(" ") + 1 <= 4 * (commas + 1)


def _field_cost(line: str) -> float:
    """What a line that is not prose costs as a paper's area."""
    if len(line) > _AREA_MAX:
        return _LONG_AREA
    if _list_like(line) and line.count(",") + line.count("，") >= 3 and not _SPACED_SEPARATOR.search(line):
        return _LIST_AS_AREA
    return 0.0


def _abstract_cost(line: str) -> int:
    """What a line that is not prose costs as an abstract's first line."""
    if _SPACED_SEPARATOR.search(line):
        return _AREA_IN_ABSTRACT
    return _LIST_AS_ABSTRACT if _list_like(line) else _SHORT_ABSTRACT


def _segment(
    lines: Sequence[str], gap: Sequence[bool], continuations: bool, *, more: bool = False, begin: int = 0
) -> tuple[list[_Paper | tuple[int, int]], bool]:
    """Papers and skipped runs ``(first, last)`` covering every line from ``begin``, in order (see
    above).

    A piece of a file (see :func:`read_piece`): ``more`` says that the file goes on after ``lines``
    past a blank line, and ``begin`` is where the piece proper starts (the lines before it, the end
    of the previous piece, are read only to check the split). The second value says whether the
    segmentation from ``begin`` is the whole file's: no paper that could start before ``begin``
    (from the last blank line before it, and one line more) would end at or after it, and a paper
    starts at ``begin``. Then the previous piece, read with ``more``, segments its lines as the whole
    file does too (the costs are integers: the sums are exact), provided its own check holds.
    """
    n = len(lines)
    prose = [_prose(x) for x in lines]
    inf = float("inf")
    best = [inf] * n + [0.0]
    choice: list[tuple[int, int, int] | None] = [None] * n  # (authors end, abstract end, 0) or None
    # What each line costs in each slot of a paper, once per line (the loop below tries every line in
    # every slot): as the area (``head``), as the authors, as the abstract's first line.
    head_cost = [_PROSE_IN_FIELD if p else _field_cost(x) for x, p in zip(lines, prose, strict=True)]
    authors_cost = [
        _PROSE_IN_FIELD if p else _SEPARATOR_IN_AUTHORS if _SPACED_SEPARATOR.search(x) else 0
        for x, p in zip(lines, prose, strict=True)
    ]
    abstract_cost = [0 if p else _abstract_cost(x) for x, p in zip(lines, prose, strict=True)]

    for i in range(n - 1, -1, -1):
        cost = inf
        pick: tuple[int, int, int] | None = None
        if i + 2 < n:
            # the authors field: one line, or several when a wrapped list ends with a comma
            a = i + 1
            # (a piece of a file: ``more``, the next line is past a blank line)
            while (a + 2 < n or more) and a + 1 < n and not gap[a + 1] and lines[a][-1:] in ",，" and (
                not prose[a + 1]
            ):
                a += 1
            s = a + 1
            if s < n:
                head = head_cost[i] + authors_cost[a] + abstract_cost[s]
                e = s
                while True:
                    end_cost = 0.0 if e + 1 == n or gap[e + 1] else _MID_PARAGRAPH
                    total = head + end_cost + best[e + 1]
                    if total < cost:
                        cost, pick = total, (a, e, 0)
                    e += 1
                    if not continuations or e >= n or gap[e] or e - s >= _MAX_ABSTRACT_LINES:
                        break
                    line = lines[e]
                    if _SPACED_SEPARATOR.search(line):
                        head += _AREA_IN_ABSTRACT
                    elif not prose[e] and len(line) < 60 and not _ends_sentence(line):
                        if _title_case(line):
                            head += _AREA_LIKE_IN_ABSTRACT
                        elif _ends_sentence(lines[e - 1]):
                            head += _FIELD_IN_ABSTRACT
                    if head >= cost:
                        break
        if _SKIP_COST + best[i + 1] < cost:  # on a tie the paper wins: position first
            cost, pick = _SKIP_COST + best[i + 1], None
        best[i] = cost
        choice[i] = pick
    ok = True
    if begin > 0:
        last_gap = next((g for g in range(begin - 1, 0, -1) if gap[g]), 0)
        ok = begin < n and gap[begin] and choice[begin] is not None and last_gap > 0 and all(
            choice[i] is None or choice[i][1] < begin for i in range(last_gap - 1, begin)  # type: ignore[index]
        )
    out: list[_Paper | tuple[int, int]] = []
    i = begin
    while i < n:
        pick = choice[i]
        if pick is None:
            # a skipped run ends after running text: an abstract closes whatever block it ends
            if out and isinstance(out[-1], tuple) and out[-1][1] == i - 1 and not prose[i - 1]:
                out[-1] = (out[-1][0], i)
            else:
                out.append((i, i))
            i += 1
        else:
            a, e, _ = pick
            out.append(_Paper(i, (i + 1, a), (a + 1, e)))
            i = e + 1
    return out, ok


def _looks_like_authors(line: str) -> bool:
    return not _prose(line) and ("," in line or "，" in line or "、" in line or " and " in line)


def _skipped_reason(
    lines: Sequence[str], numbers: Sequence[int], first: int, last: int, more: bool = False
) -> tuple[int, str]:
    """Where and why a run of lines could not be read as a paper: ``(line number, "field: why")``
    (``more``: the file goes on after ``lines``)."""
    run = lines[first : last + 1]
    count = len(run)
    expected = "expected an area line, an authors line, then the abstract"
    if last == len(lines) - 1 and not more and count <= 2 and not _prose(run[-1]):
        field = "authors" if count == 1 else "abstract"
        ends = f"the file ends after {_preview(run[-1])} (an incomplete block)"
        return numbers[first], f"{field}: missing: {ends}"
    if count == 1:
        what = "an abstract" if _prose(run[0]) else "a line"
        return numbers[first], f"block: {what} on its own, {_preview(run[0])} ({expected})"
    if count == 2:
        one, two = run
        if _prose(two) and not _prose(one):
            if _SPACED_SEPARATOR.search(one) or not _looks_like_authors(one):
                why = f"the line after the area {_preview(one)} is the abstract"
                return numbers[first + 1], f"authors: missing: {why}"
            return numbers[first], f"area: missing: the block starts with the authors {_preview(one)}"
        if not _prose(one) and not _prose(two):
            return numbers[first], (
                f"abstract: missing: the 2 lines {_preview(one)} and {_preview(two)} are not followed by "
                f"an abstract ({expected})"
            )
    for offset, line in enumerate(run[:2]):
        if _prose(line):
            field = ("area", "authors")[offset]
            return numbers[first + offset], (
                f"{field}: found running text {_preview(line)} where the {field} line belongs; "
                f"{plural(count, 'line')} skipped ({expected})"
            )
    lines_from = f"{plural(count, 'line')} from {_preview(run[0])}"
    return numbers[first], f"block: {lines_from} could not be read ({expected})"


@dataclass(slots=True)
class _Record:
    """A parsed paper before de-duplication, id assignment and area canonicalisation."""

    source: str
    explicit_id: str | None
    title: str | None
    authors: tuple[str, ...]
    et_al: bool
    area: str
    abstract: str
    url: str | None
    digest: bytes = b""


@dataclass(slots=True)
class _PieceLines:
    """Where a piece's text is in its file (see :func:`read_piece`)."""

    first_number: int  # the line number of its text's first line
    proper_number: int  # the line number where the piece proper starts (after a blank line)
    more: bool  # the file goes on after the piece
    ok: bool = False  # set by the parse: the split holds (see :func:`_segment`)


def _lines(text: str) -> list[str]:
    """Split on CRLF, CR or LF only (str.splitlines also splits on form feeds and U+2028)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


_INVISIBLE = "\ufeff\u200b\u200c\u200d\u2060\x00"


def _clean_line(raw: str) -> str:
    line = raw.strip()
    if line and (line[0] in _INVISIBLE or line[-1] in _INVISIBLE):
        line = line.strip(_INVISIBLE).strip()
    return line


def _preview(line: str) -> str:
    line = line if len(line) <= 50 else line[:47] + "..."
    return repr(line)


def _parse_text(
    text: str, source: str, headers: Sequence[str] = (HEADER,), piece: _PieceLines | None = None
) -> tuple[list[_Record], list[SkippedBlock]]:
    """Parse the plain-text format by position; see the comment above :func:`_segment`. For a
    piece of a file, ``piece`` says where ``text`` is in it (and gets whether the split holds)."""
    lines: list[str] = []
    numbers: list[int] = []
    gap: list[bool] = []
    blank = True
    header_set = {h.strip() for h in headers if h.strip()}
    for number, raw in enumerate(_lines(text), start=1 if piece is None else piece.first_number):
        line = _clean_line(raw)
        if not line:
            blank = True
            continue
        if line in header_set or line.rstrip(" :：") in header_set:
            blank = True
            continue
        lines.append(line)
        numbers.append(number)
        gap.append(blank)
        blank = False
    records: list[_Record] = []
    skipped: list[SkippedBlock] = []
    if piece is None:
        continuations = any(gap[1:])  # a file without any blank line has one line per field
        parts, _ = _segment(lines, gap, continuations)
    else:  # a file split at a blank line has blank lines
        begin = bisect.bisect_left(numbers, piece.proper_number)
        parts, piece.ok = _segment(lines, gap, True, more=piece.more, begin=begin)
    more = piece is not None and piece.more
    areas: dict[str, str] = {}  # clean_area of each area line (a file has few distinct ones)
    for part in parts:
        if isinstance(part, tuple):
            number, reason = _skipped_reason(lines, numbers, *part, more)
            skipped.append(SkippedBlock(source, number, reason))
            continue
        names, et_al = parse_authors(_field_text(lines, part.authors))
        abstract = _field_text(lines, part.abstract)
        if abstract[:9].lower().startswith(("abstract", "摘要")):
            abstract = _ABSTRACT_LABEL.sub("", abstract) or abstract
        area = areas.get(lines[part.area])
        if area is None:
            area = areas[lines[part.area]] = clean_area(lines[part.area])
        records.append(
            _Record(f"{source}:{numbers[part.area]}", None, None, names, et_al, area, abstract, None)
        )
    return records, skipped


def _text_field(record: dict[str, object], *keys: str) -> str:
    """The first non-empty string (or list of strings, joined) among ``keys``."""
    for key in keys:
        value = record.get(key)
        if isinstance(value, list):
            value = " ".join(str(v) for v in value if isinstance(v, str | int | float))
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            text = str(value).strip()
            if text:
                return text
    return ""


#: Longest paper id kept as given: Discord's limit for a select option or button value (the paper id
#: travels in those). A longer JSON Lines id is replaced by a short key derived from it.
MAX_ID_LENGTH = 100
#: Longest url kept (Discord rejects an embed whose url is longer).
MAX_URL_LENGTH = 2048
_DOI = re.compile(r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S+)$", re.I)
_ARXIV = re.compile(r"^arxiv:\s*(\d{4}\.\d{4,5}(?:v\d+)?|[a-z-]+(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)$", re.I)
_LABEL_RE = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
_BARE_HOST = re.compile(
    rf"^(?:localhost|{_LABEL_RE}(?:\.{_LABEL_RE})*\.[a-z]{{2,63}})(?::\d{{1,5}})?(?:[/?#]\S*)?$", re.I
)


def normalize_url(value: str) -> str | None:
    """An http(s) link for a url as corpora give it, or None when it cannot be one.

    ``https://…`` and ``http://…`` are kept; ``doi:10.48550/arXiv.2401.00002`` or a bare DOI becomes
    ``https://doi.org/10.48550/arXiv.2401.00002``; ``arxiv:2401.00001`` becomes
    ``https://arxiv.org/abs/2401.00001``; a bare host (``arxiv.org/abs/2401.00001``,
    ``www.example.org``, ``//example.org/x``) gets ``https://``. Anything else (``javascript:``,
    ``ftp:``, a relative path, text with spaces, over :data:`MAX_URL_LENGTH`) is None: Discord rejects
    a message whose embed url is not http(s).
    """
    url = value.strip()
    m = _DOI.match(url) or _ARXIV.match(url)
    if m:
        url = f"https://{'doi.org' if m.re is _DOI else 'arxiv.org/abs'}/{m.group(1)}"
    if not url or any(c.isspace() for c in url) or len(url) > MAX_URL_LENGTH:
        return None
    low = url[:8].lower()
    if low.startswith(("https://", "http://")):
        rest = url.split("://", 1)[1]
        host = re.split(r"[/?#]", rest, maxsplit=1)[0]
        return url if host and _BARE_HOST.match(host.rsplit("@", 1)[-1]) else None
    if url.startswith("//"):
        url = url[2:]
    elif ":" in url.split("/", 1)[0] and not re.match(r"^[^:/]+:\d{1,5}(?:[/?#]|$)", url):
        return None  # another scheme (javascript:, mailto:, ftp:)
    # a bare host needs "www." or a path: "paper.pdf" is a file name, not a site
    bare = _BARE_HOST.match(url) and (url[:4].lower() == "www." or re.search(r"[/?#]", url))
    return f"https://{url}" if bare else None


def long_id_key(explicit_id: str) -> str:
    """The short stable key that stands for a JSON Lines id over :data:`MAX_ID_LENGTH` characters:
    ``x`` + 12 Crockford base32 characters of a SHA-256 of the id (same id, same key)."""
    return "x" + _encode(hashlib.sha256(explicit_id.encode("utf-8", "surrogatepass")).digest(), 12)


def _parse_jsonl(text: str, source: str) -> tuple[list[_Record], list[SkippedBlock]]:
    """Parse JSON Lines: one object per line; see the module docstring for the fields."""
    records: list[_Record] = []
    skipped: list[SkippedBlock] = []
    for number, raw in enumerate(_lines(text), start=1):
        line = _clean_line(raw)
        if not line:
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
            skipped.append(SkippedBlock(source, number, f"record: invalid JSON ({reason})"))
            continue
        if not isinstance(obj, dict):
            kind = type(obj).__name__
            skipped.append(SkippedBlock(source, number, f"record: not a JSON object (a {kind})"))
            continue
        abstract = _text_field(obj, "abstract", "text")
        raw_id = obj.get("id", obj.get("_id"))
        explicit = None if raw_id is None or isinstance(raw_id, dict | list) else str(raw_id).strip() or None
        if not abstract:
            label = f" (id {explicit})" if explicit else ""
            why = f"missing: the record has no abstract or text{label}"
            skipped.append(SkippedBlock(source, number, f"abstract: {why}"))
            continue
        if explicit is not None and len(explicit) > MAX_ID_LENGTH:
            key = long_id_key(explicit)
            skipped.append(
                SkippedBlock(
                    source,
                    number,
                    f"id: {len(explicit)} characters, over the {MAX_ID_LENGTH} a Discord button or menu "
                    f"value holds; the paper loads as id {key}",
                )
            )
            explicit = key
        authors_value = obj.get("authors")
        if isinstance(authors_value, list):
            names, et_al = _authors_from_list(authors_value)
        elif isinstance(authors_value, str):
            names, et_al = parse_authors(authors_value)
        else:
            names, et_al = (), False
        area = obj.get("area")
        if isinstance(area, list):
            area = AREA_SEPARATOR.join(str(a) for a in area if a)
        title = _text_field(obj, "title")
        raw_url = _text_field(obj, "url")
        url = normalize_url(raw_url) if raw_url else None
        if raw_url and url is None:
            skipped.append(
                SkippedBlock(source, number, f"url: dropped {_preview(raw_url)}: not an http(s) link")
            )
        records.append(
            _Record(
                f"{source}:{number}",
                explicit,
                title or None,
                names,
                et_al,
                clean_area(area) if isinstance(area, str) else "",
                abstract,
                url,
            )
        )
    return records, skipped


def _is_jsonl(path: Path, text: str) -> bool:
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return True
    if suffix in TEXT_SUFFIXES:
        return False
    return text.lstrip("\ufeff \t\r\n").startswith("{")  # a file given explicitly: sniff it


# --------------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------------


def _scan(path: str | os.PathLike[str]) -> tuple[list[Path], list[Path]]:
    """``(corpus files, ignored files)`` of a corpus path; see :func:`corpus_files`."""
    p = Path(path).expanduser()
    try:
        if not p.exists():
            raise CorpusError(f"corpus path does not exist: {p}")
        if p.is_file():
            return [p], []
        if not p.is_dir():
            raise CorpusError(f"corpus path is neither a file nor a directory: {p}")
        files: list[Path] = []
        ignored: list[Path] = []
        for f in p.iterdir():
            if f.name.startswith(".") or not f.is_file():
                continue
            (files if f.suffix.lower() in TEXT_SUFFIXES | JSONL_SUFFIXES else ignored).append(f)
    except (OSError, ValueError) as exc:  # permissions, a NUL byte in the path ...
        raise CorpusError(f"cannot read corpus path {p}: {exc}") from exc
    if not files:
        raise CorpusError(f"no .txt or .jsonl corpus file in {p}")
    return sorted(files, key=lambda f: f.name), sorted(ignored, key=lambda f: f.name)


def corpus_files(path: str | os.PathLike[str]) -> list[Path]:
    """The files a corpus path stands for.

    Args:
        path: A corpus file (read whatever its suffix), or a directory whose ``*.txt``, ``*.jsonl``
            and ``*.ndjson`` files (not hidden, not in subdirectories) are read in name order; its
            other files are ignored (and named in the ingest report).

    Returns:
        The files, sorted by name for a directory.

    Raises:
        CorpusError: The path does not exist, cannot be listed, or the directory holds no corpus file.
    """
    return _scan(path)[0]


def _display_path(p: Path) -> str:
    """The path relative to the working directory when it is inside it, else as given."""
    if p.is_absolute():
        try:
            return p.relative_to(Path.cwd()).as_posix()
        except (ValueError, OSError):
            pass
    return str(p)


def _cp1252_fallback(error: UnicodeError) -> tuple[str, int]:
    """The five bytes Windows-1252 leaves undefined decode as their Latin-1 control characters."""
    assert isinstance(error, UnicodeDecodeError)  # noqa: S101 (registered for decoding only)
    return "".join(chr(b) for b in error.object[error.start : error.end]), error.end


codecs.register_error("paperbot-cp1252", _cp1252_fallback)


def _decode(data: bytes, *, start: bool = True) -> tuple[str, int | None]:
    """Bytes to text: UTF-16 when a BOM says so, else UTF-8 (BOM dropped); a file that is not valid
    UTF-8 is read as Windows-1252 (never with U+FFFD replacement characters). ``start=False``: the
    bytes are a piece of a file after its start, at a line start (UTF-8 or Windows-1252; each line
    decodes as in the whole file).

    Returns:
        The text, and for a Windows-1252 file the line number of its first byte that is not UTF-8.
    """
    if start and data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace"), None
    try:
        return data.decode("utf-8-sig" if start else "utf-8"), None
    except UnicodeDecodeError as exc:
        first_bad = data.count(b"\n", 0, exc.start) + 1
    # Line by line, so a UTF-8 file with one pasted Windows-1252 line keeps its other lines intact.
    out: list[str] = []
    for raw in (data.removeprefix(codecs.BOM_UTF8) if start else data).split(b"\n"):
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            out.append(raw.decode("cp1252", errors="paperbot-cp1252"))
    return "\n".join(out), first_bad


@dataclass(slots=True)
class _FileResult:
    records: list[_Record]
    skipped: list[SkippedBlock]
    cp1252: bool = False


def _read_file(path: Path, display: str, headers: Sequence[str] = (HEADER,)) -> _FileResult:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return _FileResult([], [SkippedBlock(display, 1, f"file: cannot read it: {exc.strerror or exc}")])
    if b"\x00" in data[:8192] and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        why = "file: binary (contains NUL bytes), not a corpus file"
        return _FileResult([], [SkippedBlock(display, 1, why)])
    text, bad_line = _decode(data)
    if bad_line is not None:
        # INFO, not WARNING: the ingest report names the file (cp1252_files) wherever a person reads it
        # (paperbot index, the reindex reply); a warning line beside it said the same thing twice.
        logger.info("%s:%d: not valid UTF-8; read as Windows-1252", display, bad_line)
    if not text.strip():
        return _FileResult([], [SkippedBlock(display, 1, "file: empty")], bad_line is not None)
    if _is_jsonl(path, text):
        records, skipped = _parse_jsonl(text, display)
    else:
        records, skipped = _parse_text(text, display, headers)
    if not records and not skipped:
        skipped.append(SkippedBlock(display, 1, "file: no paper in it (only a header?)"))
    return _FileResult(records, skipped, bad_line is not None)


@dataclass(frozen=True, slots=True)
class FilePiece:
    """A byte range of a plain-text file, split at blank lines (see :func:`split_file`): its text is
    read from ``start`` (the end of the previous piece, to check the split), the piece proper from
    ``proper`` (after a blank line) to ``stop``."""

    start: int
    proper: int
    stop: int
    first_number: int  # the line number at ``start``
    proper_number: int  # the line number at ``proper``
    newlines: int  # b"\n" bytes before ``start``
    last: bool


#: bytes of the previous piece a piece reads again (to check the split: a few blocks are enough)
_OVERLAP = 32 << 10
#: bytes read around a split point to find a paper start there
_SPLIT_WINDOW = 64 << 10




def _paper_start_near(data: bytes, at: int, headers: Sequence[str]) -> int | None:
    """The byte offset of a line after ``at`` where a paper likely starts after a blank line: the
    window's own segmentation has a paper there, after a paper, a third of the way in or more (the
    pieces' checks say whether the whole file's segmentation agrees)."""
    begin = data.find(b"\n", at) + 1
    if begin == 0:
        return None
    end = data.find(b"\n", begin + _SPLIT_WINDOW)
    end = len(data) if end == -1 else end
    window = data[begin:end]
    text, _ = _decode(window, start=False)
    raw_starts = [0, *(m.end() for m in re.finditer(b"\n", window))]
    header_set = {h.strip() for h in headers if h.strip()}
    lines: list[str] = []
    gap: list[bool] = []
    where: list[int] = []
    blank = True
    for k, raw in enumerate(text.split("\n")):
        line = _clean_line(raw)
        if not line or line in header_set or line.rstrip(" :：") in header_set:
            blank = True
            continue
        lines.append(line)
        gap.append(blank)
        where.append(raw_starts[k])
        blank = False
    parts, _ = _segment(lines, gap, True, more=True)
    for before, part in itertools.pairwise(parts):
        if isinstance(part, _Paper) and isinstance(before, _Paper) and part.area >= len(lines) // 3 and (
            gap[part.area] and before.abstract[1] == part.area - 1
        ):
            return begin + where[part.area]
    return None


def split_file(path: Path, pieces: int, headers: Sequence[str] = (HEADER,)) -> list[FilePiece] | None:
    """A plain-text corpus file in about ``pieces`` byte ranges split at blank lines where a paper
    starts, or None when it is not to be split (JSON Lines, UTF-16, binary, unreadable, CR-only line
    ends, or no such place).

    Reading the pieces with :func:`read_piece` gives what :func:`read_file` gives for the whole file,
    whenever each piece's check holds (the caller reads the whole file otherwise).
    """
    if pieces < 2 or path.suffix.lower() not in TEXT_SUFFIXES:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\x00" in data[:8192] or data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return None
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        return None  # a lone CR ends a line too: not split
    size = len(data)
    bounds = [0]
    for k in range(1, pieces):
        found = _paper_start_near(data, max(size * k // pieces, bounds[-1] + 1), headers)
        if found is not None and found < size:
            bounds.append(found)
    return _pieces(data, bounds) if len(bounds) > 1 else None


def _pieces(data: bytes, bounds: Sequence[int]) -> list[FilePiece]:
    """The pieces of ``data`` whose proper parts start at ``bounds`` (the first at 0; each other one
    at a line start after a blank line)."""
    out = []
    counted, newlines = 0, 0  # newlines before ``counted`` (one pass over the file in all)
    for k, proper in enumerate(bounds):
        start = proper
        if k > 0:  # a line start about _OVERLAP bytes back, not before the previous piece
            back = proper - _OVERLAP
            start = bounds[k - 1] if back <= bounds[k - 1] else data.index(b"\n", back) + 1
        stop = bounds[k + 1] if k + 1 < len(bounds) else len(data)
        before_start = newlines + data.count(b"\n", counted, start)
        counted, newlines = proper, before_start + data.count(b"\n", start, proper)
        last = k + 1 == len(bounds)
        out.append(FilePiece(start, proper, stop, before_start + 1, newlines + 1, before_start, last))
    return out


def read_piece(
    path: Path, display: str, headers: Sequence[str], piece: FilePiece
) -> tuple[_FileResult, int | None, bool]:
    """One piece's records (with their content digests) and what was skipped; never raises.

    Returns:
        The piece's result; the line number of its first byte that is not UTF-8 (the overlap with
        the previous piece included), or None; and whether the split holds (see :func:`_segment`):
        if not, or if the pieces of a file give neither a record nor a skipped block, the caller
        reads the whole file instead.
    """
    try:
        with open(path, "rb") as fh:
            fh.seek(piece.start)
            data = fh.read(piece.stop - piece.start)
        if len(data) != piece.stop - piece.start:
            return _FileResult([], []), None, False
        text, bad_line = _decode(data, start=piece.start == 0)
        where = _PieceLines(piece.first_number, piece.proper_number, not piece.last)
        records, skipped = _parse_text(text, display, headers, where)
    except Exception:  # whatever it is, reading the whole file reports it
        return _FileResult([], []), None, False
    for record in records:
        record.digest = content_digest(record.authors, record.abstract)
    bad = None if bad_line is None else piece.newlines + bad_line
    return _FileResult(records, skipped, bad is not None), bad, where.ok


# --------------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------------


def canonical_areas(spellings: Sequence[str], counts: Sequence[int]) -> dict[str, str]:
    """area_key -> the most common display spelling (ties: the first seen).

    Args:
        spellings: Every distinct area as papers give it, in order of first appearance.
        counts: How many papers give each.
    """
    groups: dict[str, list[str]] = {}
    count = dict(zip(spellings, counts, strict=True))
    order = {s: i for i, s in enumerate(spellings)}
    for spelling in spellings:
        if spelling:
            groups.setdefault(area_key(spelling), []).append(spelling)
    return {key: min(group, key=lambda s: (-count[s], order[s])) for key, group in groups.items()}


def _canonical_areas(records: Sequence[_Record]) -> dict[str, str]:
    """area_key -> the most common display spelling of ``records`` (ties: first seen)."""
    counts = Counter(r.area for r in records)
    return canonical_areas(list(counts), list(counts.values()))  # a Counter keeps first-seen order


def read_file(path: Path, display: str, headers: Sequence[str] = (HEADER,)) -> _FileResult:
    """One file's records (with their content digests) and what was skipped; never raises."""
    try:
        result = _read_file(path, display, headers)
    except Exception as exc:  # a parser bug must not take the whole corpus down; report it
        logger.exception("unexpected error while parsing %s", display)
        result = _FileResult([], [SkippedBlock(display, 1, f"file: could not be parsed ({exc!r})")])
    for record in result.records:
        record.digest = content_digest(record.authors, record.abstract)
    return result


class Dedup:
    """Which records are kept: the first with a content digest, then the first with an explicit id,
    in corpus order. Works on anything with ``digest``, ``explicit_id`` and ``source``."""

    def __init__(self) -> None:
        self.by_digest: dict[bytes, Any] = {}
        self.by_explicit: dict[str, Any] = {}
        self.dropped: list[tuple[Any, Any, bool]] = []  # (duplicate, first, same content)
        self.content: list[bytes] = []  # digests of the kept records without an explicit id

    def keep(self, record: Any) -> bool:
        first = self.by_digest.get(record.digest)
        if first is not None:
            self.dropped.append((record, first, True))
            return False
        if record.explicit_id is not None:
            first = self.by_explicit.get(record.explicit_id)
            if first is not None:
                self.dropped.append((record, first, False))
                return False
            self.by_explicit[record.explicit_id] = record
        else:
            self.content.append(record.digest)
        self.by_digest[record.digest] = record
        return True

    def ids(self) -> dict[bytes, str]:
        """Content digest -> id, for the kept records without an explicit id."""
        return dict(zip(self.content, short_ids(self.content, reserved=self.by_explicit), strict=True))

    def details(self, id_of: Callable[[Any], str]) -> tuple[str, ...]:
        """One line per dropped duplicate."""
        return tuple(
            f"{dup.source}: {'duplicate of' if same else 'duplicate id'} {id_of(first)} "
            f"(first seen {first.source})"
            for dup, first, same in self.dropped
        )


def own_title(record: _Record) -> str:
    """A record's own title as plain text (LaTeX made readable), or "" when it has none."""
    return " ".join(strip_markup(record.title).split()) if record.title else ""


def load_corpus(path: str | os.PathLike[str], headers: Sequence[str] = (HEADER,)) -> Corpus:
    """Parse every file of a corpus into distinct papers.

    Args:
        path: A corpus file or directory (see :func:`corpus_files`).
        headers: Lines that are a file's header, not a field (default ``论文检索``).

    Returns:
        The papers with what was skipped and de-duplicated. Unparseable content never raises; it is
        reported in :attr:`Corpus.skipped`.

    Raises:
        CorpusError: The path is missing or holds no corpus file, or no paper at all could be loaded
            (the message lists the first reasons).
    """
    started = time.perf_counter()
    files, ignored, displays = scan(path)
    records: list[_Record] = []
    skipped: list[SkippedBlock] = []
    cp1252: list[str] = []
    for file, display in zip(files, displays, strict=True):
        result = read_file(file, display, headers)
        records.extend(result.records)
        skipped.extend(result.skipped)
        if result.cp1252:
            cp1252.append(display)

    dedup = Dedup()
    kept = [record for record in records if dedup.keep(record)]
    if not kept:
        raise no_paper_error(path, skipped)
    ids = dedup.ids()

    def id_of(record: _Record) -> str:
        return record.explicit_id if record.explicit_id is not None else ids[record.digest]

    areas = _canonical_areas(kept)
    papers = []
    for record in kept:
        area = areas.get(area_key(record.area), record.area) if record.area else ""
        own = own_title(record)
        papers.append(
            Paper(
                id=id_of(record),
                title=own or derive_title(record.abstract),
                title_derived=not own,
                authors=record.authors,
                et_al=record.et_al,
                area=area,
                abstract=record.abstract,
                url=record.url,
                source=record.source,
            )
        )
    logger.info(
        "loaded %d papers from %d file(s) in %.2fs (%d duplicates, %d skipped)",
        len(papers),
        len(files),
        time.perf_counter() - started,
        len(dedup.dropped),
        len(skipped),
    )
    return Corpus(
        papers=tuple(papers),
        files=tuple(displays),
        duplicates=len(dedup.dropped),
        duplicate_details=dedup.details(id_of),
        skipped=tuple(skipped),
        cp1252_files=tuple(cp1252),
        ignored_files=tuple(_display_path(f) for f in ignored),
    )


def no_paper_error(path: str | os.PathLike[str], skipped: Sequence[SkippedBlock]) -> CorpusError:
    """The error for a corpus from which no paper could be loaded (the first reasons listed)."""
    shown = "; ".join(str(s) for s in skipped[:5])
    more = f" (and {len(skipped) - 5} more)" if len(skipped) > 5 else ""
    reason = f": {shown}{more}" if skipped else ""
    return CorpusError(f"no paper could be loaded from {path}{reason}")


def display_path(p: Path) -> str:
    """How a corpus file is named in reports: relative to the working directory when inside it."""
    return _display_path(p)


def scan(path: str | os.PathLike[str]) -> tuple[list[Path], list[Path], list[str]]:
    """``(corpus files, ignored files, display paths of the corpus files)``; see :func:`corpus_files`."""
    files, ignored = _scan(path)
    return files, ignored, [_display_path(f) for f in files]
