"""Text helpers: LaTeX and markdown in abstracts to Discord markdown or plain text, sentences, titles.

* :func:`latex_to_display` turns the LaTeX found in abstracts (``$\\epsilon$``, ``\\textbf{x}``, ``x^2``)
  into Discord markdown with balanced emphasis.
* :func:`strip_markup` turns the same input into plain text (tokeniser input, snippets).
* :func:`split_sentences`, :func:`truncate` and :func:`derive_title` build snippets and titles.
* :func:`balance_markdown` escapes emphasis markers that would not pair up in Discord.

Everything here is pure, never raises on arbitrary input, and runs in time roughly linear in the input:
a corpus of 100k abstracts goes through these functions at load time.
"""

from __future__ import annotations

import bisect
import html
import logging
import re
import unicodedata
from dataclasses import dataclass

logger = logging.getLogger(__name__)

TITLE_LIMIT = 90
ELLIPSIS = "…"

# Placeholders for characters the source escaped (``\_``, ``\*``), so the conversion never mistakes
# them for markdown: latex_to_display turns them into ``\_``/``\*`` (a bare ``_`` inside a word)
# before balancing, strip_markup into plain characters after removing the markdown pairs.
_LIT_UNDERSCORE = "\ue000"
_LIT_STAR = "\ue001"

# Deeply nested braces or command chains only occur in garbage; past this depth we stop recursing
# (the output degrades a little) instead of risking a RecursionError.
_MAX_DEPTH = 40

# --------------------------------------------------------------------------------------------------
# Symbol tables
# --------------------------------------------------------------------------------------------------

_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "varkappa": "ϰ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "omicron": "ο", "pi": "π",
    "varpi": "ϖ", "rho": "ρ", "varrho": "ϱ", "sigma": "σ", "varsigma": "ς", "tau": "τ",
    "upsilon": "υ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "digamma": "ϝ", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π",
    "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "varGamma": "Γ", "varDelta": "Δ", "varTheta": "Θ", "varLambda": "Λ", "varPi": "Π",
    "varSigma": "Σ", "varPhi": "Φ", "varPsi": "Ψ", "varOmega": "Ω",
}  # fmt: skip

_SYMBOLS = {
    "times": "×", "cdot": "·", "cdots": "⋯", "ldots": "…", "dots": "…", "dotsc": "…", "dotsb": "⋯",
    "vdots": "⋮", "ddots": "⋱", "leq": "≤", "le": "≤", "leqslant": "≤", "geq": "≥", "ge": "≥",
    "geqslant": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "sim": "∼", "simeq": "≃", "cong": "≅",
    "propto": "∝", "equiv": "≡", "in": "∈", "notin": "∉", "ni": "∋", "subset": "⊂", "subseteq": "⊆",
    "supset": "⊃", "supseteq": "⊇", "cup": "∪", "cap": "∩", "bigcup": "⋃", "bigcap": "⋂",
    "infty": "∞", "partial": "∂", "nabla": "∇", "sum": "∑", "prod": "∏", "coprod": "∐", "int": "∫",
    "iint": "∬", "oint": "∮", "forall": "∀", "exists": "∃", "nexists": "∄", "neg": "¬", "lnot": "¬",
    "land": "∧", "lor": "∨", "wedge": "∧", "vee": "∨", "to": "→", "rightarrow": "→", "gets": "←",
    "leftarrow": "←", "Rightarrow": "⇒", "Leftarrow": "⇐", "leftrightarrow": "↔",
    "Leftrightarrow": "⇔", "longrightarrow": "⟶", "longleftarrow": "⟵", "Longrightarrow": "⟹",
    "mapsto": "↦", "implies": "⟹", "iff": "⟺", "uparrow": "↑", "downarrow": "↓", "leadsto": "⇝",
    "hookrightarrow": "↪", "rightleftharpoons": "⇌", "ll": "≪", "gg": "≫", "pm": "±", "mp": "∓",
    "div": "÷", "ast": "∗", "star": "⋆", "circ": "∘", "bullet": "•", "oplus": "⊕", "otimes": "⊗",
    "odot": "⊙", "ominus": "⊖", "bigoplus": "⨁", "bigotimes": "⨂", "top": "⊤", "bot": "⊥",
    "perp": "⊥", "parallel": "∥", "mid": "∣", "nmid": "∤", "ell": "ℓ", "hbar": "ℏ", "emptyset": "∅",
    "varnothing": "∅", "setminus": "∖", "angle": "∠", "prime": "′", "dagger": "†", "ddagger": "‡",
    "langle": "⟨", "rangle": "⟩", "lceil": "⌈", "rceil": "⌉", "lfloor": "⌊", "rfloor": "⌋",
    "lvert": "|", "rvert": "|", "vert": "|", "lVert": "‖", "rVert": "‖", "Vert": "‖", "|": "‖",
    "triangleq": "≜", "coloneqq": "≔", "eqqcolon": "≕", "coloneq": "≔", "doteq": "≐",
    "lesssim": "≲", "gtrsim": "≳", "preceq": "⪯", "succeq": "⪰", "prec": "≺", "succ": "≻",
    "models": "⊨", "vdash": "⊢", "dashv": "⊣", "aleph": "ℵ", "Re": "ℜ", "Im": "ℑ", "wp": "℘",
    "sharp": "♯", "flat": "♭", "natural": "♮", "checkmark": "✓", "surd": "√", "backslash": "\\",
    "colon": ":", "triangle": "△", "square": "□", "blacksquare": "■", "diamond": "◇",
    "lozenge": "◊", "clubsuit": "♣", "spadesuit": "♠", "heartsuit": "♡", "diamondsuit": "♢",
    "degree": "°", "textdegree": "°", "S": "§", "P": "¶", "copyright": "©", "textcopyright": "©",
    "textregistered": "®", "texttrademark": "™", "textemdash": "—", "textendash": "–",
    "textbullet": "•", "textasciitilde": "~", "textasciicircum": "^", "textbackslash": "\\",
    "textbar": "|", "textless": "<", "textgreater": ">", "textquotedblleft": "“",
    "textquotedblright": "”", "textquoteleft": "‘", "textquoteright": "’", "textellipsis": "…",
    "euro": "€", "pounds": "£", "ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ",
    "OE": "Œ", "aa": "å", "AA": "Å", "l": "ł", "L": "Ł", "i": "i", "j": "j", "LaTeX": "LaTeX",
    "TeX": "TeX", "BibTeX": "BibTeX", "quad": " ", "qquad": " ", "enspace": " ", "thinspace": " ",
    "newline": " ", "par": " ", "item": " • ", "cr": " ", "smallsetminus": "∖", "complement": "∁",
    "imath": "ı", "jmath": "ȷ", "Box": "□", "infin": "∞",
}  # fmt: skip

# Math operator names: printed as words and, unlike unknown commands, never eat a following group
# (``\log{n}`` is ``log n``, not ``n``).
_FUNCTIONS = {
    "log": "log", "ln": "ln", "lg": "lg", "exp": "exp", "sin": "sin", "cos": "cos", "tan": "tan",
    "cot": "cot", "sec": "sec", "csc": "csc", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
    "arcsin": "arcsin", "arccos": "arccos", "arctan": "arctan", "max": "max", "min": "min",
    "arg": "arg", "argmax": "arg max", "argmin": "arg min", "sup": "sup", "inf": "inf", "lim": "lim",
    "limsup": "lim sup", "liminf": "lim inf", "det": "det", "dim": "dim", "ker": "ker", "Pr": "Pr",
    "deg": "deg", "gcd": "gcd", "hom": "hom", "mod": "mod", "bmod": "mod", "tr": "tr",
    "Tr": "Tr", "diag": "diag", "rank": "rank", "sgn": "sgn", "poly": "poly", "polylog": "polylog",
    "softmax": "softmax", "KL": "KL", "Var": "Var", "Cov": "Cov", "E": "E",
}  # fmt: skip

# Commands whose (first) argument is printed plainly.
_PLAIN_ARG = frozenset(
    "text textrm textsf textnormal textup textmd texttt textsc mathrm mathbf mathit mathsf mathtt "
    "mathnormal boldsymbol bm mbox hbox fbox operatorname mathop ensuremath underline uline "
    "overbrace underbrace textsuperscript textsubscript mathfrak pmb emph textit textsl textbf "
    "mathbb mathcal mathscr mathds mathbbm".split()
)
_ITALIC = frozenset({"emph", "textit", "textsl"})
_BOLD = frozenset({"textbf"})
# Commands whose argument is dropped (citations, labels, spacing, colours).
_DROP_ARG = frozenset(
    "cite citep citet citealp citealt citeauthor citeyear parencite textcite autocite nocite ref "
    "eqref cref Cref autoref pageref label footnote footnotetext thanks vspace hspace vskip hskip "
    "phantom hphantom vphantom includegraphics bibliography bibliographystyle pagestyle "
    "thispagestyle color".split()
)
# Commands that print nothing and take no argument (sizing, delimiters modifiers, fonts switches).
_DROP = frozenset(
    "left right middle big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr displaystyle "
    "textstyle scriptstyle scriptscriptstyle limits nolimits noindent centering small large Large "
    "LARGE footnotesize normalsize tiny huge Huge scriptsize bfseries itshape mdseries rmfamily "
    "sffamily ttfamily upshape em it bf rm sf tt sl sc hline nonumber notag relax protect xspace "
    "ignorespaces leavevmode medskip smallskip bigskip maketitle strut mathstrut allowbreak "
    "nobreak displaybreak".split()
)
_TWO_ARG_SECOND = frozenset({"textcolor", "colorbox"})

_TEXT_ACCENTS = {
    "'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
    ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
    "r": "\u030a", "d": "\u0323", "b": "\u0331", "t": "\u0361",
}  # fmt: skip
_MATH_ACCENTS = {
    "hat": "\u0302", "widehat": "\u0302", "tilde": "\u0303", "widetilde": "\u0303", "bar": "\u0304",
    "overline": "\u0305", "vec": "\u20d7", "overrightarrow": "\u20d7", "dot": "\u0307",
    "ddot": "\u0308", "check": "\u030c", "breve": "\u0306", "acute": "\u0301", "grave": "\u0300",
    "mathring": "\u030a",
}  # fmt: skip

# Single-character commands (escapes and spacing) -> (text, math) output.
_ESCAPES = {
    "%": "%", "&": "&", "_": _LIT_UNDERSCORE, "#": "#", "$": "$", "{": "{", "}": "}", " ": " ",
    ",": " ", ";": " ", ":": " ", ">": " ", "!": "", "/": "", "-": "", "@": "", "\\": " ",
    "*": _LIT_STAR, "|": "‖",
}  # fmt: skip

