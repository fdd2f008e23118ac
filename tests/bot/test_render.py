"""bot.render: a hit's snippet spans become Discord markdown — bold query words, everything else
escaped, within 300 characters, balanced wherever it is cut."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot import render
from retrieval.corpus import load_corpus
from retrieval.index import BM25Params, build_index
from retrieval.models import Paper, Snippet
from retrieval.search import snippet_spans
from retrieval.tokenize import match_spans, tokenize

SEED_CORPUS = Path(__file__).resolve().parents[2] / "data" / "corpus"


@pytest.fixture(scope="module")
def seed_index():
    return build_index(load_corpus(SEED_CORPUS).papers, BM25Params())


# a link as Discord finds one: up to a space or "<", not ending on the sentence's punctuation
LINK = re.compile(r"https?://[^\s<]+[^\s<.,:;\"')\]]")


def balanced(snippet: str) -> bool:
    """Bold markers pair up and no unescaped markdown character is left alone (links aside: they
    are shown as they are)."""
    unescaped = re.sub(r"\\.", "", LINK.sub("", snippet))
    stars = unescaped.replace("**", "")
    return unescaped.count("**") % 2 == 0 and not re.search(r"[*_~`|]", stars)


@pytest.mark.parametrize(
    "query", ["sparse autoencoders", "offline reinforcement learning", "models", "flow-matching", "bounds"]
)
def test_snippets_are_short_balanced_and_bold_query_words(seed_index, query):
    stems = set(tokenize(query))
    for hit in seed_index.search(query, 20).hits:
        text = render.snippet(hit.snippet)
        assert 0 < len(text) <= render.SNIPPET_LIMIT
        assert balanced(text), text
        bolded = re.findall(r"\*\*(.+?)\*\*", text)
        assert bolded, text
        assert all(set(tokenize(b)) & stems for b in bolded), (bolded, stems)


def test_snippet_bolds_by_stem(seed_index):
    hit = seed_index.search("model", 1).hits[0]
    assert re.search(r"\*\*[Mm]odels?\*\*", render.snippet(hit.snippet))


def test_snippet_of_a_long_sentence_is_cut_at_a_word_with_an_ellipsis():
    words = " ".join(f"filler{i}" for i in range(120))
    paper = Paper("x", "t", (), False, "", f"{words} the target_word *appears* here {words}.")
    snippet = render.snippet(snippet_spans(paper, {"appear"}, None))
    assert len(snippet) <= render.SNIPPET_LIMIT and balanced(snippet)
    assert "**appears**" in snippet and snippet.startswith("…") and snippet.endswith("…")
    assert "target\\_word" in snippet  # other markdown characters are escaped


def test_snippet_never_exceeds_limit_with_giant_tokens():
    paper = Paper("x", "t", (), False, "", "https://example.org/" + "a" * 600 + " model.")
    snippet = render.snippet(snippet_spans(paper, {"model"}, None))
    assert len(snippet) <= render.SNIPPET_LIMIT and balanced(snippet)


def test_a_link_in_a_snippet_stays_a_link():
    # Discord reads a backslash or ** inside a link as part of its address: the link is shown as the
    # abstract has it, query words inside it unbolded, while the rest of the sentence is as always.
    link = "https://github.com/lab_x/model_zoo"
    paper = Paper("x", "t", (), False, "", f"Our model_v2 code is at {link}. It beats the baselines.")
    snippet = render.snippet(snippet_spans(paper, {"model"}, None))
    assert f"{link}." in snippet, snippet
    assert snippet.startswith("Our **model**\\_v2 code"), snippet
    assert balanced(snippet)
    bracketed = Paper("y", "t", (), False, "", f"See <{link}> and ({link}) for the model.")
    snippet = render.snippet(snippet_spans(bracketed, {"model"}, None))
    assert f"<{link}>" in snippet and f"({link})" in snippet and "**model**." in snippet, snippet


def test_sentences_that_are_not_adjacent_are_joined_by_an_ellipsis():
    text = "Alpha one here. Filler two here. Beta three here."
    spans = Snippet(text, ((0, 15), (33, 49)), ((0, 5), (33, 37)))
    assert render.snippet(spans) == "**Alpha** one here. … **Beta** three here."
    adjacent = Snippet(text, ((0, 15), (16, 32)), ((0, 5),))
    assert render.snippet(adjacent) == "**Alpha** one here. Filler two here."


def test_no_snippet_renders_empty():
    assert render.snippet(None) == "" and render.snippet(Snippet("", (), ())) == ""


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["model", "models", "a_b", "*x*", "`c`", "||s||", "[l](u)", "#h", "ok", "x" * 90, "https://a.io/model_x"]
        ),
        min_size=1, max_size=120,
    ),
    st.integers(min_value=20, max_value=400),
)
def test_any_abstract_renders_balanced_within_the_limit(words, limit):
    paper = Paper("x", "t", (), False, "", " ".join(words) + ".")
    snippet = render.snippet(snippet_spans(paper, {"model"}, None), limit)
    assert len(snippet) <= limit and balanced(snippet)


# -- the split-based atoms against the general renderer -------------------------------------------

ATOM_WORDS = [
    "model", "Models", "flow-matching", "a_b", "x*y", "[1]", "(models)", "“models”", "~", "|x|", "#tag",
    "**", "学习强化学习", "naïve", "e.g.,", "models.", "\\", "`code`", "re-ranking",
    "https://x.org/model_a*b", "(https://x.org/models).", "http://a.b/~x|y",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.sampled_from(ATOM_WORDS), min_size=1, max_size=40),
    seps=st.lists(st.sampled_from([" ", "  ", "\n", "\u00a0", " \u2003 "]), min_size=1, max_size=5),
    query=st.lists(st.sampled_from(["model", "flow", "matching", "学习", "naive", "rank", "b"]), min_size=1),
)
def test_split_atoms_equal_the_general_renderer(words, seps, query):
    fast, general = render._render_atoms, render._render_atoms_general
    text = "".join(w + seps[i % len(seps)] for i, w in enumerate(words))
    stems = set(tokenize(" ".join(query)))
    bold = [(a, b) for a, b, _ in match_spans(text, stems)]
    for start, end in [(0, len(text)), (0, len(text) // 2), (len(text) // 3, len(text))]:
        inside = [m for m in bold if start <= m[0] and m[1] <= end]
        assert fast(text, start, end, inside) == general(text, start, end, inside)
    # spans that are not words (across a space, overlapping) take the general path
    if len(text) > 4:
        odd = [(0, len(text) - 1)]
        assert fast(text, 0, len(text), odd) == general(text, 0, len(text), odd)


def test_split_atoms_equal_the_general_renderer_on_the_bundled_corpus(seed_index):
    fast, general = render._render_atoms, render._render_atoms_general
    for query in ["sparse autoencoders", "model", "flow matching", "reinforcement learning", "强化学习"]:
        for hit in seed_index.search(query, 20).hits:
            s = hit.snippet
            for a, b in s.sentences:
                bold = [m for m in s.matches if a <= m[0] < b]
                assert fast(s.text, a, b, bold) == general(s.text, a, b, bold)


# -- abstracts and titles: retrieval's styled text drawn as Discord markdown -----------------------

MARKUPISH = st.lists(
    st.sampled_from(
        [
            "word", "model", " ", " ", "\n", "*", "**", "_", "__", "~~", "`", "||", "[x](y)", "#", ">",
            "\\textbf{", "\\emph{", "}", "$x^2$", "\\_", "https://a.org/a_b", "a_b", "(", ")", ".", "等",
        ]
    ),
    max_size=80,
).map("".join)  # fmt: skip


def markdown_parts(text: str) -> tuple[str, str]:
    """(the markers left once links, code spans and escapes are taken out; the text without them)."""
    text = LINK.sub("L", text)
    text = re.sub(r"``? (.*?) ``?|`[^`]*`", "C", text)
    bare = re.sub(r"\\.", "E", text)
    return re.sub(r"[^*_~`|\[\]#>]", "", bare), bare


def well_formed(text: str) -> bool:
    """Every markdown character left unescaped is a marker of a pair: ``*``/``_``/``~~`` in even
    numbers, and nothing that would make a link, spoiler, heading or quote."""
    markers, _ = markdown_parts(text)
    return (
        not re.search(r"[`|\[\]#>]", markers)
        and markers.count("*") % 2 == 0
        and markers.count("_") % 2 == 0
        and markers.count("~") % 4 == 0
    )


def test_abstract_draws_its_emphasis_and_escapes_everything_else():
    assert render.abstract(r"\textbf{Bold} and \emph{it} and *md* and **strong**") == (
        "**Bold** and _it_ and _md_ and **strong**"
    )
    assert render.abstract(r"over \textbf{\emph{5×}} fewer") == "over **_5×_** fewer"
    assert render.abstract("intra*word*italic") == "intra*word*italic"
    assert render.abstract("[click](https://evil.example) ||W|| # h > q") == (
        "\\[click\\](https://evil.example) \\|\\|W\\|\\| \\# h \\> q"
    )
    assert render.abstract("see https://github.com/lab_x/model_zoo, then") == (
        "see https://github.com/lab_x/model_zoo, then"
    )
    assert render.abstract("a **bold https://x.org/a_b link**") == "a bold https://x.org/a_b link"
    assert render.title("A *title* with_under") == "A \\*title\\* with\\_under"


def test_a_cut_closes_the_spans_it_cuts():
    text = render.abstract(r"We propose \textbf{a very long bold phrase that goes on} and more.", 30)
    assert len(text) <= 30 and text.endswith("…") and well_formed(text)
    assert text.startswith("We propose **a very") and text.count("**") == 2


@settings(max_examples=300, deadline=None)
@given(MARKUPISH, st.integers(min_value=5, max_value=300))
def test_any_abstract_draws_well_formed_within_the_limit(source, limit):
    whole = render.abstract(source)
    assert well_formed(whole)
    cut = render.abstract(source, limit)
    assert len(cut) <= limit and well_formed(cut)
    if len(whole) <= limit:
        assert cut == whole


@settings(max_examples=200, deadline=None)
@given(MARKUPISH, st.integers(min_value=8, max_value=120))
def test_pages_hold_the_whole_abstract_in_well_formed_pieces(source, size):
    pieces = render.pages(source, size)
    assert all(len(piece) <= size and well_formed(piece) for piece in pieces)
    words = lambda text: re.sub(r"[*_~`\\]", "", text).split()  # noqa: E731
    plain = render.markup.styled(source).text
    assert "".join(words(" ".join(pieces))) == "".join(words(render.escape(plain)))


def test_pages_with_a_limit_end_with_an_ellipsis():
    source = "A sentence of the abstract. " * 200
    pieces = render.pages(source, 1000, limit=2500)
    assert sum(map(len, pieces)) <= 2500 and pieces[-1].endswith("…")
    assert all(len(piece) <= 1000 for piece in pieces) and len(pieces) == 3
