"""Discord-facing text from retrieval's data: bold, escaping, emphasis, length limits.

retrieval/ returns plain data (a hit's :class:`~retrieval.models.Snippet` is character spans into
the abstract's plain display text, :func:`retrieval.markup.styled` the emphasis of a text as spans);
this module is the one place that turns it into Discord markdown, and it runs only for what is
shown. Everything but the spans drawn is escaped, so a text can never mean markdown its author did
not (a masked link, a spoiler, a heading); a link stays a link::

    from bot import render

    render.snippet(hit.snippet)           # "… a **sparse** **autoencoder** learns …" (≤ 300 characters)
    render.abstract(paper.abstract, 600)  # LaTeX as Unicode, \\textbf as **bold**, the rest escaped
    render.pages(paper.abstract, 4096)    # the whole abstract in pieces of at most 4096 characters
    render.title(paper.title, 150)        # a plain title, escaped
    render.escape("a_b*c")                # "a\\_b\\*c"
"""

from __future__ import annotations

import bisect
import re

from retrieval import markup
from retrieval.models import Snippet, Styled

__all__ = [
    "ELLIPSIS",
    "SNIPPET_LIMIT",
    "abstract",
    "code",
    "draw",
    "escape",
    "named",
    "pages",
    "snippet",
    "title",
    "truncate",
]

#: Longest snippet, in characters, markdown included (the sentence choice in retrieval.search
#: uses the same budget).
SNIPPET_LIMIT = 300
ELLIPSIS = "\u2026"

# Discord markdown characters escaped in snippets, so only our own **bold** is markup.
_MARKDOWN_RE = re.compile(r"([\\*_~`|>#\[\]])")
_ATOM_RE = re.compile(r"\S+")
# A link as Discord's markdown finds one in text: the scheme, then up to a space or "<" (and not
# the sentence's closing punctuation).
_LINK_RE = re.compile(r"https?://[^\s<]+[^\s<.,:;\"')\]]")


def escape(text: str) -> str:
    """``text`` with every Discord markdown character backslash-escaped."""
    return _MARKDOWN_RE.sub(r"\\\1", text)


def code(text: str) -> str:
    """``text`` as Discord inline code, whatever backticks it holds (``x`y`` -> ````` x`y `````)."""
    text = " ".join(str(text).split()) or " "
    if "`" not in text:
        return f"`{text}`"
    # A double-backtick span may hold single backticks; a run of two inside would close it early.
    return "`` " + text.replace("``", "`\u200b`") + " ``"


_MARKERS = {"bold": "**", "bold italic": "***", "strike": "~~"}


def draw(text: Styled | str, limit: int | None = None) -> str:
    """Display text as Discord markdown: its spans drawn (bold, italic, strike, code), every other
    markdown character escaped, links left as links (Discord takes a backslash inside one for part
    of the address). With ``limit``, the plain text is cut at a word (with ``…``) until the markdown
    fits; spans cut by it are closed where it ends."""
    s = text if isinstance(text, Styled) else Styled(" ".join((text or "").split()))
    out = _draw(s.text, s.spans)
    if limit is None or len(out) <= limit:
        return out
    room = limit
    for _ in range(8):
        head = markup.truncate(s.text, room)
        out = _draw(head, _clip(s.spans, len(head) - 1))
        if len(out) <= limit:
            return out
        room -= max(1, len(out) - limit)
        if room < 2:
            break
    return truncate(escape(s.text), limit)


def abstract(source: str, limit: int | None = None) -> str:
    """An abstract (or any source text) as the author wrote it: LaTeX as Unicode, its emphasis
    drawn, everything else escaped; at most ``limit`` characters."""
    return draw(markup.styled(source or ""), limit)


def title(text: str, limit: int | None = None) -> str:
    """A plain title (or any plain line) escaped for Discord, at most ``limit`` characters."""
    return draw(text or "", limit)


def named(text: str, paper_id: str, limit: int = 150) -> str:
    """A paper in a sentence: ``**Title** (`id`)``, the title escaped and cut to ``limit``."""
    return f"**{title(text or paper_id, limit)}** ({code(paper_id)})"


