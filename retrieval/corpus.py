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

import codecs
import functools
import hashlib
import json
import logging
import os
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from retrieval.errors import CorpusError
from retrieval.models import AREA_SEPARATOR, Paper, SkippedBlock
from retrieval.text import derive_title, latex_to_display, plural

logger = logging.getLogger(__name__)

__all__ = [
    "Corpus",
    "area_key",
    "clean_area",
    "content_digest",
    "corpus_files",
    "load_corpus",
    "normalize_name",
    "paper_id",
    "parse_authors",
    "short_ids",
]

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
        skipped: Blocks and records that could not be parsed, with the reason.
    """

    papers: tuple[Paper, ...]
    files: tuple[str, ...]
    duplicates: int
    duplicate_details: tuple[str, ...]
    skipped: tuple[SkippedBlock, ...]


# --------------------------------------------------------------------------------------------------
# Normalisation and ids
# --------------------------------------------------------------------------------------------------

_NON_WORD = re.compile(r"[\W_]+")
_AREA_SEP = re.compile(r"\s*(?:·|•|∙|->|→)\s*")
# ASCII whitespace and punctuation, deleted from the id key at C speed (bytes.translate)
_ASCII_NOISE = bytes(c for c in range(128) if not chr(c).isalnum())
# common non-ASCII punctuation that NFKC leaves alone (curly quotes, dashes)
_UNICODE_NOISE = ("\u2018", "\u2019", "\u201c", "\u201d", "\u2010", "\u2013", "\u2014", "\u2212", "\u00b7")


def _id_key(text: str) -> bytes:
    """Case-, width-, whitespace- and punctuation-insensitive key of a text (bytes).

    Whitespace and punctuation are deleted outright (not collapsed): "model-based" and "model based"
    give the same key, which is what an id that survives re-wrapping and re-typing needs.
    """
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


def _encode(digest: bytes, length: int) -> str:
    """The first ``length`` base32 characters (5 bits each) of ``digest``."""
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
    groups: dict[str, list[bytes]] = {}
    for d in set(digests):
        groups.setdefault(_encode(d, ID_LENGTH), []).append(d)
    assigned: dict[bytes, str] = {}
    # every 8-character winner first, so a longer id can never be claimed by another group's winner
    for prefix in sorted(groups):
        members = sorted(groups[prefix])
        if prefix not in taken:
            assigned[members[0]] = prefix
            taken.add(prefix)
    for prefix in sorted(groups):
        for d in sorted(groups[prefix]):
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


def parse_authors(line: str) -> tuple[tuple[str, ...], bool]:
    """Split an authors line into names.

    Args:
        line: ``"A. Smith, B. Jones 等"`` (also ``等`` glued to the last name, ``et al.``, ``and``).

    Returns:
        ``(names, et_al)``: stripped non-empty names in order, and whether the list was truncated.
    """
    et_al = False
    tail = line[-16:]
    # the marker can only be at the end; test for its characters before running the regex
    if "等" in tail or "al" in tail or "AL" in tail or "…" in tail or "..." in tail or "others" in tail:
        m = _ET_AL.search(line, max(0, len(line) - 40))
        if m:
            et_al = True
            line = line[: m.start()]
    # the common case, a plain comma list, without the regex (this runs once per paper)
    if ";" in line or "，" in line or "、" in line or "；" in line or "&" in line or " and " in line:
        parts = _AUTHOR_SPLIT.split(line)
    else:
        parts = line.split(",")
    if "  " in line or "\t" in line or "\u00a0" in line:
        parts = [" ".join(n.split()) for n in parts]
    else:
        parts = [n.strip() for n in parts]
    return tuple(n for n in parts if n), et_al


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
# Line shapes (plain-text format)
# --------------------------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"\b(?!etc\.)[a-z]{2,}[.!?:;](?:\s|$)|[!?;](?:\s|$)")
# words that do not occur in author names, but do in areas and abstracts
_NON_NAME_WORDS = frozenset(
    "the we our is are was were be this that these those of for which has have not its via using "
    "learning model models network networks data method methods theory aspects applications "
    "optimization".split()
)
_AREA_SMALL_WORDS = frozenset("and of for the in on to with etc & / -".split())


def _urlish(line: str) -> bool:
    return "://" in line or "www." in line or "@" in line or "$" in line or "\\" in line


def _sentence_like(line: str) -> bool:
    punctuated = "." in line or "!" in line or "?" in line or ":" in line or ";" in line
    return punctuated and _SENTENCE_END.search(line) is not None


def _area_shape(line: str) -> int:
    """2: clearly an area line (has a ``·`` separator); 1: could be a bare area; 0: is not one."""
    if len(line) > 160 or _urlish(line) or _sentence_like(line):
        return 0
    parts = _AREA_SEP.split(line)
    if len(parts) > 1:
        if len(parts) > 4 or not all(p.strip() for p in parts):
            return 0
        ok = all(len(p) <= 90 and len(p.split()) <= 12 and any(c.isalpha() for c in p) for p in parts)
        return 2 if ok else 0
    words = line.split()
    if not 1 <= len(words) <= 7 or "," in line or any(c.isdigit() for c in line):
        return 0
    if not all(w[:1].isupper() or w.lower() in _AREA_SMALL_WORDS for w in words):
        return 0
    return 1


_NOT_IN_NAMES = re.compile(r"[\d\[\]{}<>=+*:;!?|#%\"]")


def _authors_shape(line: str) -> tuple[tuple[str, ...], bool] | None:
    """The parsed names when the line reads as a list of person names, else None."""
    if len(line) > 6000 or " · " in line:
        return None
    if " the " in line or " of " in line or " we " in line or " is " in line:
        return None  # cheap rejections first: this runs on every abstract line
    low = line.lower()
    if _urlish(line) or _sentence_like(line) or _NOT_IN_NAMES.search(line):
        return None
    parsed = parse_authors(line)
    names = parsed[0]
    if not names or not _NON_NAME_WORDS.isdisjoint(low.replace(",", " ").split()):
        return None
    for name in names:
        if len(name) > 60 or name.count(" ") > 5:
            return None
        if name.endswith(".") and len(name) - name.rfind(" ") > 5:
            return None  # a word ending a sentence, not an initial ("J.") or "Jr."
    return parsed


def _abstract_shape(line: str) -> bool:
    """True for a line long enough to be an abstract (and not an area or author list)."""
    words = line.count(" ") + 1
    if words < 8 and not (words >= 3 and _SENTENCE_END.search(line)):
        return False
    return _area_shape(line) != 2 and _authors_shape(line) is None


# --------------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------------


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


def _decode(data: bytes) -> str:
    """Bytes to text: UTF-16 when a BOM says so, else UTF-8 (BOM dropped, bad bytes replaced)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


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


