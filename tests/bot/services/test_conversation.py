"""bot/services/conversation.py: what a follow-up asks for, and the replies, with plain arguments."""

from __future__ import annotations

import pytest

from bot.services.answers import AnswerReply
from bot.services.conversation import ASK_HINT, Record, Similar, Thread, decide
from retrieval.errors import UnknownPaperError
from tests.bot.services.conftest import ALICE

SAE = "how are sparse autoencoders evaluated for interpretability?"


async def thread_for(services, question: str = SAE) -> Thread:
    answer = (await services.answers.ask(question)).answer
    quotes = tuple(s.text for s in answer.sentences)
    return Thread(question, tuple(p.id for p in answer.papers), quotes=quotes)


def papers_of(services, thread: Thread):
    return [services.context.engine.get(pid) for pid in thread.paper_ids]


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("save it", "save"),
        ("please bookmark the second one", "save"),
        ("who wrote it?", "authors"),
        ("who are the authors?", "authors"),
        ("where was this published?", "venue"),
        ("is there a link?", "venue"),
        ("any similar papers?", "similar"),
        ("show me more like this", "similar"),
        ("how much better is it?", "ask"),
        ("where does it fail?", "ask"),
        ("how do they save memory?", "ask"),  # "save" inside a question is a question
        ("different question: how does offline reinforcement learning avoid distribution shift?", "new"),
        ("unrelated, but what is a reward model?", "new"),
        ("what about offline reinforcement learning policies that avoid distribution shift?", "new"),
    ],
)
async def test_what_a_follow_up_asks(services, text, intent):
    thread = await thread_for(services)
    assert decide(services.context.engine.index, papers_of(services, thread), text).intent == intent


async def test_which_paper_a_follow_up_names(services):
    thread = await thread_for(services)
    papers = papers_of(services, thread)
    index = services.context.engine.index
    assert len(papers) >= 2
    assert decide(index, papers, "who wrote it?").papers == (papers[0],)
    assert decide(index, papers, "who wrote the second one?").papers == (papers[1],)
    assert decide(index, papers, "who wrote [2]?").papers == (papers[1],)
    assert decide(index, papers, "who wrote the last one?").papers == (papers[-1],)
    assert decide(index, papers, "who wrote them?").papers == tuple(papers)
    assert decide(index, papers, "how much better is it?").papers == tuple(papers)  # asked of all cited
    assert decide(index, papers, "save paper 9").intent == "unknown"
    marked = decide(index, papers, "Different question: what is a reward model?")
    assert marked.intent == "new" and marked.question == "what is a reward model?"


async def test_a_follow_up_is_answered_from_the_thread_and_keeps_its_subject(services):
    thread = await thread_for(services)
    result = await services.conversation.follow_up(ALICE, thread, "how much better is it?")
    assert isinstance(result.reply, AnswerReply) and result.notice is None
    assert result.subject == SAE
    assert {s.paper.id for s in result.reply.answer.sentences} <= set(thread.paper_ids)
    # A follow-up of that reply keeps the first question, not the follow-up.
    deeper = Thread("how much better is it?", thread.paper_ids[:1], subject=SAE)
    again = await services.conversation.follow_up(ALICE, deeper, "what data did they use?")
    assert again.subject == SAE


async def test_records_similar_and_saves(services):
    thread = await thread_for(services)
    record = (await services.conversation.follow_up(ALICE, thread, "who wrote the second one?")).reply
    assert isinstance(record, Record) and record.asked == "authors"
    assert [p.id for p in record.papers] == [thread.paper_ids[1]]
    similar = (await services.conversation.follow_up(ALICE, thread, "anything similar?")).reply
    assert isinstance(similar, Similar) and similar.paper.id == thread.paper_ids[0]
    assert similar.hits and thread.paper_ids[0] not in {h.paper.id for h in similar.hits}
    saved = await services.conversation.follow_up(ALICE, thread, "save it")
    assert saved.reply is None and "Saved" in saved.notice
    assert thread.paper_ids[0] in await services.context.store.saved_ids(ALICE)


async def test_a_new_subject_starts_a_conversation_of_its_own(services):
    thread = await thread_for(services)
    question = "how does offline reinforcement learning avoid distribution shift?"
    result = await services.conversation.follow_up(ALICE, thread, f"different question: {question}")
    assert result.subject == "" and result.reply.answer.question == question


async def test_papers_that_left_the_corpus_are_named(services):
    thread = await thread_for(services)
    left = Thread(SAE, ("gone0000", *thread.paper_ids), titles=("A *gone* paper", ""))
    result = await services.conversation.follow_up(ALICE, left, "how much better is it?")
    assert result.notice.startswith(r"**A \*gone\* paper** (`gone0000`) has left the corpus since")
    assert "gone0000" not in {s.paper.id for s in result.reply.answer.sentences}
    # Every cited paper gone: the conversation is asked again of the corpus as it is now.
    all_gone = Thread(SAE, ("gone0000", "gone0001"))
    result = await services.conversation.follow_up(ALICE, all_gone, "how are they evaluated?")
    assert result.notice.startswith("The papers that answer cited have left the corpus since")
    assert result.reply.answer.sentences and result.subject == SAE


async def test_an_empty_follow_up_gets_the_hint(services):
    result = await services.conversation.follow_up(ALICE, await thread_for(services), "   ")
    assert result.reply is None and result.notice == ASK_HINT


async def test_ask_paper_answers_from_that_paper_alone(services):
    thread = await thread_for(services)
    pid = thread.paper_ids[1]
    result = await services.conversation.ask_paper("what data did they use?", pid)
    assert {s.paper.id for s in result.reply.answer.sentences} == {pid}
    with pytest.raises(UnknownPaperError):
        await services.conversation.ask_paper("what data?", "nope1234")