def pages(source: str, size: int, *, limit: int | None = None) -> list[str]:
    """The whole of ``source`` drawn as :func:`abstract` draws it, in pieces of at most ``size``
    characters cut between sentences (else between words): an abstract longer than one part of a
    message. A span cut in two is drawn in both pieces. With ``limit``, the text is cut at a word
    (with ``…``) until all the pieces together hold at most ``limit`` characters."""
    styled = markup.styled(source or "")
    out = _pages(styled, size)
    room = limit or 0
    for _ in range(8):
        if limit is None or sum(map(len, out)) <= limit:
            break
        head = markup.truncate(styled.text, max(room, 1))
        out = _pages(Styled(head, tuple(_clip(styled.spans, len(head) - 1))), size)
        room -= max(1, sum(map(len, out)) - limit)
    return out


def _pages(styled: Styled, size: int) -> list[str]:
    text = styled.text
    sentence_ends = [m.end() for m in _SENTENCE_END_RE.finditer(text)] + [len(text)]
    word_ends = [m.end() for m in _SPACE_RE.finditer(text)] + [len(text)]
    out: list[str] = []
    start = 0
    while start < len(text):

        def piece(end: int, start: int = start) -> str:
            shown = text[start:end].rstrip()
            return _draw(shown, _shift(styled.spans, start, start + len(shown)))

        end = 0
        for ends in (sentence_ends, word_ends, range(start + 1, len(text) + 1)):
            candidates = [e for e in ends if e > start]
            k = bisect.bisect_left(candidates, True, key=lambda e: len(piece(e)) > size)  # first too long
            if k:
                end = candidates[k - 1]
                break
        end = end or start + 1
        out.append(piece(end))
        start = end
        while start < len(text) and text[start].isspace():
            start += 1
    return out or [""]


_SENTENCE_END_RE = re.compile(r"[.!?]\s+|\n+")
_SPACE_RE = re.compile(r"\s+")


def _shift(spans: tuple[tuple[int, int, str], ...], start: int, end: int) -> list[tuple[int, int, str]]:
    """``spans`` clipped to ``[start, end)`` and moved to start at 0."""
    return [(max(a, start) - start, min(b, end) - start, st) for a, b, st in spans if a < end and b > start]


def _clip(spans: tuple[tuple[int, int, str], ...], end: int) -> list[tuple[int, int, str]]:
    return _shift(spans, 0, end)


def _draw(text: str, spans: tuple[tuple[int, int, str], ...] | list[tuple[int, int, str]]) -> str:
    links = [m.span() for m in _LINK_RE.finditer(text)] if "://" in text else []
    drawn: list[tuple[int, int, str]] = []
    for a, b, style in spans:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b and not any(la < b and a < lb for la, lb in links):  # a link is never styled
            drawn.append((a, b, style))
    if not drawn and not links:
        return escape(text)
    drawn.sort(key=lambda span: (span[0], -span[1]))
    out: list[str] = []
    open_ends: list[tuple[int, str]] = []  # the spans open now: where each ends, its closing marker
    pos = i = 0

    def plain(upto: int) -> None:
        nonlocal pos
        while pos < upto:
            link = next(((la, lb) for la, lb in links if lb > pos and la < upto), None)
            if link is None:
                out.append(escape(text[pos:upto]))
                pos = upto
            else:
                out.append(escape(text[pos : link[0]]) + text[max(pos, link[0]) : link[1]])
                pos = link[1]

    while i < len(drawn) or open_ends:
        nxt = drawn[i][0] if i < len(drawn) else len(text)
        if open_ends and open_ends[-1][0] <= nxt:
            end, marker = open_ends.pop()
            plain(end)
            out.append(marker)
            continue
        a, b, style = drawn[i]
        i += 1
        if a < pos:
            continue  # (inside a code span or a link drawn already)
        plain(a)
        if style == "code":
            out.append(code(text[a:b]))
            pos = b
            continue
        if style == "italic":  # "_" where the text allows, so it never runs into a "**"
            word_edge = (a == 0 or not text[a - 1].isalnum()) and (b == len(text) or not text[b].isalnum())
            marker = "_" if word_edge else "*"
        else:
            marker = _MARKERS.get(style, "**")
        out.append(marker)
        open_ends.append((b, marker))
    plain(len(text))
    return "".join(out)