_SUP = dict(
    zip(
        "0123456789+-=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWαβγδεθιφχ′″∗⋆†⊤",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵅᵝᵞᵟᵋᶿᶥᵠᵡ′″∗⋆†ᵀ",
        strict=True,
    )
)
_SUB = dict(
    zip("0123456789+-=()aehijklmnoprstuvxβγρφχ", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ", strict=True)
)


def _alphabet(upper_start: int, lower_start: int | None, holes: dict[str, str]) -> dict[str, str]:
    table = {c: chr(upper_start + i) for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZ")}
    if lower_start is not None:
        table.update({c: chr(lower_start + i) for i, c in enumerate("abcdefghijklmnopqrstuvwxyz")})
    table.update(holes)
    return table


# Letters the Mathematical Alphanumeric Symbols block leaves out live in Letterlike Symbols.
_BLACKBOARD = _alphabet(
    0x1D538, 0x1D552, {"C": "ℂ", "H": "ℍ", "N": "ℕ", "P": "ℙ", "Q": "ℚ", "R": "ℝ", "Z": "ℤ"}
)
_BLACKBOARD.update({str(d): chr(0x1D7D8 + d) for d in range(10)})
_SCRIPT = _alphabet(
    0x1D49C,
    None,
    {"B": "ℬ", "E": "ℰ", "F": "ℱ", "H": "ℋ", "I": "ℐ", "L": "ℒ", "M": "ℳ", "R": "ℛ"},
)
_LETTER_TABLES = {"mathbb": _BLACKBOARD, "mathds": _BLACKBOARD, "mathbbm": _BLACKBOARD,
                  "mathcal": _SCRIPT, "mathscr": _SCRIPT}  # fmt: skip

# --------------------------------------------------------------------------------------------------
# Regular expressions (compiled once; all linear)
# --------------------------------------------------------------------------------------------------

_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"{}\\$|^`]+", re.I)
_URL_TRAIL = ".,;:!?'\"*_"
_TEXT_SPECIAL = re.compile(r"[\\${}~`]|''|--")
_MATH_SPECIAL = re.compile(r"[\\{}^_'~*&$]")
_CMD_NAME = re.compile(r"[A-Za-z]+")
_SINGLE_QUOTED = re.compile(r"([A-Za-z][\w \-]{0,60}?)'(?!')")
_INLINE_CLOSE = re.compile(r"(?<=[^\s\\])\$(?!\d)")
_HTML_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,8});", re.I)
_SPACES = re.compile(r"[ \t\f\v\u00a0]+")
_AROUND_NEWLINE = re.compile(r" ?\n ?")
_MANY_NEWLINES = re.compile(r"\n{3,}")
_SPACE_BEFORE_PUNCT = re.compile(r" +([,.;:])(?=\s|$)")
_EMPTY_BRACKETS = re.compile(r" ?(?:\(\s*[,;]?\s*\)|\[\s*[,;]?\s*\])")
_RUNS = re.compile(r"\\[\\*_~|`]|`+|\*+|_+|~~|\|\|")
_ESCAPED_MARK = re.compile(r"\\([\\*_~|`])")
_LIT_RESTORE = re.compile(f"[{_LIT_UNDERSCORE}{_LIT_STAR}]")


def _url_spans(text: str) -> list[tuple[int, int]]:
    """Start/end of every URL in ``text``, trailing sentence punctuation excluded."""
    # str.find anchors the regex: an unanchored, case-insensitive search is slow on every abstract
    starts = []
    i = text.find("://")
    while i != -1:
        j = i
        while j > 0 and text[j - 1].isalpha() and i - j < 5:
            j -= 1
        if text[j:i].lower() in ("http", "https"):
            starts.append(j)
        i = text.find("://", i + 3)
    if "www." in text or "WWW." in text:
        low = text.lower() if len(text.lower()) == len(text) else text
        i = low.find("www.")
        while i != -1:
            if (i == 0 or not text[i - 1].isalnum() and text[i - 1] != "/") and i not in starts:
                starts.append(i)
            i = low.find("www.", i + 4)
    spans: list[tuple[int, int]] = []
    for start in sorted(starts):
        if spans and start < spans[-1][1]:
            continue
        m = _URL.match(text, start)
        if m is None:
            continue
        end = m.end()
        while end > start and text[end - 1] in _URL_TRAIL:
            end -= 1
        # a closing parenthesis belongs to the URL only when the URL opened one
        while (
            end > start and text[end - 1] == ")" and text.count("(", start, end) < text.count(")", start, end)
        ):
            end -= 1
        if end - start > 4:
            spans.append((start, end))
    return spans


# --------------------------------------------------------------------------------------------------
# LaTeX conversion
# --------------------------------------------------------------------------------------------------


def _atom(s: str) -> str:
    """``s`` as a single operand: parenthesised unless it is one word or already bracketed."""
    s = s.strip()
    if not s:
        return ""
    if all(c.isalnum() or c in "′∗'.·" or unicodedata.combining(c) for c in s):
        return s
    if s[0] in "([{⟨|" and _closes_at_end(s):
        return s
    return f"({s})"


def _closes_at_end(s: str) -> bool:
    """True when the bracket opening ``s`` is closed by its last character (so ``(a)(b)`` is false)."""
    pairs = {"(": ")", "[": "]", "{": "}", "⟨": "⟩", "|": "|"}
    opener, closer = s[0], pairs[s[0]]
    if s[-1] != closer:
        return False
    if opener == closer:
        return s.count(opener) == 2
    depth = 0
    for i, c in enumerate(s):
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0 and i != len(s) - 1:
                return False
    return True


def _script(arg: str, table: dict[str, str], marker: str) -> str:
    """A super/subscript: Unicode when every character has a form, else ``^x`` or ``^(...)``."""
    s = arg.strip()
    if not s:
        return ""
    compact = s.replace(" ", "")
    if all(c in table for c in compact):
        return "".join(table[c] for c in compact)
    if len(compact) == 1:
        return marker + compact
    return f"{marker}({s})"


def _accent(arg: str, mark: str) -> str:
    s = arg.strip()
    if not s:
        return ""
    # one combining mark per character: \tilde{O} -> Õ, \bar{xy} -> x̄ȳ
    return unicodedata.normalize("NFC", "".join(c + mark for c in s if not c.isspace()))


@dataclass(slots=True)
class _Out:
    """Output of one converted command: its text and whether it is a bare word (needs spacing)."""

    text: str
    word: bool = False


