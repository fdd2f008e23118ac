"""Follow-ups through the real discord.py path: Discord replies (MESSAGE_CREATE with message_reference)
to the bot's answers, the conversation read back from the replied-to message, and what Discord lets a
bot read without the Message Content intent (the fake applies its rules: tests/support/fake_discord.py)."""

from __future__ import annotations

import re

import pytest

from bot.cogs.ask import DELETED, UNREAD_REPLY
from bot.ui.answers import thread_of
from tests.support.fake_discord import Harness

QUESTION = "how does offline reinforcement learning avoid distribution shift?"
SAE = "how are sparse autoencoders evaluated for interpretability?"


def posted(exchange) -> dict:
    """The one message the bot posted into the channel for this event."""
    [post] = [r for r in exchange.requests if r.method == "POST" and "/messages" in r.path]
    return post


def sources(embed: dict) -> list[str]:
    """The cited paper ids of an answer embed, in citation order."""
    text = "\n".join(f["value"] for f in embed.get("fields", []) if f["name"].startswith("Sources"))
    return re.findall(r"^\[\d+\] `([^`]+)`", text, re.M)


async def first_answer(h: Harness, question: str = SAE) -> dict:
    """A mention answered: the bot's answer message, as the fake stored it."""
    post = posted(await h.mention(question))
    assert post.json["embeds"][0]["title"] == f"Q: {question}"
    return post.message


def assert_reply_to(post, message: dict) -> None:
    """The bot's message is a Discord reply to ``message`` that pings nobody."""
    assert post.path == f"/channels/{message['channel_id']}/messages"
    assert int(post.json["message_reference"]["message_id"]) == int(message["id"])
    assert post.json["allowed_mentions"] == {"parse": [], "replied_user": False}


async def test_a_pinged_reply_is_answered_from_the_papers_the_answer_cited(harness):
    answer = await first_answer(harness)
    cited = sources(answer["embeds"][0])
    ex = await harness.reply(answer, "how much better is it?")
    assert ex.payload["content"] == "how much better is it?"  # a ping on a mention answer: text arrives
    post = posted(ex)
    assert_reply_to(post, ex.payload)
    embed = post.json["embeds"][0]
    assert embed["title"] == "Q: how much better is it?"
    assert embed["author"]["name"] == f"Re: {SAE}"  # the subject travels with the reply
    assert sources(embed) and set(sources(embed)) <= set(cited)
    assert re.search(r"^> .+ \[1\]$", embed["description"], re.M)
    # No fetch: the gateway event carried the replied-to message.
    assert not [r for r in ex.requests if r.method == "GET"]


async def test_a_follow_up_of_a_follow_up_keeps_the_first_question(harness):
    answer = await first_answer(harness)
    second = posted(await harness.reply(answer, "how much better is it?")).message
    third = posted(await harness.reply(second, "what data did they use?"))
    embed = third.json["embeds"][0]
    assert embed["author"]["name"] == f"Re: {SAE}"
    assert set(sources(embed)) <= set(sources(second["embeds"][0]))


async def test_the_replied_to_message_is_fetched_when_the_event_does_not_carry_it(harness):
    answer = await first_answer(harness)
    ex = await harness.reply(answer, "how much better is it?", referenced="absent")
    [get] = [r for r in ex.requests if r.method == "GET"]
    assert get.path == f"/channels/{answer['channel_id']}/messages/{answer['id']}"
    assert posted(ex).json["embeds"][0]["author"]["name"] == f"Re: {SAE}"


async def test_a_reply_to_a_deleted_answer_is_a_new_question_and_says_so(harness):
    answer = await first_answer(harness)
    ex = await harness.reply(answer, QUESTION, referenced="deleted")
    post = posted(ex)
    assert post.json["content"].startswith(DELETED)
    assert post.json["embeds"][0]["title"] == f"Q: {QUESTION}"
    assert "author" not in post.json["embeds"][0]  # no conversation to continue


async def test_an_answer_deleted_after_the_event_is_fetched_404_and_answered_afresh(harness):
    answer = await first_answer(harness)
    harness.fake.delete_message(answer["id"])  # gone by the time the bot asks for it
    ex = await harness.reply(answer, QUESTION, referenced="absent")
    [get] = [r for r in ex.requests if r.method == "GET"]
    assert get.status == 404
    assert posted(ex).json["content"].startswith(DELETED)


async def test_a_reply_to_someone_elses_message_is_no_follow_up(harness):
    theirs = (await harness.mention("hello everyone", raw=True, user=harness.bob)).payload
    # Without a mention of the bot: not for it, nothing fetched or sent.
    ignored = await harness.reply(theirs, "how is it trained?")
    assert ignored.requests == []
    # With the bot mentioned in the text: a new question (no conversation to continue).
    ex = await harness.reply(theirs, QUESTION, mention=True)
    embed = posted(ex).json["embeds"][0]
    assert embed["title"] == f"Q: {QUESTION}" and "author" not in embed


