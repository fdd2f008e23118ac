"""Tests of retrieval.markup: LaTeX and markdown to plain display text with emphasis spans, truncation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.markup import (
    ELLIPSIS,
    _opens_empty_bracket,
    strip_markup,
    styled,
    truncate,
)
from retrieval.models import Styled
from retrieval.sentences import split_sentences
from retrieval.titles import TITLE_LIMIT, derive_title

_MARKS = {"italic": "*", "bold": "**", "bold italic": "***", "strike": "~~", "code": "`"}


def marked(source: str) -> str:
    """``styled(source)`` with its spans written back as markdown markers, nothing escaped: a
    notation to read the spans in the expected strings below."""
    result = styled(source)
    text, spans = result.text, sorted(result.spans, key=lambda s: (s[0], -s[1], s[2] != "bold"))
    inserts: list[tuple[int, int, str]] = []
    for order, (a, b, style) in enumerate(spans):
        assert 0 <= a < b <= len(text), (source, result)
        inserts += [(a, order, _MARKS[style]), (b, -order, _MARKS[style])]
    out, last = [], 0
    for pos, _, marker in sorted(inserts, key=lambda x: (x[0], -1 if x[1] <= 0 else 1, -abs(x[1]))):
        out.append(text[last:pos] + marker)
        last = pos
    return "".join(out) + text[last:]


def spans_nest(result) -> bool:
    """Spans nest or stand apart, never cross."""
    spans = result.spans
    return all(not (a1 < a2 < b1 < b2) for a1, b1, _ in spans for a2, b2, _ in spans)


# --------------------------------------------------------------------------------------------------
# styled: the plain display text and the spans of its emphasis
# --------------------------------------------------------------------------------------------------

DISPLAY_CASES = [
    # math and symbols
    (r"an $\epsilon$-optimal policy", "an ε-optimal policy"),
    (r"$\alpha, \beta, \Gamma, \varepsilon$", "α, β, Γ, ε"),
    (r"$x^2$ and $e^{-1}$", "x² and e⁻¹"),
    (r"$O(n^{1/2})$", "O(n^(1/2))"),
    (r"$\tilde{O}(d)$", "Õ(d)"),
    (r"$\tilde{O}\left(\frac{S A (B+H)}{ \epsilon^2}\right)$", "Õ((S A (B+H))/ε²)"),
    (r"$\mathbb{R}^d$", "ℝᵈ"),
    (r"$\mathrm{x}$ and $\mathbf{W}$", "x and W"),
    (r"$\mathcal{O}(\log n)$", "𝒪(log n)"),
    (r"$a \times b \leq c \geq d \approx e \in f$", "a × b ≤ c ≥ d ≈ e ∈ f"),
    (r"$\infty$, $\rightarrow$, $\sim$, $\cdot$, $\ell$, $\pm$", "∞, →, ∼, ·, ℓ, ±"),
    (r"$\sqrt{2}$ and $O(\sigma\sqrt{\eta})$", "√2 and O(σ√η)"),
    (r"$\ell_p$ and $L_1$-norm", "ℓₚ and L₁-norm"),
    (r"$\sum_{i=1}^{n} x_i$", "∑ᵢ₌₁ⁿ xᵢ"),
    (r"finite $z^\text{th}$ moment", "finite zᵗʰ moment"),
    (r"$(\mathcal{G}, \mathcal{R})$-consistent", "(𝒢, ℛ)-consistent"),
    (r"A$\rightarrow$B$\leftrightarrow$C", "A→B↔C"),
    (r"$\hat{\theta}$", "θ̂"),
    (r"$\|x\|_2$ and $\mathbb{E}[X]$", "‖x‖₂ and 𝔼[X]"),
    (r"$\frac12$ and \sqrt[3]{x}", "1/2 and ∛x"),
    (r"$$ a^2 $$ and \( b_1 \)", "a² and b₁"),
    (r"$x^*$ and $a*b$", "x∗ and a∗b"),
    (r"5\times faster", "5× faster"),
    # text-mode markup
    (r"\textit{x} and \emph{y}", "*x* and *y*"),
    (r"\textbf{x}", "**x**"),
    (r"over \textbf{\emph{5×}} fewer", "over ***5×*** fewer"),
    (r"\textbf{\textbf{x}}", "**x**"),
    (r"\textit{ spaced }", "*spaced*"),
    (r"\emph{}", ""),
    (r"\textbf{unclosed", "unclosed"),
    (r"1\% and R\&D and down\_proj", "1% and R&D and down_proj"),
    (r"``just'' identify", "“just” identify"),
    (r"Fig.~3 shows", "Fig. 3 shows"),
    ("trained with ~1.8x--2.4x compute", "trained with ~1.8x–2.4x compute"),
    ("a---b", "a—b"),
    (r"as shown \cite{smith2020}. Next \citep[p.~3]{a,b} too", "as shown. Next too"),
    (r"\unknowncmd and \foo{bar}", "unknowncmd and bar"),
    (r"\'{e}t\'e and na\"ive", "été and naïve"),
    (r"code at \url{https://github.com/a_b/c~d}", "code at https://github.com/a_b/c~d"),
    ("see https://x.org/~user/a_b_c--d. Next", "see https://x.org/~user/a_b_c--d. Next"),
    (r"\href{https://x.org}{our site}", "our site (https://x.org)"),
    ("&amp; &lt;b&gt;", "& <b>"),
    # dollars that are not math
    ("costs $5 and $10 dollars", "costs $5 and $10 dollars"),
    ("a lone $ sign", "a lone $ sign"),
    # markdown the text holds becomes spans when it pairs up (norm bars stay as they are)
    ("*without* sacrificing", "*without* sacrificing"),
    ("**DiffuGuard**, a defense", "**DiffuGuard**, a defense"),
    ("snake_case_name", "snake_case_name"),
    ("~~old~~ and ||norm||", "~~old~~ and ||norm||"),
    ("use `a*b` here", "use `a*b` here"),
    # ... and stays a character of the text when it does not
    ("a *lone star", "a *lone star"),
    ("two ** stars", "two ** stars"),
    ("_leading underscore", "_leading underscore"),
    ("**bold *and italic**", "**bold *and italic**"),
    ("||x", "||x"),
    (r"already \*escaped", "already *escaped"),
    # degenerate input
    ("", ""),
    ("\\", ""),
    ("{}", ""),
    ("}", ""),
    ("$", "$"),
]


@pytest.mark.parametrize(("source", "expected"), DISPLAY_CASES)
def test_styled(source, expected):
    assert marked(source) == expected
    assert styled(source).text == strip_markup(source)


def test_latex_escaped_underscores_are_characters_not_emphasis():
    assert styled(r"\_init\_ and a\_b") == Styled("_init_ and a_b", ())
    assert strip_markup(r"\_init\_ and a\_b") == "_init_ and a_b"


def test_display_of_a_seed_abstract_sentence():
    source = (
        r"SDM delivers performance within 1\% of the state-of-the-art results while using over "
        r"\textbf{\emph{5×}} fewer GPU hours than the leading approach."
    )
    assert marked(source) == (
        "SDM delivers performance within 1% of the state-of-the-art results while using over ***5×*** "
        "fewer GPU hours than the leading approach."
    )


# --------------------------------------------------------------------------------------------------
# strip_markup
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (r"\textbf{\emph{5×}} fewer", "5× fewer"),
        ("*causal* effect of **RATE**", "causal effect of RATE"),
        ("rewriting *twice*.", "rewriting twice."),
        (r"an $\epsilon$-optimal \textit{policy}", "an ε-optimal policy"),
        ("a *lone star", "a *lone star"),
        ("use `code` here", "use code here"),
        ("__init__ and _x_", "init and x"),
        (r"1\% \_ \& \#", "1% _ & #"),
        ("  spaced\t\tout  ", "spaced out"),
    ],
)
def test_strip_markup(source, expected):
    assert strip_markup(source) == expected


# --------------------------------------------------------------------------------------------------
# truncate
# --------------------------------------------------------------------------------------------------



def test_truncate_fits_unchanged():
    assert truncate("short text", 20) == "short text"
    assert truncate("exactly ten", 11) == "exactly ten"


def test_truncate_cuts_at_a_word_boundary():
    assert truncate("The quick brown fox jumps over the lazy dog", 20) == "The quick brown fox…"
    assert truncate("The quick brown fox jumps", 19) == "The quick brown…"
    assert truncate("Sentence one, and more words", 15) == "Sentence one…"


def test_truncate_long_word_is_cut_inside():
    assert truncate("Supercalifragilisticexpialidocious", 10) == "Supercali…"


def test_truncate_tiny_limits():
    assert truncate("hello world", 0) == ""
    assert truncate("hello world", -3) == ""
    assert truncate("hello world", 1) == ELLIPSIS
    assert len(truncate("hello world", 2)) <= 2


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.integers(min_value=-5, max_value=120))
def test_truncate_never_exceeds_limit(text, limit):
    out = truncate(text, limit)
    assert len(out) <= max(limit, 0)
    if len(text.strip()) <= limit:
        assert out == text.strip()


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="()[] ,;x\n.", max_size=30))
def test_empty_bracket_guard_is_the_six_substring_tests(text):
    expected = any(s in text for s in ("()", "[]", "( ", "[ ", "(,", "(;"))
    assert _opens_empty_bracket(text) == expected


# Properties: never raise, titles stay short
# --------------------------------------------------------------------------------------------------

LATEX_PIECES = list("ab xyz.,;:!?()[]{}$\\^_*~`'\"-&|#%\n\t") + [
    "\\frac", "\\textbf{", "\\emph{", "$x^{", "\\left(", "\\cite{", "https://x.org/a_b", "等", "é",
    "\\url{", "``", "We propose ", "(ABC)", " termed ", " we call ", "Our method, ", "FooNet",
    ", a ", " that ",
]  # fmt: skip
LATEXISH = st.lists(st.sampled_from(LATEX_PIECES), max_size=60).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=300), LATEXISH))
def test_text_functions_never_raise(text):
    display = styled(text)
    assert spans_nest(display) and all(0 <= a < b <= len(display.text) for a, b, _ in display.spans)
    assert strip_markup(text) == display.text
    sentences = split_sentences(text)
    assert all(s.strip() == s and s for s in sentences)
    title = derive_title(text)
    assert 0 < len(title) <= TITLE_LIMIT and "\n" not in title  # plain text: the bot escapes it


def test_deep_nesting_does_not_recurse_forever():
    text = "\\textbf{" * 5000 + "x" + "}" * 5000 + "$" + "\\sqrt" * 3000 + "$" + "{" * 20000
    assert "x" in styled(text).text
    assert strip_markup(text)
    assert len(derive_title(text)) <= TITLE_LIMIT


def test_strip_markup_keeps_norm_bars():
    # An abstract's ||W|| is a norm, not a spoiler: plain text (snippets, /ask quotes) keeps the bars.
    assert strip_markup("the norm ||W|| of the weights") == "the norm ||W|| of the weights"