class _Latex:
    """A small recursive-descent LaTeX reader that converts as it reads (one pass, no backtracking)."""

    __slots__ = ("src", "pos", "emphasis", "urls", "url_i", "accented")

    def __init__(self, src: str, emphasis: bool) -> None:
        self.accented = False  # set when combining marks were emitted (NFC needed)
        self.src = src
        self.pos = 0
        self.emphasis = emphasis
        self.urls = _url_spans(src)
        self.url_i = 0

    def convert(self) -> str:
        out: list[str] = []
        self._seq(out, len(self.src), False, 0, in_group=False)
        return "".join(out)

    def _next_url(self, pos: int) -> tuple[int, int] | None:
        urls = self.urls
        while self.url_i < len(urls) and urls[self.url_i][0] < pos:
            self.url_i += 1
        return urls[self.url_i] if self.url_i < len(urls) else None

    # -- sequences --------------------------------------------------------------------------------

    def _seq(self, out: list[str], end: int, math: bool, depth: int, in_group: bool) -> bool:
        """Convert ``src[pos:end]``; returns True when a closing brace ended a group."""
        src = self.src
        special = _MATH_SPECIAL if math else _TEXT_SPECIAL
        while self.pos < end:
            pos = self.pos
            m = special.search(src, pos, end)
            stop = m.start() if m else end
            if not math and self.urls:
                url = self._next_url(pos)
                if url is not None and url[0] < stop:
                    # URLs are copied verbatim: ``~``, ``--`` and ``_`` inside them are not markup
                    uend = min(url[1], end)
                    out.append(src[pos:uend])
                    self.pos = uend
                    continue
            if stop > pos:
                out.append(src[pos:stop])
                self.pos = stop
            if m is None:
                break
            c = src[stop]
            self.pos = stop + 1
            if c == "}":
                if in_group:
                    return True
                continue  # a stray closing brace is a LaTeX artefact: drop it
            if c == "{":
                text, _closed = self._group(end, math, depth)
                out.append(text)
            elif c == "\\":
                self._command(out, end, math, depth)
            elif c == "$":
                self._dollar(out, end, math, depth)
            elif math:
                self._math_char(c, out, end, depth)
            else:
                self._text_char(c, out, stop)
        return False

    def _group(self, end: int, math: bool, depth: int) -> tuple[str, bool]:
        """Read a ``{...}`` group whose opening brace was consumed; returns (text, was closed)."""
        if depth >= _MAX_DEPTH:
            return "", True
        sub: list[str] = []
        closed = self._seq(sub, end, math, depth + 1, in_group=True)
        return "".join(sub), closed

    def _text_char(self, c: str, out: list[str], at: int) -> None:
        src = self.src
        if c == "~":
            if src.startswith("~", at + 1):  # "~~strike~~" is markdown, not two ties
                out.append("~~")
                self.pos = at + 2
                return
            before = src[at - 1] if at > 0 else " "
            after = src[at + 1] if at + 1 < len(src) else " "
            # LaTeX's tie (Fig.~3) is a space; a free-standing ~ (``~1.8x``) means "about"
            out.append(" " if not before.isspace() and not after.isspace() and after != "~" else "~")
        elif c == "`":
            if src.startswith("`", at + 1):
                out.append("“")
                self.pos = at + 2
                return
            m = _SINGLE_QUOTED.match(src, at + 1)
            if m:  # LaTeX single quotes: `wrapper' -> ‘wrapper’
                out.append(f"‘{m.group(1)}’")
                self.pos = m.end()
            else:
                out.append("`")
        elif c == "'":  # matched "''"
            out.append("”")
            self.pos = at + 2
        elif c == "-":  # matched "--"
            if src.startswith("-", at + 2):
                out.append("—")
                self.pos = at + 3
            else:
                out.append("–")
                self.pos = at + 2

    def _math_char(self, c: str, out: list[str], end: int, depth: int) -> None:
        if c in "^_":
            arg = self._arg(end, True, depth + 1)
            out.append(_script(arg, _SUP if c == "^" else _SUB, c))
        elif c == "'":
            out.append("′")
        elif c in "~&":
            out.append(" ")
        elif c == "*":
            out.append("∗")  # a math star is multiplication, never markdown emphasis

    def _dollar(self, out: list[str], end: int, math: bool, depth: int) -> None:
        src = self.src
        start = self.pos  # just after the "$"
        if math:
            return  # a stray dollar inside math is a delimiter artefact
        if src.startswith("$", start):
            close = src.find("$$", start + 1, end)
            if close == -1:
                out.append("$$")
                self.pos = start + 1
                return
            self._math_region(out, start + 1, close, depth)
            self.pos = close + 2
            return
        # Pandoc's rule: "$" opens math only before a non-space, and closes only after a non-space
        # and not before a digit, so "costs $5 and $10" stays text.
        if start >= end or src[start].isspace():
            out.append("$")
            return
        m = _INLINE_CLOSE.search(src, start + 1, end)
        if m is None:
            out.append("$")
            return
        self._math_region(out, start, m.start(), depth)
        self.pos = m.start() + 1

    def _math_region(self, out: list[str], start: int, stop: int, depth: int) -> None:
        self.pos = start
        sub: list[str] = []
        if depth < _MAX_DEPTH:
            self._seq(sub, stop, True, depth + 1, in_group=False)
        else:
            sub.append(self.src[start:stop])
        out.append("".join(sub))
        self.pos = stop

    # -- commands ---------------------------------------------------------------------------------

    def _command(self, out: list[str], end: int, math: bool, depth: int) -> None:
        """Convert the command whose backslash was just consumed and append it to ``out``."""
        src = self.src
        i = self.pos
        if i >= end:
            return  # a lone trailing backslash
        m = _CMD_NAME.match(src, i, end)
        if m:
            name = m.group()
            self.pos = m.end()
            if self.pos < end and src[self.pos] == "*":  # \operatorname*, \section*
                self.pos += 1
        else:
            name = src[i]
            self.pos = i + 1
        if name in ("left", "right") and out and out[-1].endswith(" "):
            out[-1] = out[-1].rstrip(" ")  # "\tilde{O} \left(" reads as "Õ(", not "Õ ("
        res = self._expand(name, end, math, depth)
        text = res.text
        if res.word and text:
            # keep words apart: \log\log n -> "log log n", \alpha\ell stays "αℓ"
            if out and out[-1] and (out[-1][-1].isalnum() or out[-1][-1] == "."):
                text = " " + text
            if self.pos < end and src[self.pos].isalnum():
                text += " "
        out.append(text)

    def _skip_space(self, end: int) -> None:
        src = self.src
        while self.pos < end and src[self.pos] in " \t\n\r":
            self.pos += 1

    def _arg(self, end: int, math: bool, depth: int) -> str:
        """Read one argument: a group, a command, or a single character."""
        if depth >= _MAX_DEPTH:
            return ""
        self._skip_space(end)
        if self.pos >= end:
            return ""
        c = self.src[self.pos]
        if c == "{":
            self.pos += 1
            return self._group(end, math, depth)[0]
        if c == "\\":
            self.pos += 1
            sub: list[str] = []
            self._command(sub, end, math, depth + 1)
            return "".join(sub)
        if c in "}$" or (math and c in "^_"):
            return ""  # missing argument: leave the delimiter to the caller
        self.pos += 1
        if math:
            return {"*": "∗", "'": "′", "~": " "}.get(c, c)
        return c

    def _raw_group(self, end: int) -> str | None:
        """The verbatim text of a following ``{...}`` group (URLs must not be converted)."""
        self._skip_space(end)
        src = self.src
        if self.pos >= end or src[self.pos] != "{":
            return None
        depth = 0
        for j in range(self.pos, end):
            if src[j] == "{":
                depth += 1
            elif src[j] == "}":
                depth -= 1
                if depth == 0:
                    text = src[self.pos + 1 : j]
                    self.pos = j + 1
                    return text.strip()
        text = src[self.pos + 1 : end]
        self.pos = end
        return text.strip()

    def _optional(self, end: int) -> str | None:
        """Skip a ``[...]`` optional argument (\\sqrt[3]{x}); returns its raw text."""
        src = self.src
        save = self.pos
        self._skip_space(end)
        if self.pos < end and src[self.pos] == "[":
            close = src.find("]", self.pos, min(end, self.pos + 200))
            if close != -1:
                text = src[self.pos + 1 : close]
                self.pos = close + 1
                return text
        self.pos = save
        return None

    def _expand(self, name: str, end: int, math: bool, depth: int) -> _Out:
        if len(name) == 1 and not name.isalpha():
            if name in _TEXT_ACCENTS and not (math and name in "'`~=.^\""):
                self.accented = True
                return _Out(_accent(self._arg(end, math, depth + 1), _TEXT_ACCENTS[name]))
            if name == "(":
                return _Out(self._delimited_math(end, "\\)", depth))
            if name == "[":
                return _Out(self._delimited_math(end, "\\]", depth))
            if name in "()[]":
                return _Out("")  # a closer without opener
            return _Out(_ESCAPES.get(name, name))
        if name in _GREEK:
            return _Out(_GREEK[name])
        if name in _SYMBOLS:
            return _Out(_SYMBOLS[name])
        if name in _FUNCTIONS:
            return _Out(_FUNCTIONS[name], word=True)
        if name in _MATH_ACCENTS:
            self.accented = True
            return _Out(_accent(self._arg(end, math, depth + 1), _MATH_ACCENTS[name]))
        if name in _TEXT_ACCENTS and not math and self._next_is_arg(end):
            self.accented = True
            return _Out(_accent(self._arg(end, math, depth + 1), _TEXT_ACCENTS[name]))
        if name in _PLAIN_ARG:
            return self._plain_arg(name, end, math, depth)
        if name in _DROP_ARG:
            self._optional(end)
            self._arg(end, math, depth + 1)
            return _Out("")
        if name in _DROP:
            if name in ("left", "right", "middle", "bigl", "bigr", "Bigl", "Bigr"):
                self._skip_space(end)
                if self.pos < end and self.src[self.pos] == ".":
                    self.pos += 1  # \left. is an invisible delimiter
            return _Out("")
        return self._special(name, end, math, depth)

    def _next_is_arg(self, end: int) -> bool:
        """For letter accents (\\c, \\v, \\u ...): only an immediately following group or letter."""
        if self.pos >= end:
            return False
        c = self.src[self.pos]
        return c == "{" or c == " " and self.pos + 1 < end and self.src[self.pos + 1].isalpha()

    def _plain_arg(self, name: str, end: int, math: bool, depth: int) -> _Out:
        self._skip_space(end)
        closed = True
        if self.pos < end and self.src[self.pos] == "{" and depth < _MAX_DEPTH:
            self.pos += 1
            arg, closed = self._group(end, math, depth + 1)
        else:
            arg = self._arg(end, math, depth + 1)
        if name in _LETTER_TABLES:
            table = _LETTER_TABLES[name]
            return _Out("".join(table.get(c, c) for c in arg))
        if name == "textsuperscript":
            return _Out(_script(arg, _SUP, "^"))
        if name == "textsubscript":
            return _Out(_script(arg, _SUB, "_"))
        if name in ("operatorname", "mathop"):
            return _Out(arg.strip(), word=True)
        inner = arg.strip()
        if math or not self.emphasis or not inner or not closed:
            return _Out(arg)
        if name not in _ITALIC and name not in _BOLD:
            return _Out(arg)
        marker = "*" if name in _ITALIC else "**"
        run = len(inner) - len(inner.lstrip("*"))
        if run == len(inner) - len(inner.rstrip("*")) and run in ((1, 3) if marker == "*" else (2, 3)):
            return _Out(inner)  # already in that style: \textbf{\textbf{x}} stays **x**
        return _Out(f"{marker}{inner}{marker}")

    def _delimited_math(self, end: int, closer: str, depth: int) -> str:
        close = self.src.find(closer, self.pos, end)
        if close == -1:
            return ""
        sub: list[str] = []
        self._math_region(sub, self.pos, close, depth)
        self.pos = close + len(closer)
        return "".join(sub)

    def _special(self, name: str, end: int, math: bool, depth: int) -> _Out:
        """Commands with several arguments, raw arguments, and unknown commands."""
        if name in ("frac", "dfrac", "tfrac", "cfrac", "nicefrac", "sfrac"):
            num = self._arg(end, True, depth + 1)
            den = self._arg(end, True, depth + 1)
            return _Out(f"{_atom(num)}/{_atom(den)}")
        if name in ("binom", "tbinom", "dbinom", "choose"):
            top = self._arg(end, True, depth + 1)
            bottom = self._arg(end, True, depth + 1)
            return _Out(f"C({top.strip()}, {bottom.strip()})")
        if name == "sqrt":
            index = self._optional(end)
            radicand = _atom(self._arg(end, math, depth + 1))
            root = "∛" if index and index.strip() == "3" else "∜" if index and index.strip() == "4" else "√"
            return _Out(root + radicand)
        if name == "not":
            arg = self._arg(end, math, depth + 1).strip()
            negated = {"=": "≠", "∈": "∉", "∃": "∄", "⊂": "⊄", "⊆": "⊈", "∣": "∤", "≡": "≢", "∼": "≁"}
            self.accented = True
            return _Out(negated.get(arg, arg + "\u0338" if arg else ""))
        if name == "url":
            raw = self._raw_group(end)
            return _Out(raw if raw is not None else "url")
        if name == "href":
            url = self._raw_group(end)
            label = self._arg(end, math, depth + 1).strip()
            if url is None:
                return _Out(label)
            return _Out(f"{label} ({url})" if label and label != url else url)
        if name in _TWO_ARG_SECOND:
            self._raw_group(end)
            return _Out(self._arg(end, math, depth + 1))
        if name in ("begin", "end"):
            self._raw_group(end)
            return _Out(" ")
        # Unknown command: keep its argument when it has one (\ours{Method}), else its name.
        if self.pos < end and self.src[self.pos] == "{" and depth < _MAX_DEPTH:
            self.pos += 1
            arg, _closed = self._group(end, math, depth + 1)
            if arg.strip():
                return _Out(arg)
        return _Out(name, word=True)


def _finish(text: str, converted: bool = True) -> str:
    """Normalise spacing; after a conversion also tidy what dropped commands left behind."""
    if "  " in text or "\t" in text or "\u00a0" in text or "\f" in text or "\v" in text:
        text = _SPACES.sub(" ", text)
    if "\n" in text:
        text = _AROUND_NEWLINE.sub("\n", text)
        text = _MANY_NEWLINES.sub("\n\n", text)
    if converted:
        # "a method \cite{x}." -> "a method ." -> "a method."; "(\cite{x})" -> "()" -> ""
        if " ," in text or " ." in text or " ;" in text or " :" in text:
            text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
        if "()" in text or "[]" in text or "( " in text or "[ " in text or "(," in text or "(;" in text:
            text = _EMPTY_BRACKETS.sub("", text)
    return text.strip()


def _needs_conversion(text: str) -> bool:
    # substring tests run at C speed; an unanchored regex costs ~10x more on a 1.5 kB abstract
    return (
        "\\" in text
        or "$" in text
        or "{" in text
        or "}" in text
        or "~" in text
        or "`" in text
        or "''" in text
        or "--" in text
    )


def _convert(text: str, emphasis: bool) -> str:
    """LaTeX -> markdown-ish text (emphasis markers only if ``emphasis``), not yet balanced."""
    if not isinstance(text, str):  # defensive: callers may hand us None from a JSON record
        text = "" if text is None else str(text)
    if "&" in text and _HTML_ENTITY.search(text):
        text = html.unescape(text)
    if not _needs_conversion(text):
        return _finish(text, converted=False)
    latex = _Latex(text, emphasis)
    text = latex.convert()
    if latex.accented:
        text = unicodedata.normalize("NFC", text)  # compose e + U+0301 into é
    return _finish(text)


