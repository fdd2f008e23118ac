"""The truncation helpers and embed builders keep every Discord limit."""

from __future__ import annotations

import discord
from hypothesis import given
from hypothesis import strategies as st

from bot.ui import embeds as E
from retrieval.markup import truncate as text_truncate
from retrieval.models import Answer, AnswerSentence, Hit, Paper, Snippet


def paper(i: int = 0, *, authors: int = 3, abstract: str = "Short abstract.") -> Paper:
    return Paper(
        id=f"p{i:07d}",
        title=f"Title {i} " + "word " * 80,
        authors=tuple(f"Author {j}" for j in range(authors)),
        et_al=False,
        area="Area · Sub",
        abstract=abstract,
    )


@given(st.text(max_size=500), st.integers(min_value=1, max_value=300))
def test_truncate_never_exceeds_the_limit(text, limit):
    out = E.truncate(text, limit)
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text


def test_truncate_keeps_bold_balanced():
    out = E.truncate("plain **bold words that go on and on** tail", 20)
    assert out.count("**") % 2 == 0


@given(st.text(max_size=300), st.integers(min_value=2, max_value=200))
def test_truncate_only_cuts_and_adds_the_ellipsis(text, limit):
    """The Discord length guard never escapes or rewrites: its output is a prefix of the text (minus a
    dangling ``**``) plus "…", so labels and autocomplete values show what the data says."""
    out = E.truncate(text, limit)
    if out != text:
        assert out.endswith(E.ELLIPSIS) and text.startswith(out[: -len(E.ELLIPSIS)])


def test_why_there_are_two_truncates():
    """retrieval.markup.truncate shortens plain text (stripped, no dangling punctuation); the guard
    for outgoing Discord strings keeps them as given and only keeps ``**`` paired."""
    assert E.truncate("  indented label  ", 40) == "  indented label  "
    assert text_truncate("  indented label  ", 40) == "indented label"
    assert E.truncate("a **bold words** here", 12) == "a…"
    assert text_truncate("a **bold words** here", 12) == "a **bold…"


def test_shorten_authors():
    assert E.shorten_authors(["A", "B"]) == "A, B"
    assert E.shorten_authors(["A", "B", "C", "D"]) == "A, B, C et al."
    assert E.shorten_authors(["A"], et_al=True) == "A et al."
    assert len(E.shorten_authors([f"Name{i}" * 20 for i in range(200)], keep=200)) <= 200


def test_fit_embeds_respects_total_and_count():
    embeds = [discord.Embed(title="t" * 300, description="d" * 5000) for _ in range(12)]
    for embed in embeds:
        embed.add_field(name="", value="empty name is dropped")
        embed.add_field(name="n", value="v" * 2000)
    fitted = E.fit_embeds(embeds)
    assert len(fitted) <= 10
    assert sum(len(e) for e in fitted) <= 6000
    for embed in fitted:
        assert len(embed.title) <= 256 and len(embed.description or "") <= 4096
        assert all(f.name and len(f.value) <= 1024 for f in embed.fields)


def test_paper_embeds_split_long_abstracts():
    p = paper(abstract="This is a sentence. " * 600, authors=500)
    embeds = E.paper_reply(p).messages[0]
    assert sum(len(e) for e in embeds) <= 6000
    assert all(len(e.description or "") <= 4096 for e in embeds)


def test_hits_embeds_fit_ten_long_hits():
    hits = [
        Hit(
            paper=paper(i, authors=300), score=1.0, rank=i + 1, matched_terms=(),
            snippet=Snippet("s" * 300, ((0, 300),), ()),
        )
        for i in range(10)
    ]
    embeds = E.hits_embeds(hits)
    assert len(embeds) == 10 and sum(len(e) for e in embeds) <= 6000


def test_answer_embed_many_sources():
    papers = [paper(i) for i in range(30)]
    sentences = tuple(AnswerSentence(text="A quoted sentence. " * 30, paper=p, score=1.0) for p in papers)
    embed = E.answer_embed(Answer(question="why?", sentences=sentences, papers=tuple(papers)))
    assert len(embed) <= 6000 and len(embed.fields) <= 25
    assert all(len(f.value) <= 1024 for f in embed.fields)
