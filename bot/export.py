"""Export formats (BibTeX, Markdown, JSON) and import parsing, over the store's records.

No SQL here, and the store never imports this module: :func:`export_text` asks the store for the
records (:meth:`bot.store.Store.export_items`) and formats them; :func:`import_file` parses and
validates a JSON file into :class:`~bot.store.ImportedList` records and hands them to
:meth:`bot.store.Store.import_items`. The formatting functions only read item attributes, so any
object with the same fields works.

Imported text is untrusted and, once imported, shown in Discord: Discord markdown in it is escaped
(:func:`escape_markdown`) and a url must be ``http(s)://`` or it is dropped with a line in the report.

BibTeX output is meant to survive both BibTeX (which only counts braces) and LaTeX (which needs
special characters escaped outside math): see :func:`latex_escape`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from bot.store import (
    NOTE_MAX,
    PAPER_ID_MAX,
    CorpusLookup,
    ImportedItem,
    ImportedList,
    ImportFormatError,
    ImportResult,
    ListInfo,
    SavedItem,
    Store,
    StoreError,
    normalize_list_name,
)
from bot.store.records import clean_text, iso, utc
from retrieval.english import plural
from retrieval.titles import derive_title

log = logging.getLogger(__name__)

#: Export formats and the spellings accepted for them.
EXPORT_FORMATS = ("bib", "md", "json")
_FORMAT_ALIASES = {"bibtex": "bib", "markdown": "md", "bib": "bib", "md": "md", "json": "json"}
#: Largest import document accepted, in characters (1000 papers with long abstracts fit easily).
MAX_IMPORT_CHARS = 20_000_000

#: Marker and version of the JSON export; a file with a higher version is refused on import.
JSON_FORMAT = "paperbot.saved"
JSON_VERSION = 1
#: Limits on imported snapshot fields (a user-supplied file must not bloat the shared database).
TITLE_MAX = 2_000
AUTHOR_MAX = 300
AUTHORS_MAX = 1_000
AREA_MAX = 300
ABSTRACT_MAX = 50_000
URL_MAX = 2_000
#: At most this many per-record error messages are kept (plus one summary line).
ERRORS_MAX = 50
#: How an export says that a title is paperbot's, derived from the abstract, not the paper's own.
DERIVED_TITLE = "Title derived from the abstract by paperbot (the source gives none)"



def group_by_list(
    items: Sequence[SavedItem], lists: Sequence[ListInfo] | None = None
) -> list[tuple[str, list[SavedItem]]]:
    """``(list name, items)`` pairs: the given lists first (empty ones included), in order."""
    groups: dict[str, list[SavedItem]] = {info.name: [] for info in lists or ()}
    for item in items:
        groups.setdefault(item.list_name, []).append(item)
    return list(groups.items())


def _one_line(text: str) -> str:
    """Collapse all whitespace (newlines included): blank lines would end a LaTeX paragraph or math."""
    return " ".join(text.split())



# ------------------------------------------------------------------------------------------ LaTeX

# Outside math these characters are errors (or print wrong glyphs) unless escaped.
_TEXT_SPECIALS = {
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "_": r"\_",
    "^": r"\^{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
# ``\`` followed by one of these is already valid LaTeX: escaped specials, accents, spacing.
_VALID_AFTER_BACKSLASH = frozenset("&%$#_,;:! -/@")
_ACCENTS = frozenset("'`^~\"=.")
# Characters that never need a look: everything but backslash, braces, dollars and the specials.
_PLAIN_RUN = re.compile(r"[^\\{}$&%#_^<>|]+")
# A command name: kept as it is, in text and in math.
_COMMAND_RE = re.compile(r"\\[A-Za-z]+")
# What a brace with no partner becomes, in text and in math. Each replacement carries only a balanced
# ``{}``, so BibTeX's brace counting stays right.
_BRACE_LITERAL = {
    ("{", False): r"\textbraceleft{}",
    ("}", False): r"\textbraceright{}",
    ("{", True): r"\lbrace{}",
    ("}", True): r"\rbrace{}",
}


class _Braces:
    """Brace balancing over output pieces: BibTeX counts ``{``/``\\{`` alike, LaTeX does not.

    A closer matches only an opener of its own kind (plain or escaped); openers skipped over and
    closers with no partner are rewritten as literal brace commands, so both tools stay happy.
    """

    def __init__(self, out: list[str], math: bool) -> None:
        self.out = out
        self.math = math
        self.stack: list[tuple[int, bool]] = []  # (index in out, escaped)

    def open(self, escaped: bool) -> None:
        self.stack.append((len(self.out), escaped))
        self.out.append("\\{" if escaped else "{")

    def close(self, escaped: bool) -> None:
        while self.stack:
            index, kind = self.stack.pop()
            if kind == escaped:
                self.out.append("\\}" if escaped else "}")
                return
            self.out[index] = _BRACE_LITERAL["{", self.math]
        self.out.append(_BRACE_LITERAL["}", self.math])

    def finish(self) -> None:
        for index, _ in self.stack:
            self.out[index] = _BRACE_LITERAL["{", self.math]
        self.stack.clear()


def _copy_common(text: str, i: int, out: list[str], braces: _Braces) -> int:
    """Copy what reads the same in text and in math at ``text[i]``: ``\\{``, ``\\}`` and braces (kept
    balanced), a command name (``\\textit``), or a run of ordinary characters.

    Returns:
        The index after what was copied, or -1 when ``text[i]`` is none of these (the caller's cases).
    """
    ch = text[i]
    if ch == "\\":
        nxt = text[i + 1 : i + 2]
        if nxt == "{" or nxt == "}":
            (braces.open if nxt == "{" else braces.close)(True)
            return i + 2
        command = _COMMAND_RE.match(text, i)
        if command is None:
            return -1
        out.append(command.group())
        return command.end()
    if ch == "{":
        braces.open(False)
        return i + 1
    if ch == "}":
        braces.close(False)
        return i + 1
    # Copy the whole run of ordinary characters at once: most of an abstract is plain text.
    run = _PLAIN_RUN.match(text, i)
    if run is None:
        return -1
    out.append(run.group())
    return run.end()


def _math_body(body: str) -> str:
    """Escape what would break inside math (``%`` comments the rest out, ``#`` is an error)."""
    out: list[str] = []
    braces = _Braces(out, math=True)
    align = "\\begin" in body  # ``&`` is legal only inside an alignment environment
    i, n = 0, len(body)
    while i < n:
        j = _copy_common(body, i, out, braces)
        if j >= 0:
            i = j
            continue
        ch = body[i]
        if ch == "\\":
            nxt = body[i + 1 : i + 2]
            if nxt in ("(", ")", "[", "]"):
                out.append(nxt)  # a math delimiter inside math would end or nest it: keep the bracket
                i += 2
            elif nxt:
                out.append(body[i : i + 2])
                i += 2
            else:
                out.append(r"\backslash{}")
                i += 1
            continue
        out.append("\\" + ch if ch in "%#$" or (ch == "&" and not align) else ch)
        i += 1
    braces.finish()
    return "".join(out)


def _scan(text: str, start: int, closer: str) -> int:
    """Index of the first ``closer`` at or after ``start`` that is not escaped, or -1.

    Backslash pairs are skipped as units, so ``\\$`` (a line break, then a dollar) closes math but
    ``\\$`` preceded by one backslash (an escaped dollar) does not.
    """
    j, n = start, len(text)
    while j < n:
        if text.startswith(closer, j):
            return j
        j += 2 if text[j] == "\\" else 1
    return -1


def _find_math(text: str, i: int) -> tuple[str, str, str, int] | None:
    """Math starting at ``text[i]`` as ``(opener, body, closer, end)``, or None if it is not math.

    Inline ``$...$`` follows pandoc's rule, so prices are not math: the opener must be followed by a
    non-space, the closer preceded by a non-space and not followed by a digit.
    """
    n = len(text)
    if text.startswith("$$", i):
        end = _scan(text, i + 2, "$$")
        return ("$$", text[i + 2 : end], "$$", end + 2) if end > i + 2 else None
    if text[i] == "$":
        if i + 1 >= n or text[i + 1].isspace():
            return None
        j = i + 1
        while (j := _scan(text, j, "$")) != -1:
            if not text[j - 1].isspace() and not (j + 1 < n and text[j + 1].isdigit()):
                return ("$", text[i + 1 : j], "$", j + 1)
            j += 1
        return None
    closer = {"\\(": "\\)", "\\[": "\\]"}.get(text[i : i + 2])
    if closer is None:
        return None
    end = _scan(text, i + 2, closer)
    return None if end == -1 else (text[i : i + 2], text[i + 2 : end], closer, end + 2)


def latex_escape(text: str) -> str:
    """Make ``text`` valid inside a BibTeX field and in LaTeX, keeping LaTeX that is already there.

    * math (``$..$``, ``$$..$$``, ``\\(..\\)``, ``\\[..\\]``) is kept, minus characters fatal in math;
    * outside math, ``& % # _ ^ < > |`` and a ``$`` that opens no math are escaped;
    * commands (``\\textit``), escaped specials (``\\%``) and accents (``\\"o``) are kept;
      a backslash before anything else is a markdown escape (``\\*``) and is dropped;
    * every brace ends up balanced (unpaired ones become ``\\textbraceleft{}`` and friends);
    * whitespace runs (newlines included) become one space.
    """
    text = _one_line(clean_text(text))
    out: list[str] = []
    braces = _Braces(out, math=False)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "$" or (ch == "\\" and text[i + 1 : i + 2] in ("(", "[")):
            math = _find_math(text, i)
            if math is not None:
                opener, body, closer, end = math
                if opener.startswith("$") and out and out[-1].endswith("$"):
                    out.append("{}")  # ``$a$$b$`` would read as display math: separate the two
                out.append(opener + _math_body(body) + closer)
                i = end
                continue
            if ch == "$":
                out.append(r"\$")
                i += 1
                continue
            i += 1  # an unpaired \( or \[ is a markdown-escaped bracket: keep the bracket
            continue
        j = _copy_common(text, i, out, braces)
        if j >= 0:
            i = j
            continue
        if ch == "\\":
            nxt = text[i + 1 : i + 2]
            if not nxt:
                out.append(r"\textbackslash{}")
                i += 1
            elif nxt == "\\":
                out.append(" ")  # a forced line break means nothing in a field and fails at a paragraph start
                i += 2
            elif nxt in _ACCENTS:
                # An accent needs something to sit on; give it an empty group when no letter follows.
                follow = text[i + 2 : i + 3]
                out.append(text[i : i + 2] if follow.isalpha() or follow == "{" else text[i : i + 2] + "{}")
                i += 2
            elif nxt in _VALID_AFTER_BACKSLASH:
                out.append(text[i : i + 2])
                i += 2
            else:
                i += 1  # markdown escape such as \* or \`: drop the backslash, keep the character
            continue
        out.append(_TEXT_SPECIALS.get(ch, ch))
        i += 1
    braces.finish()
    return "".join(out)


# ------------------------------------------------------------------------------------------ BibTeX

_FOLD = str.maketrans(
    {
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "ø": "o",
        "Ø": "O",
        "œ": "oe",
        "Œ": "OE",
        "ł": "l",
        "Ł": "L",
        "đ": "d",
        "Đ": "D",
        "þ": "th",
        "Þ": "Th",
        "ð": "d",
        "ı": "i",
    }
)
_NAME_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})


def ascii_fold(text: str) -> str:
    """Best-effort ASCII spelling: ``Schölkopf`` -> ``Scholkopf``; letters with no ASCII form vanish."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    return decomposed.encode("ascii", "ignore").decode("ascii")


def _surname(name: str) -> str:
    """The family name of ``"First Last"`` or ``"Last, First"``, folded to ``[a-z]``."""
    if "," in name:
        last = name.split(",", 1)[0]
    else:
        parts = [p for p in name.split() if p.lower() not in _NAME_SUFFIXES] or name.split()
        last = parts[-1] if parts else ""
    return re.sub(r"[^a-z]", "", ascii_fold(last).lower())


def _short_id(paper_id: str) -> str:
    """A short, key-safe form of a paper id: whole if short, else its first 8 characters."""
    folded = re.sub(r"[^a-z0-9]", "", ascii_fold(paper_id).lower())
    if not folded:
        return hashlib.sha256(paper_id.encode("utf-8", "replace")).hexdigest()[:8]
    return folded if len(folded) <= 10 else folded[:8]


def citation_key(item: SavedItem) -> str:
    """``surname_shortid`` (e.g. ``koirala_ab12cd34``); ``paper_`` when no author has a Latin name."""
    surname = _surname(item.authors[0]) if item.authors else ""
    return f"{surname or 'paper'}_{_short_id(item.paper_id)}"


def citation_keys(items: Sequence[SavedItem]) -> dict[str, str]:
    """Paper id -> key, unique within the set (a clash gets ``_2``, ``_3``... in item order)."""
    keys: dict[str, str] = {}
    used: set[str] = set()
    for item in items:
        if item.paper_id in keys:
            continue
        base = key = citation_key(item)
        suffix = 2
        while key in used:
            key = f"{base}_{suffix}"
            suffix += 1
        used.add(key)
        keys[item.paper_id] = key
    return keys


def _bib_name(name: str) -> str:
    """One author for the ``author`` field; braced when BibTeX would split or reorder it."""
    escaped = latex_escape(name)
    if re.search(r"\band\b", escaped, flags=re.IGNORECASE) or "," in escaped:
        return "{" + escaped + "}"
    return escaped


def _bib_authors(item: SavedItem) -> str:
    """The ``author`` field: names joined by ``and``, ``others`` for a truncated list."""
    names = [_bib_name(a) for a in item.authors if a.strip()]
    if item.et_al:
        names.append("others")
    return " and ".join(names)


def _bib_url(url: str) -> str:
    """URLs are verbatim for biblatex; only what would break the field (braces, space, ``\\``) is encoded."""
    table = {"{": "%7B", "}": "%7D", "\\": "%5C"}
    return "".join(table.get(ch, "%20" if ch.isspace() else ch) for ch in url.strip())


def _bib_entry(item: SavedItem, key: str, lists: Sequence[str], derived: bool = False) -> str:
    """One ``@misc`` entry; the title is double-braced so styles keep its capitals. A title paperbot
    derived from the abstract is not the paper's: it goes to ``note``, said so, never to ``title``."""
    fields: list[tuple[str, str]] = [] if derived else [("title", "{" + latex_escape(item.title) + "}")]
    authors = _bib_authors(item)
    if authors:
        fields.append(("author", authors))
    notes = [latex_escape(item.area)] if item.area else []
    if derived:
        notes.append(f"{DERIVED_TITLE}: {latex_escape(_one_line(item.title))}")
    if notes:
        fields.append(("note", ". ".join(notes)))
    if item.abstract:
        fields.append(("abstract", latex_escape(item.abstract)))
    if item.url:
        fields.append(("url", _bib_url(item.url)))
    if item.note:
        fields.append(("annote", latex_escape(item.note)))
    fields.append(("keywords", latex_escape(", ".join(lists))))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@misc{{{key},\n{body}\n}}\n"


def to_bibtex(
    items: Sequence[SavedItem], *, exported_at: datetime | None = None, derived: Collection[str] = ()
) -> str:
    """One ``@misc`` entry per distinct paper, grouped by list (``@comment`` headers between groups).

    A paper saved in several lists appears once, under its first list, with every list in
    ``keywords``: a bibliography must not cite the same work twice. The user's note goes to ``annote``.
    ``derived``: ids of the papers whose title paperbot derived (see :func:`derived_titles`).
    """
    when = iso(exported_at or datetime.now(UTC))
    keys = citation_keys(items)
    lists_of: dict[str, list[str]] = {}
    for item in items:
        names = lists_of.setdefault(item.paper_id, [])
        if item.list_name not in names:
            names.append(item.list_name)
    groups = group_by_list(items)
    parts = [f"@comment{{Exported by paperbot on {when}: {plural(len(keys), 'paper')}}}\n"]
    emitted: set[str] = set()
    for name, group in groups:
        fresh = [item for item in group if item.paper_id not in emitted]
        if not fresh:
            continue  # every paper of this list was already cited under an earlier list
        if len(groups) > 1:
            parts.append(f"@comment{{list: {latex_escape(name)}}}\n")
        for item in fresh:
            emitted.add(item.paper_id)
            entry = _bib_entry(item, keys[item.paper_id], lists_of[item.paper_id], item.paper_id in derived)
            parts.append(entry)
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------- Markdown


def _md_heading(text: str) -> str:
    """List names are letters, digits, spaces, ``-`` and ``_``; only ``_`` means something in markdown."""
    return text.replace("_", "\\_")


def _md_code(text: str) -> str:
    """Inline code that survives a backtick inside."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _md_authors(item: SavedItem) -> str:
    """``A, B, C et al.`` (every author: an export is a file, not an embed)."""
    names = ", ".join(item.authors) if item.authors else "Unknown authors"
    return names + (" et al." if item.et_al else "")


def to_markdown(
    items: Sequence[SavedItem],
    *,
    lists: Sequence[ListInfo] | None = None,
    exported_at: datetime | None = None,
    derived: Collection[str] = (),
) -> str:
    """A numbered list per list: bold title (a derived one said so), authors, area, id, link, the
    note as a quote."""
    groups = group_by_list(items, lists)
    when = (exported_at or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    title = _md_heading(groups[0][0]) if len(groups) == 1 else "Saved papers"
    lines = [f"# {title}", "", f"_Exported by paperbot on {when}: {plural(len(items), 'saved paper')}._", ""]
    for name, group in groups:
        if len(groups) > 1:
            lines += [f"## {_md_heading(name)} ({len(group)})", ""]
        if not group:
            lines += ["_(empty)_", ""]
            continue
        for number, item in enumerate(group, 1):
            mark = f" _({DERIVED_TITLE.lower()})_" if item.paper_id in derived else ""
            lines.append(f"{number}. **{_one_line(item.title)}**{mark}")
            lines.append(f"   {_one_line(_md_authors(item))}")
            details = [_one_line(item.area)] if item.area else []
            details.append(_md_code(item.paper_id))
            details.append(f"saved {item.saved_at.astimezone(UTC):%Y-%m-%d}")
            if not item.in_corpus:
                details.append("*no longer in the corpus*")
            lines.append("   " + " · ".join(details))
            if item.url:
                lines.append(f"   <{item.url.strip()}>")
            if item.note:
                lines.extend(f"   > {line}".rstrip() for line in item.note.splitlines())
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


# -------------------------------------------------------------------------------------------- JSON


def _item_json(item: SavedItem, derived: Collection[str] = ()) -> dict[str, Any]:
    """The JSON record of one saved item (the fields :func:`_parse_item` reads back)."""
    return {
        "id": item.paper_id,
        "title": item.title,
        "title_derived": item.paper_id in derived,
        "authors": list(item.authors),
        "et_al": item.et_al,
        "area": item.area,
        "abstract": item.abstract,
        "url": item.url,
        "note": item.note,
        "saved_at": iso(item.saved_at),
        "in_corpus": item.in_corpus,
    }


def to_json(
    items: Sequence[SavedItem],
    *,
    lists: Sequence[ListInfo] | None = None,
    exported_at: datetime | None = None,
    derived: Collection[str] = (),
) -> str:
    """The full records, grouped by list; :func:`parse_json` (:func:`import_file`) reads it back.
    ``title_derived`` says whether paperbot derived the title (the source gave none)."""
    created = {info.name: info.created_at for info in lists or ()}
    document = {
        "format": JSON_FORMAT,
        "version": JSON_VERSION,
        "exported_at": iso(exported_at or datetime.now(UTC)),
        "lists": [
            {
                "name": name,
                "created_at": iso(created[name]) if name in created else None,
                "items": [_item_json(i, derived) for i in group],
            }
            for name, group in group_by_list(items, lists)
        ],
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


@dataclass(frozen=True, slots=True)
class ParsedImport:
    """The lists of an import file, and one message per record that had to be skipped."""

    lists: tuple[ImportedList, ...]
    errors: tuple[str, ...]


def _parse_time(value: object) -> datetime | None:
    """A tz-aware UTC datetime from ISO text, or None for anything unusable."""
    if not isinstance(value, str):
        return None
    try:
        return utc(datetime.fromisoformat(value))
    except ValueError:
        return None


def _text_field(record: dict[str, Any], name: str, limit: int, *, required: bool = False) -> str:
    """A string field of a record, checked against ``limit``; ValueError says what is wrong."""
    value = record.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValueError(f"“{name}” must be {'non-empty ' if required else ''}text")
    value = clean_text(value)
    if len(value) > limit:
        raise ValueError(f"“{name}” is longer than {limit} characters")
    return value


# Discord markdown in imported text: every inline marker (bold, italics, strike, spoilers, code, masked
# links) and, at a line start, headings, quotes and list bullets. An already escaped marker is kept as
# it is, so importing an export of imported papers does not pile up backslashes.
_MD_INLINE = re.compile(r"\\(.)|([*_~|`\[\]])", re.DOTALL)
_MD_STRUCTURE = re.compile(r"\\(.)|([|\[\]])", re.DOTALL)
_MD_LINE_START = re.compile(r"(?m)^([ \t]*)(#|>|-(?=[#\s]))")


def escape_markdown(text: str, *, structure_only: bool = False) -> str:
    """Escape Discord markdown in untrusted text, idempotently.

    ``structure_only`` escapes only what changes a message's shape or hides or links text (masked
    links, spoilers, headings, quotes) and keeps ``$x_1^2$``-style LaTeX readable: for abstracts.
    """
    pattern = _MD_STRUCTURE if structure_only else _MD_INLINE

    def fix(match: re.Match[str]) -> str:
        return match.group(0) if match.group(1) is not None else "\\" + match.group(2)

    return _MD_LINE_START.sub(lambda m: f"{m.group(1)}\\{m.group(2)}", pattern.sub(fix, text))


def safe_url(url: str) -> str | None:
    """``url`` if it is an absolute ``http(s)://`` url with a host (and no spaces), else None."""
    text = url.strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme.lower() not in {"http", "https"} or not parts.hostname or any(c.isspace() for c in text):
        return None
    return text


def _parse_item(record: object, *, note_max: int, id_max: int, warnings: list[str]) -> ImportedItem:
    """Validate one item record of an import file; ValueError (user-facing) when unusable.

    Text fields come back with Discord markdown escaped; a url that is not http(s) is dropped with a
    line in ``warnings``. The file's ``in_corpus`` is ignored: the store knows its corpus.
    """
    if not isinstance(record, dict):
        raise ValueError("not an object")
    if "id" not in record and "paper_id" in record:
        record = {**record, "id": record["paper_id"]}
    paper_id = _text_field(record, "id", id_max, required=True).strip()
    if any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in paper_id):
        raise ValueError("“id” contains spaces or control characters")
    authors = record.get("authors", [])
    if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
        raise ValueError("“authors” must be a list of names")
    if len(authors) > AUTHORS_MAX or any(len(a) > AUTHOR_MAX for a in authors):
        raise ValueError("“authors” is too long")
    url = record.get("url")
    if url is not None and (not isinstance(url, str) or len(url) > URL_MAX):
        raise ValueError(f"“url” must be text of at most {URL_MAX} characters")
    link = safe_url(clean_text(url)) if url and url.strip() else None
    if url and url.strip() and link is None:
        warnings.append("its “url” is not an http(s) link, so it was left out")
    note = _text_field(record, "note", 100 * note_max).strip()
    if len(note) > note_max:
        raise ValueError(f"the note is longer than {note_max} characters")
    return ImportedItem(
        paper_id=paper_id,
        title=escape_markdown(_one_line(_text_field(record, "title", TITLE_MAX, required=True))),
        authors=tuple(escape_markdown(_one_line(clean_text(a))) for a in authors),
        et_al=bool(record.get("et_al", False)),
        area=escape_markdown(_one_line(_text_field(record, "area", AREA_MAX))),
        abstract=escape_markdown(_text_field(record, "abstract", ABSTRACT_MAX), structure_only=True),
        url=link,
        note=note,
        saved_at=_parse_time(record.get("saved_at")),
    )