def latex_to_display(text: str) -> str:
    """Convert LaTeX in an abstract or title to Discord markdown.

    Math is rendered with Unicode (``$\\epsilon$`` -> ``ε``, ``$x^2$`` -> ``x²``, ``$O(n^{1/2})$`` ->
    ``O(n^(1/2))``, ``\\mathbb{R}`` -> ``ℝ``, ``\\tilde{O}`` -> ``Õ``), ``\\textit``/``\\emph`` become
    ``*x*`` and ``\\textbf`` ``**x**``, escapes (``\\%``, ``\\&``, ``\\_``) and quotes (````x''`` ->
    ``“x”``) are resolved, citations dropped, and unknown commands keep their name or argument.
    Markdown already in the text is kept, but any emphasis marker that would not pair up in Discord is
    escaped so it cannot italicise the rest of a message.

    Args:
        text: Source text with LaTeX and/or markdown.

    Returns:
        Discord-safe markdown. Never raises.
    """
    # literals first: a restored "\\_" can end a URL, which changes what the balancer must look at
    return balance_markdown(_restore_literals(_convert(text, emphasis=True), display=True))


def strip_markup(text: str) -> str:
    """Convert LaTeX and markdown to plain text (no emphasis markers, no escapes).

    Same conversion as :func:`latex_to_display`, but emphasis is dropped instead of rendered and
    markdown pairs (``**x**``, ``*x*``, ``__x__``, ``_x_``, `` `x` ``, ``~~x~~``) are removed.

    Args:
        text: Source text.

    Returns:
        Plain text with collapsed spaces. Never raises.
    """
    out = _convert(text, emphasis=False)
    if "*" in out or "_" in out or "`" in out or "~~" in out or "||" in out or "\\" in out:
        out = _strip_pairs(out)
    return _finish(_restore_literals(out, display=False))


def _restore_literals(text: str, display: bool) -> str:
    if _LIT_UNDERSCORE not in text and _LIT_STAR not in text:
        return text

    def repl(m: re.Match[str]) -> str:
        char = "_" if m.group() == _LIT_UNDERSCORE else "*"
        if not display:
            return char
        i = m.start()
        before = text[i - 1] if i > 0 else " "
        after = text[i + 1] if i + 1 < len(text) else " "
        # an underscore inside a word (down_proj) is inert in Discord; elsewhere escape it
        if char == "_" and before.isalnum() and after.isalnum():
            return "_"
        return "\\" + char

    return _LIT_RESTORE.sub(repl, text)


# --------------------------------------------------------------------------------------------------
# Markdown balancing
# --------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Run:
    start: int
    end: int
    char: str
    can_open: bool
    can_close: bool
    partner: int = -1  # index of the matching run, -1 when unmatched


def _delimiter_runs(text: str) -> list[_Run]:
    """Emphasis delimiter runs (``*``, ``_``, ``~~``, ``||``) outside URLs and code spans, paired."""
    urls = _url_spans(text)
    runs: list[_Run] = []
    skip_until = -1
    url_i = 0
    n = len(text)
    for m in _RUNS.finditer(text):
        s, e = m.start(), m.end()
        if s < skip_until:
            continue
        while url_i < len(urls) and urls[url_i][1] <= s:
            url_i += 1
        if url_i < len(urls) and urls[url_i][0] <= s < urls[url_i][1]:
            continue  # Discord autolinks URLs before parsing emphasis
        tok = m.group()
        if tok[0] == "\\":
            continue  # escaped: already literal
        if tok[0] == "`":
            close = text.find(tok, e)
            if close != -1:
                skip_until = close + len(tok)  # code span: its content is literal
            continue
        before = text[s - 1] if s > 0 else " "
        after = text[e] if e < n else " "
        can_open = not after.isspace()
        can_close = not before.isspace()
        if tok[0] == "_":
            # Discord only treats "_" as emphasis at word boundaries (snake_case is inert)
            can_open = can_open and not before.isalnum()
            can_close = can_close and not after.isalnum()
        runs.append(_Run(s, e, tok[0], can_open, can_close))
    _pair(runs)
    return runs


def _pair(runs: list[_Run]) -> None:
    stack: list[int] = []
    for idx, run in enumerate(runs):
        if run.can_close:
            for j in range(len(stack) - 1, -1, -1):
                opener = runs[stack[j]]
                if opener.char == run.char and opener.end - opener.start == run.end - run.start:
                    opener.partner = idx
                    run.partner = stack[j]
                    del stack[j:]  # openers in between can no longer close: they stay unmatched
                    break
            if run.partner != -1:
                continue
        if run.can_open:
            stack.append(idx)


def balance_markdown(text: str) -> str:
    """Escape every emphasis marker that would not pair up, so Discord renders exactly the pairs.

    ``*``/``_`` runs, ``~~`` and ``||`` are paired like Discord does (same length, opener before a
    non-space, closer after a non-space, ``_`` only at word boundaries); unmatched ones get a
    backslash. Intra-word underscores are left alone (Discord ignores them), as are URLs and code spans.

    Args:
        text: Markdown text.

    Returns:
        The text with unmatched markers escaped. Idempotent.
    """
    if not text or not ("*" in text or "_" in text or "~~" in text or "||" in text):
        return text
    runs = _delimiter_runs(text)
    parts: list[str] = []
    last = 0
    for run in runs:
        if run.partner != -1:
            continue
        if run.char == "_" and not run.can_open and not run.can_close:
            continue  # inert snake_case underscore
        parts.append(text[last : run.start])
        parts.append("".join("\\" + c for c in text[run.start : run.end]))
        last = run.end
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def _strip_pairs(text: str) -> str:
    """Remove paired markdown delimiters and code-span backticks; unescape escaped markers.

    ``||`` pairs stay: in an abstract they are norm bars (``||W||``), never a spoiler."""
    runs = _delimiter_runs(text)
    drop = [(r.start, r.end) for r in runs if r.partner != -1 and r.char != "|"]
    if drop:
        parts = []
        last = 0
        for s, e in drop:
            parts.append(text[last:s])
            last = e
        parts.append(text[last:])
        text = "".join(parts)
    if "`" in text:
        text = re.sub(r"(`+)(.+?)\1", r"\2", text)
    return _ESCAPED_MARK.sub(r"\1", text)


# --------------------------------------------------------------------------------------------------
# Truncation
# --------------------------------------------------------------------------------------------------

_TRAILING_JUNK = " \t\n,;:-–—([{/\\"


def plural(count: int, noun: str, many: str | None = None) -> str:
    """A count with its noun: ``"1 paper"``, ``"3 papers"``, ``"1,204 papers"``.

    Args:
        count: How many.
        noun: The singular noun (phrase): ``"paper"``, ``"saved item"``.
        many: The plural when it is not ``noun + "s"`` (``"stored paper copies"``).

    Returns:
        The count with thousands separators and the noun in the right number.
    """
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {many or noun + 's'}"


def truncate(text: str, limit: int) -> str:
    """Shorten ``text`` to at most ``limit`` characters, cutting at a word boundary and adding "…".

    When ``text`` is balanced markdown (every emphasis marker paired, as :func:`latex_to_display`
    returns it) the result is too: a pair whose closing marker falls after the cut loses its opening
    marker, and a cut never leaves a marker that would italicise what follows.

    Args:
        text: Text (plain or markdown).
        limit: Maximum length of the result, ellipsis included.

    Returns:
        ``text`` (stripped) when it fits, else a prefix ending in "…" (``""`` when ``limit < 1``).

    The bot's ``bot.ui.embeds.truncate`` is a different tool: a length guard for any outgoing
    Discord string that never strips or escapes (labels and ids must come out as given).
    """
    text = text.strip()
    if limit < 1:
        return ""
    if len(text) <= limit:
        return text
    if limit == 1:
        return ELLIPSIS
    room = limit - 1
    cut = room
    if not text[room].isspace():
        space = max(text.rfind(" ", 0, room + 1), text.rfind("\n", 0, room + 1))
        if space >= room // 2:  # only back off to a space when it does not cost half the text
            cut = space
    markdown = any(c in text for c in "*_~|`")
    if markdown and "`" in text:
        start = _code_span_start(text, cut)
        if start is not None and text[:start].strip():
            cut = start  # a code span cut in two would turn its content into live markdown
    head = text[:cut].rstrip(_TRAILING_JUNK)
    if not head:
        head = text[:room]
    if not markdown:
        return head.rstrip(_TRAILING_JUNK) + ELLIPSIS
    head = _drop_broken_openers(text, head).rstrip(_TRAILING_JUNK + "*_~|")
    result = head + ELLIPSIS
    if _has_unpaired(result) and not _has_unpaired(text):
        result = _escape_to_fit(head, limit)
    return result


def _has_unpaired(text: str) -> bool:
    return any(
        r.partner == -1 and (r.char != "_" or r.can_open or r.can_close) for r in _delimiter_runs(text)
    )


def _escape_to_fit(head: str, limit: int) -> str:
    """Escape the markers a cut left unpaired, shortening the text until the escapes fit."""
    for _ in range(6):
        out = balance_markdown(head.rstrip(_TRAILING_JUNK + "*_~|")) + ELLIPSIS
        if len(out) <= limit:
            return out
        head = head[: max(0, len(head) - (len(out) - limit))]
    plain = re.sub(r"[*_~|`\\]", "", head).rstrip(_TRAILING_JUNK)
    return plain[: limit - 1] + ELLIPSIS


_BACKTICKS = re.compile(r"(?<!\\)`+")


def _code_span_start(text: str, cut: int) -> int | None:
    """Start of the `code span` that ``cut`` falls inside, if any."""
    pos = 0
    while True:
        m = _BACKTICKS.search(text, pos)
        if m is None or m.start() >= cut:
            return None
        close = text.find(m.group(), m.end())
        if close == -1:
            return None
        if cut < close + len(m.group()):
            return m.start()
        pos = close + len(m.group())


def _drop_broken_openers(full: str, head: str) -> str:
    """Remove the opening markers of emphasis pairs whose closing marker was cut off."""
    if not ("*" in head or "_" in head or "~~" in head or "||" in head):
        return head
    runs = _delimiter_runs(full)
    cut = len(head)
    remove = [
        (r.start, r.end)
        for r in runs
        if r.partner != -1 and r.end <= cut and runs[r.partner].start >= r.start and runs[r.partner].end > cut
    ]
    # a closer only partly kept (cut inside "**") is removed too
    remove += [(r.start, cut) for r in runs if r.start < cut < r.end]
    if not remove:
        return head
    parts = []
    last = 0
    for s, e in sorted(remove):
        parts.append(head[last:s])
        last = max(last, e)
    parts.append(head[last:])
    return "".join(parts)


# --------------------------------------------------------------------------------------------------
# Sentences
# --------------------------------------------------------------------------------------------------

# Words that end with a period but do not end a sentence when followed by a space (lowercased).
_ABBREVIATIONS = frozenset(
    "e.g i.e cf vs al fig figs eq eqs sec secs tab tabs ref refs no nos dr prof mr mrs ms st approx "
    "resp ca viz inc ltd jr sr vol pp ch chap app eds ed et thm lem def prop cor alg appx w.r.t a.k.a "
    "etc.al u.s".split()
)
_BOUNDARY_CANDIDATE = re.compile(r"[.!?\u2026\n]")
_CLOSERS = "\"'”’)]"
_DOTTED = re.compile(r"(?:[a-z]\.)+[a-z]")
_SENTENCE_OPENERS = "“\"'‘([$\\*_#@"