def _is_header(line: str, first: bool) -> bool:
    if line == HEADER or line.strip(" :：") == HEADER:
        return True
    # another short title line with no Latin letters at the very top (a header in another wording)
    if not first or len(line) > 20 or "," in line or "，" in line or line.isdigit():
        return False
    return not any("a" <= c.lower() <= "z" for c in line)


def _preview(line: str) -> str:
    line = line if len(line) <= 50 else line[:47] + "..."
    return repr(line)


def _parse_text(text: str, source: str) -> tuple[list[_Record], list[SkippedBlock]]:
    """Parse the plain-text format; see the module docstring."""
    items: list[tuple[int, str]] = []
    for number, raw in enumerate(_lines(text), start=1):
        line = _clean_line(raw)
        if line and not _is_header(line, first=not items):
            items.append((number, line))
    records: list[_Record] = []
    skipped: list[SkippedBlock] = []
    garbage: list[tuple[int, str]] = []  # consecutive lines that fit no block, reported as one

    def flush() -> None:
        if garbage:
            n = len(garbage)
            what = f"unrecognised line {_preview(garbage[0][1])}"
            extra = f" and {plural(n - 1, 'more line')}" if n > 1 else ""
            expected = "expected an area line, then authors, then abstract"
            skipped.append(SkippedBlock(source, garbage[0][0], f"{what}{extra} ({expected})"))
            garbage.clear()

    def skip(line_number: int, reason: str) -> None:
        flush()
        skipped.append(SkippedBlock(source, line_number, reason))

    i, n = 0, len(items)
    while i < n:
        number, line = items[i]
        second = items[i + 1][1] if i + 1 < n else None
        third = items[i + 2][1] if i + 2 < n else None
        area_shape = _area_shape(line)
        if area_shape:
            authors = _authors_shape(second) if second is not None else None
            if authors is not None and third is not None and _abstract_shape(third):
                flush()
                names, et_al = authors
                records.append(
                    _Record(f"{source}:{number}", None, None, names, et_al, clean_area(line), third, None)
                )
                i += 3
                continue
            if second is not None and _abstract_shape(second):
                skip(number, "missing authors line (the area line is followed by the abstract)")
                i += 2
                continue
            if authors is not None:
                if third is None or _area_shape(third):
                    skip(number, "missing abstract (the authors line is followed by the next area line)")
                    i += 2
                    continue
                if _authors_shape(third) is None:
                    skip(number, f"abstract too short or malformed: {_preview(third)}")
                    i += 3
                    continue
            if second is None and area_shape == 2:
                skip(number, "incomplete block at the end of the file (area line only)")
                i += 1
                continue
        elif second is not None and _authors_shape(line) is not None and _abstract_shape(second):
            skip(number, "missing area line (the block starts with the authors)")
            i += 2
            continue
        garbage.append((number, line))
        i += 1
    flush()
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
            skipped.append(SkippedBlock(source, number, f"invalid JSON ({reason})"))
            continue
        if not isinstance(obj, dict):
            skipped.append(SkippedBlock(source, number, f"not a JSON object ({type(obj).__name__})"))
            continue
        abstract = _text_field(obj, "abstract", "text")
        raw_id = obj.get("id", obj.get("_id"))
        explicit = None if raw_id is None or isinstance(raw_id, dict | list) else str(raw_id).strip() or None
        if not abstract:
            label = f" (id {explicit})" if explicit else ""
            skipped.append(SkippedBlock(source, number, f"record has no abstract/text{label}"))
            continue
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
        url = _text_field(obj, "url") or None
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


