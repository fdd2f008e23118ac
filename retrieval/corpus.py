"""Read a corpus of paper abstracts: every file format, ids, duplicates, areas and what was skipped.

Plain text (``*.txt``)
    Per paper an optional title line, an optional area line, the authors line and the abstract over
    any number of lines, as people paste them from PDFs (:mod:`retrieval.corpus_text`, and
    ``docs/corpus.md``). One malformed block is skipped (reported as a
    :class:`~retrieval.models.SkippedBlock`) without shifting the blocks after it.

JSON Lines (``*.jsonl``, ``*.ndjson``)
    One object per line with ``id``/``_id``, ``title``, ``abstract``/``text``, ``authors`` (list or
    comma string), ``area`` and ``url``; only the abstract is required.

Reference-manager exports (``*.bib``, ``*.ris``, CSL JSON ``*.json``)
    See :mod:`retrieval.bibliography`.

Not text
    A file that decodes to mostly control characters, replacement characters or mojibake is rejected
    whole with one line naming it, whatever its extension (:func:`text_problem`).

Paper ids
    Records that carry an id keep it verbatim. Others get :func:`paper_id`: 8 characters of lowercase
    Crockford base32 of a SHA-256 over the normalised authors and abstract, so whitespace edits, CRLF,
    renamed or re-ordered files do not change it. If two *different* papers share those 8 characters,
    the one with the smaller full hash keeps them and the other gets 12 characters (16, 20, ... in the
    astronomically unlikely case that is taken too); see :func:`short_ids`.

Duplicates
    Two records with the same abstract (compared as ids compare text: case, whitespace and
    punctuation aside) are one paper, whatever their authors: the record with the fuller author
    list of the same first author is kept (more names; then a list not cut with "et al."; then the
    first), with its own id, and the other is reported as its duplicate. A record repeating an
    explicit id is dropped too. The counts add up: papers + duplicates + blocks skipped = blocks read.

Areas
    Compared with :func:`area_key` (case, accents, punctuation and "&"/"and" ignored), so spellings
    that differ only by an Oxford comma are one area; every paper gets the most common spelling
    (ties: the first seen), with the levels joined by exactly ``" · "``.
"""

from __future__ import annotations

import codecs
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from retrieval import corpus_text
from retrieval.bibliography import BIBLIOGRAPHY_SUFFIXES, parse_bibtex, parse_csl_json, parse_ris, sniff
from retrieval.corpus_fields import (
    Record,
    area_key,
    authors_from_list,
    clean_area,
    clean_line,
    normalize_name,
    normalize_url,
    parse_authors,
    preview,
    split_lines,
)
from retrieval.corpus_text import HEADER, PieceLines, known_areas
from retrieval.errors import CorpusError
from retrieval.markup import strip_markup
from retrieval.models import AREA_SEPARATOR, Paper, SkippedBlock
from retrieval.titles import derive_title

logger = logging.getLogger(__name__)

