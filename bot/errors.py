"""User-facing error types and the one app-command tree error handler.

Cogs raise :class:`UserFacingError` (or any known library error: ``QueryError``, ``StoreError``,
``UnknownPaperError``, cooldowns, check failures, :class:`ReindexInProgress`) and let it propagate;
:func:`on_tree_error` turns it into a short ephemeral message. Anything else is logged with a short
error id that the user is shown, so a report can be matched to the log line.

Use ``bot.tree.on_error = on_tree_error`` (PaperBot does this) and :func:`send_error` to answer an
interaction whether or not it was already responded to or deferred.
"""

from __future__ import annotations

import logging
import secrets

import discord
from discord import app_commands

from bot import render
from bot.cooldown import wait_message
from bot.limits import CONTENT_LIMIT
from bot.store import NotSavedError, StoreError
from bot.ui import respond
from retrieval.errors import QueryError, RetrievalError, UnknownPaperError

log = logging.getLogger(__name__)


class StartupError(Exception):
    """The bot cannot start (database or corpus); ``str()`` is one line fit for the terminal."""


class UserFacingError(Exception):
    """An error whose ``str()`` is a sentence fit to show the user as is (ephemeral)."""


class ReindexInProgress(UserFacingError):
    """A reindex was requested while another one is still running."""

    def __init__(
        self, message: str = "A reindex is already running; try again when it has finished."
    ) -> None:
        super().__init__(message)


class ReindexFailed(UserFacingError):
    """A reindex failed; the previous index keeps serving. ``str()`` gives the reason."""


class NotAdmin(app_commands.CheckFailure):
    """The user is not in ADMIN_USER_IDS and does not own the application."""

    def __init__(self) -> None:
        super().__init__("Only the bot's administrators can use this command.")


#: Discord's error code for an interaction that expired (or never existed) when answered.
UNKNOWN_INTERACTION = 10062


def new_error_id() -> str:
    """A short random id (8 hex characters) that ties a user's report to a log line."""
    return secrets.token_hex(4)


def describe_query_error(exc: QueryError, query: str | None = None) -> str:
    """The query error in words, the query with the problem marked (when known), and a corrected
    example (when one is clear)."""
    lines = [exc.message or str(exc)]
    if query is not None and exc.position is not None and 0 <= exc.position <= len(query):
        shown = query[:200]
        pos = min(exc.position, len(shown))
        # Inline code would break on backticks in the query; keep the marker readable in plain text.
        lines.append(f"> {discord.utils.escape_markdown(f'{shown[:pos]}⟦here⟧{shown[pos:]}')}")
    example = getattr(exc, "example", None)
    if example:
        lines.append(f"Try: {render.code(example[:200])}")
    return "\n".join(lines)


def user_message(error: BaseException, *, query: str | None = None) -> str | None:
    """The ephemeral sentence for a known error, or ``None`` when the error is unexpected."""
    if isinstance(error, app_commands.CommandInvokeError | app_commands.TransformerError):
        inner = error.__cause__ if isinstance(error, app_commands.TransformerError) else error.original
        if inner is not None and inner is not error:
            return user_message(inner, query=query)
    if isinstance(error, app_commands.CommandOnCooldown):
        return wait_message(error.retry_after)
    if isinstance(error, app_commands.NoPrivateMessage):
        return "This command only works in a server."
    if isinstance(error, app_commands.MissingPermissions | app_commands.BotMissingPermissions):
        return str(error)
    if isinstance(error, app_commands.CheckFailure):
        text = str(error)
        return text if text and "check functions" not in text else "You can't use this command here."
    if isinstance(error, QueryError):
        return describe_query_error(error, query)
    if isinstance(error, UnknownPaperError):
        return f"There is no paper with id {render.code(error.paper_id)} — try /search."
    if isinstance(error, NotSavedError):
        list_name = getattr(error, "list_name", None)
        where = f"in your list “{list_name}”" if list_name else "in any of your lists"
        return f"Paper {render.code(error.paper_id)} is not saved {where}. /saved shows what you saved."
    if isinstance(error, UserFacingError | StoreError | RetrievalError):
        return str(error)
    return None


async def send_error(interaction: discord.Interaction, message: str) -> None:
    """Tell the user ``message`` ephemerally, whatever state the interaction is in."""
    message = message[:CONTENT_LIMIT]
    try:
        await respond.send(interaction, message, ephemeral=True)
    except discord.HTTPException:
        # The interaction token may have expired (15 min); there is nobody left to tell.
        log.warning("could not deliver an error message for interaction %s", interaction.id)


async def report_unexpected(interaction: discord.Interaction, error: BaseException, where: str) -> str:
    """Log an unexpected error with a fresh id, show the id to the user, and return it."""
    error_id = new_error_id()
    original = getattr(error, "original", error)
    log.error(
        "unexpected error %s in %s (user %s): %r",
        error_id,
        where,
        interaction.user.id if interaction.user else "?",
        original,
        exc_info=(type(original), original, original.__traceback__),
    )
    await send_error(
        interaction,
        f"Something went wrong on our side (error id `{error_id}`). "
        "It has been logged; mention the id if you report it.",
    )
    return error_id


async def handle_interaction_error(
    interaction: discord.Interaction, error: BaseException, *, where: str, query: str | None = None
) -> None:
    """Answer a known error with its sentence, or report an unexpected one with an error id.

    Views and modals call this from their ``on_error``; the tree calls it through :func:`on_tree_error`.
    An interaction Discord already expired (10062: not answered within 3 s) is one WARNING line: no
    traceback, and no message either, since nobody can be answered through it any more.
    """
    original = getattr(error, "original", error)
    if isinstance(original, discord.NotFound) and original.code == UNKNOWN_INTERACTION:
        user = interaction.user.id if interaction.user else "?"
        log.warning(
            "interaction %s in %s (user %s) expired before paperbot answered it (Discord allows 3 s)",
            interaction.id,
            where,
            user,
        )
        return
    text = user_message(error, query=query)
    if text is not None:
        await send_error(interaction, text)
    else:
        await report_unexpected(interaction, error, where)


async def on_tree_error(interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
    """The CommandTree error handler: known errors → short ephemeral text, the rest → an error id."""
    command = interaction.command
    where = f"/{command.qualified_name}" if command is not None else "an app command"
    query = None
    if interaction.namespace is not None:
        query = getattr(interaction.namespace, "query", None) or getattr(
            interaction.namespace, "question", None
        )
    await handle_interaction_error(
        interaction, error, where=where, query=query if isinstance(query, str) else None
    )
