"""Read what reference managers export: BibTeX (``.bib``), RIS (``.ris``) and CSL JSON (``.json``).

Zotero, Mendeley, Google Scholar, arXiv and most publishers write these. Each entry with an abstract
becomes a paper with its real title; an entry without one is reported (``file:line: abstract:
missing``) and skipped, since paperbot searches abstracts.

* BibTeX is parsed by bibtexparser (v2), whose name splitting follows BibTeX's rules (``von``
  parts, ``Jr``, braced corporate names); LaTeX in titles, abstracts and names (accents, braces,
  ``\\&``, ``---``) is decoded by pylatexenc, keeping ``$...$`` math as written (the abstract is
  shown through :mod:`retrieval.markup` like any other). ``doi``, ``url`` and an arXiv ``eprint``
  become the paper's link, in that order.
* RIS is parsed by rispy: ``TI``/``T1`` title, ``AU``/``A1`` authors, ``AB``/``N2`` abstract,
  ``DO`` and ``UR`` links.
* CSL JSON (an array of items, as Zotero and citation.js write it): ``title``, ``author``
  (``given``/``family``/``literal``), ``abstract``, ``DOI``, ``URL``.

Authors come out as "First Last" whatever the source's order; a trailing ``others`` means the
list was cut (``et al.``). Papers get content-derived ids, like the text format's: a citation key
changes whenever a reference manager regenerates it, the paper's words do not.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Iterator
from typing import Any

from retrieval.corpus_fields import Record, normalize_url, preview
from retrieval.models import SkippedBlock

__all__ = ["BIBLIOGRAPHY_SUFFIXES", "flip_name", "parse_bibtex", "parse_csl_json", "parse_ris", "sniff"]

BIBLIOGRAPHY_SUFFIXES = {".bib": "bibtex", ".bibtex": "bibtex", ".ris": "ris", ".json": "csl"}
_CSL_NAME_PARTS = ("given", "dropping-particle", "non-dropping-particle", "family")
_ENTRY_START = re.compile(r"^\s*@\s*[a-zA-Z]+\s*[{(]", re.M)
_RIS_START = re.compile(r"^TY  - ", re.M)


def sniff(text: str) -> str | None:
    """The bibliography format a file given with another suffix holds (``"bibtex"``, ``"ris"``,
    ``"csl"``), or None."""
    head = text.lstrip("\ufeff \t\r\n")[:4096]
    if head.startswith("@") and _ENTRY_START.match(head):
        return "bibtex"
    if head.startswith("TY  - "):
        return "ris"
    if head.startswith("["):
        return "csl"
    return None


@functools.cache
def _latex() -> Any:
    from pylatexenc.latex2text import LatexNodes2Text

    # math stays as written: the abstract's $...$ is shown and searched like the text format's
    return LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=True)


def _decode_latex(text: str) -> str:
    """LaTeX text to Unicode (accents, braces, escapes, dashes), whitespace collapsed."""
    if "\\" in text or "{" in text or "--" in text or "~" in text:
        try:
            text = _latex().latex_to_text(text)
        except Exception:  # pylatexenc is lenient; whatever it still refuses stays as written
            logging.getLogger(__name__).debug("could not decode LaTeX in %r", text[:80], exc_info=True)
    return " ".join(text.split())


def flip_name(name: str) -> str:
    """"Last, First" (or "Last, Jr., First") as "First Last" ("First Last, Jr."); other names as
    they are."""
    parts = [p.strip() for p in name.split(",")]
    if len(parts) == 2 and parts[0] and parts[1]:
        return f"{parts[1]} {parts[0]}"
    if len(parts) == 3 and all(parts):
        return f"{parts[2]} {parts[0]}, {parts[1]}"
    return " ".join(name.split())


def _names(names: list[str]) -> tuple[tuple[str, ...], bool]:
    """Names without empty ones; a last ``others`` (BibTeX's "et al.") sets the flag."""
    out = [n for n in (" ".join(x.split()) for x in names) if n]
    et_al = bool(out) and out[-1].lower() in {"others", "et al.", "et al"}
    return tuple(out[:-1] if et_al else out), et_al


def _link(*candidates: tuple[str, str | None]) -> str | None:
    """The first candidate that makes an http(s) link: ``("doi", v)``, ``("arxiv", v)`` or
    ``("url", v)``."""
    for kind, value in candidates:
        if not value:
            continue
        value = value.strip()
        if kind == "doi":
            value = value if value.lower().startswith(("http", "doi:")) else f"doi:{value}"
        elif kind == "arxiv":
            value = f"arxiv:{value.removeprefix('arXiv:').removeprefix('arxiv:')}"
        url = normalize_url(value)
        if url is not None:
            return url
    return None


def _record(
    source: str, title: str, names: tuple[str, ...], et_al: bool, abstract: str, url: str | None
) -> Record:
    return Record(source, None, title or None, names, et_al, "", abstract, url)


def _missing_abstract(source: str, line: int, title: str, kind: str) -> SkippedBlock:
    what = f"the {kind} {preview(title)}" if title else f"the {kind}"
    return SkippedBlock(source, line, f"abstract: missing: {what} has no abstract")


# --------------------------------------------------------------------------------------------------
# BibTeX
# --------------------------------------------------------------------------------------------------


def parse_bibtex(text: str, source: str) -> tuple[list[Record], list[SkippedBlock]]:
    """The papers of a BibTeX file, and the entries that could not be read or have no abstract."""
    import bibtexparser
    from bibtexparser import middlewares

    library = bibtexparser.parse_string(
        text, append_middleware=[middlewares.SeparateCoAuthors(), middlewares.SplitNameParts()]
    )
    records: list[Record] = []
    skipped: list[SkippedBlock] = []
    blocks: list[tuple[int, Any]] = [(b.start_line + 1, b) for b in library.entries]
    blocks += [(b.start_line + 1, b) for b in library.failed_blocks]
    for line, block in sorted(blocks, key=lambda x: x[0]):
        if not isinstance(block, bibtexparser.model.Entry):
            why = str(getattr(block, "error", "")).split("\n", 1)[0] or "not a BibTeX entry"
            skipped.append(SkippedBlock(source, line, f"record: could not be read ({why})"))
            continue
        fields = {f.key.lower(): f.value for f in block.fields}
        title = _decode_latex(str(fields.get("title", "")))
        abstract = _decode_latex(str(fields.get("abstract", "")))
        if not abstract:
            skipped.append(_missing_abstract(source, line, title, f"@{block.entry_type} {block.key}"))
            continue
        raw_names = fields.get("author", [])
        names = [_bib_name(n) for n in raw_names] if isinstance(raw_names, list) else [str(raw_names)]
        authors, et_al = _names(names)
        eprint = str(fields.get("eprint", "")) if str(fields.get("archiveprefix", "arxiv")).lower() == (
            "arxiv"
        ) else ""
        doi, link = str(fields.get("doi", "")), str(fields.get("url", ""))
        url = _link(("doi", doi), ("url", link), ("arxiv", eprint))
        records.append(_record(f"{source}:{line}", title, authors, et_al, abstract, url))
    return records, skipped


def _bib_name(name: Any) -> str:
    """A bibtexparser name (NameParts, or text for a name it could not split) as "First von Last, Jr"."""
    if isinstance(name, str):
        return _decode_latex(name)
    words = [*name.first, *name.von, *name.last]
    text = _decode_latex(" ".join(words))
    if name.jr:
        text += ", " + _decode_latex(" ".join(name.jr))
    return text


# --------------------------------------------------------------------------------------------------
# RIS
# --------------------------------------------------------------------------------------------------


def parse_ris(text: str, source: str) -> tuple[list[Record], list[SkippedBlock]]:
    """The papers of a RIS file, and the references without an abstract."""
    import rispy

    starts = [text.count("\n", 0, m.start()) + 1 for m in _RIS_START.finditer(text)]
    records: list[Record] = []
    skipped: list[SkippedBlock] = []
    try:
        entries = rispy.loads(text, skip_unknown_tags=True)
    except Exception as exc:  # rispy raises plain IOError/ValueError on a malformed file
        return [], [SkippedBlock(source, 1, f"file: not a readable RIS file ({exc})")]
    for k, entry in enumerate(entries):
        line = starts[k] if k < len(starts) else 1
        title = _first(entry, "title", "primary_title", "translated_title")
        abstract = " ".join(_first(entry, "abstract", "notes_abstract").split())
        kind = f"reference {entry.get('type_of_reference', '')}".strip()
        if not abstract:
            skipped.append(_missing_abstract(source, line, title, kind))
            continue
        raw = list(entry.get("authors") or []) or list(entry.get("first_authors") or [])
        authors, et_al = _names([flip_name(n) for n in raw])
        urls = entry.get("urls") or []
        url = _link(("doi", entry.get("doi")), *(("url", u) for u in urls))
        records.append(_record(f"{source}:{line}", " ".join(title.split()), authors, et_al, abstract, url))
    return records, skipped


def _first(entry: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = entry.get(key)
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        if value:
            return str(value)
    return ""


# --------------------------------------------------------------------------------------------------
# CSL JSON
# --------------------------------------------------------------------------------------------------


def _array_items(text: str) -> Iterator[tuple[int, Any]]:
    """``(line, item)`` of each element of the JSON array ``text`` is (ValueError when it is not
    one)."""
    decoder = json.JSONDecoder()
    i = len(text) - len(text.lstrip("\ufeff \t\r\n"))
    if text[i : i + 1] != "[":
        raise ValueError("not a JSON array")
    i += 1
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text):
            raise ValueError("the array is not closed")
        if text[i] == "]":
            return
        item, end = decoder.raw_decode(text, i)
        yield text.count("\n", 0, i) + 1, item
        i = end


def parse_csl_json(text: str, source: str) -> tuple[list[Record], list[SkippedBlock]]:
    """The papers of a CSL JSON file (an array of items), and the items that are not papers or have
    no abstract."""
    records: list[Record] = []
    skipped: list[SkippedBlock] = []
    try:
        items = list(_array_items(text))
    except (ValueError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc) or type(exc).__name__
        return [], [SkippedBlock(source, 1, f"file: not a CSL JSON array of items ({why})")]
    for line, item in items:
        if not isinstance(item, dict):
            why = f"record: not a CSL JSON item (a {type(item).__name__})"
            skipped.append(SkippedBlock(source, line, why))
            continue
        title = " ".join(str(item.get("title") or "").split())
        abstract = " ".join(str(item.get("abstract") or "").split())
        if not abstract:
            skipped.append(_missing_abstract(source, line, title, f"item {item.get('id', '')}".strip()))
            continue
        names: list[str] = []
        for person in item.get("author") or []:
            if isinstance(person, dict):
                literal = person.get("literal")
                parts = [person.get(k) for k in _CSL_NAME_PARTS]
                name = str(literal) if literal else " ".join(str(p) for p in parts if p)
                if person.get("suffix") and not literal:
                    name += f", {person['suffix']}"
                names.append(name)
            elif isinstance(person, str):
                names.append(flip_name(person))
        authors, et_al = _names(names)
        url = _link(("doi", str(item.get("DOI") or "")), ("url", str(item.get("URL") or "")))
        records.append(_record(f"{source}:{line}", title, authors, et_al, abstract, url))
    return records, skipped
