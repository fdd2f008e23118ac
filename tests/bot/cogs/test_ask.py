"""/ask, mention chat, the shared cooldown and the error handler, through the real discord.py path."""

from __future__ import annotations

import logging
import re

import pytest

QUESTION = "how does offline reinforcement learning avoid distribution shift?"


async def test_ask_quotes_sentences_with_citations(harness):
    ex = await harness.run_command("ask", {"question": QUESTION})
    assert ex.callback_type == 4 and ex.ephemeral
    embed = ex.embeds[0]
    assert embed["title"].startswith("Q: ")
    assert re.search(r"^> .+ \[1\]$", embed["description"], re.M)
    sources = "\n".join(f["value"] for f in embed["fields"] if f["name"].startswith("Sources"))
    answer = harness.bot.engine.answer(QUESTION)
    for paper in answer.papers:
        assert f"`{paper.id}`" in sources


async def test_ask_public(harness):
    ex = await harness.run_command("ask", {"question": QUESTION, "public": True})
    assert not ex.ephemeral


async def test_ask_nothing_found_is_helpful(harness):
    ex = await harness.run_command("ask", {"question": "zzzzqqq xylophonium quuxification"})
    assert ex.callback_type == 4 and ex.ephemeral
    assert "found nothing" in ex.content and "/search" in ex.content


async def test_ask_stopwords_only_is_a_query_error(harness):
    ex = await harness.run_command("ask", {"question": "the of and"})
    assert ex.callback_type == 4 and ex.ephemeral
    assert ex.content


async def test_mention_replies_to_the_message(harness):
    ex = await harness.mention(QUESTION)
    [post] = [r for r in ex.requests if r.method == "POST"]
    assert post.path == f"/channels/{harness.channel_id}/messages"
    assert int(post.json["message_reference"]["message_id"]) == int(ex.payload["id"])
    assert post.json["allowed_mentions"] == {"parse": [], "replied_user": False}
    assert post.json["embeds"][0]["title"].startswith("Q: ")


async def test_mention_in_dm(harness):
    ex = await harness.mention(QUESTION, guild=False)
    [post] = [r for r in ex.requests if r.method == "POST"]
    assert post.json["embeds"]


async def test_mention_without_text_gets_help(harness):
    ex = await harness.mention("")
    [post] = [r for r in ex.requests if r.method == "POST"]
    assert "Ask me a research question" in post.json["content"]


async def test_messages_from_bots_and_without_mention_are_ignored(harness):
    assert (await harness.mention(QUESTION, author_is_bot=True)).requests == []
    assert (await harness.mention("hello there", raw=True)).requests == []


async def test_shared_cooldown_across_search_ask_and_mentions(make_harness):
    h = await make_harness(cooldown_rate=2, cooldown_per=60.0)
    assert (await h.run_command("search", {"query": "learning"})).callback_type == 4
    assert (await h.run_command("ask", {"question": QUESTION})).embeds
    limited = await h.run_command("search", {"query": "learning"})
    assert limited.callback_type == 4 and limited.ephemeral
    assert re.search(r"try again in \d+ s", limited.content)
    mention = await h.mention(QUESTION)
    [post] = [r for r in mention.requests if r.method == "POST"]
    assert "try again in" in post.json["content"]
    # another user has their own bucket
    assert (await h.run_command("search", {"query": "learning"}, user=h.bob)).embeds