def parse_json(data: str, *, note_max: int = NOTE_MAX, id_max: int = PAPER_ID_MAX) -> ParsedImport:
    """Validate an export made by :func:`to_json` (or a bare JSON array of item objects).

    Raises:
        ValueError: The document as a whole is unusable (message fit for a user). Problems with
            single records are returned in :attr:`ParsedImport.errors` instead.
    """
    try:
        document = json.loads(data)
    except json.JSONDecodeError as exc:
        raise ValueError(f"The file is not valid JSON (line {exc.lineno}, column {exc.colno}).") from exc
    except RecursionError as exc:
        raise ValueError("The file is nested too deeply to be a paperbot export.") from exc
    if isinstance(document, list):
        raw_lists: list[Any] = [{"name": None, "items": document}]
    elif isinstance(document, dict):
        if document.get("format", JSON_FORMAT) != JSON_FORMAT:
            raise ValueError("The file is not a paperbot export.")
        version = document.get("version", JSON_VERSION)
        if not isinstance(version, int) or isinstance(version, bool) or version > JSON_VERSION:
            raise ValueError(f"The file was written by a newer paperbot (format version {version}).")
        raw_lists = document.get("lists")  # type: ignore[assignment]
        if not isinstance(raw_lists, list):
            raise ValueError("The file has no “lists” array, so it is not a paperbot export.")
    else:
        raise ValueError("The file is not a paperbot export (expected a JSON object or array).")

    errors: list[str] = []
    lists: list[ImportedList] = []
    for list_number, raw in enumerate(raw_lists, 1):
        if not isinstance(raw, dict) or not isinstance(raw.get("items", []), list):
            errors.append(f"list {list_number}: not a list object")
            continue
        name = raw.get("name")
        if name is not None and not isinstance(name, str):
            errors.append(f"list {list_number}: its name is not text")
            continue
        items: list[ImportedItem] = []
        for item_number, record in enumerate(raw.get("items", []), 1):
            try:
                warnings: list[str] = []
                items.append(_parse_item(record, note_max=note_max, id_max=id_max, warnings=warnings))
            except ValueError as exc:
                warnings = [str(exc)]
            where = f"list “{name}”, item {item_number}" if name else f"item {item_number}"
            errors.extend(f"{where}: {warning}" for warning in warnings)
        lists.append(
            ImportedList(name=name, created_at=_parse_time(raw.get("created_at")), items=tuple(items))
        )
    return ParsedImport(lists=tuple(lists), errors=_capped(errors))


