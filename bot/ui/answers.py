"""What /ask, mention chat and follow-ups show, and the conversation read back from a message.

Every reply in a conversation is one embed of the shape :func:`bot.ui.embeds.conversation_embed` builds:
``Q: question`` as title, ``Re: first question`` above it when it answers a follow-up, the quotes (or
the record, or the similar papers), and the cited papers as ``[n] `id` — title`` under "Sources".
:func:`thread_of` reads that back from a message — the bot's own message, whose embeds Discord always
shows the bot, with or without the Message Content intent — so the next follow-up needs nothing but
the message it replies to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import discord

from bot import render
from bot.services.answers import AnswerReply
from bot.services.conversation import FollowUp, Record, Similar, Thread, source_file
from bot.ui import embeds as E

_MORE = "Use /paper <id> to read one, or reply to ask a follow-up."
RECORD_FOOTER = f"From the papers' records, not quoted. {_MORE}"
SIMILAR_FOOTER = f"Papers sharing the most distinctive words. {_MORE}"
#: A Sources line: ``[n] `id` — title`` (the id a code span of one or two backticks).
_SOURCE_RE = re.compile(r"^\[(\d+)\] (?:`` (.+?) ``|`([^`]*)`) \u2014 ?(.*)$")
_QUOTE_RE = re.compile(r"^> (.*?)(?: \[\d+\])?$")
#: What render.code puts between two backticks of an id, so they do not close its code span.
_BACKTICK_GUARD = "`\u200b`"


def answer_message(reply: AnswerReply, *, subject: str = "") -> tuple[str | None, list[discord.Embed]]:
    """(content, embeds) for an answer; the service's sentence instead when nothing was found."""
    if reply.notice is not None:
        return reply.notice, []
    return None, [E.answer_embed(reply.answer, subject=subject)]


def record_embed(record: Record, *, subject: str = "") -> discord.Embed:
    """Who wrote the papers and where they come from, from their records (never a quote)."""
    blocks = []
    several = len(record.papers) > 1
    for n, paper in enumerate(record.papers, 1):
        authors = f"**Authors:** {E.all_authors(paper, 600)}"
        where = [f"**Area:** {render.escape(paper.area)}" if paper.area else "**Area:** not recorded"]
        if paper.url:
            where.append(f"**Link:** <{paper.url}>")
        found_in = source_file(paper)
        if found_in:
            where.append(f"**In the corpus:** {render.code(found_in)} as {render.code(paper.id)}")
        lines = [authors, *where] if record.asked == "authors" else [*where, authors]
        head = f"[{n}] " if several else ""
        blocks.append(head + "\n".join(lines))
    if record.asked == "venue" and not any(p.url for p in record.papers):
        blocks.append("The corpus records no venue or link for this: its area and file are what it has.")
    description = E.truncate("\n\n".join(blocks), 3000)
    return E.conversation_embed(
        record.question, description, record.papers, subject=subject, footer=RECORD_FOOTER
    )


def similar_embed(similar: Similar, *, subject: str = "") -> discord.Embed:
    """The papers most like the one asked about, numbered as their Sources."""
    lines = [f"Papers most like **{render.title(similar.paper.title or similar.paper.id, 150)}** "
             f"({render.code(similar.paper.id)}):"]
    for n, hit in enumerate(similar.hits, 1):
        lines.append(f"[{n}] {discord.utils.escape_markdown(E.byline(hit.paper))}")
    papers = [hit.paper for hit in similar.hits]
    return E.conversation_embed(
        similar.question, "\n".join(lines), papers, subject=subject, footer=SIMILAR_FOOTER
    )


def follow_up_message(result: FollowUp) -> tuple[str | None, list[discord.Embed]]:
    """(content, embeds) for a follow-up's reply: the notice (papers that left, a save) as content."""
    reply = result.reply
    if reply is None:
        return result.notice, []
    if isinstance(reply, Record):
        embeds = [record_embed(reply, subject=result.subject)]
    elif isinstance(reply, Similar):
        embeds = [similar_embed(reply, subject=result.subject)]
    else:
        content, embeds = answer_message(reply, subject=result.subject)
        if content is not None:
            return "\n".join(x for x in (result.notice, content) if x), []
    return result.notice, embeds


# -- reading a conversation back from a message ---------------------------------------------------


def _as_dict(embed: discord.Embed | Mapping[str, Any]) -> Mapping[str, Any]:
    return embed.to_dict() if isinstance(embed, discord.Embed) else embed  # type: ignore[return-value]


def _unescape(text: str) -> str:
    """Discord markdown escapes undone (``\\*`` shows as ``*``)."""
    return re.sub(r"\\([^\sA-Za-z0-9])", r"\1", text)


def thread_of(embeds: Iterable[discord.Embed | Mapping[str, Any]]) -> Thread | None:
    """The conversation an answer message carries, or None when it carries none (not a reply of ours in
    a conversation: help text, a notice, a search page).

    Reads the first embed titled ``Q: ...`` that lists its Sources: the question from the title, the
    first question from the ``Re: ...`` author line, the cited ids and titles from the Sources lines,
    the quotes from the ``> ...`` lines.
    """
    for raw in embeds:
        embed = _as_dict(raw)
        title = embed.get("title") or ""
        if not title.startswith(E.QUESTION_MARK):
            continue
        ids: list[str] = []
        titles: list[str] = []
        for item in embed.get("fields") or []:
            if item.get("name") not in (E.SOURCES, E.SOURCES_MORE):
                continue
            for line in (item.get("value") or "").split("\n"):
                m = _SOURCE_RE.match(line.strip())
                if m is None:
                    continue
                pid = m.group(2).replace(_BACKTICK_GUARD, "``") if m.group(2) is not None else m.group(3)
                if pid and pid not in ids:
                    ids.append(pid)
                    titles.append(_unescape(m.group(4)))
        if not ids:
            continue
        author = (embed.get("author") or {}).get("name") or ""
        subject = author[len(E.FOLLOWING_UP):] if author.startswith(E.FOLLOWING_UP) else ""
        quotes = []
        for line in (embed.get("description") or "").split("\n"):
            m = _QUOTE_RE.match(line)
            if m is not None:
                quotes.append(_unescape(m.group(1)))
        return Thread(
            question=title[len(E.QUESTION_MARK):],
            paper_ids=tuple(ids),
            subject=subject,
            titles=tuple(titles),
            quotes=tuple(quotes),
        )
    return None
