"""LaTeX and markdown in abstracts and titles: to plain text, and to display text.

* :func:`strip_markup` turns the LaTeX found in abstracts (``$\\epsilon$``, ``\\textbf{x}``, ``x^2``)
  and the markdown authors paste into plain text (tokeniser input, snippets, titles).
* :func:`styled` does the same conversion and keeps the emphasis as spans (the bot draws them).
* :func:`url_spans` finds the links a text holds.

Everything here is pure, never raises on arbitrary input, and runs in time roughly linear in the input.
"""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from dataclasses import dataclass

from retrieval.models import Styled

ELLIPSIS = "\u2026"

# Placeholders for characters the source escaped (``\_``, ``\*``), so the conversion never mistakes
# them for markdown: they become plain characters once the markdown pairs are taken out.
_LIT_UNDERSCORE = "\ue000"
_LIT_STAR = "\ue001"
# Emphasis that LaTeX commands give (\textit, \textbf) is marked by these while converting: they
# nest as the commands do, so they always pair, whatever markdown characters the text holds.
_ITALIC_OPEN, _ITALIC_CLOSE, _BOLD_OPEN, _BOLD_CLOSE = "\ue010", "\ue011", "\ue012", "\ue013"
_SENTINELS = {_ITALIC_OPEN: "italic", _BOLD_OPEN: "bold"}
_CLOSING = {_ITALIC_CLOSE: _ITALIC_OPEN, _BOLD_CLOSE: _BOLD_OPEN}
_SENTINEL_RE = re.compile("[\ue010-\ue013]")

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


def url_spans(text: str) -> list[tuple[int, int]]:
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
        self.urls = url_spans(src)
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
        opener, closer = (_ITALIC_OPEN, _ITALIC_CLOSE) if name in _ITALIC else (_BOLD_OPEN, _BOLD_CLOSE)
        if inner[0] == opener and inner[-1] == closer and inner.count(opener) == 1:
            return _Out(inner)  # already in that style: \textbf{\textbf{x}} is bold once
        return _Out(f"{opener}{inner}{closer}")

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
        if _opens_empty_bracket(text):
            text = _EMPTY_BRACKETS.sub("", text)
    return text.strip()


def _opens_empty_bracket(text: str) -> bool:
    """``"()" in text or "[]" in text or "( " in text or "[ " in text or "(," in text or "(;" in
    text``, looking only after each bracket (six scans of a whole abstract cost ~10 us; this, ~1)."""
    for opener, nexts in (("(", ") ,;"), ("[", "] ")):
        i = text.find(opener)
        while i != -1:
            if text[i + 1 : i + 2] in nexts and i + 1 < len(text):
                return True
            i = text.find(opener, i + 1)
    return False


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


def styled(text: str) -> Styled:
    """Convert the LaTeX and markdown of an abstract or title to plain display text and its emphasis.

    Math is rendered with Unicode (``$\\epsilon$`` -> ``ε``, ``$x^2$`` -> ``x²``, ``$O(n^{1/2})$`` ->
    ``O(n^(1/2))``, ``\\mathbb{R}`` -> ``ℝ``, ``\\tilde{O}`` -> ``Õ``), escapes (``\\%``, ``\\&``,
    ``\\_``) and quotes (````x''`` -> ``“x”``) are resolved, citations dropped, and unknown commands
    keep their name or argument. ``\\textit``/``\\emph``, ``\\textbf`` and the markdown pairs the
    text holds (``*x*``, ``**x**``, ``_x_``, ``__x__``, ``~~x~~``, `` `x` ``) become spans; a marker
    with no partner stays a character of the text. ``||x||`` stays as it is: in an abstract it is a
    norm, never a spoiler.

    Args:
        text: Source text with LaTeX and/or markdown.

    Returns:
        The plain text (what :func:`strip_markup` returns) and its styled spans. Never raises.
    """
    out = _convert(text, emphasis=True)
    marked = "*" in out or "_" in out or "`" in out or "~~" in out or "\\" in out
    if not marked and not (_ITALIC_OPEN in out or _BOLD_OPEN in out):
        return Styled(_finish(_restore_literals(out)), ())
    code: list[tuple[int, int, int]] = []
    runs = _delimiter_runs(out, code) if marked else []
    cuts: list[tuple[int, int]] = []
    marks: list[tuple[int, int, str]] = []
    opened: list[tuple[str, int]] = []
    for m in _SENTINEL_RE.finditer(out) if _ITALIC_OPEN in out or _BOLD_OPEN in out else ():
        c, i = m.group(), m.start()
        cuts.append((i, i + 1))
        if c in _SENTINELS:
            opened.append((c, i))
        elif opened and opened[-1][0] == _CLOSING[c]:
            opener, at = opened.pop()
            marks.append((at + 1, i, _SENTINELS[opener]))
    for idx, run in enumerate(runs):
        if run.partner > idx and run.char != "|":
            closer = runs[run.partner]
            cuts += [(run.start, run.end), (closer.start, closer.end)]
            marks.append((run.end, closer.start, _STYLES.get((run.char, run.end - run.start), "bold")))
    for start, end, n in code:
        cuts += [(start, start + n), (end - n, end)]
        marks.append((start + n, end - n, "code"))
    for m in _ESCAPED_MARK.finditer(out):  # "\\*" is a literal "*": the backslash goes
        if not any(s <= m.start() < e for s, e, _ in code):
            cuts.append((m.start(), m.start() + 1))
    if not cuts:
        return Styled(_finish(_restore_literals(out)), ())
    cuts.sort()
    kept: list[str] = []
    starts: list[int] = []  # where each cut starts in ``out``, and how much was cut before its end
    removed: list[int] = []
    last = total = 0
    for s, e in cuts:
        if s < last:  # (overlapping cuts: a marker inside an escape's reach)
            s = last
        if e <= s:
            continue
        kept.append(out[last:s])
        total += e - s
        starts.append(s)
        removed.append(total)
        last = e
    kept.append(out[last:])
    plain = _restore_literals("".join(kept))

    def at(pos: int) -> int:
        i = bisect.bisect_right(starts, pos - 1)
        return pos - (removed[i - 1] if i else 0)

    spans = [(at(a), at(b), style) for a, b, style in marks]
    finished = _finish(plain)
    if finished != plain:  # tidying only removes characters: follow the kept ones
        spans = _follow(plain, finished, spans)
        plain = finished
    return Styled(plain, tuple(sorted((a, b, st) for a, b, st in spans if a < b)))