# ------------------------------------------------------------------------------ store round trips


def derived_titles(items: Sequence[SavedItem], corpus: CorpusLookup | None = None) -> frozenset[str]:
    """Ids of the items whose title paperbot derived from the abstract: as the corpus's paper says
    when it is in the corpus, else when the snapshot's title is what the abstract derives (the same
    rules give the same title). CPU work: run it off the event loop."""
    out = set()
    for item in items:
        paper = corpus(item.paper_id) if corpus is not None else None
        if paper is not None:
            if paper.title_derived and paper.title == item.title:
                out.add(item.paper_id)
        elif item.abstract and item.title == derive_title(item.abstract):
            out.add(item.paper_id)
    return frozenset(out)


def render_export(
    kind: str, items: Sequence[SavedItem], *, lists: Sequence[ListInfo] | None = None,
    corpus: CorpusLookup | None = None,
) -> str:
    """``items`` as ``"bib"``, ``"md"`` or ``"json"`` text, derived titles marked (CPU work)."""
    derived = derived_titles(items, corpus)
    if kind == "bib":
        return to_bibtex(items, derived=derived)
    if kind == "md":
        return to_markdown(items, lists=lists, derived=derived)
    return to_json(items, lists=lists, derived=derived)


async def export_text(
    store: Store, user_id: int, fmt: str, list_name: str | None = None, *, corpus: CorpusLookup | None = None
) -> str:
    """The user's saved papers as ``"bib"``, ``"md"`` or ``"json"`` text (aliases: bibtex, markdown).

    ``list_name=None`` exports every list, grouped by list (oldest list first, newest save first).
    JSON is re-importable with :func:`import_file`. ``corpus`` finds corpus papers by id (whether a
    title was derived, see :func:`derived_titles`).

    Raises:
        StoreError: Unknown format. ListNotFoundError: The named list does not exist.
    """
    kind = _FORMAT_ALIASES.get(str(fmt).strip().lower())
    if kind is None:
        raise StoreError(f"Unknown export format “{fmt}”; use one of: {', '.join(EXPORT_FORMATS)}.")
    items, lists = await store.export_items(user_id, list_name)
    log.debug("user %d exported %d items as %s", user_id, len(items), kind)
    # Formatting thousands of items is pure CPU: keep it off the event loop (Discord heartbeats).
    return await asyncio.to_thread(render_export, kind, items, lists=lists, corpus=corpus)