def _boundary_at(text: str, i: int) -> tuple[int, int] | None:
    """If a sentence ends at candidate ``text[i]``: (end of the sentence, start of the next one)."""
    n = len(text)
    c = text[i]
    if c == "\n":
        j = i + 1
        while j < n and text[j] in " \t\r":
            j += 1
        return (i, j + 1) if j < n and text[j] == "\n" else None
    j = i
    while j < n and text[j] in ".!?\u2026":
        j += 1
    while j < n and text[j] in _CLOSERS:
        j += 1
    if j >= n:
        return n, n
    spaced = text[j].isspace()
    k = j
    while k < n and text[k].isspace():
        k += 1
    if k >= n:
        return j, n
    nxt = text[k]
    if spaced:
        starts_sentence = nxt.isupper() or nxt.isdigit() or nxt in _SENTENCE_OPENERS
        if not starts_sentence and not (ord(nxt) > 127 and not nxt.islower()):
            return None
    elif c not in "?!" and not (nxt.isupper() and k + 1 < n and text[k + 1].islower()):
        return None  # "1.5", "i.i.d.", "Fig.3": no space and no capitalised word after
    if c == "." and _is_abbreviation(text, i, spaced):
        return None
    return j, k


def _boundaries(text: str, start: int = 0) -> list[tuple[int, int]]:
    """All sentence boundaries at or after ``start`` as (sentence end, next sentence start)."""
    urls = _url_spans(text)
    out = []
    url_i = 0
    skip_to = start
    for m in _BOUNDARY_CANDIDATE.finditer(text, start):
        i = m.start()
        if i < skip_to:
            continue
        while url_i < len(urls) and urls[url_i][1] <= i:
            url_i += 1
        if url_i < len(urls) and urls[url_i][0] <= i:
            continue  # dots inside URLs
        b = _boundary_at(text, i)
        if b is not None:
            out.append(b)
            skip_to = b[1]
    return out


def split_sentences(text: str) -> list[str]:
    """Split text into sentences.

    Boundaries are ``.``, ``!``, ``?`` (or ``…``) followed by space and a sentence-like start (capital,
    digit, quote, bracket, markup), or followed directly by a capitalised word ("models.Recent" - a
    missing space in the source), and blank lines. Abbreviations (e.g., i.e., et al., Fig., Eq.),
    initials, decimals (1.5) and dots inside URLs do not split.

    Args:
        text: Plain or markdown text.

    Returns:
        Stripped, non-empty sentences in order (terminal punctuation kept).
    """
    if not text or not isinstance(text, str):
        return []
    sentences: list[str] = []
    start = 0
    for end, nxt in _boundaries(text):
        sentence = text[start:end].strip()
        if sentence:
            sentences.append(sentence)
        start = nxt
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def _is_abbreviation(text: str, dot: int, spaced: bool) -> bool:
    space = max(text.rfind(" ", max(0, dot - 30), dot), text.rfind("\n", max(0, dot - 30), dot))
    raw = text[space + 1 : dot]
    word = raw.lstrip("([{\"'“‘*_").lower()
    if not word:
        return False
    if word in _ABBREVIATIONS:
        # "et al." glued to the next sentence ("Dang et al.Lastly") is a boundary all the same
        return spaced or word != "al"
    if len(word) == 1 and word.isalpha():
        return raw[-1].isupper() or spaced  # an initial: "J. Smith"
    # dotted abbreviations: "i.i.d", "a.k.a", "U.S"
    return "." in word and _DOTTED.fullmatch(word) is not None


# --------------------------------------------------------------------------------------------------
# Titles
# --------------------------------------------------------------------------------------------------
#
# Trigger phrases ("we propose", "termed") are located with str.find on a few literal words and only
# then matched with an anchored regex: an unanchored alternation costs tens of microseconds per
# abstract in CPython's re, and titles are derived for every paper at load time.

_ADVERBS = (
    r"(?:\s+(?:\w+ly|also|then|first|further|here|now|thus|therefore|hence|instead|next|"
    r"additionally|finally|newly|will|can|aim\s+to|seek\s+to|set\s+out\s+to))*"
)
_V1 = (
    r"propose[sd]?|introduce[sd]?|present(?:s|ed)?|develop(?:s|ed)?|design(?:s|ed)?|build(?:s)?|built|"
    r"construct(?:s|ed)?|contribute[sd]?|create[sd]?|release[sd]?|curate[sd]?|provide[sd]?|"
    r"offer(?:s|ed)?|put\s+forward|devise[sd]?"
)
_V2 = (
    r"(?:show(?:s|ed)?|prove[sd]?|demonstrate[sd]?|find(?:s)?|found|establish(?:es|ed)?|reveal(?:s|ed)?|"
    r"argue[sd]?|discover(?:s|ed)?|observe[sd]?)(?:,?\s+\w+ly,?)?\s+that"
)
_V3 = (
    r"stud(?:y|ies|ied)|investigate[sd]?|examine[sd]?|consider(?:s|ed)?|analy[sz]e[sd]?|explore[sd]?|"
    r"address(?:es|ed)?|tackle[sd]?|revisit(?:s|ed)?|focus(?:es|ed)?\s+on|delve[sd]?\s+into|"
    r"characteri[sz]e[sd]?|formali[sz]e[sd]?"
)
_G1 = r"proposing|introducing|presenting|developing|designing|building|constructing|creating|devising"
_G3 = r"studying|investigating|examining|analy[sz]ing|exploring|characteri[sz]ing"
_TRIGGER_WE = re.compile(
    rf"(?:we|this\s+(?:paper|work|study|article|letter|note)|our\s+(?:work|paper|study)){_ADVERBS}\s+"
    rf"(?:(?P<v1>{_V1})|(?P<v2>{_V2})|(?P<v3>{_V3}))\b[\s:]*",
    re.I,
)
_TRIGGER_BY = re.compile(rf"by\s+(?:(?P<v1>{_G1})|(?P<v3>{_G3}))\b[\s:]*")
_TRIGGER_AND = re.compile(
    r"and\s+(?:then\s+|also\s+|further\s+)?(?P<v1>propose|provide|introduce|present|develop|design)\b[\s:]*"
)
# Literal-prefix regexes over the lowercased text find candidate positions at C speed (CPython's re
# scans for a literal prefix quickly, but not for an alternation); the anchored pattern then decides.
_GERUND_STEMS = (
    "propos|introduc|present|develop|design|build|construct|creat|devis|stud|investigat|examin|analy|"
    "explor|character"
)
_TRIGGER_NEEDLES: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (re.compile("we "), _TRIGGER_WE),
    (re.compile("this (?:paper|work|study|article|letter|note) "), _TRIGGER_WE),
    (re.compile("our (?:work|paper|study) "), _TRIGGER_WE),
    (re.compile(f"by (?:{_GERUND_STEMS})"), _TRIGGER_BY),
    (
        re.compile("and (?:then |also |further )?(?:propos|provid|introduc|present|develop|design)"),
        _TRIGGER_AND,
    ),
)
_APPOSITION_NEEDLE = re.compile(
    "our (?:proposed |new )?(?:method|approach|framework|model|algorithm|system|benchmark|dataset|tool|"
    "technique|architecture|solution|pipeline),"
)
_APPOSITION = re.compile(
    r"[Oo]ur\s+(?:proposed\s+|new\s+)?(?:method|approach|framework|model|algorithm|system|benchmark|"
    r"dataset|tool|technique|architecture|solution|pipeline),\s*"
)
_NAMING_NOUNS = (
    r"method|approach|framework|model|algorithm|technique|benchmark|dataset|phenomenon|task|problem|"
    r"system|metric|strategy|procedure|architecture|module|loss|objective|principle|effect|property|"
    r"paradigm|setting|regime|notion|concept|measure|score|estimator|attack|defense|policy|tool"
)
# What may precede a passive "termed X": a comma, "is/are", or a noun ("a method called X").
_NP_BEFORE_COMMA = re.compile(r"\b(?:an?|the)\s+((?:[\w-]+\s+){0,5}?[\w-]+),\s*$", re.I)
_PASSIVE_CONTEXT = re.compile(rf"(?:,\s*|\b(?:is|are)\s+|\b(?:{_NAMING_NOUNS})s?\s+)$", re.I)
_PASSIVE_NEEDLES = tuple(re.compile(f"{word} ") for word in ("termed", "dubbed", "called", "named", "coined"))
_ACTIVE_NEEDLE = re.compile("we (?:term|call|dub|name|coin) ")
_REFER_NEEDLE = re.compile("refer")
_REFER = re.compile(r"refer(?:red)?\s+to\s+(?:[\w-]+\s+){0,3}?as\s+")
_NAME_START = re.compile(r"(?:as\s+)?(?:the\s+|an?\s+)?")
_NAME_STOP = re.compile(r"[,.;:!?\"”]|\s(?:which|that|where|and|to|as|in|of|for|is|are|can)\s|$")
_QUOTED = re.compile(r"[“\"‘'`]{1,2}([^“”\"‘’'`]{2,60}?)[”\"’']{1,2}")