_STYLES = {("*", 1): "italic", ("_", 1): "italic", ("*", 2): "bold", ("_", 2): "bold",
           ("*", 3): "bold italic", ("_", 3): "bold italic", ("~", 2): "strike"}  # fmt: skip


def _follow(before: str, after: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``spans`` of ``before`` moved onto ``after``, a copy of it with some characters removed."""
    where = [0] * (len(before) + 1)
    j = 0
    for i, c in enumerate(before):
        where[i] = j
        if j < len(after) and after[j] == c:
            j += 1
    where[len(before)] = j
    return [(where[a], where[b], style) for a, b, style in spans]


def strip_markup(text: str) -> str:
    """Convert LaTeX and markdown to plain text (no emphasis markers, no escapes).

    The text of :func:`styled`, without its spans.

    Args:
        text: Source text.

    Returns:
        Plain text with collapsed spaces. Never raises.
    """
    return styled(text).text


def _restore_literals(text: str) -> str:
    if _LIT_UNDERSCORE not in text and _LIT_STAR not in text:
        return text
    return text.replace(_LIT_UNDERSCORE, "_").replace(_LIT_STAR, "*")


# --------------------------------------------------------------------------------------------------
# Markdown pairs in the source
# --------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Run:
    start: int
    end: int
    char: str
    can_open: bool
    can_close: bool
    partner: int = -1  # index of the matching run, -1 when unmatched


def _delimiter_runs(text: str, code: list[tuple[int, int, int]] | None = None) -> list[_Run]:
    """Emphasis delimiter runs (``*``, ``_``, ``~~``, ``||``) outside URLs and code spans, paired as
    markdown pairs them (same length, opener before a non-space, closer after a non-space, ``_`` only
    at word boundaries); each code span is added to ``code`` as (start, end, backticks)."""
    urls = url_spans(text)
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
            continue  # a link's characters are never markup
        tok = m.group()
        if tok[0] == "\\":
            continue  # escaped: already literal
        if tok[0] == "`":
            close = text.find(tok, e)
            if close != -1:
                skip_until = close + len(tok)  # code span: its content is literal
                if code is not None and close > e:
                    code.append((s, skip_until, len(tok)))
            continue
        before = text[s - 1] if s > 0 else " "
        after = text[e] if e < n else " "
        can_open = not after.isspace()
        can_close = not before.isspace()
        if tok[0] == "_":
            # "_" is emphasis only at word boundaries (snake_case is not)
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


# --------------------------------------------------------------------------------------------------
# Truncation
# --------------------------------------------------------------------------------------------------

_TRAILING_JUNK = " \t\n,;:-–—([{/\\"


def truncate(text: str, limit: int) -> str:
    """Shorten plain ``text`` to at most ``limit`` characters, cutting at a word boundary, with "…".

    Args:
        text: Plain text.
        limit: Maximum length of the result, ellipsis included.

    Returns:
        ``text`` (stripped) when it fits, else a prefix ending in "…" (``""`` when ``limit < 1``).
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
    head = text[:cut].rstrip(_TRAILING_JUNK) or text[:room]
    return head.rstrip(_TRAILING_JUNK) + ELLIPSIS
