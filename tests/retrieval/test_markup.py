"""Tests of retrieval.markup: LaTeX to display markdown and to plain text, markdown balance, truncation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.markup import (
    ELLIPSIS,
    _delimiter_runs,
    _opens_empty_bracket,
    balance_markdown,
    latex_to_display,
    strip_markup,
    truncate,
)
from retrieval.sentences import split_sentences
from retrieval.titles import TITLE_LIMIT, derive_title


def unpaired_markers(text: str) -> list[str]:
    """Emphasis delimiter runs Discord could act on that have no partner (should be none)."""
    return [
        text[r.start : r.end]
        for r in _delimiter_runs(text)
        if r.partner == -1 and (r.char != "_" or r.can_open or r.can_close)
    ]


# --------------------------------------------------------------------------------------------------
# latex_to_display
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
    # existing markdown is kept when balanced
    ("*without* sacrificing", "*without* sacrificing"),
    ("**DiffuGuard**, a defense", "**DiffuGuard**, a defense"),
    ("snake_case_name", "snake_case_name"),
    ("~~old~~ and ||spoiler||", "~~old~~ and ||spoiler||"),
    # ... and escaped when it would not pair up
    ("a *lone star", r"a \*lone star"),
    ("two ** stars", r"two \*\* stars"),
    ("_leading underscore", r"\_leading underscore"),
    ("**bold *and italic**", r"**bold \*and italic**"),
    ("||x", r"\|\|x"),
    # degenerate input
    ("", ""),
    ("\\", ""),
    ("{}", ""),
    ("}", ""),
    ("$", "$"),
]


@pytest.mark.parametrize(("source", "expected"), DISPLAY_CASES)
def test_latex_to_display(source, expected):
    assert latex_to_display(source) == expected


def test_latex_escaped_underscore_at_word_boundary_is_escaped_for_discord():
    assert latex_to_display(r"\_init\_ and a\_b") == r"\_init\_ and a_b"
    assert strip_markup(r"\_init\_ and a\_b") == "_init_ and a_b"


def test_display_of_a_seed_abstract_sentence():
    source = (
        r"SDM delivers performance within 1\% of the state-of-the-art results while using over "
        r"\textbf{\emph{5×}} fewer GPU hours than the leading approach."
    )
    assert latex_to_display(source) == (
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
# balance_markdown
# --------------------------------------------------------------------------------------------------


def test_balance_markdown_keeps_pairs_and_escapes_the_rest():
    assert balance_markdown("**a** *b* __c__ _d_ ~~e~~ ||f||") == "**a** *b* __c__ _d_ ~~e~~ ||f||"
    assert balance_markdown("x * y") == r"x \* y"
    assert balance_markdown("*a **b*") == r"*a \*\*b*"
    assert balance_markdown(r"already \*escaped") == r"already \*escaped"
    assert balance_markdown("see https://x.org/a_b*c and `a*b`") == "see https://x.org/a_b*c and `a*b`"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab *_~|`\\\n", max_size=40))
def test_balance_markdown_leaves_no_unpaired_marker(text):
    out = balance_markdown(text)
    assert unpaired_markers(out) == []
    assert balance_markdown(out) == out
    assert out.replace("\\", "") == text.replace("\\", "")  # only backslashes are added


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


def test_truncate_drops_an_opener_whose_closer_was_cut():
    assert truncate("a **bold phrase that goes on** end", 17) == "a bold phrase…"
    assert truncate("**ok** then *a long italic run here*", 18) == "**ok** then a…"
    assert unpaired_markers(truncate("x " * 5 + "*y z w v u*", 14)) == []


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.integers(min_value=-5, max_value=120))
def test_truncate_never_exceeds_limit(text, limit):
    out = truncate(text, limit)
    assert len(out) <= max(limit, 0)
    if len(text.strip()) <= limit:
        assert out == text.strip()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", "bc", " ", "*", "**", "_", "__", "~~", "||", "`", "\\", "\n"]), max_size=40
    ),
    st.integers(min_value=1, max_value=30),
)
def test_truncate_keeps_balanced_markdown_balanced(pieces, limit):
    balanced = balance_markdown("".join(pieces))
    out = truncate(balanced, limit)
    assert len(out) <= limit
    assert unpaired_markers(out) == []


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
    display = latex_to_display(text)
    assert unpaired_markers(display) == []
    plain = strip_markup(text)
    assert isinstance(plain, str)
    sentences = split_sentences(text)
    assert all(s.strip() == s and s for s in sentences)
    title = derive_title(text)
    assert 0 < len(title) <= TITLE_LIMIT and "\n" not in title  # plain text: the bot escapes it


def test_deep_nesting_does_not_recurse_forever():
    text = "\\textbf{" * 5000 + "x" + "}" * 5000 + "$" + "\\sqrt" * 3000 + "$" + "{" * 20000
    assert "x" in latex_to_display(text)
    assert strip_markup(text)
    assert len(derive_title(text)) <= TITLE_LIMIT


def test_strip_markup_keeps_norm_bars():
    # An abstract's ||W|| is a norm, not a spoiler: plain text (snippets, /ask quotes) keeps the bars.
    assert strip_markup("the norm ||W|| of the weights") == "the norm ||W|| of the weights"
