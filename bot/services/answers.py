"""/ask and mention chat: an extractive answer quoted from the abstracts, or what to do instead."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from discord.utils import escape_markdown

from bot.render import truncate
from bot.services.base import Context
from retrieval.models import Answer

NOTHING_FOUND = (
    "I found nothing in the abstracts that answers “{question}”. "
    "Try other words, or /search to browse papers on the topic."
)
MENTION_HELP = (
    "Ask me a research question after the mention, e.g. “@{name} how do sparse autoencoders find features?”. "
    "Slash commands: /search, /ask, /paper, /similar."
)


@dataclass(frozen=True)
class AnswerReply:
    """An answer with quoted sentences, or (``notice``) the sentence that says nothing was found.

    A notice is only for the asker, whatever ``public`` the command asked for.
    """

    answer: Answer
    notice: str | None = None


class AnswerService:
    """Answers to questions, from the serving index."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def ask(self, question: str) -> AnswerReply:
        """Answer ``question`` (raises QueryError for a malformed one), off the event loop: an answer
        reads and scores its candidates' sentences (about 12 ms at 100k abstracts, 20-30 at p99)."""
        return self.reply(await asyncio.to_thread(self.ctx.engine.answer, question))

    def reply(self, answer: Answer) -> AnswerReply:
        """The reply an answer makes: its quotes, or the sentence saying nothing was found."""
        if answer.sentences:
            return AnswerReply(answer)
        shown = truncate(" ".join(answer.question.split()), 200)
        return AnswerReply(answer, notice=NOTHING_FOUND.format(question=escape_markdown(shown)))

    def mention_help(self, bot_name: str) -> str:
        """What to say to a mention that asks nothing."""
        return MENTION_HELP.format(name=bot_name)