async def test_a_reply_to_the_bots_help_is_a_new_question(harness):
    help_message = posted(await harness.mention("")).message
    ex = await harness.reply(help_message, QUESTION)
    embed = posted(ex).json["embeds"][0]
    assert embed["title"] == f"Q: {QUESTION}" and "author" not in embed


async def test_without_the_intent_a_reply_without_ping_gets_told_how_to_ask(harness):
    answer = await first_answer(harness)
    ex = await harness.reply(answer, "how much better is it?", ping=False)
    assert ex.payload["content"] == ""  # Discord withholds it
    post = posted(ex)
    assert_reply_to(post, ex.payload)
    assert post.json["content"] == UNREAD_REPLY.format(name="paperbot")
    assert not post.json.get("embeds")


async def test_with_the_intent_a_reply_without_ping_is_followed_up(make_harness):
    h = await make_harness(message_content_intent=True)
    assert h.bot.intents.message_content
    answer = await first_answer(h)
    ex = await h.reply(answer, "how much better is it?", ping=False)
    assert posted(ex).json["embeds"][0]["author"]["name"] == f"Re: {SAE}"


async def test_a_reply_that_is_not_to_the_bot_and_has_no_text_is_left_alone(harness):
    theirs = (await harness.mention("hello everyone", raw=True, user=harness.bob)).payload
    assert (await harness.reply(theirs, "anyone read this?", ping=False)).requests == []


async def test_a_pinged_reply_to_a_public_ask_needs_the_mention_in_the_text(harness):
    ask = await harness.run_command("ask", {"question": SAE, "public": True})
    answer = ask.message
    # Discord does not pass on the text of a reply to a slash command's answer, ping or not.
    withheld = await harness.reply(answer, "how much better is it?")
    assert withheld.payload["content"] == ""
    assert posted(withheld).json["content"] == UNREAD_REPLY.format(name="paperbot")
    # With @paperbot in the text it arrives, and follows the /ask answer up.
    ex = await harness.reply(answer, "how much better is it?", mention=True)
    embed = posted(ex).json["embeds"][0]
    assert embed["author"]["name"] == f"Re: {SAE}"
    assert set(sources(embed)) <= set(sources(answer["embeds"][0]))


async def test_a_follow_up_in_a_dm_needs_no_ping(harness):
    post = posted(await harness.mention(SAE, guild=False, raw=True))
    answer = post.message
    assert answer.get("guild_id") is None
    ex = await harness.reply(answer, "how much better is it?", ping=False)
    assert ex.payload["content"] == "how much better is it?"
    assert posted(ex).json["embeds"][0]["author"]["name"] == f"Re: {SAE}"


async def test_who_wrote_it_is_answered_from_the_record(harness):
    answer = await first_answer(harness)
    first_id = sources(answer["embeds"][0])[0]
    paper = harness.bot.engine.get(first_id)
    embed = posted(await harness.reply(answer, "who wrote it?")).json["embeds"][0]
    assert embed["title"] == "Q: who wrote it?"
    assert embed["description"].startswith("**Authors:** ")
    assert paper.authors[0] in embed["description"]
    assert sources(embed) == [first_id]
    assert "not quoted" in embed["footer"]["text"]
    # "The second one" is the answer's [2].
    second = sources(answer["embeds"][0])[1]
    embed = posted(await harness.reply(answer, "where did the second one appear?")).json["embeds"][0]
    assert sources(embed) == [second] and "**Area:**" in embed["description"]


async def test_save_it_saves_the_first_paper_for_the_user(harness):
    answer = await first_answer(harness)
    first_id = sources(answer["embeds"][0])[0]
    post = posted(await harness.reply(answer, "save it"))
    assert "Saved" in post.json["content"] and first_id in post.json["content"]
    assert first_id in await harness.bot.store.saved_ids(int(harness.alice["id"]))
    # Bob saving from the same answer saves to his own list.
    await harness.reply(answer, "bookmark it", user=harness.bob)
    assert first_id in await harness.bot.store.saved_ids(int(harness.bob["id"]))


async def test_similar_papers_are_listed_as_the_new_sources(harness):
    answer = await first_answer(harness)
    first_id = sources(answer["embeds"][0])[0]
    embed = posted(await harness.reply(answer, "any similar papers?")).json["embeds"][0]
    similar = [hit.paper.id for hit in harness.bot.engine.similar(first_id, 5)]
    assert sources(embed) == similar and first_id not in similar


async def test_naming_a_paper_the_answer_did_not_cite(harness):
    answer = await first_answer(harness)
    count = len(sources(answer["embeds"][0]))
    post = posted(await harness.reply(answer, "who wrote paper 9?"))
    assert post.json["content"].startswith(f"That answer cites {count} papers")


async def test_a_new_subject_starts_afresh(harness):
    answer = await first_answer(harness)
    embed = posted(await harness.reply(answer, f"different question: {QUESTION}")).json["embeds"][0]
    assert embed["title"] == f"Q: {QUESTION}" and "author" not in embed


