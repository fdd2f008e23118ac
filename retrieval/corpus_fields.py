"""The fields of a paper as every corpus reader makes them: the parsed record, author names, areas,
links, and the line helpers the text readers share.

Kept apart from :mod:`retrieval.corpus` (ids, duplicates, files, loading) so that each reader (the
text format in :mod:`retrieval.corpus_text`, BibTeX/RIS/CSL JSON in :mod:`retrieval.bibliography`,
JSON Lines in :mod:`retrieval.corpus`) builds the same :class:`Record`.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field

from retrieval.models import AREA_SEPARATOR, SkippedBlock

__all__ = [
    "Record",
    "area_key",
    "authors_from_list",
    "clean_area",
    "normalize_name",
    "normalize_url",
    "parse_authors",
]


@dataclass(slots=True)
class Record:
    """A parsed paper before de-duplication, id assignment and area canonicalisation.

    ``notes``: what was repaired or left out while reading it (``file:line: field: why``); the paper
    loads, and the ingest report lists it among the papers loaded with a note.
    """

    source: str
    explicit_id: str | None
    title: str | None
    authors: tuple[str, ...]
    et_al: bool
    area: str
    abstract: str
    url: str | None
    digest: bytes = b""
    notes: list[SkippedBlock] = field(default_factory=list)
    key: bytes = b""  # the abstract's digest (what makes two records the same paper), set with digest

_NON_WORD = re.compile(r"[\W_]+")
_AREA_SEP = re.compile(r"\s*(?:·|•|∙|->|→)\s*")


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
# (only at a name's end: "Qiuyi (Richard) Zhang" keeps the name it was given)
_AFFILIATION = re.compile(r"\s*[(（\[【][^()（）\[\]【】]*[)）\]】](?=\s*(?:[,;，、；]|$|\s(?:and|&)\s))")
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


def authors_from_list(items: list[object]) -> tuple[tuple[str, ...], bool]:
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
# Links
# --------------------------------------------------------------------------------------------------

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



# --------------------------------------------------------------------------------------------------
# Lines
# --------------------------------------------------------------------------------------------------

def split_lines(text: str) -> list[str]:
    """Split on CRLF, CR or LF only (str.splitlines also splits on form feeds and U+2028)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


_INVISIBLE = "\ufeff\u200b\u200c\u200d\u2060\x00"


def clean_line(raw: str) -> str:
    line = raw.strip()
    if line and (line[0] in _INVISIBLE or line[-1] in _INVISIBLE):
        line = line.strip(_INVISIBLE).strip()
    return line


def preview(line: str) -> str:
    line = line if len(line) <= 50 else line[:47] + "..."
    return repr(line)

