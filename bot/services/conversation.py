"""Follow-ups: a message replying to one of the bot's answers is answered in that answer's context.

The context is a :class:`Thread`: what the answer message itself shows — the question it answered, the
conversation's first question (its subject), the papers it cited and the sentences it quoted. The
adapters read it back from the message (:func:`bot.ui.answers.thread_of`), so it survives a restart, a
reindex and any number of processes; nothing is kept in memory between messages.

What a follow-up asks is decided here (:func:`decide`), the same way for the bot, the console and
``bench/chat.py``:

- "save it", "bookmark the second one": the paper is saved to the user's default list;
- "who wrote it?", "where was it published?": the paper's record (authors, area, link, corpus file),
  never a quote;
- "anything similar?": the papers most like it;
- a follow-up naming a new subject (words the cited papers do not hold, weighing more than the
  threshold fitted by ``bench/chat.py``; or "different question: ...") is a new question, answered
  from the whole corpus;
- anything else ("how is it trained?", "what data?", "how much better?", "what's X?") is answered from
  the cited papers by :func:`retrieval.followup.answer_follow_up`.

"It" is the answer's first paper; "the second one", "[2]", "paper 2" name another.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from bot.render import code
from bot.render import title as render_title
from bot.services.answers import AnswerReply, AnswerService
from bot.services.base import Context
from bot.services.library import LibraryService
from retrieval.answer import AnswerIndex
from retrieval.english import plural
from retrieval.followup import answer_about, answer_follow_up, is_new_subject
from retrieval.models import Answer, Hit, Paper

#: Similar papers a "more like this" follow-up lists.
SIMILAR_SHOWN = 5

# What a follow-up asks for, besides a question about the papers. Checked in this order.
_SAVE_RE = re.compile(
    r"^\W*(please\s+|can you\s+|could you\s+)?(save|bookmark|keep|store|add)\b"
    r"(?!.*\b(how|why|what|which|when|where)\b)",
    re.I,
)
_AUTHORS_RE = re.compile(
    r"\b(who (wrote|writes|authored|made|did|published|are the authors|is the author|are they|is behind)"
    r"|authors?|written by|whose (paper|work))\b",
    re.I,
)
_VENUE_RE = re.compile(
    r"\b(where (was|is|did|does|has|were|are) ([\w'-]+ ){1,4}?(been )?"
    r"(published|appear\w*|come out|came out|presented|printed)|where can i (find|read|get)|"
    r"(which|what) (venue|conference|journal|workshop)|published (in|at|where)|venue|"
    r"(a|the|any) (link|url)\b)",
    re.I,
)
_SIMILAR_RE = re.compile(
    r"\b(similar|more (papers )?like (it|this|that|them|these)|related (papers|work)|"
    r"other papers (like|on|about)|anything else like|papers like (it|this|that))\b",
    re.I,
)
# "Different question: ...", "unrelated, but ...": the asker says the subject changes.
_NEW_SUBJECT_RE = re.compile(
    r"^\W*(different|unrelated|new|another|other|separate|switching|changing)\b[^:,;.!?\u2014-]{0,30}"
    r"(question|topic|subject|thing|note|gears)?\s*[:,;.!?\u2014-]+\s*(but\s+)?",
    re.I,
)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "last": -1, "1st": 1, "2nd": 2, "3rd": 3}
_WHICH_RE = re.compile(
    r"\[(\d)\]|\b(?:paper|source|number|no\.?|#)\s*(\d)\b|\bthe (first|second|third|last|1st|2nd|3rd)\b",
    re.I,
)
_ALL_RE = re.compile(r"\b(them|these|those|both|all|each)\b", re.I)
ASK_HINT = (
    "Reply to one of my answers with a question about it (\u201chow does it work?\u201d, \u201cwhat data did "
    "they use?\u201d, \u201cwho wrote it?\u201d, \u201csave it\u201d), or ask me something new."
)


@dataclass(frozen=True)
class Thread:
    """What an answer message carries: the conversation so far, as shown to its readers.

    Attributes:
        question: The question the message answered.
        paper_ids: The papers it cited, in citation order ([1] first).
        subject: The conversation's first question, when the message answered a follow-up ("" when the
            message started the conversation: then ``question`` is the subject).
        titles: The cited papers' titles as shown, in the same order (to name one that left the corpus).
        quotes: The sentences it quoted, its answer first.
    """

    question: str
    paper_ids: tuple[str, ...]
    subject: str = ""
    titles: tuple[str, ...] = ()
    quotes: tuple[str, ...] = ()

    @property
    def root(self) -> str:
        """The conversation's subject: its first question."""
        return self.subject or self.question