_LEADING_FILLER = re.compile(
    r"(?:(?:the|an?|our)\s+)?(?:(?:novel|new|first|simple(?:\s+yet\s+\w+)?|general|"
    r"unified|\w+-agnostic|principled|effective|efficient|lightweight|generic|versatile|powerful),?\s+)*",
    re.I,
)
_ABBR_PAREN = re.compile(r"\(\s*([A-Za-z0-9][\w\-+./]{0,15}?)\s*\)")
_NAME_TOKEN = re.compile(r"[A-Za-z0-9][\w\-+.]*[\w+]|[A-Z]")
_NAME_AFTER = re.compile(r"\s*(?:[,(:.;]|\s(?:which|that|as|to|for|and|—)\b|$)")
_NP_THEN_NAME = re.compile(
    r"(?:an?|the)\s+((?:[\w-]+\s+){0,3}?[\w-]+),\s+((?:[A-Z][\w-]*\s+){1,4}?[A-Z][\w-]*)(?=\s*[,(]|\s+(?:for|to)\b)"
)
# descriptions keep their adjectives ("a lightweight framework"), only the article and "novel" go
_ARTICLE_FILLER = re.compile(r"(?:(?:the|an?|our)\s+)?(?:(?:novel|new|first),?\s+)*", re.I)
_EMPHASIS = re.compile(r"(\*{1,3}|_{1,2})([^*_]{2,80}?)\1(?![*_])")
_DESC_NP = re.compile(r"\s*[,:—–]\s*(?P<np>(?:an?|the)\s+\S.*)", re.S)
_SPELLED_OUT = re.compile(r"\s*\(([^()]{6,120})\)")
_DESC_REL = re.compile(
    r"\s*,?\s*(?:which|that)\s+(?:(?P<modal>can|could|will|may)\s+(?:\w+ly\s+)?)?(?P<verb>[a-z]+)\s+(?P<rest>\S.*)",
    re.S,
)
_DESC_COLON = re.compile(r"\s*:\s*(?P<desc>[A-Z0-9]\S*.*)", re.S)
_TAIL = re.compile(
    r"\s*((?:[a-z][\w-]*\s*){1,3}?)(?=[,.;:]|\s(?:that|which|to|for|with|in|on|of|by|is|are)\b|$)"
)
_CLAUSE_BREAK = re.compile(
    r"\s*(?:[:;]\s|[:;]$|\s[—–-]{1,2}\s|—|(?<!e\.g)(?<!i\.e)(?<!\sal)(?<!\svs)(?<!\scf)(?<!abbr)(?<!resp)(?<!\setc)\.\s|\.$|\?|!|"
    r"\s+which\s|,\s+(?:which|that|where|while|"
    r"whereas|thereby|thus|and\s+(?:thus|then|we|it|show|demonstrate)|enabling|allowing|leading|"
    r"resulting|making|yielding|without|but|such\s+as|including|i\.e\.|e\.g\.|as\s+well\s+as|"
    r"so\s+that|in\s+which|whose|who|achieving|providing|offering|namely|respectively|especially|"
    r"particularly)|\s\(?(?:\d|[ivx]{1,4}|[a-h])\)\s)"
)
_STRONG_CUT = r"that|which|where|whose|while|whereas|when|because|since|by|but"
_CUT_POINTS = re.compile(
    rf"\s+(?:(?P<strong>{_STRONG_CUT})|for|with|across|to|in|on|using|via|through|under|based\s+on|"
    r"within|from|over|and|as|at|into|towards?|against|without|between|among|beyond|after|before|"
    r"during)\b|(?P<comma>,\s)"
)
# Parentheticals dropped from titles: acronyms "(RL)", examples "(e.g., ...)", enumerators "(i)",
# citations "[3]"; a formula's own parentheses "(B+H)" stay.
_PARENTHETICAL = re.compile(
    r"\s*\((?:e\.g\.|i\.e\.|see|cf\.|resp\.)[^()]{0,120}\)|\s+\([A-Za-z][\w\-+./]{0,15}\)(?=[\s,.;:]|$)"
    r"|\s*\((?:[ivx]{1,4}|\d{1,2}|[a-h])\)|\s*\[[^\[\]]{0,120}\]"
)
_REJECT_START = re.compile(
    r"(?:this|these|those|that|it|its|them|their|they|such|whether|to|both|each|here|there|several|"
    r"some|two|three|four|five|a\s+number|an?\s+(?:series|set|range|variety|number|suite|family)\s+of|"
    r"a\s+way|ways|our)(?=\s)",
    re.I,
)
_GENERIC_HEAD = frozenset(
    "method methods approach approaches framework frameworks algorithm algorithms model models "
    "technique techniques strategy strategies system systems solution solutions mechanism mechanisms "
    "pipeline pipelines way ways analysis procedure procedures scheme schemes tool tools module "
    "modules setup paradigm".split()
)
_CONCEPT_OF = re.compile(
    r"(?:the\s+)?(?:[\w-]+\s+){0,2}?(?:concept|notion|idea|problem|task|question|challenge|issue|"
    r"phenomenon|use|study|analysis|design)\s+of\s+(?=\S)",
    re.I,
)
_FRAMEWORK_FOR = re.compile(
    r"(?:[\w-]+\s+){0,3}?(?:framework|method|approach|technique|strategy|pipeline|algorithm)\s+"
    r"(?:for|to)\s+(?=\w+ing\b)",
    re.I,
)
_OBJECT_CHARS = 300  # a title never needs more of a trigger's object than this
_HEDGES = re.compile(r"\s+(?:in\s+fact|indeed|actually)\b", re.I)
_ENUMERATOR = re.compile(r"\(?(?:\d|[ivx]{1,4}|[a-h])\)\s")
_TO_VERB = re.compile(r"to\s+([a-z]{3,})\s+(?=\S)")
_IN_THIS_PAPER = re.compile(r"(?:in\s+this\s+(?:paper|work|study|article)|here),?\s+", re.I)
_WE = re.compile(r"\bwe\b", re.I)
_TRAILING_STOPWORDS = frozenset(
    "a an the of for and or to in on with by from via that which as at into its their our is are "
    "be this these than between under over using based within across".split()
)
_PREPOSITIONS = frozenset("for of in on to with by from via under over across and or than as at into".split())
_SMALL_WORDS = frozenset("a an the of for and or to in on with by from via vs at as into".split())
_STOP_VERBS = frozenset("is are was were be been has have had can may might will would does do did".split())


def _plain_sentence(md: str) -> str:
    """A markdown-ish fragment without emphasis markers or escapes, spaces normalised."""
    if "*" in md:
        md = md.replace("*", "")
    if "_" in md:
        md = re.sub(r"(?<!\w)_{1,2}|_{1,2}(?!\w)", "", md)
    if "\\" in md:
        md = md.replace("\\", "")
    md = md.replace(" ,", ",")
    if "  " in md or "\t" in md or "\n" in md:
        md = " ".join(md.split())
    return md.strip()


def _clean_phrase(text: str) -> str:
    """Remove parentheticals/citations from a title phrase and normalise spacing."""
    if "(" in text or "[" in text:
        text = _PARENTHETICAL.sub("", text)
    return " ".join(text.replace(" ,", ",").split()).strip(" ,;:-–—")


def _capitalize(text: str) -> str:
    """Capitalise the first word if it is an ordinary lowercase word (leave dLLMs, s-OTDD alone)."""
    word = text.split(" ", 1)[0]
    letters = [c for c in word if c.isalpha()]
    if letters and all(c.islower() for c in letters) and word[0].isalpha():
        return word[0].upper() + text[1:]
    return text


def _title_case(phrase: str) -> str:
    """Title-case an all-lowercase phrase: 'steady-state adaptation' -> 'Steady-State Adaptation'."""
    if any(c.isupper() for c in phrase):
        return phrase
    out = []
    for i, word in enumerate(phrase.split()):
        if i > 0 and word in _SMALL_WORDS:
            out.append(word)
            continue
        parts = word.split("-")
        out.append("-".join([parts[0][:1].upper() + parts[0][1:]] + [_cap_part(p) for p in parts[1:]]))
    return " ".join(out)


def _cap_part(part: str) -> str:
    """A later part of a hyphenated word: 'of' in 'mixture-of-experts' stays lowercase."""
    return part if part in _SMALL_WORDS else part[:1].upper() + part[1:]


def _strip_trailing_stopwords(phrase: str) -> str:
    words = phrase.split(" ")
    while len(words) > 1 and words[-1].lower().strip(",;:") in _TRAILING_STOPWORDS:
        words.pop()
    return " ".join(words).rstrip(" ,;:")


def _schwartz_hearst(short: str, long: str) -> str | None:
    """The long form of abbreviation ``short`` at the end of ``long`` (Schwartz & Hearst, 2003)."""
    s_idx = len(short) - 1
    l_idx = len(long) - 1
    while s_idx >= 0:
        c = short[s_idx].lower()
        if not c.isalnum():
            s_idx -= 1
            continue
        # the first letter of the abbreviation must start a word
        while l_idx >= 0 and (
            long[l_idx].lower() != c or (s_idx == 0 and l_idx > 0 and long[l_idx - 1].isalnum())
        ):
            l_idx -= 1
        if l_idx < 0:
            return None
        l_idx -= 1
        s_idx -= 1
    start = long.rfind(" ", 0, l_idx + 1) + 1
    return long[start:].strip()


def _abbreviation(abbr: str) -> bool:
    """True for strings shaped like an abbreviation: SSCP, s-OTDD, SEs, L2D, task-IF."""
    if not 2 <= len(abbr) <= 16 or not any(c.isupper() for c in abbr):
        return False
    upper = sum(1 for c in abbr if c.isupper() or c.isdigit())
    return upper >= 2 or (upper >= 1 and len(abbr) <= 3)


def _long_form(abbr: str, before: str) -> str | None:
    """The expansion of ``(abbr)`` that ends ``before``, validated for length and shape."""
    # a plural abbreviation (SEs) spells a plural long form (Super Experts)
    core = abbr[:-1] if abbr.endswith("s") and abbr[:-1].isupper() and len(abbr) > 2 else abbr
    words = before.split()
    window = " ".join(words[-min(len(core) + 5, len(core) * 2) :])
    long = _schwartz_hearst(core, window)
    if not long or len(long) <= len(abbr) or long.lower().startswith(abbr.lower()):
        return None
    long = re.sub(r"^(?:the|an?|our|novel|new)\s+", "", long, flags=re.I).strip(" ,")
    if not long or len(long.split()) > len(core) + 3 or "," in long:
        return None
    return long


def _name_like(token: str) -> bool:
    """CamelCase or acronym-like tokens that name a contribution: SAEBench, M3DT, MoFit, RATE."""
    if len(token) < 2 or not any(c.isalpha() for c in token):
        return False
    parts = token.split("-")
    # hyphenated title-case words (Two-Stage, Self-Supervised) are ordinary words
    if len(parts) > 1 and all(p[:1].isupper() and p[1:].islower() for p in parts if p):
        return False
    tail = token[1:]
    return tail != tail.lower()


def _gerund(verb: str) -> str | None:
    """'filters' -> 'filtering', 'uses' -> 'using', 'maps' -> 'mapping' (third-person verbs only)."""
    v = verb.lower()
    if v in _STOP_VERBS or len(v) < 4 or not v.endswith("s") or v.endswith("ss"):
        return None
    if v.endswith("ies"):
        base = v[:-3] + "y"
    elif v.endswith(("sses", "shes", "ches", "xes", "zes")):
        base = v[:-2]
    else:
        base = v[:-1]
    return _gerund_base(base)


def _gerund_base(base: str) -> str:
    """'develop' -> 'developing', 'use' -> 'using', 'map' -> 'mapping', 'tie' -> 'tying'."""
    base = base.lower()
    if base.endswith("ie"):
        return base[:-2] + "ying"
    if base.endswith("e") and not base.endswith(("ee", "ye", "oe")) and len(base) > 2:
        base = base[:-1]
    elif len(base) <= 4 and re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", base):
        base += base[-1]
    return base + "ing"


def _ellipsize(text: str, limit: int) -> str:
    """Word-boundary truncation for titles: no dangling 'of'/'the' or open parenthesis before "…"."""
    cut = truncate(text, limit)
    if not cut.endswith(ELLIPSIS):
        return cut
    head = cut[: -len(ELLIPSIS)]
    opened = head.rfind("(")
    if opened > len(head) // 2 and head.count("(") > head.count(")"):
        head = head[:opened]  # "... foundation model called MOTOR (Many Outcome…" -> "... MOTOR…"
    return _strip_trailing_stopwords(head).rstrip(_TRAILING_JUNK) + ELLIPSIS


def _fit(prefix: str, phrase: str, limit: int = TITLE_LIMIT) -> str:
    """``prefix + phrase`` within ``limit``, cut at the last clause/preposition boundary that fits.

    A preposition cut right after a relative pronoun ("... that emerge | from") would leave a stub,
    so it needs three words since the last clause boundary. Falls back to an ellipsis.
    """
    phrase = phrase.strip()
    if len(prefix) + len(phrase) <= limit:
        return prefix + phrase
    best = None
    clause_start = 0
    for m in _CUT_POINTS.finditer(phrase):
        if len(prefix) + m.start() > limit:
            break
        strong = bool(m.group("strong") or m.group("comma"))
        cand = phrase[: m.start()].rstrip(" ,;:")
        words = cand.split()
        ok = len(words) >= 2 and words[-1].lower() not in _TRAILING_STOPWORDS
        ok = ok and cand.count("(") <= cand.count(")")  # never cut inside parentheses
        if not strong and len(phrase[clause_start : m.start()].split()) < 3:
            ok = False
        if ok:
            best = cand
        if strong:
            clause_start = m.end()
    if best is not None and len(prefix) + len(best) >= 25:
        return prefix + best
    return _ellipsize(prefix + phrase, limit)