def snippet(spans: Snippet | None, limit: int = SNIPPET_LIMIT) -> str:
    """A hit's snippet as Discord markdown: its sentences, query words in ``**bold**``.

    Other markdown characters are escaped; the result is at most ``limit`` characters and its
    markdown is balanced (cuts happen between words, never inside bold). Non-adjacent sentences are
    joined by an ellipsis. ``None`` or an empty snippet gives ``""``.
    """
    if spans is None or not spans.sentences:
        return ""
    text = spans.text
    atoms: list[tuple[str, bool]] = []
    previous_end = -2
    for a, b in spans.sentences:
        if atoms and a != previous_end + 1:  # sentences are joined by one space in ``text``
            atoms.append((ELLIPSIS, False))
        atoms.extend(_render_atoms(text, a, b, [m for m in spans.matches if a <= m[0] < b]))
        previous_end = b
    return _fit(atoms, limit)


def _render_atoms(text: str, start: int, end: int, bold: list[tuple[int, int]]) -> list[tuple[str, bool]]:
    """``text[start:end]`` as whitespace-separated atoms rendered as markdown (the ``bold`` spans
    bold, other markdown characters escaped), each with a flag telling whether it has a bold word.
    Bold never spans atoms, so cutting between atoms keeps the markdown balanced.

    The atoms without bold come from ``str.split`` (the same atoms as ``\\S+``); only the atom
    around each bold span is cut by hand. Spans that are not words in order within the range
    (none that retrieval makes) go through :func:`_render_atoms_general`.
    """
    if text.find("://", start, end) >= 0:  # a link stays as it is, unbolded and unescaped (see below)
        return _render_atoms_general(text, start, end, bold)
    esc = escape if _MARKDOWN_RE.search(text, start, end) else None
    last = start
    for s, e in bold:
        if s < last or e > end or _ATOM_RE.fullmatch(text, s, e) is None:
            return _render_atoms_general(text, start, end, bold)
        last = e
    atoms: list[tuple[str, bool]] = []
    pos, i, n = start, 0, len(bold)
    while i < n:
        a_start = bold[i][0]
        while a_start > pos and not text[a_start - 1].isspace():
            a_start -= 1
        if a_start > pos:
            atoms += [(esc(w) if esc else w, False) for w in text[pos:a_start].split()]
        a_end = _ATOM_RE.match(text, a_start, end).end()  # type: ignore[union-attr] - text[s] is no space
        pieces: list[str] = []
        p = a_start
        while i < n and bold[i][0] < a_end:
            s, e = bold[i]
            piece, word = text[p:s], text[s:e]
            pieces.append(esc(piece) if esc else piece)
            pieces.append(f"**{esc(word) if esc else word}**")
            p = e
            i += 1
        tail = text[p:a_end]
        pieces.append(esc(tail) if esc else tail)
        atoms.append(("".join(pieces), True))
        pos = a_end
    if pos < end:
        atoms += [(esc(w) if esc else w, False) for w in text[pos:end].split()]
    return atoms


