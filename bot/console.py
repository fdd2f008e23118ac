"""``paperbot console``: the bot's own command code, offline, in the terminal.

It starts the real :class:`~bot.app.PaperBot` on the fake Discord of :mod:`bot.offline` (no token, no
network), turns each typed line into the same gateway payload Discord would send, and prints what the
bot answered. You are the application's owner, so ``/admin`` commands work too.

Lines::

    /search sparse autoencoders limit:3      free text fills the first required option
    /save 1a2b3c4d list:"to read"            name:value or name:"multi word" for the others
    /admin reindex                           subcommands (and groups) by name
    @bot what is RLHF?                       a mention (answered as a reply)
    2                                        press control [2] of the last message
    help | quit (or end of input)
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import logging
import re
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import discord
from discord import app_commands

from bot.offline import Exchange, Harness, RecordedRequest, iter_components
from bot.settings import Settings
from retrieval.text import plural

log = logging.getLogger(__name__)

HELP = """\
Type a slash command as you would in Discord, e.g.
  /search reward models area:"Reinforcement Learning" limit:3
  /paper <id>        /similar <id>        /ask how do sparse autoencoders work?
  @bot <question>    (a mention: the bot replies to your message)
  <number>           press the numbered button or select option of the last message
  help               this help and the list of commands
  quit               leave (end of input works too)
