"""bot/services/answers.py: answers, and what to say when nothing answers."""

from __future__ import annotations

import pytest

from retrieval.errors import QueryError


async def test_a_question_gets_quoted_sentences(services):
    reply = await services.answers.ask("how does offline reinforcement learning avoid distribution shift?")
    assert reply.notice is None and reply.answer.sentences
    corpus = {p.id for p in services.context.engine.index.papers}
    assert all(sentence.paper.id in corpus for sentence in reply.answer.sentences)


async def test_nothing_found_is_a_notice_with_the_question_escaped(services):
    reply = await services.answers.ask("zqxv_wobble *zzyzx*")
    assert not reply.answer.sentences
    assert reply.notice.startswith(r"I found nothing in the abstracts that answers “zqxv\_wobble \*zzyzx\*”.")


async def test_a_question_of_stopwords_only_raises(services):
    with pytest.raises(QueryError):
        await services.answers.ask("what is the")


def test_mention_help_names_the_bot(services):
    assert "“@paperbot how do sparse autoencoders" in services.answers.mention_help("paperbot")