def _render_atoms_general(
    text: str, start: int, end: int, bold: list[tuple[int, int]]
) -> list[tuple[str, bool]]:
    """:func:`_render_atoms` for any spans (clipped to the atoms they fall in).

    A link (``https://…``, as Discord finds one) is left as the abstract has it: Discord takes a
    backslash or a ``**`` inside it for part of the address, so an escaped ``_`` or a bold query word
    there would break the link. Query words inside a link are not bolded."""
    links = [m.span() for m in _LINK_RE.finditer(text, start, end)]
    if links:
        bold = [(s, e) for s, e in bold if not any(a < e and s < b for a, b in links)]
    plain_esc = escape if _MARKDOWN_RE.search(text, start, end) else str

    def esc(piece_start: int, piece_end: int) -> str:
        if not links:
            return plain_esc(text[piece_start:piece_end])
        out, p = [], piece_start
        for a, b in links:
            if b <= p or a >= piece_end:
                continue
            out.append(plain_esc(text[p : max(a, p)]))
            p = min(b, piece_end)
            out.append(text[max(a, piece_start) : p])
        out.append(plain_esc(text[p:piece_end]))
        return "".join(out)

    atoms: list[tuple[str, bool]] = []
    span_i = 0
    for m in _ATOM_RE.finditer(text, start, end):
        a_start, a_end = m.span()
        if span_i >= len(bold) or bold[span_i][0] >= a_end:
            atoms.append((esc(a_start, a_end), False))
            continue
        pieces: list[str] = []
        pos = a_start
        while span_i < len(bold) and bold[span_i][0] < a_end:
            s, e = bold[span_i]
            s, e = max(s, a_start), min(e, a_end)
            pieces.append(esc(pos, s))
            pieces.append(f"**{esc(s, e)}**")
            pos = e
            if bold[span_i][1] <= a_end:
                span_i += 1
            else:
                break
        pieces.append(esc(pos, a_end))
        atoms.append(("".join(pieces), True))
    return atoms


def _fit(atoms: list[tuple[str, bool]], limit: int) -> str:
    """Join atoms with spaces within ``limit`` characters, cutting at atom boundaries (with an
    ellipsis) and starting a little before the first bold atom when the start would not fit."""
    text = " ".join(a for a, _ in atoms)
    if len(text) <= limit:
        return text
    first_bold = next((i for i, (_, b) in enumerate(atoms) if b), 0)
    # Start a few words before the first match when the match would otherwise fall off the end.
    start = 0
    if sum(len(a) + 1 for a, _ in atoms[: first_bold + 1]) > limit * 0.6:
        start = max(0, first_bold - 6)
    out: list[str] = [ELLIPSIS] if start > 0 else []
    used = len(out[0]) if out else 0
    cut = False
    for atom, _ in atoms[start:]:
        extra = len(atom) + (1 if out else 0)
        if used + extra > limit - 2:  # keep room for " …"
            cut = True
            break
        out.append(atom)
        used += extra
    if not out or (out == [ELLIPSIS]):
        # A single giant atom (a URL, a formula): cut its plain text, unbolded and escaped.
        plain = atoms[start][0].replace("**", "")
        piece = plain[: limit - 2]
        while piece.endswith("\\"):
            piece = piece[:-1]
        return (ELLIPSIS if start > 0 else "") + piece[: limit - 2 - (1 if start > 0 else 0)] + ELLIPSIS
    text = " ".join(out)
    if cut:
        text += " " + ELLIPSIS
    return text


def truncate(text: str, limit: int, *, placeholder: str = ELLIPSIS) -> str:
    """``text`` cut to at most ``limit`` characters, at a word boundary when one is near, with ``…``.

    The length guard for every outgoing string (titles, field values, labels, ids, choice values):
    text that fits comes back unchanged, whitespace included; a cut adds nothing but the placeholder
    and only keeps ``**`` paired. Text drawn from spans is cut by :func:`draw`'s ``limit`` instead,
    which closes the spans it cuts.
    """
    text = text or ""
    if len(text) <= limit:
        return text
    if limit <= len(placeholder):
        return text[:limit]
    cut = text[: limit - len(placeholder)]
    space = cut.rfind(" ")
    if space >= len(cut) * 0.8:  # don't throw away a fifth of the room to end on a word
        cut = cut[:space]
    # An odd number of ** would leave the rest of the message bold.
    if cut.count("**") % 2:
        cut = cut[: cut.rfind("**")]
    return _whole_escapes(cut.rstrip()) + placeholder


def _whole_escapes(cut: str) -> str:
    """``cut`` without a trailing backslash whose escaped character was cut off (it would show)."""
    run = len(cut) - len(cut.rstrip("\\"))
    return cut[:-1] if run % 2 else cut
