"""Abstract text is shown as the author wrote it (issue 8 item 12): markdown the abstract never means
— masked links, ``||x||`` spoilers, headings, block quotes — is escaped in /paper, search snippets and
/ask, while the LaTeX rendering (Unicode math, \\textbf bold) is kept."""

from __future__ import annotations

import json
import re

import pytest

from bot import render

ABSTRACT = (
    "We bound the norm ||W|| of sparse autoencoder weights and the gradient $\\|g\\|_2$ with "
    "\\textbf{spectral} control. Code: [click here](https://evil.example/phish) for details.\n"
    "# Results\n"
    "> sparse autoencoder features are interpretable at every scale we tried."
)
OTHER = "Reward models for language model alignment trained on preference data from human raters."


@pytest.fixture
def corpus(tmp_path):
    # JSON Lines: its abstracts may hold line breaks, so a "# Results" line can start a line.
    path = tmp_path / "corpus.jsonl"
    records = [
        {"id": "sae-norms", "authors": ["Ada Lovelace"], "area": "Interpretability", "abstract": ABSTRACT},
        {"id": "reward", "authors": ["Grace Hopper"], "area": "Alignment", "abstract": OTHER},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def assert_no_unmeant_markdown(text: str) -> None:
    assert not re.search(r"(?<!\\)\[[^\]]*(?<!\\)\]\(", text), text  # no masked link
    assert not re.search(r"(?<!\\)\|(?<!\\)\|", text.replace("\\|", "")), text  # no spoiler bars
    assert not re.search(r"(?m)^\s*#{1,3} ", text), text  # no heading
    assert not re.search(r"(?m)^\s*>(?! .*\[\d+\]$) ", text), text  # no block quote but ours


async def test_paper_escapes_links_spoilers_headings_quotes_and_keeps_latex(make_harness, corpus):
    h = await make_harness(corpus_path=corpus)
    ex = await h.run_command("paper", {"id": "sae-norms"})
    description = ex.embeds[0]["description"]
    assert_no_unmeant_markdown(description)
    assert "\\[click here\\](https://evil.example/phish)" in description
    assert "\\|\\|W\\|\\|" in description
    assert "\n\\# Results\n\\> sparse" in description
    assert "‖g‖₂" in description and "**spectral**" in description  # LaTeX still rendered


async def test_search_snippets_escape_spoiler_bars_and_links(make_harness, corpus):
    h = await make_harness(corpus_path=corpus)
    ex = await h.run_command("search", {"query": "norm weights"})
    description = ex.embeds[0]["description"]
    assert "\\|\\|W\\|\\|" in description and "**norm**" in description
    assert_no_unmeant_markdown(description)


async def test_ask_quotes_escape_unmeant_markdown(make_harness, corpus):
    h = await make_harness(corpus_path=corpus)
    ex = await h.run_command("ask", {"question": "what bounds the norm of sparse autoencoder weights?"})
    description = ex.embeds[0]["description"]
    assert "\\|\\|W\\|\\|" in description
    assert_no_unmeant_markdown(description)


def test_code_spans_and_links_are_kept_and_the_rest_is_escaped():
    assert render.abstract("a `x||y` b") == "a `x||y` b"
    assert render.abstract("see https://a.org/x_y]( here") == "see https://a.org/x_y]( here"  # all link
    assert render.abstract("a > b and x | y, [1] (2)") == "a \\> b and x \\| y, \\[1\\] (2)"
    assert render.abstract("-# small\n>>> all") == "-\\# small\n\\>\\>\\> all"
    assert render.abstract("a *b* and **c** d_e \\textbf{f}") == "a _b_ and **c** d\\_e **f**"