def _head_phrase(obj: str) -> str:
    """The object noun phrase: ``obj`` up to the end of its clause."""
    pos = 0
    while True:
        m = _CLAUSE_BREAK.search(obj, pos)
        comma = obj.find(", ", pos)
        stop = min(m.start() if m else len(obj), comma if comma != -1 else len(obj))
        if stop == comma and obj.count("(", 0, comma) > obj.count(")", 0, comma):
            pos = comma + 2  # a comma inside parentheses: "(e.g., A, B)"
            continue
        if stop == comma and stop < len(obj):
            # a comma inside a leading adjective list ("a simple, model-agnostic X") does not end it
            head = _LEADING_FILLER.sub("", obj[:stop], count=1)
            if len(head.split()) <= 1 and not _name_like(head.strip()):
                pos = comma + 2
                continue
        return obj[:stop]


def _phrase_ok(phrase: str) -> bool:
    words = phrase.split()
    if len(words) < 2 or _REJECT_START.match(phrase):
        return False
    if words[0].lower() in _PREPOSITIONS or words[0][0] in "(:[,":
        return False
    # "a model-based algorithm (that ...)": a generic head with nothing specific attached
    head = []
    for w in words:
        if w.lower() in _PREPOSITIONS or w.lower() in ("that", "which", "where"):
            break
        head.append(w.lower().strip(",.;:"))
    if len(head) <= 2 and head and head[-1] in _GENERIC_HEAD and not head[0].endswith("ing"):
        rest = words[len(head) :]
        if not rest or rest[0].lower() in ("that", "which", "where"):
            return False
    return True


def _object_phrase(obj: str) -> str | None:
    """A title phrase from the (plain) object of a trigger verb, or None if it is no title material."""
    if _ENUMERATOR.match(obj):
        return None  # "(1) ... (2) ...": a list, not a title
    if obj.startswith(","):
        # "we show that, even at an 8x rate, our model ...": skip the inserted clause
        close = obj.find(", ", 1)
        obj = obj[close + 2 :] if close != -1 else ""
    phrase = _clean_phrase(_head_phrase(obj))
    to_verb = _TO_VERB.match(phrase)
    if to_verb and to_verb.group(1) not in _STOP_VERBS:
        # "we propose to develop models that ..." -> "Developing models that ..."
        phrase = _gerund_base(to_verb.group(1)) + " " + phrase[to_verb.end() :]
    if _REJECT_START.match(phrase):
        return None
    phrase = _LEADING_FILLER.sub("", phrase, count=1)
    if _CONCEPT_OF.match(phrase):
        phrase = _CONCEPT_OF.sub("", phrase, count=1)
    if _FRAMEWORK_FOR.match(phrase):
        phrase = _FRAMEWORK_FOR.sub("", phrase, count=1)  # "a framework for detecting X" -> "Detecting X"
    phrase = _HEDGES.sub("", phrase)
    phrase = _strip_trailing_stopwords(phrase.strip(" ,;:"))
    if not _phrase_ok(phrase):
        return None
    return _capitalize(phrase)


@dataclass(slots=True)
class _Named:
    """A named contribution: title text and whether it came with a description."""

    title: str
    described: bool


def _abbr_title(abbr: str, long: str, tail: str = "") -> str:
    """'SSCP: Single-Step Completion Policy'; 'Super Experts (SEs)' for a plural term."""
    long = _capitalize(_title_case(long))
    tail_words = [w for w in tail.split() if w.islower()]
    while tail_words and tail_words[-1] in _GENERIC_HEAD:
        tail_words.pop()  # "(SSA) algorithm" adds nothing; "(MUDD) connections" does
    if tail_words:
        long = f"{long} {_title_case(' '.join(tail_words))}"
    if abbr.endswith("s") and abbr[:-1].isupper() and long.endswith("s"):
        return f"{long} ({abbr})"
    return f"{abbr}: {long}"


def _tail(text: str) -> str:
    """Lowercase head nouns right after an abbreviation: '(MUDD) connections, a ...' -> 'connections'."""
    m = _TAIL.match(text)
    if not m:
        return ""
    words = []
    for word in m.group(1).split():
        if word in _TRAILING_STOPWORDS or word in _STOP_VERBS:
            break
        words.append(word)
    return " ".join(words)


def _describe(name: str, after: str) -> _Named:
    """'NAME: description' from what follows the name in its sentence ('..., a X that ...')."""
    spelled = _SPELLED_OUT.match(after)
    content = spelled.group(1).strip() if spelled else ""
    if spelled and len(content.split()) <= 2 * len(name) + 2 and _schwartz_hearst(name, content) == content:
        # "FLASK (Fine-grained Language Model Evaluation based on Alignment SKill Sets)"
        return _Named(_fit(f"{name}: ", _title_case(content)), True)
    m = _DESC_NP.match(after)
    if m:
        phrase = _clean_phrase(_head_phrase(m.group("np")))
        # keep the article but drop "novel"/"new": "a novel X" -> "a X" -> "an X" when needed
        phrase = _LEADING_FILLER.sub(lambda x: "a " if x.group().strip() else "", phrase, count=1)
        phrase = re.sub(r"^an?\s+(?=[aeiouAEIOU])", "an ", re.sub(r"^an?\s+", "a ", phrase))
        phrase = _strip_trailing_stopwords(phrase)
        if len(phrase.split()) >= 2:
            return _Named(_fit(f"{name}: ", _capitalize(phrase)), True)
    colon = _DESC_COLON.match(after)
    if colon:  # "we present WOODS: 10 challenging time series benchmarks covering ..."
        phrase = _strip_trailing_stopwords(_clean_phrase(_head_phrase(colon.group("desc"))))
        if len(phrase.split()) >= 2:
            return _Named(_fit(f"{name}: ", phrase), True)
    m = _DESC_REL.match(after)
    if m:
        verb = m.group("verb")
        gerund = _gerund_base(verb) if m.group("modal") and verb not in _STOP_VERBS else _gerund(verb)
        rest = _strip_trailing_stopwords(_clean_phrase(_head_phrase(m.group("rest"))))
        if gerund and rest:
            return _Named(_fit(f"{name}: ", f"{gerund.capitalize()} {rest}"), True)
    return _Named(name, False)


def _name_from_object(obj_md: str) -> _Named | None:
    """Find a named contribution at the start of a trigger verb's object (markdown-ish text)."""
    opening = obj_md[:160]
    if opening.lower() == opening:
        return None  # every kind of name below has a capital letter near the start
    lead = _LEADING_FILLER.match(obj_md)
    rest = obj_md[lead.end() :] if lead else obj_md
    # 1. an emphasised name: *Selective DPO*, **DiffuGuard**, \textit{Single-Step Completion Policy}
    em = _EMPHASIS.match(rest) if rest[:1] in ("*", "_") else None
    if em:
        name = _plain_sentence(em.group(2))
        after = _plain_sentence(rest[em.end() :])
        if any(c.isupper() for c in name) and len(name.split()) <= 6:
            abbr = _ABBR_PAREN.match(after)
            if abbr and _abbreviation(abbr.group(1)):
                return _Named(_abbr_title(abbr.group(1), name, _tail(after[abbr.end() :])), True)
            return _describe(name, after)
    plain = _plain_sentence(obj_md)
    # 2. "Phrase (ABBR)" opening the object: "a novel steady-state adaptation (SSA) algorithm"
    head = _head_phrase(plain) if "(" in plain[:200] else ""
    for m in _ABBR_PAREN.finditer(head):
        abbr = m.group(1)
        if not _abbreviation(abbr) or head.startswith("-", m.end()):
            continue  # "(NAS)-enabled algorithm": the abbreviation only modifies the name
        before = head[: m.start()].rstrip()
        long = _long_form(abbr, before)
        if long is None:
            continue
        # only filler may precede the long form, else the abbreviation belongs to a complement
        # ("M3DT, a mixture-of-experts (MoE) framework", "a method for reinforcement learning (RL)")
        if not _LEADING_FILLER.fullmatch(before[: len(before) - len(long)]):
            break
        return _Named(_abbr_title(abbr, long, _tail(head[m.end() :])), True)
    # 3. a CamelCase/acronym token: "SAEBench, a ...", "M3DT, a ...", "MoFit, a ..."
    body = plain[_LEADING_FILLER.match(plain).end() :]  # type: ignore[union-attr]  # always matches
    tok = _NAME_TOKEN.match(body)
    if tok and _name_like(tok.group()) and _NAME_AFTER.match(body, tok.end()):
        after = body[tok.end() :]
        abbr = _ABBR_PAREN.match(after.lstrip())
        if abbr:
            after = after.lstrip()[abbr.end() :]
        return _describe(tok.group(), after)
    # 4. a name closing a short noun phrase: "a multi-agent framework AgentVerse that ..."
    named = _name_closing_np(plain)
    if named:
        return named
    # 5. a title-case name in apposition: "a lightweight framework, Prompt Risk Control, for ..."
    m5 = _NP_THEN_NAME.match(plain)
    if m5:
        np = _ARTICLE_FILLER.sub("", m5.group(1), count=1).strip()
        if np and not any(w.lower() in _PREPOSITIONS for w in np.split()):
            return _Named(_fit(f"{m5.group(2)}: ", _with_article(np)), True)
    return None


def _name_closing_np(plain: str) -> _Named | None:
    """'a novel disentanglement metric LSEPIN and ...' -> 'LSEPIN: A disentanglement metric'."""
    words = plain.split(" ", 7)
    if len(words) < 3 or words[0].lower() not in ("a", "an", "the"):
        return None
    for k in range(2, min(len(words), 7)):
        token = words[k].rstrip(",.;:")
        if not _name_like(token):
            continue
        rest = plain[len(" ".join(words[:k])) + 1 + len(token) :]
        if not _NAME_AFTER.match(rest):
            return None
        np = _ARTICLE_FILLER.sub("", " ".join(words[:k]), count=1).strip()
        if not np or any(w.lower() in _PREPOSITIONS for w in np.split()):
            return None
        return _Named(_fit(f"{token}: ", _with_article(np)), True)
    return None


def _with_article(np: str) -> str:
    return f"{'An' if np[:1].lower() in 'aeiou' else 'A'} {np}"


