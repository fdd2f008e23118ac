"""Discord-facing text from retrieval's data: bold, escaping, LaTeX → Unicode, length limits.

retrieval/ returns plain data (a hit's :class:`~retrieval.models.Snippet` is character spans into
the abstract's plain display text); this module is the one place that turns it into Discord
markdown, and it runs only for what is shown::

    from bot import render

    render.snippet(hit.snippet)      # "… a **sparse** **autoencoder** learns …" (≤ 300 characters)
    render.display(paper.abstract)   # the abstract with its LaTeX as readable Unicode
    render.abstract(paper.abstract)  # the same, with markdown the author did not mean escaped
    render.escape("a_b*c")           # "a\\_b\\*c"
"""

from __future__ import annotations

import re

from retrieval.markup import latex_to_display
from retrieval.models import Snippet

__all__ = [
    "ELLIPSIS",
    "SNIPPET_LIMIT",
    "abstract",
    "code",
    "display",
    "escape",
    "plain",
    "snippet",
    "truncate",
    "unmeant",
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


def display(text: str) -> str:
    """Abstract or title text as Discord shows it (LaTeX converted to readable Unicode)."""
    return latex_to_display(text or "")


# Markdown an abstract never means, outside code spans and URLs: masked links ``[t](…)``, spoilers
# ``||x||`` (norm bars), and at a line start headings (``#``, ``##``, ``###``, ``-#``) and block quotes.
_PROTECTED_RE = re.compile(r"`[^`\n]*`|<?https?://[^\s<>]+>?")
_MASKED_LINK_RE = re.compile(r"\[([^\[\]\n]*)\](?=\()")
_PIPES_RE = re.compile(r"\|{2,}")
_LINE_START_RE = re.compile(r"(?m)^([ \t]*)(#{1,3}(?=[ \t])|-#(?=[ \t])|>>>|>(?=[ \t]|$))")


def _escape_unmeant(text: str) -> str:
    text = _MASKED_LINK_RE.sub(r"\[\1\]", text)
    text = _PIPES_RE.sub(lambda m: "\\|" * len(m.group()), text)
    return _LINE_START_RE.sub(lambda m: m.group(1) + "\\" + m.group(2), text)


def unmeant(shown: str) -> str:
    """Display text (already converted) with the Discord markdown an abstract or title never means
    escaped: masked links, ``||`` spoilers, headings and block quotes. Code spans and bare URLs are
    left as they are (escapes would show inside them); emphasis the text holds is kept."""
    if not any(c in shown for c in "[|#>"):
        return shown
    out: list[str] = []
    pos = 0
    for m in _PROTECTED_RE.finditer(shown):
        out.append(_escape_unmeant(shown[pos : m.start()]))
        out.append(m.group())
        pos = m.end()
    out.append(_escape_unmeant(shown[pos:]))
    return "".join(out)


def abstract(text: str) -> str:
    """Abstract text as the author wrote it: :func:`display` (LaTeX rendered, ``\\textbf`` bold) passed
    through :func:`unmeant`, so a ``[t](https://…)`` is not a link and ``||x||`` not a spoiler."""
    return unmeant(display(text))


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
    and only keeps ``**`` paired. :func:`retrieval.markup.truncate` is not a drop-in for it: that one
    shortens display markdown (abstract snippets), so it strips the text, re-balances every marker
    and may escape characters to do so — visible backslashes in select labels and autocomplete
    values, which Discord shows as plain text.
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
    return whole_escapes(cut.rstrip()) + placeholder


def _whole_escapes(cut: str) -> str:
    """``cut`` without a trailing backslash whose escaped character was cut off (it would show)."""
    run = len(cut) - len(cut.rstrip("\\"))
    return cut[:-1] if run % 2 else cut


def plain(text: str) -> str:
    """``text`` with markdown emphasis removed (for labels, which do not render markdown)."""
    return re.sub(r"(\*\*|__|~~|`)", "", text or "")


def whole_escapes(cut: str) -> str:
    """``cut`` without a trailing backslash whose escaped character was cut off (it would show)."""
    run = len(cut) - len(cut.rstrip("\\"))
    return cut[:-1] if run % 2 else cut