Free text fills the command's first required option; other options are name:value or name:"two words",
and text after a text option belongs to it, as in Discord ("phrases" keep their quotes in a query).
"""

_MENTION = re.compile(r"^@\S*\s*(.*)$", re.S)
# A word: runs of plain characters and "double-quoted" stretches (an unclosed quote runs to the end).
_TOKEN = re.compile(r'(?:[^\s"]+|"[^"]*"?)+')


class Console:
    """The read-eval-print loop over a :class:`Harness`."""

    def __init__(self, settings: Settings, stdin: IO[str], stdout: IO[str]) -> None:
        self.settings = settings
        self.stdin = stdin
        self.out = stdout
        self.interactive = stdin.isatty()
        self.ansi = stdout.isatty()
        self.harness: Harness | None = None
        self.controls: list[
            tuple[dict[str, Any], str, str | None, int]
        ] = []  # message, custom_id, value, type

    def write(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    # -- the loop -------------------------------------------------------------------------------

    async def run(self) -> int:
        from bot.app import StartupError

        try:
            # The console's user is the application owner, so admin commands work offline.
            self.harness = await Harness.start(self.settings)
        except StartupError as exc:
            print(f"paperbot: {exc}", file=sys.stderr)
            return 2
        h = self.harness
        try:
            papers = len(h.bot.engine) if h.bot.engine is not None else 0
            if self.interactive:
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
            await h.close()
        return 0

    async def handle(self, line: str) -> None:
        """Run one input line."""
        h = self.harness
        assert h is not None  # noqa: S101 - set by run()
        if line.lower() in {"help", "?", "/help"}:
            self.write(HELP)
            self.write(self.command_list())
            return
        if line.isdigit():
            await self.press(int(line))
            return
        if line.startswith("@"):
            match = _MENTION.match(line)
            text = match.group(1) if match else ""
            self.show(await h.mention(text, user=h.owner))
            return
        if not line.startswith("/"):
            raise ValueError("start with / for a command, @bot for a question, or a number; 'help' lists all")
        name, sub, options = self.parse(line[1:])
        exchange = await h.run_command(name, options, subcommand=sub, user=h.owner, permissions=8)
        exchange = await self.follow_modal(exchange)
        self.show(exchange)

    # -- parsing --------------------------------------------------------------------------------

    def parse(self, text: str) -> tuple[str, str | None, dict[str, Any]]:
        """``search foo bar limit:3`` → (name, subcommand path, options by display name)."""
        h = self.harness
        assert h is not None  # noqa: S101
        # Quotes are kept in the words so that "phrases" reach the query language; apostrophes are text.
        tokens = _TOKEN.findall(text)
        if not tokens:
            raise ValueError("which command? 'help' lists them")
        command: Any = h.bot.tree.get_command(tokens[0].lower())
        if command is None:
            raise LookupError(f"no command /{tokens[0]} — 'help' lists them")
        path = [tokens.pop(0).lower()]
        while isinstance(command, app_commands.Group):
            if not tokens:
                subs = ", ".join(c.name for c in command.commands)
                raise LookupError(f"/{' '.join(path)} needs a subcommand: {subs}")
            child = command.get_command(tokens[0].lower())
            if child is None:
                subs = ", ".join(c.name for c in command.commands)
                raise LookupError(f"/{' '.join(path)} has no subcommand {tokens[0]!r} (one of: {subs})")
            path.append(tokens.pop(0).lower())
            command = child
        params = {p.display_name: p for p in command.parameters}
        first = next((p.display_name for p in command.parameters if p.required), None)
        raw: dict[str, str] = {}
        free: list[str] = []
        last: str | None = None
        for token in tokens:
            key, sep, value = token.partition(":")
            if sep and key not in params and key.isidentifier():
                # "fromat:bib" is a typo for an option, not text to put in another option.
                close = difflib.get_close_matches(key.lower(), params, n=1, cutoff=0.75)
                if close:
                    raise ValueError(f"/{' '.join(path)} has no option {key!r}: did you mean {close[0]}:?")
            if sep and key in params:
                raw[key] = value
                last = key
            elif last is not None and params[last].type is discord.AppCommandOptionType.string:
                # As in Discord, what follows a text option belongs to it until the next option:
                # query:"reward model" -quantum is the query "reward model" -quantum.
                raw[last] += " " + token
            else:
                free.append(token)
        options: dict[str, Any] = {}
        for key, value in raw.items():
            if key != first and len(value) >= 2 and value[0] == value[-1] == '"' and '"' not in value[1:-1]:
                value = value[1:-1]  # area:"Reinforcement Learning"; the query keeps its "phrase"
            options[key] = self.convert(params[key], value)
        if free:
            target = next(
                (p for p in command.parameters if p.required and p.display_name not in options), None
            )
            target = target or next((p for p in command.parameters if p.display_name not in options), None)
            if target is None:
                raise ValueError(f"/{' '.join(path)} takes no more text: {' '.join(free)!r}")
            options[target.display_name] = self.convert(target, " ".join(free))
        missing = [p.display_name for p in command.parameters if p.required and p.display_name not in options]
        if missing:
            raise ValueError(f"/{' '.join(path)} needs {', '.join(missing)}")
        return path[0], " ".join(path[1:]) or None, options

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
            return value.strip().lower() in {"1", "true", "yes", "y", "on"}
        if kind is discord.AppCommandOptionType.attachment:
            path = Path(value).expanduser()
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise ValueError(f"cannot read {path}: {exc.strerror}") from None
            assert self.harness is not None  # noqa: S101
            return self.harness.fake.add_attachment(path.name, data)
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

    def command_list(self) -> str:
        """Every registered command with its options, for ``help``."""
        h = self.harness
        assert h is not None  # noqa: S101
        lines = ["Commands:"]

        def walk(command: Any, prefix: str) -> None:
            if isinstance(command, app_commands.Group):
                for child in command.commands:
                    walk(child, f"{prefix}{command.name} ")
                return
            opts = " ".join(
                (f"<{p.display_name}>" if p.required else f"[{p.display_name}:…]") for p in command.parameters
            )
            lines.append(f"  /{prefix}{command.name} {opts}".rstrip() + f"  — {command.description}")

        for command in sorted(h.bot.tree.get_commands(), key=lambda c: c.name):
            walk(command, "")
        return "\n".join(lines)

    # -- controls -------------------------------------------------------------------------------

    async def press(self, number: int) -> None:
        """Press control ``number`` of the last message (button, or one option of a select)."""
        h = self.harness
        assert h is not None  # noqa: S101
        if not 1 <= number <= len(self.controls):
            raise LookupError("no such control — the last message's controls are numbered [1], [2], …")
        message, custom_id, value, kind = self.controls[number - 1]
        current = h.fake.messages.get(int(message["id"]), message)
        if kind == 2:
            exchange = await h.click(current, custom_id, user=h.owner)
        else:
            exchange = await h.select(current, custom_id, [value or ""], user=h.owner)
        self.show(await self.follow_modal(exchange))

    async def follow_modal(self, exchange: Exchange) -> Exchange:
        """If the answer opened a modal, ask for each field on the terminal and submit it."""
        h = self.harness
        assert h is not None  # noqa: S101
        if exchange.callback_type != 9 or exchange.callback is None:
            return exchange
        modal = (exchange.callback.json or {}).get("data") or {}
        self.write(f"┌ {modal.get('title', 'Form')}")
        values: dict[str, str | list[str]] = {}
        for field in iter_components(modal.get("components") or []):
            if field.get("type") != 4:
                continue
            label = field.get("label") or field.get("placeholder") or field["custom_id"]
            self.out.write(f"│ {label}: ")
            self.out.flush()
            answer = await _readline(self.stdin)
            values[field["custom_id"]] = answer.rstrip("\n")
        self.write("└")
        return await h.submit_modal(exchange, values, user=h.owner)

    # -- rendering ------------------------------------------------------------------------------

    def show(self, exchange: Exchange) -> None:
        """Print every message the exchange created or edited."""
        shown = False
        for request in exchange.requests:
            text = self.render_request(request)
            if text:
                self.write(text)
                shown = True
        if not shown and exchange.requests:
            self.write("(no visible reply)")

    def render_request(self, request: RecordedRequest) -> str | None:
        kind = request.callback_type
        if kind == 5:
            return None  # "thinking…"; the followup or edit is printed next
        if kind == 9 or kind == 6 or kind == 8:
            return None
        if request.method not in ("POST", "PATCH") or request.message is None:
            return None
        body = request.body
        if not body and kind != 7:
            return None
        return self.render_message(request.message, edited=request.method == "PATCH" or kind == 7)

    def text(self, markdown: str, *, highlight: bool = False) -> str:
        """Discord markdown for the terminal: bold in ANSI on a terminal; when piped, only ``highlight``
        text (snippets, where bold marks the query words) keeps its ``**x**``."""
        return _terminal_text(markdown, ansi=self.ansi, keep_bold=highlight)

    def render_message(self, message: dict[str, Any], *, edited: bool = False) -> str:
        """A message as terminal text; its controls become this session's numbered controls."""
        lines: list[str] = []
        flags = int(message.get("flags") or 0)
        marks = []
        if flags & 64:
            marks.append("(only you can see this)")
        if message.get("message_reference"):
            marks.append("(reply)")
        if edited:
            marks.append("(updated)")
        if marks:
            lines.append(" ".join(marks))
        if message.get("content"):
            lines.append(self.text(message["content"]))
        for embed in message.get("embeds") or []:
            lines.append("┌" + "─" * 60)
            if embed.get("author", {}).get("name"):
                lines.append(f"│ {embed['author']['name']}")
            if embed.get("title"):
                url = f"  <{embed['url']}>" if embed.get("url") else ""
                lines.append(f"│ {self.text(embed['title'])}{url}")
            if embed.get("description"):
                description = self.text(embed["description"], highlight=True)
                lines += [f"│ {line}" for line in description.splitlines()]
            for field in embed.get("fields") or []:
                value = self.text(field["value"], highlight=True).replace("\n", "\n│   ")
                lines.append(f"│ {self.text(field['name'])}: {value}")
            if embed.get("footer", {}).get("text"):
                lines.append(f"│ — {embed['footer']['text']}")
            lines.append("└" + "─" * 60)
        for attachment in message.get("attachments") or []:
            lines.append(f"📎 {attachment['filename']} ({attachment.get('size', 0)} bytes)")
            lines += self.preview(attachment)
        controls = self.number_controls(message)
        if controls:
            lines.append(controls)
        return "\n".join(lines)

    def preview(self, attachment: dict[str, Any]) -> list[str]:
        """The first lines of an attachment the fake stored."""
        h = self.harness
        if h is None:
            return []
        for filename, data in h.fake.attachments.values():
            if filename == attachment["filename"] and len(data) == attachment.get("size"):
                text = data.decode("utf-8", "replace").splitlines()
                more = ["   …"] if len(text) > 8 else []
                return [f"   {line}" for line in text[:8]] + more
        return []

    def number_controls(self, message: dict[str, Any]) -> str:
        """Number the message's enabled buttons and select options; remember them for ``press``."""
        components = message.get("components") or []
        if not components:
            return ""
        controls: list[tuple[dict[str, Any], str, str | None, int]] = []
        lines: list[str] = []
        for row in components:
            row_parts: list[str] = []
            for component in iter_components([row]):
                kind = component.get("type")
                if kind == 2:
                    label = (
                        (component.get("emoji") or {}).get("name", "") + " " + (component.get("label") or "")
                    )
                    if component.get("url"):
                        row_parts.append(f"[link {label.strip()}: {component['url']}]")
                    elif component.get("disabled"):
                        row_parts.append(f"({label.strip()})")
                    else:
                        controls.append((message, component["custom_id"], None, 2))
                        row_parts.append(f"[{len(controls)}] {label.strip()}")
                elif kind == 3:
                    state = " (disabled)" if component.get("disabled") else ""
                    lines.append(f"{component.get('placeholder') or 'Choose'}{state}")
                    for option in component.get("options") or []:
                        if component.get("disabled"):
                            lines.append(f"    · {option['label']}")
                            continue
                        controls.append((message, component["custom_id"], option["value"], 3))
                        lines.append(f"  [{len(controls)}] {option['label']}")
            if row_parts:
                lines.append("  ".join(row_parts))
        if controls:
            self.controls = controls
        return "\n".join(lines)


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
    return re.sub(r"\\([*_~`|>\\])", r"\1", text)


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


def run_console(settings: Settings, *, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Run the offline console until ``quit`` or end of input; 0 on success, 2 if the bot cannot start."""
    # One person at a keyboard (or a script of commands): the per-user cooldown would only get in the way.
    settings = dataclasses.replace(settings, cooldown_per=0.0)
    console = Console(settings, stdin or sys.stdin, stdout or sys.stdout)
    # Voice support is irrelevant offline; its "PyNaCl is not installed" warnings would only confuse.
    logging.getLogger("discord.client").setLevel(logging.ERROR)
    try:
        return asyncio.run(console.run())
    except KeyboardInterrupt:
        return 130