async def import_file(
    store: Store,
    user_id: int,
    data: str | bytes,
    list_name: str | None = None,
    *,
    corpus: CorpusLookup | None = None,
) -> ImportResult:
    """Merge a JSON export (or a bare JSON array of items) into the user's lists.

    Parsing and validation run in a worker thread; bad records are reported in ``errors`` and skipped,
    the rest is imported in one transaction (see :meth:`bot.store.Store.import_items`). ``corpus``
    finds corpus papers by id: for those, the corpus's fields are kept and the file's ignored.

    Raises:
        ImportFormatError: Not UTF-8, not JSON, not an export, or too large.
        InvalidListNameError: ``list_name`` is not a valid list name.
        SavedLimitError / ListLimitError: The import would pass a cap (nothing is imported).
    """
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportFormatError("The file is not UTF-8 text.") from exc
    if len(data) > MAX_IMPORT_CHARS:
        raise ImportFormatError("The file is too large to import.")
    if list_name is not None:
        normalize_list_name(list_name)
    try:
        parsed = await asyncio.to_thread(parse_json, data, note_max=store.note_max, id_max=PAPER_ID_MAX)
    except ValueError as exc:
        raise ImportFormatError(str(exc)) from exc
    result = await store.import_items(user_id, parsed.lists, list_name, corpus=corpus)
    errors = _capped([*parsed.errors, *result.errors])
    return ImportResult(added=result.added, skipped=result.skipped, errors=errors)


def _capped(errors: Sequence[str]) -> tuple[str, ...]:
    """At most :data:`ERRORS_MAX` messages, then one line counting the rest."""
    if len(errors) <= ERRORS_MAX:
        return tuple(errors)
    return (*errors[:ERRORS_MAX], f"… and {len(errors) - ERRORS_MAX} more problems")