def _coined_name(rest_md: str) -> _Named | None:
    """The name right after "termed"/"we call ...": 'mutual information skill learning (MISL)'."""
    rest_md = rest_md[_NAME_START.match(rest_md).end() :]  # type: ignore[union-attr]  # always matches
    em = _EMPHASIS.match(rest_md)
    quoted = _QUOTED.search(rest_md, 0, 60)
    if em:
        name = _plain_sentence(em.group(2))
        after = _plain_sentence(rest_md[em.end() :])
    elif quoted and len(_plain_sentence(rest_md[: quoted.start()]).split()) <= 4:
        name = quoted.group(1)  # "we call such a phenomenon “benign oscillation”"
        after = _plain_sentence(rest_md[quoted.end() :])
    else:
        plain = _plain_sentence(rest_md)
        abbr_ahead = _ABBR_PAREN.search(plain, 0, 90)
        if abbr_ahead and not re.search(r"[,.;:!?]", plain[: abbr_ahead.start()]):
            name, after = plain[: abbr_ahead.end()], plain[abbr_ahead.end() :]  # "X and Y (XAY)"
        else:
            stop = _NAME_STOP.search(plain)
            name = plain[: stop.start()] if stop else plain
            after = plain[len(name) :]
    abbr = _ABBR_PAREN.search(name)
    if abbr and _abbreviation(abbr.group(1)):
        long = _long_form(abbr.group(1), name[: abbr.start()])
        if long:
            return _Named(_abbr_title(abbr.group(1), long), True)
        name = name[: abbr.start()]
    else:
        abbr = _ABBR_PAREN.match(after.lstrip())
        if abbr and _abbreviation(abbr.group(1)):
            long = _long_form(abbr.group(1), name)
            if long:
                return _Named(_abbr_title(abbr.group(1), long), True)
    if name.count("(") > name.count(")"):
        # "Wanda (Pruning by Weights and activations)": the name is what precedes the parenthesis
        opened = name.index("(")
        spelled = _SPELLED_OUT.match(name[opened:] + after)
        name = name[:opened].strip()
        content = spelled.group(1).strip() if spelled else ""
        if content and _schwartz_hearst(name, content) == content:
            return _Named(_fit(f"{name}: ", _title_case(content)), True)
    name = _clean_phrase(name).strip(" \"'“”‘’")
    words = name.split()
    if not 1 <= len(words) <= 5 or not any(c.isalpha() for c in name):
        return None
    if len(words) == 1 and not _name_like(name) and not name[:1].isupper():
        return None  # a single common word is not a name
    if words[0].lower() in _PREPOSITIONS or words[0].lower() in ("this", "these", "it", "them", "such"):
        return None
    return _Named(_capitalize(_title_case(name)), False)


@dataclass(slots=True)
class _Trigger:
    start: int
    end: int
    rank: int  # 0: "we propose ...", 1: "we show that ...", 2: "we study ..."


class _Abstract:
    """An abstract converted once; sentence ends are found lazily, only where triggers occur."""

    __slots__ = ("md", "low", "urls", "first_end", "_ends", "_starts", "_scanned")

    def __init__(self, md: str) -> None:
        self.md = md
        low = md.lower()
        # lowercase needles need a same-length lowercase copy (true unless e.g. "İ" occurs)
        self.low = low if len(low) == len(md) else md
        self.urls = _url_spans(md)
        self._ends: list[int] = []  # sentence ends found so far, in order
        self._starts: list[int] = []  # where the sentence after each of them starts
        self._scanned = 0
        self.first_end = self.sentence_end(0)

    def _boundary(self, i: int) -> tuple[int, int] | None:
        if self.urls and any(s <= i < e for s, e in self.urls):
            return None
        return _boundary_at(self.md, i)

    def _scan_past(self, pos: int) -> None:
        """Find boundaries (once, left to right) until one ends after ``pos`` or the text ends."""
        md = self.md
        while (not self._ends or self._ends[-1] <= pos) and self._scanned < len(md):
            m = _BOUNDARY_CANDIDATE.search(md, self._scanned)
            if m is None:
                self._scanned = len(md)
                break
            b = self._boundary(m.start())
            if b is None:
                self._scanned = m.start() + 1
            else:
                self._ends.append(b[0])
                self._starts.append(b[1])
                self._scanned = max(b[1], m.start() + 1)

    def sentence_end(self, pos: int) -> int:
        """End of the sentence containing ``pos``."""
        self._scan_past(pos)
        k = bisect.bisect_right(self._ends, pos)
        return self._ends[k] if k < len(self._ends) else len(self.md)

    def sentence_start(self, pos: int) -> int:
        """Start of the sentence containing ``pos``."""
        self._scan_past(pos)
        k = bisect.bisect_right(self._starts, pos)
        return self._starts[k - 1] if k else 0

    def triggers(self) -> list[_Trigger]:
        md, low = self.md, self.low
        found: dict[int, _Trigger] = {}
        for needle, pattern in _TRIGGER_NEEDLES:
            for hit in needle.finditer(low):
                i = hit.start()
                if i == 0 or not md[i - 1].isalnum():
                    m = pattern.match(md, i)
                    if m and self._accept(m, pattern):
                        rank = 0 if m.group("v1") else 2 if m.group("v3") else 1
                        found[i] = _Trigger(i, m.end(), rank)
        for hit in _APPOSITION_NEEDLE.finditer(low):
            m = _APPOSITION.match(md, hit.start())
            if m:
                found[hit.start()] = _Trigger(hit.start(), m.end(), 0)
        return [found[k] for k in sorted(found)]

    def _accept(self, m: re.Match[str], pattern: re.Pattern[str]) -> bool:
        if pattern is not _TRIGGER_AND:
            return True
        # "... and provide X" is ours only in a sentence whose subject is "we"
        return _WE.search(self.md, self.sentence_start(m.start()), m.start()) is not None

    def coined(self) -> _Named | None:
        md, low = self.md, self.low
        hits: list[tuple[int, int]] = []  # (position of the keyword, start of the name)
        for needle in _PASSIVE_NEEDLES:
            for m in needle.finditer(low):
                i = m.start()
                if (i == 0 or not md[i - 1].isalnum()) and _PASSIVE_CONTEXT.search(md[max(0, i - 40) : i]):
                    if not low[max(0, i - 3) : i].endswith("so-"):  # "the so-called X" is not a coinage
                        hits.append((i, m.end()))
        for m in _ACTIVE_NEEDLE.finditer(low):
            if m.start() == 0 or not md[m.start() - 1].isalnum():
                hits.append((m.start(), m.end()))
        for m in _REFER_NEEDLE.finditer(low):
            refer = _REFER.match(md, m.start())
            if refer:
                hits.append((m.start(), refer.end()))
        for i, name_start in sorted(hits):
            named = _coined_name(md[name_start : self.sentence_end(i)])
            if named:
                if not named.described:
                    # "we propose a new family of modern ConvNets, dubbed MogaNet" -> "MogaNet: A new ..."
                    np = _NP_BEFORE_COMMA.search(_plain_sentence(md[self.sentence_start(i) : i]))
                    if np and ":" not in named.title:
                        phrase = _ARTICLE_FILLER.sub("", np.group(1), count=1).strip()
                        if len(phrase.split()) >= 2 and not _REJECT_START.match(phrase):
                            return _Named(_fit(f"{named.title}: ", _with_article(phrase)), True)
                return named
        return None


def _first_sentence_title(doc: _Abstract) -> str:
    start = 0
    while start < len(doc.md):
        end = doc.sentence_end(start)
        text = _plain_sentence(doc.md[start:end])
        text = _clean_phrase(_IN_THIS_PAPER.sub("", text, count=1) if _IN_THIS_PAPER.match(text) else text)
        text = text.rstrip(" .!?")
        if len(text.split()) >= 2 or end >= len(doc.md):
            return _ellipsize(_capitalize(text), TITLE_LIMIT)
        b = _boundary_at(doc.md, end - 1) if end > 0 else None
        start = b[1] if b is not None and b[1] > start else end + 1
    return ""


def _derive(abstract: str) -> str:
    # Names and aims are stated early: the opening of a very long input is enough.
    doc = _Abstract(_convert(abstract[:8000], emphasis=True))
    if not doc.md:
        return ""
    triggers = doc.triggers()
    # 1. a named contribution: "we propose the X (ABBR)", "we introduce SAEBench, a ...", "our method, X"
    weak: _Named | None = None
    for t in triggers:
        if t.rank == 0:
            named = _name_from_object(doc.md[t.end : min(doc.sentence_end(t.start), t.end + _OBJECT_CHARS)])
            if named and named.described:
                return named.title
            weak = weak or named
    # 2. a term the authors coin: "termed X (ABBR)", "that we call teacher hacking"
    coined = doc.coined()
    if coined:
        return coined.title
    if weak:
        return weak.title
    # 3. the object of "we propose/show that/study ...": the first sentence wins when it is such a
    # statement, then contributions, claims and topics, each in text order
    best: tuple[int, int, str] | None = None
    for t in triggers:
        rank = -1 if t.start < doc.first_end else t.rank
        if best is not None and (rank, t.start) >= best[:2]:
            continue
        end = min(doc.sentence_end(t.start), t.end + _OBJECT_CHARS)
        phrase = _object_phrase(_plain_sentence(doc.md[t.end : end]))
        if phrase:
            best = (rank, t.start, phrase)
    if best is not None:
        return _fit("", best[2])
    # 4. the first sentence
    return _first_sentence_title(doc)


def derive_title(abstract: str) -> str:
    """Derive a display title from an abstract (the plain-text corpus has no titles).

    Preference order:

    1. A contribution the abstract names: "We propose the Single-Step Completion Policy (SSCP)" ->
       ``SSCP: Single-Step Completion Policy``; "We introduce SAEBench, a comprehensive evaluation suite
       that ..." -> ``SAEBench: A comprehensive evaluation suite ...``.
    2. A term the authors coin: "... termed mutual information skill learning (MISL)" -> ``MISL: Mutual
       Information Skill Learning``; "... that we call teacher hacking" -> ``Teacher Hacking``.
    3. The object of the first "we propose/show that/study ..." statement: "we examine diverging
       preferences in human-labeled preference datasets" -> ``Diverging preferences in ...``.
    4. The first sentence, trimmed.

    Phrases are cut at a clause boundary to fit; only a trimmed sentence gets an ellipsis.

    Args:
        abstract: The abstract (LaTeX and markdown allowed).

    Returns:
        Plain text (LaTeX converted, no emphasis markers, stray markers escaped), at most 90
        characters, never empty ("Untitled" when the abstract has no text).
    """
    if not isinstance(abstract, str):
        abstract = "" if abstract is None else str(abstract)
    try:
        title = _derive(abstract)
    except Exception:  # a title heuristic must never break loading a corpus
        logger.exception("derive_title failed; falling back to the first words")
        title = ""
    title = _restore_literals(_plain_sentence(title), display=False).rstrip(" .;:,")
    if not title:
        title = _ellipsize(" ".join(strip_markup(abstract).split()), TITLE_LIMIT)
    return _discord_safe(title) or "Untitled"


def _discord_safe(title: str) -> str:
    """Escape stray markdown markers, shortening the title until the escapes fit in the limit."""
    limit = TITLE_LIMIT
    for _ in range(8):
        out = balance_markdown(title)
        if len(out) <= TITLE_LIMIT:
            return out
        limit -= len(out) - TITLE_LIMIT
        title = _ellipsize(title, max(limit, 1))
    return truncate(re.sub(r"[*_~|`\\]", "", title), TITLE_LIMIT)