def corpus_files(path: str | os.PathLike[str]) -> list[Path]:
    """The files a corpus path stands for.

    Args:
        path: A corpus file (read whatever its suffix), or a directory whose ``*.txt`` and ``*.jsonl``
            files (not hidden, not in subdirectories) are read in name order.

    Returns:
        The files, sorted by name for a directory.

    Raises:
        CorpusError: The path does not exist, cannot be listed, or the directory holds no corpus file.
    """
    p = Path(path).expanduser()
    try:
        if not p.exists():
            raise CorpusError(f"corpus path does not exist: {p}")
        if p.is_file():
            return [p]
        if not p.is_dir():
            raise CorpusError(f"corpus path is neither a file nor a directory: {p}")
        files = sorted(
            (
                f
                for f in p.iterdir()
                if not f.name.startswith(".")
                and f.suffix.lower() in TEXT_SUFFIXES | JSONL_SUFFIXES
                and f.is_file()
            ),
            key=lambda f: f.name,
        )
    except (OSError, ValueError) as exc:  # permissions, a NUL byte in the path ...
        raise CorpusError(f"cannot read corpus path {p}: {exc}") from exc
    if not files:
        raise CorpusError(f"no .txt or .jsonl corpus file in {p}")
    return files


def _display_path(p: Path) -> str:
    """The path relative to the working directory when it is inside it, else as given."""
    if p.is_absolute():
        try:
            return p.relative_to(Path.cwd()).as_posix()
        except (ValueError, OSError):
            pass
    return str(p)


