"""``paperbot console``: the bot's commands offline, in the terminal — no Discord, no token, no network.

A thin adapter like the cogs: it opens the same services the bot uses (:mod:`bot.services`), reads
each typed line with the slash commands' own option definitions (the cogs' app commands: names,
ranges, choices), calls the service the cog would call, and prints what the bot would show — the
same embeds, built by ``bot/ui`` — as text. Buttons and select options are numbered: type the number
to press one. You own the application here, so ``/admin`` commands work too.

Lines::

    /search sparse autoencoders limit:3      words fill the required options, in order
    /save 1a2b3c4d list:"to read"            name:value or name:"multi word" for the others
    /admin reindex                           subcommands (and groups) by name
    @bot what is RLHF?                       a mention (answered as a reply)
    > who wrote it?                          a reply to the last answer: a follow-up in its context
    /export json                             saved in the --out folder (default: the working folder)
    /import paperbot-all.json                a path (relative: to the working or the --out folder)
    2                                        press control [2] of the last message
    help | quit (or end of input)
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import itertools
import logging
import re
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import IO, Any

import discord
from discord import app_commands

from bot.cogs.admin import AdminCog
from bot.cogs.ask import AskCog
from bot.cogs.club import ClubCog
from bot.cogs.library import LibraryCog
from bot.cogs.recommend import RecommendCog
from bot.cogs.search import SearchCog
from bot.cogs.watch import WatchCog
from bot.errors import StartupError, describe_query_error, user_message
from bot.services.base import Confirmation, Notice
from bot.services.library import SavedListPage
from bot.services.registry import Services, open_services
from bot.services.search import ResultPage
from bot.services.transfer import ExportFile
from bot.settings import Settings
from bot.store import StoreError
from bot.ui import embeds as E
from bot.ui.admin import PROGRESS_EDIT_INTERVAL, progress_text, reindex_pages, stats_embed
from bot.ui.answers import answer_message, follow_up_message, thread_of
from bot.ui.club import club_embed
from bot.ui.followup import FOLLOW_UP_LABEL
from bot.ui.library import lists_embed, saved_list_page
from bot.ui.results import SAVE_PLACEHOLDER, SIMILAR_PLACEHOLDER, hit_options, result_content
from bot.ui.watch import dm_embeds
from retrieval.english import plural
from retrieval.errors import QueryError

log = logging.getLogger(__name__)

HELP = """\
Type a slash command as you would in Discord, e.g.
  /search reward models area:"Reinforcement Learning" limit:3
  /paper <id>        /similar <id>        /ask how do sparse autoencoders work?
  @bot <question>    (a mention: the bot replies to your message)
  > <follow-up>      reply to the last answer, as in Discord: "> how is it trained?", "> who wrote it?",
                     "> what data did they use?", "> save it", "> any similar papers?"
  <number>           press the numbered button or select option of the last message
  help               this help and the list of commands
  quit               leave (end of input works too)
Words that are not name:value fill the command's required options in order: one word each, or all of
them when one option is required (/list move <id> <to>, /search <query>). Other options are name:value or
name:"two words"; text after a text option belongs to it, as in Discord, unless a required option still
needs it ("phrases" keep their quotes in a query). When the words could be read two ways, the reply
shows the line to type. Log lines go to a file (paperbot console --log-file FILE; default console.log
beside the SQLite database), never over the replies.
"""
SYNC_OFFLINE = (
    "The console is offline: there are no Discord commands to sync here. Run /admin sync in Discord."
)
#: The cogs whose slash commands the console offers (their option definitions are read, not copied).
COGS: tuple[type, ...] = (SearchCog, AskCog, LibraryCog, AdminCog, RecommendCog, WatchCog, ClubCog)
#: The console's user: the application's owner (so /admin works), with a Discord-shaped id.
CONSOLE_USER_ID = 1200000000000000001
#: The one server the console's user is in, and owns (Manage Server): /club works there.
CONSOLE_GUILD_ID = 1300000000000000001

#: How a boolean option may be typed (Discord's client offers True and False).
_TRUE = frozenset({"true", "yes", "y", "on", "1"})
_FALSE = frozenset({"false", "no", "n", "off", "0"})
_MENTION = re.compile(r"^@\S*\s*(.*)$", re.S)
# A word: runs of plain characters and "double-quoted" stretches (an unclosed quote runs to the end).
_TOKEN = re.compile(r'(?:[^\s"]+|"[^"]*"?)+')

Press = Callable[[], Awaitable[None]]


@dataclass
class Control:
    """A button (``select`` is None) or one option of a select; ``press`` is None when disabled."""

    label: str
    press: Press | None
    select: str | None = None


@dataclass
class Message:
    """What the bot would send: the same content and embeds, and the controls under them."""

    content: str | None = None
    embeds: list[discord.Embed] = field(default_factory=list)
    ephemeral: bool = True
    reply: bool = False
    edited: bool = False
    controls: list[Control] = field(default_factory=list)
    file: tuple[str, bytes] | None = None
    #: Where the console saved ``file`` (an export), to say so under it.
    saved_to: Path | None = None


def slash_commands() -> dict[str, app_commands.Command[Any, ..., Any] | app_commands.Group]:
    """The bot's top-level slash commands (and groups) by name, as the cogs define them."""
    found: dict[str, Any] = {}
    for cog in COGS:
        for command in cog.__cog_app_commands__:  # type: ignore[attr-defined]
            found[command.name] = command
    return dict(sorted(found.items()))


