"""/club add|remove|show and /export scope:club: each server's shared reading list.

One list per server, visible to every member. Changing it takes *Manage Server* or one of the roles in
``club_editor_role_ids`` — checked here, by the bot, whatever the command's default permissions say
(a server admin can change those in Discord's settings). Each entry keeps who added it and when, and
a snapshot of the paper, so the list and its exports outlive the paper leaving the corpus.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from bot import render
from bot.export import render_export
from bot.limits import MAX_CHOICES, OPTION_LIMIT
from bot.render import code, truncate
from bot.services.base import Context, Notice
from bot.services.transfer import FORMATS, ExportFile
from bot.store import ClubEntry, SavedItem
from bot.store.errors import StoreError
from retrieval.english import plural

CLUB_LIST_NAME = "club"
NOT_IN_A_SERVER = "/club is a server's shared reading list: it works in a server, not in a DM."
NOT_AN_EDITOR = (
    "Changing this server's reading list takes the Manage Server permission or a club editor role; "
    "anyone can read it with /club show."
)


class NotAnEditorError(StoreError):
    """The member may read the club list but not change it."""


@dataclass(frozen=True)
class ClubPage:
    """The server's reading list (oldest first) and whether it was asked for publicly."""

    entries: tuple[ClubEntry, ...]
    in_corpus: frozenset[str]


class ClubService:
    """A server's reading list."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def may_edit(self, *, manage_guild: bool, role_ids: Iterable[int]) -> bool:
        """The rule: Manage Server, or a role listed in ``club_editor_role_ids``."""
        return manage_guild or bool(set(role_ids) & self.ctx.settings.club_editor_role_ids)

    def _require_editor(self, manage_guild: bool, role_ids: Iterable[int]) -> None:
        if not self.may_edit(manage_guild=manage_guild, role_ids=role_ids):
            raise NotAnEditorError(NOT_AN_EDITOR)

    async def add(
        self,
        guild_id: int,
        user_id: int,
        paper_id: str,
        note: str | None = None,
        *,
        manage_guild: bool,
        role_ids: Iterable[int] = (),
    ) -> Notice:
        """/club add: a corpus paper (raises UnknownPaperError), with an optional note."""
        self._require_editor(manage_guild, role_ids)
        paper = self.ctx.paper(paper_id)
        added = await self.ctx.store.club_add(
            guild_id, paper, user_id, note or "", limit=self.ctx.settings.max_club_papers
        )
        title = self.ctx.title(paper.id)
        if added:
            return Notice(f"Added {title} to this server's reading list. /club show lists it.", public=True)
        if note:
            return Notice(f"{title} is already on this server's reading list; note updated.")
        return Notice(f"{title} is already on this server's reading list; nothing changed.")

    async def remove(
        self, guild_id: int, paper_id: str, *, manage_guild: bool, role_ids: Iterable[int] = ()
    ) -> Notice:
        """/club remove."""
        self._require_editor(manage_guild, role_ids)
        entry = await self.ctx.store.club_remove(guild_id, paper_id.strip())
        if entry is None:
            return Notice(
                f"Paper {code(paper_id.strip())} is not on this server's reading list. /club show lists it."
            )
        return Notice(f"Removed {render.named(entry.title, entry.paper_id)} from this server's reading list.")

    async def show(self, guild_id: int) -> ClubPage | Notice:
        """/club show: the entries, or a notice when the list is empty."""
        entries = await self.ctx.store.club_list(guild_id)
        if not entries:
            return Notice(
                "This server's reading list is empty. Members with Manage Server (or a club editor role) "
                "add papers with /club add id:<paper>."
            )
        engine = self.ctx.engine
        return ClubPage(tuple(entries), frozenset(e.paper_id for e in entries if engine.get(e.paper_id)))

    async def suggestions(self, guild_id: int, typed: str) -> list[tuple[str, str]]:
        """``(label, id)`` of the list's papers whose id or title contains what was typed."""
        needle = typed.strip().casefold()
        return [
            (truncate(f"{e.paper_id} — {e.title}", OPTION_LIMIT), e.paper_id)
            for e in await self.ctx.store.club_list(guild_id)
            if not needle or needle in f"{e.paper_id} {e.title}".casefold()
        ][:MAX_CHOICES]

    async def export(self, guild_id: int, fmt: str, *, size_limit: int | None = None) -> ExportFile | Notice:
        """/export scope:club: the server's list as ``bib``, ``md`` or ``json``."""
        entries = await self.ctx.store.club_list(guild_id)
        if not entries:
            return Notice("This server's reading list is empty, so there is nothing to export.")
        engine = self.ctx.engine
        items = [
            SavedItem(
                paper_id=e.paper_id,
                title=e.title,
                authors=e.authors,
                et_al=e.et_al,
                area=e.area,
                abstract=e.abstract,
                url=e.url,
                list_name=CLUB_LIST_NAME,
                note=e.note,
                saved_at=e.added_at,
                in_corpus=engine.get(e.paper_id) is not None,
            )
            for e in entries
        ]
        text = await asyncio.to_thread(render_export, fmt, items, corpus=engine.get)
        data = text.encode("utf-8")
        if size_limit is not None and len(data) > size_limit:
            return Notice(f"That export is {len(data) / 1e6:.1f} MB, over Discord's upload limit here.")
        return ExportFile(
            filename=f"paperbot-club.{fmt}",
            data=data,
            text=(
                f"{plural(len(items), 'paper')} from this server's reading list, "
                f"as {FORMATS.get(fmt, fmt)}."
            ),
        )
