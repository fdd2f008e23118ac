"""/watch add|list|remove, and the DMs a reindex sends: for each user with watches, one message listing
the papers *added by that reindex* that match each watch (at most :data:`PER_WATCH`, then "+N more"
and the /search to run). Matching is /search's own rule (:func:`retrieval.watch.new_matches`).

A DM that Discord refuses (403: the user closed DMs from server members) pauses that user's watches;
the next command they run tells them once, and any /watch command resumes them. /forgetme deletes
watches with everything else (the store's ``forget_user``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from bot import render
from bot.limits import MAX_CHOICES, OPTION_LIMIT
from bot.render import code, escape, truncate
from bot.services.base import Context, Notice
from bot.store import WATCH_QUERY_MAX, WatchInfo
from retrieval.english import plural
from retrieval.query import parse_query
from retrieval.watch import WatchMatches, new_matches

log = logging.getLogger(__name__)

#: Papers listed per watch in a DM.
PER_WATCH = 10
PAUSED_NOTICE = (
    "Your /watch alerts are paused: Discord refused my DM (your DMs from server members are closed). "
    "Allow DMs from this server's members, then run any /watch command to resume them."
)


@dataclass(frozen=True)
class WatchAlert:
    """One watch's part of a DM: the watch, its best new matches and how many matched in all."""

    watch: WatchInfo
    matches: WatchMatches

    @property
    def more(self) -> int:
        """Matches not listed."""
        return self.matches.total - len(self.matches.papers)


@dataclass(frozen=True)
class DirectMessage:
    """The DM one user gets after a reindex (one per user, whatever the number of watches)."""

    user_id: int
    alerts: tuple[WatchAlert, ...]

    @property
    def header(self) -> str:
        papers = sum(a.matches.total for a in self.alerts)
        return (
            f"📬 The corpus was reindexed: {plural(papers, 'new paper')} "
            f"{'matches' if papers == 1 else 'match'} your /watch "
            f"{'query' if len(self.alerts) == 1 else 'queries'}."
        )


def describe(watch: WatchInfo) -> str:
    """``“query” · area: x · author: y`` (escaped) for lists and DMs."""
    text = f"“{escape(watch.query)}”"
    if watch.area:
        text += f" · area: {escape(watch.area)}"
    if watch.author:
        text += f" · author: {escape(watch.author)}"
    return text


def search_command(watch: WatchInfo) -> str:
    """The /search that shows every match of ``watch`` (inline code)."""
    command = f"/search query:{watch.query}"
    if watch.area:
        command += f" area:{watch.area}"
    if watch.author:
        command += f" author:{watch.author}"
    return code(command)


def alert_lines(alert: WatchAlert) -> list[str]:
    """The lines of one watch's part of a DM: its papers, then "+N more" and the /search."""
    lines = [f"• {render.named(p.title, p.id)}" for p in alert.matches.papers]
    if alert.more:
        lines.append(f"+{alert.more} more: {search_command(alert.watch)}")
    return lines


class WatchService:
    """Saved queries and the alerts a reindex sends."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._untold: set[int] | None = None  # users to tell their watches are paused (lazy)

    # -- commands -----------------------------------------------------------------------------

    async def add(
        self, user_id: int, query: str, area: str | None = None, author: str | None = None
    ) -> Notice:
        """/watch add: check the query parses (as /search would), then save it under the cap."""
        query = " ".join(query.split())
        if len(query) > WATCH_QUERY_MAX:
            return Notice(f"A watch query takes at most {WATCH_QUERY_MAX} characters.")
        parse_query(query)  # a malformed query raises QueryError: the same message /search gives
        await self.resume(user_id)
        watch = await self.ctx.store.add_watch(
            user_id, query, area or "", author or "", limit=self.ctx.settings.max_watches_per_user
        )
        return Notice(
            f"Watching {describe(watch)} (number {watch.id}). After each reindex I'll DM you the new "
            "papers that match it. /watch list shows your watches."
        )

    async def list(self, user_id: int) -> Notice:
        """/watch list."""
        resumed = await self.resume(user_id)
        watches = await self.ctx.store.list_watches(user_id)
        if not watches:
            return Notice(
                "You have no watches. /watch add query:<words> DMs you the new papers that match "
                "after each reindex."
            )
        lines = [f"**{watch.id}.** {describe(watch)}" for watch in watches]
        head = f"Your watches ({len(watches)} of {self.ctx.settings.max_watches_per_user}):"
        tail = "Remove one with /watch remove id:<number>."
        if resumed:
            tail = "Your watches were paused (DMs closed) and are on again. " + tail
        return Notice("\n".join([head, *lines, tail]))

    async def remove(self, user_id: int, watch_id: int) -> Notice:
        """/watch remove."""
        await self.resume(user_id)
        watch = await self.ctx.store.remove_watch(user_id, watch_id)
        return Notice(f"Stopped watching {describe(watch)}.")

    async def suggestions(self, user_id: int, typed: str) -> list[tuple[str, int]]:
        """``(label, id)`` of the user's watches whose number or query contains what was typed."""
        needle = typed.strip().casefold()
        return [
            (truncate(f"{w.id}. {w.query}", OPTION_LIMIT), w.id)
            for w in await self.ctx.store.list_watches(user_id)
            if not needle or needle in f"{w.id} {w.query}".casefold()
        ][:MAX_CHOICES]

    # -- pauses -------------------------------------------------------------------------------

    async def resume(self, user_id: int) -> bool:
        """Un-pause the user's watches (any /watch command does); True when they were paused."""
        if self._untold is not None:
            self._untold.discard(user_id)
        return await self.ctx.store.resume_watches(user_id)

    async def paused(self, user_id: int) -> None:
        """Discord refused a DM to the user (403): pause their watches until they run /watch."""
        await self.ctx.store.pause_watches(user_id)
        if self._untold is not None:
            self._untold.add(user_id)
        log.info("paused the watches of user %s: DMs closed", user_id)

    async def pending_notice(self, user_id: int) -> str | None:
        """The paused-watches notice, once, for a user who has not been told yet."""
        if self._untold is None:
            self._untold = await self.ctx.store.untold_pauses()
        if user_id not in self._untold:
            return None
        self._untold.discard(user_id)
        await self.ctx.store.mark_pause_told(user_id)
        return PAUSED_NOTICE

    # -- after a reindex ----------------------------------------------------------------------

    async def alerts(self, added: Iterable[str]) -> list[DirectMessage]:
        """One DM per user with an active watch that matches papers in ``added``."""
        added = list(added)
        if not added:
            return []
        watches = await self.ctx.store.active_watches()
        if not watches:
            return []
        index = self.ctx.engine.index
        found = await asyncio.to_thread(_match_all, index, watches, added)
        by_user: dict[int, list[WatchAlert]] = defaultdict(list)
        for alert in found:
            by_user[alert.watch.user_id].append(alert)
        return [DirectMessage(uid, tuple(alerts)) for uid, alerts in by_user.items()]



def _match_all(index: object, watches: list[WatchInfo], added: list[str]) -> list[WatchAlert]:
    """Every watch's new matches (in a worker thread: ranking is CPU work)."""
    out = []
    for watch in watches:
        try:
            matches = new_matches(
                index,  # type: ignore[arg-type]
                watch.query,
                added,
                PER_WATCH,
                area=watch.area or None,
                author=watch.author or None,
            )
        except ValueError as exc:  # a query saved before a parser change no longer parses
            log.warning("watch %s of user %s no longer runs: %s", watch.id, watch.user_id, exc)
            continue
        if matches.total:
            out.append(WatchAlert(watch, matches))
    return out