@dataclass(frozen=True)
class Decision:
    """What a follow-up asks for: ``intent`` (``ask``, ``new``, ``authors``, ``venue``, ``similar``,
    ``save``, or ``unknown`` when it names a paper the answer did not cite), the text to answer, and the
    papers it is about (for ``ask``: all those the thread cited that are still in the corpus, or the one it
    names; for the others: the one it names, or all of them for "them")."""

    intent: str
    question: str
    papers: tuple[Paper, ...]


@dataclass(frozen=True)
class Record:
    """The record of papers a follow-up asked about ("who wrote it?", "where was it published?")."""

    question: str
    papers: tuple[Paper, ...]
    asked: str  # "authors" or "venue": what to put first


@dataclass(frozen=True)
class Similar:
    """The papers most like the one a follow-up asked about."""

    question: str
    paper: Paper
    hits: tuple[Hit, ...]


@dataclass(frozen=True)
class FollowUp:
    """The reply to a follow-up.

    Attributes:
        reply: An answer (a follow-up's, or a new question's), a record or similar papers; None when
            ``notice`` is the whole reply (a save, or nothing to answer from).
        notice: A sentence said before the reply (cited papers that left the corpus), or instead of it.
        subject: The conversation's first question, carried by the reply so the next follow-up keeps
            it; "" when the reply starts a conversation of its own (a new subject).
    """

    reply: AnswerReply | Record | Similar | None
    notice: str | None = None
    subject: str = ""


def _which(text: str, count: int) -> list[int] | None:
    """0-based positions of the cited papers the follow-up names ("the second one", "[2]"), every one
    for "them"/"both", or None when it names none (then "it" is the first)."""
    m = _WHICH_RE.search(text)
    if m:
        number = m.group(1) or m.group(2)
        n = int(number) if number else _ORDINALS[m.group(3).lower()]
        index = count - 1 if n == -1 else n - 1
        return [index] if 0 <= index < count else []
    if _ALL_RE.search(text) and count > 1:
        return list(range(count))
    return None


def decide(index: AnswerIndex, papers: Sequence[Paper], text: str) -> Decision:
    """What ``text``, replying to an answer that cited ``papers`` (those still in the corpus, in citation
    order), asks for. Pure: the bot, the console and ``bench/chat.py`` decide with it."""
    question = " ".join(text.split())
    marker = _NEW_SUBJECT_RE.match(question)
    if marker and marker.end() < len(question):
        return Decision("new", question[marker.end():], ())
    chosen = _which(question, len(papers))
    if chosen == [] and papers:
        return Decision("unknown", question, ())  # "the third one" of an answer citing two
    named = tuple(papers[i] for i in chosen) if chosen is not None else tuple(papers[:1])
    for intent, pattern in (
        ("save", _SAVE_RE),
        ("authors", _AUTHORS_RE),
        ("venue", _VENUE_RE),
        ("similar", _SIMILAR_RE),
    ):
        if pattern.search(question):
            return Decision(intent, question, named)
    if not papers or is_new_subject(index, papers, question):
        return Decision("new", question, ())
    return Decision("ask", question, named if chosen is not None else tuple(papers))


def answer_in_thread(index: AnswerIndex, decision: Decision, thread: Thread) -> Answer:
    """The answer to an ``ask`` decision: from its papers only, in the thread's context."""
    return answer_follow_up(index, decision.papers, decision.question, thread.root, thread.quotes)