__all__ = [
    "HEADER",
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
PARSER_VERSION = "parser-2026.2-blocks"
TEXT_SUFFIXES = frozenset({".txt"})
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
#: Every suffix a corpus folder's files are read for.
CORPUS_SUFFIXES = TEXT_SUFFIXES | JSONL_SUFFIXES | frozenset(BIBLIOGRAPHY_SUFFIXES)
ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lowercase: no i, l, o, u
ID_LENGTH = 8
LONG_ID_LENGTH = 12

# what the rest of the package (and its tests) import from here
_Record = Record
_parse_text = corpus_text.parse_text


@dataclass(frozen=True)
class Corpus:
    """Everything :func:`load_corpus` read.

    Attributes:
        papers: Distinct papers in file order (files sorted by name), then line order.
        files: The files read, as display paths (relative to the working directory when inside it);
            a rejected file is not among them.
        duplicates: Number of blocks/records dropped because the paper or its id was already loaded.
        duplicate_details: One line per duplicate: ``"file:line: duplicate of <id> (loaded from
            file:line)"``, or ``"file:line: duplicate id <id> (loaded from file:line)"`` when only the
            explicit id repeats.
        skipped: Blocks and records that could not be read as a paper, each ``file:line: field: why``.
        blocks: Blocks and records read in all: ``len(papers) + duplicates + len(skipped)``.
        notes: Papers loaded with something repaired or left out (a link dropped, an id replaced),
            each ``file:line: field: why``.
        rejected: Files not read at all (unreadable, empty, binary, not text), ``file:1: file: why``.
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
    blocks: int = 0
    notes: tuple[SkippedBlock, ...] = ()
    rejected: tuple[SkippedBlock, ...] = ()


# --------------------------------------------------------------------------------------------------
# Normalisation and ids
# --------------------------------------------------------------------------------------------------

# ASCII whitespace and punctuation, deleted from the id key at C speed (bytes.translate)
_ASCII_NOISE = bytes(c for c in range(128) if not chr(c).isalnum())
# common non-ASCII punctuation that NFKC leaves alone (curly quotes, dashes)
_UNICODE_NOISE = ("\u2018", "\u2019", "\u201c", "\u201d", "\u2010", "\u2013", "\u2014", "\u2212", "\u00b7")


# A bracketed part of a name ("Qiuyi (Richard) Zhang"): shown, but not part of the id, which was
# made before such names kept it (the same paper keeps its id)
_BRACKETS = re.compile(r"\s*[(（\[【][^()（）\[\]【】]*[)）\]】]")
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
    return record_digests(authors, abstract)[0]


def record_digests(authors: Sequence[str], abstract: str) -> tuple[bytes, bytes]:
    """:func:`content_digest` (the id's basis) and the abstract's own digest (what makes two records
    the same paper, see "Duplicates" above), the abstract normalised once for both."""
    text = _id_key(abstract)
    h = hashlib.sha256(b"\x1f".join(_id_key(_BRACKETS.sub("", a) if "(" in a else a) for a in authors))
    h.update(b"\x1e")
    h.update(text)
    return h.digest(), hashlib.sha256(text).digest()


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

def long_id_key(explicit_id: str) -> str:
    """The short stable key that stands for a JSON Lines id over :data:`MAX_ID_LENGTH` characters:
    ``x`` + 12 Crockford base32 characters of a SHA-256 of the id (same id, same key)."""
    return "x" + _encode(hashlib.sha256(explicit_id.encode("utf-8", "surrogatepass")).digest(), 12)


def _parse_jsonl(text: str, source: str) -> tuple[list[Record], list[SkippedBlock]]:
    """Parse JSON Lines: one object per line; see the module docstring for the fields."""
    records: list[Record] = []
    skipped: list[SkippedBlock] = []
    for number, raw in enumerate(split_lines(text), start=1):
        line = clean_line(raw)
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
        notes: list[SkippedBlock] = []
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
            notes.append(
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
            names, et_al = authors_from_list(authors_value)
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
            why = f"url: dropped {preview(raw_url)}: not an http(s) link"
            notes.append(SkippedBlock(source, number, why))
        records.append(
            Record(
                f"{source}:{number}",
                explicit,
                title or None,
                names,
                et_al,
                clean_area(area) if isinstance(area, str) else "",
                abstract,
                url,
                notes=notes,
            )
        )
    return records, skipped


def _format_of(path: Path, text: str) -> str:
    """``"text"``, ``"jsonl"``, ``"bibtex"``, ``"ris"`` or ``"csl"``: by the suffix, else (a file
    given explicitly, whatever its name) by what it starts with."""
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix in TEXT_SUFFIXES:
        return "text"
    if text.lstrip("\ufeff \t\r\n").startswith("{"):
        return "jsonl"  # (a .json file of objects, one a line, too)
    if suffix in BIBLIOGRAPHY_SUFFIXES:
        return BIBLIOGRAPHY_SUFFIXES[suffix]
    return sniff(text) or "text"


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
            (files if f.suffix.lower() in CORPUS_SUFFIXES else ignored).append(f)
    except (OSError, ValueError) as exc:  # permissions, a NUL byte in the path ...
        raise CorpusError(f"cannot read corpus path {p}: {exc}") from exc
    if not files:
        raise CorpusError(f"no corpus file (.txt, .jsonl, .bib, .ris or .json) in {p}")
    return sorted(files, key=lambda f: f.name), sorted(ignored, key=lambda f: f.name)


def corpus_files(path: str | os.PathLike[str]) -> list[Path]:
    """The files a corpus path stands for.

    Args:
        path: A corpus file (read whatever its suffix), or a directory whose ``*.txt``, ``*.jsonl``,
            ``*.ndjson``, ``*.bib``, ``*.ris`` and ``*.json`` files (not hidden, not in
            subdirectories) are read in name order; its other files are ignored (and named in the
            ingest report).

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
    records: list[Record]
    skipped: list[SkippedBlock]
    cp1252: bool = False
    rejected: SkippedBlock | None = None  # the file was not read (its reason); no record, no block


# control characters (tab, line ends and form feed aside), C1 controls, U+FFFD, private use, surrogates
_JUNK = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ufffd\ue000-\uf8ff\ud800-\udfff]")
#: Share of junk characters past which a file is not text (a pasted corpus has next to none).
MAX_JUNK_SHARE = 0.02
#: Share of bytes that are not UTF-8 past which a Windows-1252 reading is mojibake, not a text.
MAX_NOT_UTF8_SHARE = 0.2
_SAMPLE = 1 << 16


def text_problem(data: bytes, text: str) -> str | None:
    """Why a file's bytes (decoded to ``text``) are not a text, or None: mostly control or
    replacement characters, or, for a file that is not UTF-8, mostly bytes no text encoding would
    write (a binary file read as Windows-1252). Judged on its start, middle and end."""
    if not text:
        return None
    samples = [text[:_SAMPLE], text[len(text) // 2 : len(text) // 2 + _SAMPLE], text[-_SAMPLE:]]
    sample = "".join(samples) if len(text) > 3 * _SAMPLE else text
    junk = len(_JUNK.findall(sample))
    if junk > max(MAX_JUNK_SHARE * len(sample), 16):
        share = 100 * junk / len(sample)
        return f"not text ({share:.0f} % control or undecodable characters), not a corpus file"
    head = data[: 3 * _SAMPLE]
    if not head.isascii():
        kept = len(head.decode("utf-8", "ignore").encode("utf-8"))
        if len(head) - kept > MAX_NOT_UTF8_SHARE * len(head) and len(head) - kept > 64:
            share = 100 * (len(head) - kept) / len(head)
            return f"not text ({share:.0f} % of its bytes are not UTF-8: mojibake), not a corpus file"
    return None


def _reject(display: str, why: str, cp1252: bool = False) -> _FileResult:
    return _FileResult([], [], cp1252, SkippedBlock(display, 1, f"file: {why}"))


def _read_file(path: Path, display: str, headers: Sequence[str] = (HEADER,)) -> _FileResult:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return _reject(display, f"cannot read it: {exc.strerror or exc}")
    if b"\x00" in data[:8192] and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return _reject(display, "binary (contains NUL bytes), not a corpus file")
    text, bad_line = _decode(data)
    problem = text_problem(data, text)
    if problem is not None:
        return _reject(display, problem)
    if bad_line is not None:
        # INFO, not WARNING: the ingest report names the file (cp1252_files) wherever a person reads it
        # (paperbot index, the reindex reply); a warning line beside it said the same thing twice.
        logger.info("%s:%d: not valid UTF-8; read as Windows-1252", display, bad_line)
    if not text.strip():
        return _reject(display, "empty", bad_line is not None)
    kind = _format_of(path, text)
    if kind == "jsonl":
        records, skipped = _parse_jsonl(text, display)
    elif kind == "bibtex":
        records, skipped = parse_bibtex(text, display)
    elif kind == "ris":
        records, skipped = parse_ris(text, display)
    elif kind == "csl":
        records, skipped = parse_csl_json(text, display)
    else:
        records, skipped = corpus_text.parse_text(text, display, headers)
    if not records and len(skipped) == 1 and skipped[0].field == "file":
        return _FileResult([], [], bad_line is not None, skipped[0])  # the whole file refused
    if not records and not skipped:
        what = "entry" if kind in ("bibtex", "ris", "csl") else "paper"
        return _reject(display, f"no {what} in it (only a header?)", bad_line is not None)
    return _FileResult(records, skipped, bad_line is not None)


@dataclass(frozen=True, slots=True)
class FilePiece:
    """A byte range of a plain-text file, split at blank lines (see :func:`split_file`): its text is
    read from ``start`` (the end of the previous piece, to check the split), the piece proper from
    ``proper`` (after a blank line) to ``stop``. ``known``: the whole file's
    :func:`~retrieval.corpus_text.known_areas` (every piece reads with the same evidence)."""

    start: int
    proper: int
    stop: int
    first_number: int  # the line number at ``start``
    proper_number: int  # the line number at ``proper``
    newlines: int  # b"\n" bytes before ``start``
    last: bool
    known: frozenset[str] = frozenset()
    at_cut: bool = False  # ``start`` is the previous piece's ``proper``


#: bytes of the previous piece a piece reads again (to check the split: a few blocks are enough)
_OVERLAP = 32 << 10
#: bytes read around a split point to find a paper start there
_SPLIT_WINDOW = 64 << 10


def _paper_start_near(data: bytes, at: int, headers: Sequence[str], known: frozenset[str]) -> int | None:
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
    read = corpus_text.text_lines(text, headers)
    lines, numbers, gap = read.lines, read.numbers, read.gap
    parts, _ = corpus_text.segment(lines, gap, True, known, more=True)
    papers = [p for p in parts if not isinstance(p, tuple)]
    for before, part in itertools.pairwise(parts):
        if isinstance(before, tuple) or isinstance(part, tuple):
            continue
        if part.start >= len(lines) // 3 and gap[part.start] and before.abstract[1] == part.start - 1:
            return begin + raw_starts[numbers[part.start] - 1]
    del papers
    return None


def split_file(path: Path, pieces: int, headers: Sequence[str] = (HEADER,)) -> list[FilePiece] | None:
    """A plain-text corpus file in about ``pieces`` byte ranges split at blank lines where a paper
    starts, or None when it is not to be split (JSON Lines, UTF-16, binary, not text, unreadable,
    CR-only line ends, or no such place).

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
    text, _ = _decode(data)
    if text_problem(data, text) is not None:
        return None
    known = known_areas(text)
    del text
    size = len(data)
    bounds = [0]
    for k in range(1, pieces):
        found = _paper_start_near(data, max(size * k // pieces, bounds[-1] + 1), headers, known)
        if found is not None and found < size:
            bounds.append(found)
    return _pieces(data, bounds, known) if len(bounds) > 1 else None


def _pieces(data: bytes, bounds: Sequence[int], known: frozenset[str] | None = None) -> list[FilePiece]:
    """The pieces of ``data`` whose proper parts start at ``bounds`` (the first at 0; each other one
    at a line start after a blank line); ``known``: the file's known areas (found when not given)."""
    if known is None:
        known = known_areas(_decode(data)[0])
    out = []
    counted, newlines = 0, 0  # newlines before ``counted`` (one pass over the file in all)
    for k, proper in enumerate(bounds):
        start = proper
        at_cut = False
        if k > 0:  # a line start about _OVERLAP bytes back, not before the previous piece
            back = proper - _OVERLAP
            at_cut = back <= bounds[k - 1]
            start = bounds[k - 1] if at_cut else data.index(b"\n", back) + 1
        stop = bounds[k + 1] if k + 1 < len(bounds) else len(data)
        before_start = newlines + data.count(b"\n", counted, start)
        counted, newlines = proper, before_start + data.count(b"\n", start, proper)
        last = k + 1 == len(bounds)
        out.append(FilePiece(start, proper, stop, before_start + 1, newlines + 1, before_start, last, known,
                             at_cut))  # fmt: skip
    return out


def read_piece(
    path: Path, display: str, headers: Sequence[str], piece: FilePiece
) -> tuple[_FileResult, int | None, bool]:
    """One piece's records (with their content digests) and what was skipped; never raises.

    Returns:
        The piece's result; the line number of its first byte that is not UTF-8 (the overlap with
        the previous piece included), or None; and whether the split holds (see
        :func:`retrieval.corpus_text.segment`): if not, or if the pieces of a file give neither a
        record nor a skipped block, the caller reads the whole file instead.
    """
    try:
        with open(path, "rb") as fh:
            fh.seek(piece.start)
            data = fh.read(piece.stop - piece.start)
        if len(data) != piece.stop - piece.start:
            return _FileResult([], []), None, False
        text, bad_line = _decode(data, start=piece.start == 0)
        where = PieceLines(piece.first_number, piece.proper_number, not piece.last, piece.known, piece.at_cut)
        records, skipped = corpus_text.parse_text(text, display, headers, where)
    except Exception:  # whatever it is, reading the whole file reports it
        return _FileResult([], []), None, False
    _digest(records)
    bad = None if bad_line is None else piece.newlines + bad_line
    return _FileResult(records, skipped, bad is not None), bad, where.ok


def _digest(records: Iterable[Record]) -> None:
    for record in records:
        record.digest, record.key = record_digests(record.authors, record.abstract)


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


def _canonical_areas(records: Sequence[Record]) -> dict[str, str]:
    """area_key -> the most common display spelling of ``records`` (ties: first seen)."""
    counts = Counter(r.area for r in records)
    return canonical_areas(list(counts), list(counts.values()))  # a Counter keeps first-seen order


def read_file(path: Path, display: str, headers: Sequence[str] = (HEADER,)) -> _FileResult:
    """One file's records (with their content digests) and what was skipped; never raises."""
    try:
        result = _read_file(path, display, headers)
    except Exception as exc:  # a parser bug must not take the whole corpus down; report it
        logger.exception("unexpected error while parsing %s", display)
        result = _reject(display, f"could not be parsed ({exc!r})")
    _digest(result.records)
    return result


def _fuller(record: Any, than: Any) -> bool:
    """Whether ``record``'s author list is a fuller one of the same paper than ``than``'s: more
    names, or as many and not cut with "et al.", with the same first author (by surname: "Novak et
    al." and "Jan Novak, Petra Svoboda"). A list led by someone else is another paper's, paired with
    this abstract by mistake: it never replaces the list kept."""
    if than.lead and record.lead != than.lead:
        return False
    return (record.names, not record.et_al) > (than.names, not than.et_al)


def author_lead(authors: Sequence[str]) -> str:
    """The first author's surname as :func:`_fuller` compares it (its last word, normalised)."""
    words = normalize_name(authors[0]).split() if authors else []
    return words[-1] if words else ""


class Dedup:
    """Which records are kept, in corpus order: of the records sharing an abstract (their ``key``),
    the one with the fullest author list (the first of equals); then the first with an explicit id.
    Works on anything with ``digest``, ``key``, ``names`` (how many authors), ``et_al``, ``lead``
    (:func:`author_lead`), ``explicit_id`` and ``source``.

    Read in one pass, a record is kept or dropped when it comes; a fuller record after the one kept
    cannot replace it then, so :attr:`winners` says which to keep in a second pass (None when no
    second pass is needed).

    Args:
        winners: ``key -> source`` of the record to keep in each group where it is not the first
            (what a first pass's :attr:`winners` gave).
    """

    def __init__(self, winners: dict[bytes, str] | None = None) -> None:
        self.by_key: dict[bytes, Any] = {}
        self.by_explicit: dict[str, Any] = {}
        # (duplicate, the key or explicit id of the record kept instead, same content)
        self.dropped: list[tuple[Any, bytes | str, bool]] = []
        self.content: list[bytes] = []  # digests of the kept records without an explicit id
        self._decided = winners or {}
        self._fuller: dict[bytes, Any] = {}  # key -> the fullest record after the one kept

    def keep(self, record: Any) -> bool:
        winner = self._decided.get(record.key)
        kept = self.by_key.get(record.key)
        if winner is not None and record.source != winner:
            self.dropped.append((record, record.key, True))
            return False
        if kept is not None and winner is None:
            self.dropped.append((record, record.key, True))
            if _fuller(record, self._fuller.get(record.key, kept)):
                self._fuller[record.key] = record
            return False
        if record.explicit_id is not None:
            if record.explicit_id in self.by_explicit:
                self.dropped.append((record, record.explicit_id, False))
                return False
            self.by_explicit[record.explicit_id] = record
        else:
            self.content.append(record.digest)
        self.by_key[record.key] = record
        return True

    @property
    def winners(self) -> dict[bytes, str] | None:
        """``key -> source`` of the records a second pass must keep instead of the ones this pass
        kept (a fuller author list came later), or None when this pass kept the right ones."""
        return {key: record.source for key, record in self._fuller.items()} or None

    def ids(self) -> dict[bytes, str]:
        """Content digest -> id, for the kept records without an explicit id."""
        return dict(zip(self.content, short_ids(self.content, reserved=self.by_explicit), strict=True))

    def details(self, id_of: Callable[[Any], str]) -> tuple[str, ...]:
        """One line per dropped duplicate."""
        out = []
        for dup, instead, same in self.dropped:
            kept = self.by_key[instead] if same else self.by_explicit[instead]  # type: ignore[index]
            what = "duplicate of" if same else "duplicate id"
            out.append(f"{dup.source}: {what} {id_of(kept)} (loaded from {kept.source})")
        return tuple(out)

    def notes(self, kept: Iterable[Any]) -> tuple[SkippedBlock, ...]:
        """The notes of the records kept (see :attr:`Record.notes <retrieval.corpus_fields.Record>`)."""
        return tuple(note for record in kept for note in record.notes)


@dataclass(slots=True)
class _Keyed:
    """A record as :class:`Dedup` sees it."""

    record: Record
    source: str
    explicit_id: str | None
    digest: bytes
    key: bytes
    names: int
    et_al: bool
    lead: str
    notes: list[SkippedBlock] = field(default_factory=list)


def _keyed(record: Record) -> _Keyed:
    return _Keyed(record, record.source, record.explicit_id, record.digest, record.key, len(record.authors),
                  record.et_al, author_lead(record.authors), record.notes)  # fmt: skip


def own_title(record: Record) -> str:
    """A record's own title as plain text (LaTeX made readable), or "" when it has none."""
    return " ".join(strip_markup(record.title).split()) if record.title else ""


def load_corpus(path: str | os.PathLike[str], headers: Sequence[str] = (HEADER,)) -> Corpus:
    """Parse every file of a corpus into distinct papers.

    Args:
        path: A corpus file or directory (see :func:`corpus_files`).
        headers: Lines that are a file's header, not a field (default ``论文检索``).

    Returns:
        The papers with what was skipped and de-duplicated. Unparseable content never raises; it is
        reported in :attr:`Corpus.skipped` (or :attr:`Corpus.rejected`, a whole file).

    Raises:
        CorpusError: The path is missing or holds no corpus file, or no paper at all could be loaded
            (the message lists the first reasons).
    """
    started = time.perf_counter()
    files, ignored, displays = scan(path)
    records: list[_Keyed] = []
    skipped: list[SkippedBlock] = []
    rejected: list[SkippedBlock] = []
    cp1252: list[str] = []
    read: list[str] = []
    for file, display in zip(files, displays, strict=True):
        result = read_file(file, display, headers)
        records.extend(_keyed(r) for r in result.records)
        skipped.extend(result.skipped)
        if result.rejected is not None:
            rejected.append(result.rejected)
        else:
            read.append(display)
        if result.cp1252:
            cp1252.append(display)

    dedup = Dedup()
    kept = [record for record in records if dedup.keep(record)]
    if dedup.winners is not None:  # a fuller author list came after the record kept
        dedup = Dedup(dedup.winners)
        kept = [record for record in records if dedup.keep(record)]
    if not kept:
        raise no_paper_error(path, [*rejected, *skipped])
    ids = dedup.ids()

    def id_of(record: _Keyed) -> str:
        return record.explicit_id if record.explicit_id is not None else ids[record.digest]

    areas = _canonical_areas([k.record for k in kept])
    papers = []
    for keyed in kept:
        record = keyed.record
        area = areas.get(area_key(record.area), record.area) if record.area else ""
        own = own_title(record)
        papers.append(
            Paper(
                id=id_of(keyed),
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
        "loaded %d papers from %d file(s) in %.2fs (%d duplicates, %d skipped, %d files rejected)",
        len(papers),
        len(read),
        time.perf_counter() - started,
        len(dedup.dropped),
        len(skipped),
        len(rejected),
    )
    return Corpus(
        papers=tuple(papers),
        files=tuple(read),
        duplicates=len(dedup.dropped),
        duplicate_details=dedup.details(id_of),
        skipped=tuple(skipped),
        cp1252_files=tuple(cp1252),
        ignored_files=tuple(_display_path(f) for f in ignored),
        blocks=len(records) + len(skipped),
        notes=dedup.notes(kept),
        rejected=tuple(rejected),
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