def leaf_commands() -> Iterator[app_commands.Command[Any, ..., Any]]:
    """Every invocable command (subcommands of groups included)."""
    for command in slash_commands().values():
        if isinstance(command, app_commands.Group):
            yield from (c for c in command.walk_commands() if isinstance(c, app_commands.Command))
        else:
            yield command


class Console:
    """The read-eval-print loop over the services."""

    def __init__(
        self, settings: Settings, stdin: IO[str], stdout: IO[str], *, out_dir: str | Path | None = None
    ) -> None:
        self.settings = settings
        #: Where /export saves its files (``paperbot console --out``; default: the working folder).
        self.out_dir = Path(out_dir).expanduser() if out_dir is not None else Path.cwd()
        self.stdin = stdin
        self.out = stdout
        self.interactive = stdin.isatty()
        self.ansi = stdout.isatty()
        self.services: Services | None = None
        self.user_id = CONSOLE_USER_ID
        self.commands = slash_commands()
        self.controls: list[Control] = []
        #: The last answer shown: what a "> follow-up" line replies to (its embeds carry the conversation).
        self.last_answer: Message | None = None
        #: A form waiting for its text (the "Ask about this paper" button opens one, as Discord a modal).
        self.form: Callable[[str], Awaitable[None]] | None = None
        self.handlers: dict[str, Callable[[dict[str, Any]], Awaitable[None]]] = {
            "search": self.search,
            "paper": self.paper,
            "similar": self.similar,
            "recommend": self.recommend,
            "watch add": self.watch_add,
            "watch list": self.watch_list,
            "watch remove": self.watch_remove,
            "club add": self.club_add,
            "club remove": self.club_remove,
            "club show": self.club_show,
            "ask": self.ask,
            "save": self.save,
            "unsave": self.unsave,
            "saved": self.saved,
            "lists": self.lists,
            "list create": self.list_create,
            "list rename": self.list_rename,
            "list delete": self.list_delete,
            "list move": self.list_move,
            "list note": self.list_note,
            "export": self.export,
            "import": self.import_,
            "forgetme": self.forgetme,
            "admin reindex": self.admin_reindex,
            "admin stats": self.admin_stats,
            "admin sync": self.admin_sync,
        }

    @property
    def s(self) -> Services:
        """The services (opened by :meth:`run`)."""
        assert self.services is not None  # noqa: S101 - set by run() before any line is read
        return self.services

    def write(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    # -- the loop -------------------------------------------------------------------------------

    async def run(self) -> int:
        try:
            self.services = await open_services(self.settings)
        except StartupError as exc:
            print(f"paperbot: {exc}", file=sys.stderr)
            return 2
        try:
            if self.interactive:
                papers = len(self.s.context.engine)
                self.write(f"paperbot console — {plural(papers, 'paper')}, offline. Type help, or quit.")
            while True:
                if self.interactive:
                    self.out.write("paperbot> ")
                    self.out.flush()
                line = await _readline(self.stdin)
                if not line:
                    break
                line = line.strip()
                if not line:
                    continue
                if line.lower() in {"quit", "exit", ":q"}:
                    break
                try:
                    await self.handle(line)
                except (LookupError, ValueError) as exc:
                    self.write(f"! {exc}")
                except Exception as exc:  # the bot's own bug: show it and keep the session alive
                    log.debug("console command failed", exc_info=True)
                    self.write(f"! the bot raised {type(exc).__name__}: {exc}")
        finally:
            await self.s.close()
        return 0

    async def handle(self, line: str) -> None:
        """Run one input line."""
        if self.form is not None:
            form, self.form = self.form, None
            await self.guarded(form(line))
            return
        if line.lower() in {"help", "?", "/help"}:
            self.write(HELP)
            folder = _shown(self.out_dir) if self.out_dir != Path.cwd() else "this folder"
            self.write(
                f"/export saves its file in {folder} (paperbot console --out FOLDER picks another); "
                "/import <path> reads a .json export back.\n"
            )
            self.write(self.command_list())
            return
        if line.startswith(">"):
            await self.guarded(self.follow_up(line[1:].strip()))
            return
        if line.isdigit():
            await self.press(int(line))
            return
        if line.startswith("@"):
            match = _MENTION.match(line)
            await self.guarded(self.mention(match.group(1).strip() if match else ""))
            return
        if not line.startswith("/"):
            raise ValueError(
                "start with / for a command, @bot for a question, > to follow up on the last answer, "
                "or a number; 'help' lists all"
            )
        name, options = self.parse(line[1:])
        query = options.get("query") or options.get("question")
        await self.guarded(self.handlers[name](options), query=query if isinstance(query, str) else None)

    async def guarded(self, work: Awaitable[None], *, query: str | None = None) -> None:
        """Run ``work``; a known error is shown as the bot would show it (only to the user)."""
        try:
            await work
        except Exception as exc:
            text = user_message(exc, query=query)
            if text is None:
                raise
            self.show(Message(content=text))

    # -- parsing --------------------------------------------------------------------------------

    def parse(self, text: str) -> tuple[str, dict[str, Any]]:
        """``search foo bar limit:3`` → (qualified command name, options by display name)."""
        # Quotes are kept in the words so that "phrases" reach the query language; apostrophes are text.
        tokens = _TOKEN.findall(text)
        if not tokens:
            raise ValueError("which command? 'help' lists them")
        command: Any = self.commands.get(tokens[0].lower())
        if command is None:
            raise LookupError(f"no command /{tokens[0]} — 'help' lists them")
        path = [tokens.pop(0).lower()]
        while isinstance(command, app_commands.Group):
            subs = ", ".join(c.name for c in command.commands)
            if not tokens:
                raise LookupError(f"/{' '.join(path)} needs a subcommand: {subs}")
            child = command.get_command(tokens[0].lower())
            if child is None:
                raise LookupError(f"/{' '.join(path)} has no subcommand {tokens[0]!r} (one of: {subs})")
            path.append(tokens.pop(0).lower())
            command = child
        params = {p.display_name: p for p in command.parameters}
        required = [p.display_name for p in command.parameters if p.required]
        first = required[0] if required else None
        raw: dict[str, str] = {}
        # Words that are not name:value, by their place in the line: free ones, and those that followed
        # a text option's value (which, as in Discord, belong to it unless a required option needs them).
        free: list[tuple[int, str]] = []
        tails: dict[str, list[tuple[int, str]]] = {}
        last: str | None = None
        for place, token in enumerate(tokens):
            key, sep, value = token.partition(":")
            if sep and key not in params and key.isidentifier():
                # "fromat:bib" is a typo for an option, not text to put in another option.
                close = difflib.get_close_matches(key.lower(), params, n=1, cutoff=0.75)
                if close:
                    raise ValueError(f"/{' '.join(path)} has no option {key!r}: did you mean {close[0]}:?")
            if sep and key in params:
                raw[key] = value
                tails[key] = []
                last = key
            elif last is not None and params[last].type is discord.AppCommandOptionType.string:
                # query:"reward model" -quantum is the query "reward model" -quantum.
                tails[last].append((place, token))
            else:
                free.append((place, token))
        missing = [name for name in required if name not in raw]
        if len(free) < len(missing):
            # The help's rule first: words that are not name:value fill the required options, in order
            # (/search author:王小明 translation searches "translation" by 王小明).
            free = sorted(free + [word for key in tails for word in tails[key]])
            tails = {key: [] for key in tails}
        for key, words in tails.items():
            raw[key] = " ".join([raw[key], *(token for _, token in words)])
        words = [token for _, token in free]
        if missing and len(words) == len(missing):
            raw.update(zip(missing, words, strict=True))
        elif len(missing) == 1 and words:
            raw[missing[0]] = " ".join(words)
        elif missing and len(words) > len(missing):
            # Which words belong to which option cannot be known: show the line to type.
            guess = dict(raw, **dict(zip(missing, words, strict=False)))
            guess[missing[-1]] = " ".join(words[len(missing) - 1 :])
            raise ValueError(
                f"/{' '.join(path)}: which words are {_names(missing)}? Quote a value of several words, "
                f"or type {_form(path, command, guess)}"
            )
        elif missing:
            raw.update(zip(missing, words, strict=False))
            needed = [name for name in missing if name not in raw]
            option = "option" if len(needed) == 1 else "options"
            form = _form(path, command, raw)
            raise ValueError(f"/{' '.join(path)} needs the {option} {_names(needed)}: type {form}")
        elif words:
            target = next((p.display_name for p in command.parameters if p.display_name not in raw), None)
            if target is None:
                raise ValueError(f"/{' '.join(path)} takes no more text: {' '.join(words)!r}")
            raw[target] = " ".join(words)
        options: dict[str, Any] = {}
        for key, value in raw.items():
            if key != first and len(value) >= 2 and value[0] == value[-1] == '"' and '"' not in value[1:-1]:
                value = value[1:-1]  # area:"Reinforcement Learning"; the query keeps its "phrase"
            options[key] = self.convert(params[key], value)
        return " ".join(path), options

    def convert(self, param: app_commands.Parameter, value: str) -> Any:
        """A typed option value as Discord would send it (Discord's client enforces the ranges)."""
        converted = self._convert(param, value)
        low, high = param.min_value, param.max_value
        if isinstance(converted, str) and param.type is discord.AppCommandOptionType.string:
            if high is not None and len(converted) > high:
                raise ValueError(
                    f"{param.display_name} is {len(converted):,} characters; Discord allows at most {high:,}"
                )
            if low is not None and len(converted) < low:
                raise ValueError(f"{param.display_name} is empty; give it a value")
        elif isinstance(converted, int | float) and not isinstance(converted, bool):
            if (low is not None and converted < low) or (high is not None and converted > high):
                raise ValueError(f"{param.display_name} must be from {low} to {high}, got {converted}")
        return converted

    def _convert(self, param: app_commands.Parameter, value: str) -> Any:
        kind = param.type
        if kind is discord.AppCommandOptionType.integer:
            try:
                return int(value)
            except ValueError:
                raise ValueError(f"{param.display_name} must be a whole number, got {value!r}") from None
        if kind is discord.AppCommandOptionType.number:
            return float(value)
        if kind is discord.AppCommandOptionType.boolean:
            typed = value.strip().lower()
            if typed in _TRUE or typed in _FALSE:
                return typed in _TRUE
            allowed = "true or false (or yes/no, on/off, 1/0)"
            raise ValueError(f"{param.display_name} must be {allowed}, got {value!r}")
        if kind is discord.AppCommandOptionType.attachment:
            return self.local_file(value)
        if param.choices:
            typed = value.strip().lower()
            for choice in param.choices:
                if typed in (str(choice.value).lower(), choice.name.lower()):
                    return choice.value
            # Lenient like Discord's picker: "bibtex" finds "bib", "mark" finds "md (Markdown)".
            for choice in param.choices:
                if typed.startswith(str(choice.value).lower()) or choice.name.lower().startswith(typed):
                    return choice.value
            names = ", ".join(str(c.value) for c in param.choices)
            raise ValueError(f"{param.display_name} must be one of {names}")
        return value

    def local_file(self, typed: str) -> Path:
        """The file a path names (an attachment option): as typed, else relative to the working folder,
        else to the export folder (where /export saved it)."""
        text = typed.strip()
        if len(text) >= 2 and text[0] == text[-1] == '"':
            text = text[1:-1]
        path = Path(text).expanduser()
        candidates = [path] if path.is_absolute() else [Path.cwd() / path, self.out_dir / path]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            where = " or ".join(_shown(c.parent) for c in dict.fromkeys(candidates))
            raise ValueError(f"cannot read {text}: no such file in {where}")
        return found

    def command_list(self) -> str:
        """Every command with its options, for ``help``."""
        lines = ["Commands:"]
        for command in leaf_commands():
            opts = " ".join(
                (f"<{p.display_name}>" if p.required else f"[{p.display_name}:…]") for p in command.parameters
            )
            lines.append(f"  /{command.qualified_name} {opts}".rstrip() + f"  — {command.description}")
        return "\n".join(lines)

    # -- commands: finding papers ---------------------------------------------------------------

    async def search(self, o: dict[str, Any]) -> None:
        query, area, author, limit = o["query"], o.get("area"), o.get("author"), o.get("limit")

        async def fetch(page: int) -> ResultPage:
            return await self.s.search.page(
                self.user_id, query, page=page, per_page=limit, area=area, author=author
            )

        await self.show_results(await fetch(0), fetch, ephemeral=not o.get("public", False))

    async def paper(self, o: dict[str, Any]) -> None:
        page = await self.s.papers.paper(self.user_id, o["id"])
        pid = page.paper.id
        public = bool(o.get("public", False))
        controls = [
            Control("⭐ Save", lambda: self.quick_save(pid)),
            Control("Similar papers", lambda: self.show_similar(pid, ephemeral=True)),
            Control("❓ Ask about this paper", lambda: self.open_ask_form(pid, public=public)),
        ]
        reply = E.paper_reply(page.paper, saved=page.saved)
        ephemeral = not o.get("public", False)
        self.show(Message(embeds=reply.messages[0], ephemeral=ephemeral, controls=controls, file=reply.file))
        for embeds in reply.messages[1:]:  # the rest of a long abstract
            self.show(Message(embeds=embeds, ephemeral=ephemeral))

    async def similar(self, o: dict[str, Any]) -> None:
        await self.show_similar(o["id"], ephemeral=not o.get("public", False))

    async def show_similar(self, paper_id: str, *, ephemeral: bool) -> None:
        async def fetch(page: int) -> ResultPage:
            return await self.s.papers.similar(self.user_id, paper_id, page=page)

        await self.show_results(await fetch(0), fetch, ephemeral=ephemeral)

    async def recommend(self, o: dict[str, Any]) -> None:
        service = self.s.recommend
        pool = await service.pool(self.user_id, o.get("list"))

        async def fetch(page: int) -> ResultPage:
            return service.render(pool, page=page)

        await self.show_results(await fetch(0), fetch, ephemeral=not o.get("public", False))

    async def show_results(
        self, first: ResultPage, fetch: Callable[[int], Awaitable[ResultPage]], *, ephemeral: bool
    ) -> None:
        if first.notice is not None:
            self.show(Message(content=first.notice))
            return
        self.show(self.results_message(first, fetch, ephemeral=ephemeral))

    def results_message(
        self,
        page: ResultPage,
        fetch: Callable[[int], Awaitable[ResultPage]],
        *,
        ephemeral: bool,
        edited: bool = False,
    ) -> Message:
        """A result page with its paging buttons, save select and similar select (as ResultsView)."""

        async def goto(index: int) -> None:
            self.show(self.results_message(await fetch(index), fetch, ephemeral=ephemeral, edited=True))

        controls = pager(page.page, page.pages, goto)
        options = hit_options(page.hits)
        controls += [Control(o.label, partial(self.quick_save, o.value), SAVE_PLACEHOLDER) for o in options]
        controls += [
            Control(o.label, partial(self.show_similar, o.value, ephemeral=True), SIMILAR_PLACEHOLDER)
            for o in options
        ]
        embeds = E.hits_embeds(page.hits, page.saved_ids, page.reasons)
        return Message(result_content(page), embeds, ephemeral=ephemeral, edited=edited, controls=controls)

    async def quick_save(self, paper_id: str) -> None:
        self.notice(await self.s.library.quick_save(self.user_id, paper_id))

    async def ask(self, o: dict[str, Any]) -> None:
        if o.get("paper"):
            result = await self.s.conversation.ask_paper(o["question"], o["paper"])
            content, embeds = follow_up_message(result)
        else:
            content, embeds = answer_message(await self.s.answers.ask(o["question"]))
        public = o.get("public", False) and bool(embeds)  # "nothing found" is only for the asker
        self.show(Message(content=content, embeds=embeds, ephemeral=not public))

    async def open_ask_form(self, paper_id: str, *, public: bool) -> None:
        """The "Ask about this paper" button: the next line is the form's question (Discord's modal)."""

        async def submit(question: str) -> None:
            content, embeds = follow_up_message(await self.s.conversation.ask_paper(question, paper_id))
            self.show(Message(content, embeds, ephemeral=not (public and embeds)))

        self.form = submit
        self.write("Ask about this paper — type your question (the form Discord opens):")

    async def follow_up(self, text: str, answer: Message | None = None, *, reply: bool = True) -> None:
        """A "> ..." line: a reply to the last answer (or ``answer``), answered in its context (as the ask
        cog does); ``reply=False``: the "Ask a follow-up" form's question (answered like the answer was)."""
        answer = answer or self.last_answer
        thread = thread_of(answer.embeds) if answer is not None else None
        if answer is None or thread is None:
            raise LookupError("no answer to follow up on yet: ask something first (/ask or @bot)")
        try:
            result = await self.s.conversation.follow_up(self.user_id, thread, text)
        except QueryError as exc:
            self.show(Message(describe_query_error(exc, text), ephemeral=not reply, reply=reply))
            return
        content, embeds = follow_up_message(result)
        # A reply is a channel message; the form's answer is shown like the answer it follows (a sentence
        # alone only to the asker), as bot.ui.followup.send_answer does.
        ephemeral = not reply and (answer.ephemeral or not embeds)
        self.show(Message(content, embeds, ephemeral=ephemeral, reply=reply))

    async def open_follow_up_form(self, answer: Message) -> None:
        """The "Ask a follow-up" button: the next line is the form's question (Discord's modal)."""

        async def submit(question: str) -> None:
            await self.follow_up(question, answer, reply=False)

        self.form = submit
        self.write(f"{FOLLOW_UP_LABEL} — type your question (the form Discord opens):")

    async def mention(self, question: str) -> None:
        """A message mentioning the bot: answered like /ask, as a reply (as the ask cog does)."""
        if not question:
            self.show(Message(self.s.answers.mention_help("paperbot"), ephemeral=False, reply=True))
            return
        try:
            reply = await self.s.answers.ask(question)
        except QueryError as exc:
            self.show(Message(describe_query_error(exc, question), ephemeral=False, reply=True))
            return
        content, embeds = answer_message(reply)
        self.show(Message(content, embeds, ephemeral=False, reply=True))

    # -- commands: saved papers -----------------------------------------------------------------

    async def save(self, o: dict[str, Any]) -> None:
        self.notice(await self.s.library.save(self.user_id, o["id"], o.get("list"), o.get("note")))

    async def unsave(self, o: dict[str, Any]) -> None:
        self.notice(await self.s.library.unsave(self.user_id, o["id"], o.get("list")))

    async def saved(self, o: dict[str, Any]) -> None:
        first = await self.s.library.saved(self.user_id, o.get("list"))
        if isinstance(first, Notice):
            self.notice(first)
            return
        self.show(self.saved_message(first))

    def saved_message(self, result: SavedListPage, *, edited: bool = False) -> Message:
        async def goto(index: int) -> None:
            page = await self.s.library.saved_page(
                self.user_id, result.list_name, index, other_lists=result.other_lists
            )
            self.show(self.saved_message(page, edited=True))

        page = saved_list_page(result)
        return Message(embeds=page.embeds, edited=edited, controls=pager(result.page, page.page_count, goto))

    async def lists(self, o: dict[str, Any]) -> None:
        overview = await self.s.library.lists(self.user_id)
        if isinstance(overview, Notice):
            self.notice(overview)
            return
        self.show(Message(embeds=[lists_embed(overview)]))

    async def list_create(self, o: dict[str, Any]) -> None:
        self.notice(await self.s.library.create_list(self.user_id, o["name"]))

    async def list_rename(self, o: dict[str, Any]) -> None:
        self.notice(await self.s.library.rename_list(self.user_id, o["old"], o["new"]))

    async def list_delete(self, o: dict[str, Any]) -> None:
        self.confirm(await self.s.library.delete_list(self.user_id, o["name"]))

    async def list_move(self, o: dict[str, Any]) -> None:
        self.notice(await self.s.library.move(self.user_id, o["id"], o["to"], o.get("from")))

    async def list_note(self, o: dict[str, Any]) -> None:
        self.notice(await self.s.library.set_note(self.user_id, o["id"], o.get("note"), o.get("list")))

    async def forgetme(self, o: dict[str, Any]) -> None:
        self.confirm(await self.s.library.forget(self.user_id))

    def confirm(self, asked: Confirmation | Notice) -> None:
        """The question with Confirm / Cancel, as the confirmation view shows it."""
        if isinstance(asked, Notice):
            self.notice(asked)
            return

        async def yes() -> None:
            try:
                text = await asked.confirm()
            except StoreError as exc:
                text = str(exc)
            self.show(Message(text, edited=True))

        async def no() -> None:
            self.show(Message(asked.cancelled, edited=True))

        self.show(Message(asked.question, controls=[Control("Confirm", yes), Control("Cancel", no)]))

    async def export(self, o: dict[str, Any]) -> None:
        if o.get("scope") == "club":
            result = await self.s.club.export(CONSOLE_GUILD_ID, o["format"])
        else:
            result = await self.s.transfer.export(self.user_id, o["format"], o.get("list"))
        if isinstance(result, ExportFile):
            # Offline there is nobody to hand the file to: it is saved, never over an earlier one.
            try:
                saved = await asyncio.to_thread(_save_new, self.out_dir, result.filename, result.data)
            except OSError as exc:
                where = _shown(self.out_dir)
                raise ValueError(f"cannot save {result.filename} in {where}: {exc.strerror or exc}") from None
            self.show(Message(result.text, file=(result.filename, result.data), saved_to=saved))
        else:
            self.notice(result)

    async def import_(self, o: dict[str, Any]) -> None:
        path: Path = o["file"]
        transfer = self.s.transfer
        try:
            refused = transfer.check_import(path.name, (await asyncio.to_thread(path.stat)).st_size)
            if refused is not None:
                self.notice(refused)
                return
            data = await asyncio.to_thread(path.read_bytes)
        except OSError as exc:
            raise ValueError(f"cannot read {_shown(path)}: {exc.strerror or exc}") from None
        self.notice(await transfer.import_json(self.user_id, data, o.get("list")))

    # -- commands: administration (the console's user owns the application) ----------------------

    async def admin_reindex(self, o: dict[str, Any]) -> None:
        admin = self.s.admin
        plan = admin.plan_reindex(o.get("path"))
        started = time.monotonic()
        last = [float("-inf")]

        def progress(stage: str, done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_EDIT_INTERVAL:  # as often as the Discord message is edited
                last[0] = now
                self.show(Message(progress_text(plan.shown, stage, done, total, now - started), edited=True))

        self.show(Message(progress_text(plan.shown, "start", 0, 0, 0.0), edited=True))
        last[0] = time.monotonic()
        outcome = await admin.reindex(plan, progress=progress)
        if outcome.error is not None:
            self.show(Message(outcome.error, edited=True))
            return
        pages = reindex_pages(outcome)

        def report_page(index: int) -> Message:
            async def goto(target: int) -> None:
                self.show(report_page(target))

            embeds, controls = E.fit_embeds([pages[index]]), pager(index, len(pages), goto)
            return Message("✅ Reindex complete.", embeds, edited=True, controls=controls)

        self.show(report_page(0))
        if outcome.report is not None:
            for dm in await self.s.watch.alerts(outcome.report.added):
                who = "you" if dm.user_id == self.user_id else f"user {dm.user_id}"
                self.write(f"DM to {who}:")
                self.write(self.render(Message(dm.header, dm_embeds(dm), ephemeral=False)))

    async def club_add(self, o: dict[str, Any]) -> None:
        self.notice(
            await self.s.club.add(CONSOLE_GUILD_ID, self.user_id, o["id"], o.get("note"), manage_guild=True)
        )

    async def club_remove(self, o: dict[str, Any]) -> None:
        self.notice(await self.s.club.remove(CONSOLE_GUILD_ID, o["id"], manage_guild=True))

    async def club_show(self, o: dict[str, Any]) -> None:
        page = await self.s.club.show(CONSOLE_GUILD_ID)
        if isinstance(page, Notice):
            self.notice(page)
            return
        self.show(Message(embeds=[club_embed(page, "your server")], ephemeral=not o.get("public", False)))

    async def watch_add(self, o: dict[str, Any]) -> None:
        self.notice(await self.s.watch.add(self.user_id, o["query"], o.get("area"), o.get("author")))

    async def watch_list(self, o: dict[str, Any]) -> None:
        self.notice(await self.s.watch.list(self.user_id))

    async def watch_remove(self, o: dict[str, Any]) -> None:
        self.notice(await self.s.watch.remove(self.user_id, o["id"]))

    async def admin_stats(self, o: dict[str, Any]) -> None:
        self.show(Message(embeds=E.fit_embeds([stats_embed(await self.s.admin.stats())])))

    async def admin_sync(self, o: dict[str, Any]) -> None:
        self.show(Message(SYNC_OFFLINE))

    # -- controls -------------------------------------------------------------------------------

    async def press(self, number: int) -> None:
        """Press control ``number`` of the last message (button, or one option of a select)."""
        enabled = [c for c in self.controls if c.press is not None]
        if not 1 <= number <= len(enabled):
            raise LookupError("no such control — the last message's controls are numbered [1], [2], …")
        press = enabled[number - 1].press
        assert press is not None  # noqa: S101 - filtered above
        await self.guarded(press())

    # -- rendering ------------------------------------------------------------------------------

    def notice(self, notice: Notice) -> None:
        self.show(Message(notice.text, ephemeral=not notice.public))

    def show(self, message: Message) -> None:
        """Print ``message``; its controls become the numbered controls (an edit always replaces them).
        An answer (a message carrying a conversation) gets the bot's "Ask a follow-up" button and becomes
        what "> ..." replies to."""
        if thread_of(message.embeds) is not None:
            self.last_answer = message
            if not message.controls:
                press = partial(self.open_follow_up_form, message)
                message.controls = [Control(f"💬 {FOLLOW_UP_LABEL}", press)]
        self.write(self.render(message))
        if message.controls or message.edited:
            self.controls = message.controls

    def text(self, markdown: str, *, highlight: bool = False) -> str:
        """Discord markdown for the terminal: bold in ANSI on a terminal; when piped, only ``highlight``
        text (snippets, where bold marks the query words) keeps its ``**x**``."""
        return _terminal_text(markdown, ansi=self.ansi, keep_bold=highlight)

    def render(self, message: Message) -> str:
        """A message as terminal text, its controls numbered."""
        lines: list[str] = []
        marks = []
        if message.ephemeral:
            marks.append("(only you can see this)")
        if message.reply:
            marks.append("(reply)")
        if message.edited:
            marks.append("(updated)")
        if marks:
            lines.append(" ".join(marks))
        if message.content:
            lines.append(self.text(E.fit_content(message.content) or ""))
        for embed in message.embeds:
            lines += self.render_embed(embed.to_dict())
        if message.file is not None:
            filename, data = message.file
            where = f" saved as {_shown(message.saved_to)}" if message.saved_to is not None else ""
            lines.append(f"📎 {filename} ({len(data):,} bytes){where}")
            if message.saved_to is not None and message.saved_to.suffix == ".json":
                lines.append(f"   /import {_shown(message.saved_to)} reads it back")
            text = data.decode("utf-8", "replace").splitlines()
            lines += [f"   {line}" for line in text[:8]] + (["   …"] if len(text) > 8 else [])
        lines += self.render_controls(message.controls)
        return "\n".join(lines)

    def render_embed(self, embed: dict[str, Any]) -> list[str]:
        lines = ["┌" + "─" * 60]
        if embed.get("author", {}).get("name"):
            lines.append(f"│ {embed['author']['name']}")
        if embed.get("title"):
            url = f"  <{embed['url']}>" if embed.get("url") else ""
            lines.append(f"│ {self.text(embed['title'])}{url}")
        if embed.get("description"):
            description = self.text(embed["description"], highlight=True)
            lines += [f"│ {line}" for line in description.splitlines()]
        for item in embed.get("fields") or []:
            value = self.text(item["value"], highlight=True).replace("\n", "\n│   ")
            lines.append(f"│ {self.text(item['name'])}: {value}")
        if embed.get("footer", {}).get("text"):
            lines.append(f"│ — {embed['footer']['text']}")
        lines.append("└" + "─" * 60)
        return lines

    def render_controls(self, controls: list[Control]) -> list[str]:
        """Buttons on one line (disabled ones in parentheses), then each select with its options."""
        number = 0
        buttons: list[str] = []
        selects: dict[str, list[str]] = {}
        for control in controls:
            if control.press is None:
                shown = f"({control.label})"
            else:
                number += 1
                shown = f"[{number}] {control.label}"
            if control.select is None:
                buttons.append(shown)
            else:
                selects.setdefault(control.select, []).append(f"  {shown}")
        lines = ["  ".join(buttons)] if buttons else []
        for placeholder, options in selects.items():
            lines += [placeholder, *options]
        return lines


def _names(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def _form(path: list[str], command: app_commands.Command[Any, ..., Any], values: dict[str, str]) -> str:
    """The command line to type: every given or required option as name:value, in the command's order
    (a value of several words in quotes, a missing one as name:<name>)."""
    parts = [f"/{' '.join(path)}"]
    for param in command.parameters:
        name = param.display_name
        value = values.get(name)
        if value is None:
            if param.required:
                parts.append(f"{name}:<{name}>")
            continue
        if any(c.isspace() for c in value) and not (value[:1] == value[-1:] == '"' and len(value) > 1):
            value = f'"{value}"'
        parts.append(f"{name}:{value}")
    return " ".join(parts)


def _save_new(folder: Path, filename: str, data: bytes) -> Path:
    """Write ``data`` to ``folder/filename`` (the folder made if missing), or to ``name-2.ext``,
    ``name-3.ext``… when that file exists: an export never replaces an earlier one."""
    folder.mkdir(parents=True, exist_ok=True)
    stem, suffix = Path(filename).stem, Path(filename).suffix
    for n in itertools.count(1):
        path = folder / (filename if n == 1 else f"{stem}-{n}{suffix}")
        try:
            with path.open("xb") as handle:  # "x": fails rather than replace a file made meanwhile
                handle.write(data)
        except FileExistsError:
            continue
        return path
    raise AssertionError("unreachable")  # pragma: no cover


def _shown(path: Path) -> str:
    """A path as the user can type it back: relative to the working folder when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def pager(index: int, pages: int, goto: Callable[[int], Awaitable[None]]) -> list[Control]:
    """◀ Previous · page · Next ▶, as the paginator shows them (none for a single page)."""
    if pages <= 1:
        return []
    return [
        Control("◀ Previous", partial(goto, index - 1) if index > 0 else None),
        Control(f"{index + 1}/{pages}", None),
        Control("Next ▶", partial(goto, index + 1) if index < pages - 1 else None),
    ]


_TIMESTAMP = re.compile(r"<t:(-?\d{1,13})(?::([tTdDfFR]))?>")


def _terminal_text(text: str, *, ansi: bool, keep_bold: bool = False) -> str:
    """Discord markdown as terminal text: timestamps as UTC dates, bold as ANSI bold on a terminal."""

    def timestamp(match: re.Match[str]) -> str:
        try:
            when = datetime.fromtimestamp(int(match.group(1)), tz=UTC)
        except (OverflowError, OSError, ValueError):
            return match.group(0)
        style = match.group(2) or "f"
        return when.strftime("%Y-%m-%d" if style in "dD" else "%Y-%m-%d %H:%M UTC")

    text = _TIMESTAMP.sub(timestamp, text or "")
    if ansi:
        text = re.sub(r"(?<!\\)\*\*(.+?)(?<!\\)\*\*", "\x1b[1m\\1\x1b[0m", text)
    elif not keep_bold:
        text = re.sub(r"(?<!\\)\*\*(.+?)(?<!\\)\*\*", r"\1", text)
    # Discord shows \~ or \* as the bare character; so does the terminal.
    return re.sub(r"\\([*_~`|>\\#\[\]-])", r"\1", text)


async def _readline(stream: IO[str]) -> str:
    """``stream.readline()`` in a daemon thread: Ctrl-C must not wait for a line that never comes.

    ``asyncio.to_thread`` would use the default executor, whose threads the interpreter joins at
    exit, so a Ctrl-C at the prompt left the process hanging until Enter was pressed.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def deliver(result: str | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result or "")

    def work() -> None:
        try:
            result, error = stream.readline(), None
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            result, error = None, exc
        try:
            loop.call_soon_threadsafe(deliver, result, error)
        except RuntimeError:  # the loop closed while we waited (Ctrl-C)
            pass

    threading.Thread(target=work, name="paperbot-console-stdin", daemon=True).start()
    return await future


def run_console(
    settings: Settings,
    *,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    out_dir: str | Path | None = None,
) -> int:
    """Run the offline console until ``quit`` or end of input; 0 on success, 2 if it cannot start.

    ``out_dir``: where /export saves its files (default: the working folder).
    """
    # One person at a keyboard (or a script of commands): nothing is rate-limited here.
    settings = dataclasses.replace(settings, cooldown_per=0.0)
    console = Console(settings, stdin or sys.stdin, stdout or sys.stdout, out_dir=out_dir)
    try:
        return asyncio.run(console.run())
    except KeyboardInterrupt:
        return 130