class ConversationService:
    """Follow-ups to answers, and questions about one paper."""

    def __init__(self, ctx: Context, answers: AnswerService, library: LibraryService) -> None:
        self.ctx = ctx
        self.answers = answers
        self.library = library

    def _present(self, thread: Thread) -> tuple[list[Paper], list[str]]:
        """The thread's papers still in the corpus, and a line for each one that left it."""
        papers: list[Paper] = []
        gone: list[str] = []
        for i, pid in enumerate(thread.paper_ids):
            paper = self.ctx.engine.get(pid)
            if paper is not None:
                papers.append(paper)
                continue
            title = thread.titles[i] if i < len(thread.titles) else ""
            shown = f"**{render_title(title, 120)}** ({code(pid)})" if title else code(pid)
            gone.append(shown)
        return papers, gone

    async def follow_up(self, user_id: int, thread: Thread, text: str) -> FollowUp:
        """The reply to ``text``, a reply to the answer ``thread`` describes (raises QueryError for a
        malformed new question)."""
        papers, gone = self._present(thread)
        gone_note = _gone_note(gone, left=len(papers)) if gone else None
        if not " ".join(text.split()):
            return FollowUp(None, ASK_HINT)
        index = self.ctx.engine.index
        decision = await asyncio.to_thread(decide, index, papers, text)  # (reads the index)
        if decision.intent == "new":
            if not papers and gone:
                # Every cited paper left: ask the whole conversation again, of the corpus as it is now.
                reply = await self.answers.ask(f"{decision.question} {thread.root}")
                return FollowUp(reply, gone_note, subject=thread.root)
            return FollowUp(await self.answers.ask(decision.question))
        if decision.intent == "unknown":
            numbers = ", ".join(f"[{n}]" for n in range(1, len(papers) + 1))
            return FollowUp(None, f"That answer cites {plural(len(papers), 'paper')}: {numbers}.")
        if not decision.papers:
            return FollowUp(None, gone_note or ASK_HINT)
        if decision.intent == "save":
            notices = [await self.library.quick_save(user_id, p.id) for p in decision.papers]
            return FollowUp(None, "\n".join(n.text for n in notices))
        if decision.intent in ("authors", "venue"):
            record = Record(decision.question, decision.papers, decision.intent)
            return FollowUp(record, gone_note, subject=thread.root)
        if decision.intent == "similar":
            paper = decision.papers[0]
            hits = tuple(self.ctx.engine.similar(paper.id, SIMILAR_SHOWN))
            if not hits:
                note = f"No other paper shares enough words with {code(paper.id)} to count as similar."
                return FollowUp(None, note)
            return FollowUp(Similar(decision.question, paper, hits), gone_note, subject=thread.root)
        answer = await asyncio.to_thread(answer_in_thread, index, decision, thread)
        return FollowUp(self.answers.reply(answer), gone_note, subject=thread.root)

    async def ask_paper(self, question: str, paper_id: str) -> FollowUp:
        """/ask with ``paper``: ``question`` answered from that paper alone (raises UnknownPaperError)."""
        paper = self.ctx.paper(paper_id)
        asked = " ".join(question.split())
        answer = await asyncio.to_thread(answer_about, self.ctx.engine.index, [paper], asked)
        if not answer.sentences:
            note = f"The abstract of {self.ctx.title(paper.id)} has no sentence to quote."
            return FollowUp(None, note)
        return FollowUp(self.answers.reply(answer))


def _gone_note(gone: list[str], *, left: int) -> str:
    """What to say about cited papers that left the corpus since the answer."""
    names = ", ".join(gone)
    if left:
        verb = "has" if len(gone) == 1 else "have"
        return f"{names} {verb} left the corpus since that answer; answering from the rest."
    return (
        f"The papers that answer cited have left the corpus since ({names}); "
        "here is what the corpus says now."
    )


def source_file(paper: Paper) -> str:
    """The name of the corpus file the paper was read from (its record's ``source``, without the line)."""
    where = paper.source.rsplit(":", 1)[0] if paper.source else ""
    return PurePath(where).name if where else ""
