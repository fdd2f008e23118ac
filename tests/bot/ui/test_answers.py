"""bot/ui/answers.py: the conversation an answer message carries, read back from its embed."""

from __future__ import annotations

import discord

from bot.services.conversation import Record, Similar, Thread
from bot.ui import embeds as E
from bot.ui.answers import record_embed, similar_embed, thread_of
from retrieval.models import Answer, AnswerSentence, Hit, Paper


def paper(pid: str, title: str = "A title", **fields) -> Paper:
    values = {"authors": ("Ada Lovelace", "Alan Turing"), "et_al": False, "area": "Theory",
              "abstract": "We study things. It works well.", "source": "/corpora/abstracts.txt:12"}
    values.update(fields)
    return Paper(id=pid, title=title, **values)


def answer_of(papers: list[Paper], question: str = "how does it *work*?") -> Answer:
    sentences = tuple(
        AnswerSentence(text=f"Sentence {i} of {p.id}, with $\\alpha$ and **bold** [x](http://a.b).", paper=p,
                       score=1.0 - i / 10)
        for i, p in enumerate(papers)
    )
    return Answer(question=question, sentences=sentences, papers=tuple(papers))


def roundtrip(embed: discord.Embed) -> Thread | None:
    """As Discord gives the message back: the embed's JSON."""
    return thread_of([embed.to_dict()])


def test_an_answer_carries_its_question_ids_titles_and_quotes():
    papers = [paper("abc12345", "Plain title"), paper("with`tick", "Title *with* _markdown_ [link](x)"),
              paper("has``two", "Ünïcode — title")]
    answer = answer_of(papers)
    thread = roundtrip(E.answer_embed(answer))
    assert thread is not None
    assert thread.question == answer.question and thread.subject == ""
    assert thread.paper_ids == ("abc12345", "with`tick", "has``two")
    assert thread.titles == ("Plain title", "Title *with* _markdown_ [link](x)", "Ünïcode — title")
    assert len(thread.quotes) == 3 and thread.quotes[0].startswith("Sentence 0 of abc12345")
    assert thread.root == answer.question


def test_a_follow_ups_answer_carries_the_first_question():
    embed = E.answer_embed(answer_of([paper("abc12345")], "how much better?"), subject="the first question")
    thread = roundtrip(embed)
    assert thread.subject == "the first question" and thread.question == "how much better?"
    assert thread.root == "the first question"


def test_many_sources_spread_over_fields_are_all_read():
    papers = [paper(f"id{i:06d}", "A long title " * 12) for i in range(12)]
    embed = E.answer_embed(answer_of(papers[:3]))
    many = E.conversation_embed("q?", "text", papers)
    assert [f.name for f in many.fields][:2] == [E.SOURCES, E.SOURCES_MORE]
    assert roundtrip(many).paper_ids == tuple(p.id for p in papers)
    assert roundtrip(embed).paper_ids == tuple(p.id for p in papers[:3])


def test_records_and_similar_pages_carry_their_papers():
    first, second = paper("abc12345", url="https://example.org/p"), paper("def67890")
    record = record_embed(Record("who wrote it?", (first,), "authors"), subject="subject?")
    assert record.description.startswith("**Authors:** Ada Lovelace, Alan Turing")
    assert "`abstracts.txt`" in record.description and "<https://example.org/p>" in record.description
    assert roundtrip(record) == Thread("who wrote it?", ("abc12345",), "subject?", ("A title",), ())
    venue = record_embed(Record("where was it published?", (second,), "venue"))
    assert venue.description.startswith("**Area:** Theory") and "records no venue" in venue.description
    hit = Hit(paper=second, score=3.0, rank=1, matched_terms=())
    similar = similar_embed(Similar("anything similar?", first, (hit,)), subject="subject?")
    assert roundtrip(similar).paper_ids == ("def67890",)


def test_messages_that_carry_no_conversation():
    assert thread_of([]) is None
    assert thread_of([E.notice("Saved.").to_dict()]) is None
    assert thread_of([discord.Embed(title="Q: a question?").to_dict()]) is None  # no Sources
    not_ours = discord.Embed(title="Something else")
    not_ours.add_field(name="Sources", value="[1] `abc` — x")
    assert thread_of([not_ours]) is None
    # The first embed that carries one wins (a message may hold others before it).
    carried = E.answer_embed(answer_of([paper("abc12345")]))
    assert thread_of([E.notice("x"), carried]).paper_ids == ("abc12345",)