def _read_file(path: Path, display: str) -> tuple[list[_Record], list[SkippedBlock]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return [], [SkippedBlock(display, 1, f"cannot read the file: {exc.strerror or exc}")]
    if b"\x00" in data[:8192] and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return [], [SkippedBlock(display, 1, "binary file (contains NUL bytes), not a corpus file")]
    text = _decode(data)
    if not text.strip():
        return [], [SkippedBlock(display, 1, "empty file")]
    if _is_jsonl(path, text):
        records, skipped = _parse_jsonl(text, display)
    else:
        records, skipped = _parse_text(text, display)
    if not records and not skipped:
        skipped.append(SkippedBlock(display, 1, "no paper in the file (only a header?)"))
    return records, skipped


# --------------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------------


def _canonical_areas(records: Sequence[_Record]) -> dict[str, str]:
    """area_key -> the most common display spelling (ties: first seen)."""
    counts: dict[str, Counter[str]] = {}
    first_seen: dict[str, int] = {}
    for index, record in enumerate(records):
        if not record.area:
            continue
        key = area_key(record.area)
        counts.setdefault(key, Counter())[record.area] += 1
        first_seen.setdefault(record.area, index)
    return {
        key: min(spellings, key=lambda s: (-spellings[s], first_seen[s])) for key, spellings in counts.items()
    }


def load_corpus(path: str | os.PathLike[str]) -> Corpus:
    """Parse every file of a corpus into distinct papers.

    Args:
        path: A corpus file or directory (see :func:`corpus_files`).

    Returns:
        The papers with what was skipped and de-duplicated. Unparseable content never raises; it is
        reported in :attr:`Corpus.skipped`.

    Raises:
        CorpusError: The path is missing or holds no corpus file, or no paper at all could be loaded
            (the message lists the first reasons).
    """
    started = time.perf_counter()
    files = corpus_files(path)
    displays = [_display_path(f) for f in files]
    records: list[_Record] = []
    skipped: list[SkippedBlock] = []
    for file, display in zip(files, displays, strict=True):
        try:
            file_records, file_skipped = _read_file(file, display)
        except Exception as exc:  # a parser bug must not take the whole corpus down; report it
            logger.exception("unexpected error while parsing %s", display)
            file_records, file_skipped = [], [SkippedBlock(display, 1, f"could not be parsed ({exc!r})")]
        records.extend(file_records)
        skipped.extend(file_skipped)

    kept: list[_Record] = []
    by_digest: dict[bytes, _Record] = {}
    by_explicit: dict[str, _Record] = {}
    dropped: list[tuple[_Record, _Record, bool]] = []  # (duplicate, first, same content)
    for record in records:
        record.digest = content_digest(record.authors, record.abstract)
        first = by_digest.get(record.digest)
        if first is not None:
            dropped.append((record, first, True))
            continue
        if record.explicit_id is not None:
            first = by_explicit.get(record.explicit_id)
            if first is not None:
                dropped.append((record, first, False))
                continue
            by_explicit[record.explicit_id] = record
        by_digest[record.digest] = record
        kept.append(record)

    if not kept:
        shown = "; ".join(str(s) for s in skipped[:5])
        more = f" (and {len(skipped) - 5} more)" if len(skipped) > 5 else ""
        reason = f": {shown}{more}" if skipped else ""
        raise CorpusError(f"no paper could be loaded from {path}{reason}")

    content = [r for r in kept if r.explicit_id is None]
    digests = [r.digest for r in content]
    ids = dict(zip(digests, short_ids(digests, reserved=by_explicit), strict=True))

    def id_of(record: _Record) -> str:
        return record.explicit_id if record.explicit_id is not None else ids[record.digest]

    areas = _canonical_areas(kept)
    papers = []
    for record in kept:
        if record.title:
            title = " ".join(latex_to_display(record.title).split()) or derive_title(record.abstract)
        else:
            title = derive_title(record.abstract)
        area = areas.get(area_key(record.area), record.area) if record.area else ""
        papers.append(
            Paper(
                id=id_of(record),
                title=title,
                authors=record.authors,
                et_al=record.et_al,
                area=area,
                abstract=record.abstract,
                url=record.url,
                source=record.source,
            )
        )
    details = tuple(
        f"{dup.source}: {'duplicate of' if same else 'duplicate id'} {id_of(first)} "
        f"(first seen {first.source})"
        for dup, first, same in dropped
    )
    logger.info(
        "loaded %d papers from %d file(s) in %.2fs (%d duplicates, %d skipped)",
        len(papers),
        len(files),
        time.perf_counter() - started,
        len(dropped),
        len(skipped),
    )
    return Corpus(
        papers=tuple(papers),
        files=tuple(displays),
        duplicates=len(dropped),
        duplicate_details=details,
        skipped=tuple(skipped),
    )