async def test_a_cited_paper_that_left_the_corpus_is_named(harness):
    """An answer citing a paper the corpus no longer has (as after a reindex that dropped it)."""
    answer = await first_answer(harness)
    gone_id = sources(answer["embeds"][0])[0]
    embed = answer["embeds"][0]
    field = next(f for f in embed["fields"] if f["name"] == "Sources")
    field["value"] = field["value"].replace(f"`{gone_id}`", "`gone0000`", 1)
    post = posted(await harness.reply(answer, "how much better is it?"))
    assert re.match(r"^\*\*.+\*\* \(`gone0000`\) has left the corpus since that answer", post.json["content"])
    assert "gone0000" not in sources(post.json["embeds"][0])


async def test_the_conversation_survives_a_restart(make_harness):
    """Another process (a restarted bot, another shard) follows up from the message alone."""
    first = await make_harness()
    answer = await first_answer(first)
    second = await make_harness()
    second.fake.messages[int(answer["id"])] = answer  # Discord still has the message
    embed = posted(await second.reply(answer, "how much better is it?")).json["embeds"][0]
    assert embed["author"]["name"] == f"Re: {SAE}"
    assert set(sources(embed)) <= set(sources(answer["embeds"][0]))


async def test_follow_ups_share_the_cooldown_with_ask(make_harness):
    h = await make_harness(cooldown_rate=2, cooldown_per=60.0)
    assert (await h.run_command("ask", {"question": SAE, "public": True})).embeds
    answer = await first_answer(h)
    ex = await h.reply(answer, "how much better is it?")
    limited = posted(ex)
    assert re.search(r"try again in \d+ s", limited.json["content"])
    assert_reply_to(limited, ex.payload)


async def test_a_follow_up_whose_text_is_only_the_mention_gets_a_hint(harness):
    answer = await first_answer(harness)
    post = posted(await harness.reply(answer, "", mention=True))
    assert post.json["content"].startswith("Reply to one of my answers")


@pytest.mark.parametrize("text", ["x" * 480, "what " * 99])
async def test_long_follow_ups_stay_within_limits(harness, text):
    answer = await first_answer(harness)
    post = posted(await harness.reply(answer, text))
    assert post.status == 200


async def test_the_answer_carries_its_conversation(harness):
    answer = await first_answer(harness)
    thread = thread_of(answer["embeds"])
    assert thread is not None and thread.question == SAE and not thread.subject
    assert list(thread.paper_ids) == sources(answer["embeds"][0])
    assert len(thread.quotes) == len(re.findall(r"^> ", answer["embeds"][0]["description"], re.M))


# -- the "Ask a follow-up" button: a form wherever a reply cannot go ------------------------------------


async def test_an_ephemeral_ask_is_followed_up_through_its_button(harness):
    ask = await harness.run_command("ask", {"question": SAE})
    assert ask.ephemeral  # nobody can reply to it: the button is the way
    opened = await harness.click(ask.message, ask.custom_id(label="Ask a follow-up"))
    assert opened.callback_type == 9
    answered = await harness.submit_modal(opened, {"question": "how much better is it?"})
    assert answered.callback_type == 4 and answered.ephemeral  # as private as the answer it follows
    embed = answered.embeds[0]
    assert embed["author"]["name"] == f"Re: {SAE}"
    assert set(sources(embed)) <= set(sources(ask.embeds[0]))
    # The reply carries the button too: the conversation goes on.
    assert answered.custom_id(label="Ask a follow-up") == "paperbot:followup"


async def test_every_answer_carries_the_button_and_notices_do_not(harness):
    answer = await first_answer(harness)
    assert [c.get("custom_id") for c in (await harness.mention(SAE)).components_flat()] == [
        "paperbot:followup"
    ]
    assert posted(await harness.reply(answer, "who wrote it?")).message["components"]
    assert not posted(await harness.reply(answer, "save it")).message["components"]
    assert not posted(await harness.mention("")).message["components"]  # the help


async def test_the_button_works_after_a_restart(make_harness):
    """A press on an answer another process sent (or this one before a restart) is still answered."""
    first = await make_harness()
    ask = await first.run_command("ask", {"question": SAE, "public": True})
    second = await make_harness()
    second.fake.messages[int(ask.message["id"])] = ask.message
    opened = await second.click(ask.message, "paperbot:followup")
    assert opened.callback_type == 9
    answered = await second.submit_modal(opened, {"question": "who wrote it?"})
    assert not answered.ephemeral and answered.embeds[0]["description"].startswith("**Authors:** ")


async def test_the_button_on_a_message_without_an_answer_says_so(harness):
    ask = await harness.run_command("ask", {"question": SAE, "public": True})
    harness.fake.messages[int(ask.message["id"])]["embeds"] = [{"title": "something else", "type": "rich"}]
    pressed = await harness.click(ask.message, "paperbot:followup")
    assert pressed.callback_type == 4 and pressed.ephemeral
    assert "carries no answer" in pressed.content


async def test_the_follow_up_form_shares_the_cooldown(make_harness):
    h = await make_harness(cooldown_rate=1, cooldown_per=60.0)
    ask = await h.run_command("ask", {"question": SAE})
    opened = await h.click(ask.message, "paperbot:followup")
    limited = await h.submit_modal(opened, {"question": "how much better is it?"})
    assert limited.ephemeral and "try again in" in limited.content