async def test_unexpected_error_shows_an_error_id_and_logs_it(harness, monkeypatch, caplog):
    def boom(*args, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(harness.bot.engine, "answer", boom)
    with caplog.at_level(logging.ERROR, logger="bot.errors"):
        ex = await harness.run_command("ask", {"question": QUESTION})
    assert ex.callback_type == 4 and ex.ephemeral
    error_id = re.search(r"error id `([0-9a-f]{8})`", ex.content).group(1)
    assert any(error_id in r.getMessage() and r.exc_info for r in caplog.records)
    assert "kaboom" not in ex.content


async def test_unexpected_error_after_defer_uses_followup(harness, monkeypatch):
    """The handler works whether or not the interaction was already acknowledged."""

    async def deferred_then_boom(self, interaction, question, paper=None, public=False):
        await interaction.response.defer(ephemeral=True, thinking=True)
        raise RuntimeError("late kaboom")

    monkeypatch.setattr(harness.bot.tree.get_command("ask"), "_callback", deferred_then_boom)
    ex = await harness.run_command("ask", {"question": QUESTION})
    assert ex.callback_type == 5
    followup = ex.requests[-1]
    assert followup.method == "POST" and followup.path.startswith("/webhooks/")
    assert "error id" in followup.json["content"]


async def test_mention_unexpected_error_replies_with_id(harness, monkeypatch, caplog):
    monkeypatch.setattr(harness.bot.engine, "answer", lambda *a, **k: 1 / 0)
    with caplog.at_level(logging.ERROR):
        ex = await harness.mention(QUESTION)
    [post] = [r for r in ex.requests if r.method == "POST"]
    error_id = re.search(r"error id `([0-9a-f]{8})`", post.json["content"]).group(1)
    assert any(error_id in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("question", ["x" * 499 + "?", "what " * 99])
async def test_long_questions_stay_within_limits(harness, question):
    ex = await harness.run_command("ask", {"question": question})
    assert ex.callback_type == 4


async def test_a_dm_without_a_mention_is_answered(harness):
    ex = await harness.mention(QUESTION, guild=False, raw=True)
    [post] = [r for r in ex.requests if r.method == "POST"]
    assert post.json["embeds"][0]["title"].startswith("Q: ")
    assert int(post.json["message_reference"]["message_id"]) == int(ex.payload["id"])


def guild_create(h, role_id: int) -> dict:
    """A GUILD_CREATE for the test guild holding the bot's managed role (as Discord sends on join)."""
    everyone = {
        "id": str(h.guild_id),
        "name": "@everyone",
        "permissions": "0",
        "position": 0,
        "color": 0,
        "hoist": False,
        "managed": False,
        "mentionable": False,
        "flags": 0,
    }
    bot_role = dict(
        everyone,
        id=str(role_id),
        name="paperbot",
        position=1,
        managed=True,
        tags={"bot_id": str(h.fake.application_id)},
    )
    return {
        "id": str(h.guild_id),
        "name": "Reading group",
        "icon": None,
        "owner_id": h.owner["id"],
        "roles": [everyone, bot_role],
        "emojis": [],
        "stickers": [],
        "features": [],
        "channels": [
            {
                "id": str(h.channel_id),
                "type": 0,
                "name": "papers",
                "position": 0,
                "permission_overwrites": [],
                "guild_id": str(h.guild_id),
            }
        ],
        "members": [],
        "threads": [],
        "voice_states": [],
        "presences": [],
        "member_count": 2,
        "large": False,
        "unavailable": False,
        "joined_at": "2026-01-01T00:00:00+00:00",
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "mfa_level": 0,
        "nsfw_level": 0,
        "premium_tier": 0,
        "preferred_locale": "en-US",
        "system_channel_flags": 0,
        "afk_timeout": 300,
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
    }


async def test_a_mention_of_the_bots_managed_role_is_a_mention(harness):
    role_id = 1600000000000000001
    harness.bot._connection.parsers["GUILD_CREATE"](guild_create(harness, role_id))
    ex = await harness.mention(f"<@&{role_id}> {QUESTION}", raw=True, role_ids=[role_id])
    [post] = [r for r in ex.requests if r.method == "POST"]
    assert post.json["embeds"][0]["title"] == f"Q: {QUESTION}"  # the role mention is not in the question
    other_role = 1600000000000000002
    ignored = await harness.mention(f"<@&{other_role}> {QUESTION}", raw=True, role_ids=[other_role])
    assert ignored.requests == []


# -- the reply: the answer, then at most two supporting quotes, the cited papers (issue 11 item 6) ---

REPLY_QUESTION = "How are sparse autoencoders evaluated for interpretability?"


def _quote_lines(description: str) -> list[str]:
    return [line for line in description.split("\n") if line.startswith("> ")]


async def test_ask_leads_with_the_answer_then_at_most_two_supporting_quotes(harness):
    ex = await harness.run_command("ask", {"question": REPLY_QUESTION})
    embed = ex.embeds[0]
    answer = harness.bot.engine.answer(REPLY_QUESTION)
    lines = embed["description"].split("\n")
    quotes = _quote_lines(embed["description"])
    assert len(quotes) == len(answer.sentences) and 2 <= len(quotes) <= 3
    # First line: the answer sentence with the citation of its paper, [1].
    assert lines[0].startswith("> ") and lines[0].endswith(" [1]")
    assert answer.sentences[0].text.split()[0] in lines[0]
    assert lines[1] == "**Supporting**"
    assert all(re.fullmatch(r"> .+ \[\d+\]", q) for q in quotes)
    # Every cited number is listed with the paper's id and title, in order.
    sources = "\n".join(f["value"] for f in embed["fields"] if f["name"].startswith("Sources"))
    cited = sorted({int(n) for n in re.findall(r"\[(\d+)\]$", "\n".join(quotes), re.M)})
    assert cited == list(range(1, len(answer.papers) + 1))
    for n, paper in enumerate(answer.papers, 1):
        assert f"[{n}] `{paper.id}` — " in sources
        assert paper.title[:40] in sources


async def test_a_mention_reply_is_the_same_answer_as_ask(harness):
    slash = (await harness.run_command("ask", {"question": REPLY_QUESTION})).embeds[0]
    [post] = [r for r in (await harness.mention(REPLY_QUESTION)).requests if r.method == "POST"]
    reply = post.json["embeds"][0]
    assert reply["description"] == slash["description"]
    assert reply["fields"] == slash["fields"]


async def test_ask_with_no_related_paper_says_so_and_offers_search(harness):
    """No bundled paper mentions both "diffusion" and "faster": no background sentence dressed up as
    an answer, but a plain sentence and the way to /search."""
    ex = await harness.run_command("ask", {"question": "how do diffusion models get faster?"})
    assert not ex.embeds
    assert "found nothing" in ex.content and "/search" in ex.content


# -- one paper: /ask paper: and the paper page's "Ask about this paper" (issue 34 item 4) -----------


def _source_ids(embed: dict) -> list[str]:
    text = "\n".join(f["value"] for f in embed.get("fields", []) if f["name"].startswith("Sources"))
    return re.findall(r"^\[\d+\] `([^`]+)`", text, re.M)


async def _a_paper(harness) -> str:
    """The paper the bundled corpus answers REPLY_QUESTION from first."""
    return harness.bot.engine.answer(REPLY_QUESTION).papers[0].id


async def test_ask_about_one_paper_quotes_that_paper_alone(harness):
    paper_id = await _a_paper(harness)
    ex = await harness.run_command("ask", {"question": "what data did they use?", "paper": paper_id})
    assert ex.callback_type == 4 and ex.ephemeral
    embed = ex.embeds[0]
    assert _source_ids(embed) == [paper_id]
    assert all(line.endswith("[1]") for line in embed["description"].split("\n") if line.startswith("> "))


async def test_ask_paper_autocompletes_like_paper(harness):
    paper_id = await _a_paper(harness)
    ex = await harness.autocomplete("ask", {"question": "how?", "paper": paper_id[:4]}, "paper")
    assert ex.callback_type == 8
    assert paper_id in [c["value"] for c in ex.choices]
    assert ex.choices == (await harness.autocomplete("paper", {"id": paper_id[:4]}, "id")).choices


async def test_ask_about_an_unknown_paper_says_so(harness):
    ex = await harness.run_command("ask", {"question": "what data?", "paper": "nope1234"})
    assert ex.callback_type == 4 and ex.ephemeral
    assert "no paper with id" in ex.content


async def test_the_paper_page_asks_about_its_paper_in_a_modal(harness):
    paper_id = await _a_paper(harness)
    page = await harness.run_command("paper", {"id": paper_id, "public": True})
    opened = await harness.click(page.message, page.custom_id(label="Ask about this paper"))
    assert opened.callback_type == 9
    modal = harness.fake.modals[opened.interaction_id]
    assert modal["title"] == "Ask about this paper"
    answered = await harness.submit_modal(opened, {"question": "how much better is it?"})
    assert answered.callback_type == 4 and not answered.ephemeral  # the page was public
    assert _source_ids(answered.embeds[0]) == [paper_id]
    assert answered.embeds[0]["title"] == "Q: how much better is it?"


async def test_the_paper_modal_shares_the_cooldown(make_harness):
    h = await make_harness(cooldown_rate=1, cooldown_per=60.0)
    paper_id = (h.bot.engine.answer(REPLY_QUESTION)).papers[0].id
    page = await h.run_command("paper", {"id": paper_id})  # /paper itself is not rate-limited
    assert (await h.run_command("ask", {"question": REPLY_QUESTION})).embeds
    opened = await h.click(page.message, page.custom_id(label="Ask about this paper"))
    limited = await h.submit_modal(opened, {"question": "what data?"})
    assert limited.ephemeral and "try again in" in limited.content
