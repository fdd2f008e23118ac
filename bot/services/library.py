"""Personal saved-paper lists: save, unsave, list pages, list management and /forgetme.

Everything here is scoped by the caller's ``user_id``: no method takes another user's id. Known store
errors (:class:`~bot.store.StoreError`: caps, bad names, unknown lists…) propagate and are shown as
they are; each store method is one transaction, so nothing is half-done.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from bot import render
from bot.limits import MAX_CHOICES
from bot.render import code, truncate
from bot.services.base import Confirmation, Context, Notice, Suggestion
from bot.services.search import page_count
from bot.store import DEFAULT_LIST, LIST_NAME_MAX, ListInfo, NotSavedError, SavedPage, list_key
from retrieval.english import plural

log = logging.getLogger(__name__)

HOW_TO_SAVE = "Save papers with /save or the Save select under /search results."
#: Most suggestions an autocomplete answer holds (Discord's limit).


def list_label(name: str) -> str:
    """A list name shown in text (names are letters, digits, spaces, - and _, so nothing to escape)."""
    return f"“{name}”"


def find_list(lists: Iterable[ListInfo], name: str) -> ListInfo | None:
    """The list of ``lists`` called ``name`` (ignoring case and runs of spaces, as the store does)."""
    key = list_key(" ".join(name.split()))
    return next((info for info in lists if list_key(info.name) == key), None)


@dataclass(frozen=True)
class SavedListPage:
    """One page of one of the user's lists, newest save first.

    Attributes:
        saved: The store's page (items, total, offset, the list's display name).
        page, pages: This page (0-based, clamped to the last one) and how many there are.
        other_lists: The user's other lists, for the footer.
        notice: Set when the list became empty while it was being paged.
    """

    saved: SavedPage
    page: int
    pages: int
    other_lists: tuple[ListInfo, ...] = ()
    notice: str | None = None

    @property
    def list_name(self) -> str:
        """The list's display name."""
        return self.saved.list_name


@dataclass(frozen=True)
class ListsOverview:
    """The user's lists with their counts (never empty: no lists is a :class:`Notice`)."""

    lists: tuple[ListInfo, ...]
    default_list: str = DEFAULT_LIST


class LibraryService:
    """The user's own lists of saved papers."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @property
    def page_size(self) -> int:
        """Saved papers per page."""
        return self.ctx.settings.page_size

    async def find_list(self, user_id: int, name: str) -> ListInfo | None:
        """The user's list called ``name`` (ignoring case), or None."""
        return find_list(await self.ctx.store.list_lists(user_id), name)

    # -- saving -------------------------------------------------------------------------------

    async def save(
        self, user_id: int, paper_id: str, list_name: str | None = None, note: str | None = None
    ) -> Notice:
        """/save: put a corpus paper into a list (default ``reading``), keeping one copy per list."""
        paper = self.ctx.engine.get(paper_id.strip())
        if paper is None:
            return Notice(
                f"There is no paper with id {code(truncate(paper_id.strip(), 60))} in the corpus. "
                "Start typing in the id option to pick one by title, or find it with /search."
            )
        result = await self.ctx.store.save_paper(user_id, paper, list_name, note)
        where = list_label(result.list_name)
        title = self.ctx.title(paper.id)
        if result.created:
            text = f"Saved {title} to {where}" + (" (a new list)." if result.list_created else ".")
            if note:
                text += " Note kept."
        elif note is not None:
            text = f"{title} is already in {where}; note updated."
        else:
            text = f"{title} is already in {where}; nothing changed. Add note:… to change its note."
        return Notice(text)

    async def quick_save(self, user_id: int, paper_id: str) -> Notice:
        """The Save button or select under a result: the default list, a short confirmation."""
        paper = self.ctx.paper(paper_id)
        result = await self.ctx.store.save_paper(user_id, paper)
        title = render.named(paper.title, paper.id)
        if result.created:
            return Notice(f"Saved {title} to your list *{result.list_name}*. See it with /saved.")
        return Notice(f"{title} is already in your list *{result.list_name}*.")

    async def unsave(self, user_id: int, paper_id: str, list_name: str | None = None) -> Notice:
        """/unsave: remove a paper from every list, or only from ``list_name``."""
        pid = paper_id.strip()
        removed = await self.ctx.store.unsave_paper(user_id, pid, list_name)
        where = f"from {list_label(list_name.strip())}" if list_name else f"from {plural(removed, 'list')}"
        return Notice(f"Removed {self.ctx.title(pid)} {where}.")

    # -- reading lists ------------------------------------------------------------------------

    async def saved(self, user_id: int, list_name: str | None = None) -> SavedListPage | Notice:
        """/saved: the first page of a list (default ``reading``), or why there is nothing to show."""
        store = self.ctx.store
        lists = await store.list_lists(user_id)
        first = await store.get_list(user_id, list_name, limit=self.page_size)
        if first.total == 0:
            others = [info for info in lists if info.count and info.name != first.list_name]
            text = f"Your list {list_label(first.list_name)} is empty. {HOW_TO_SAVE}"
            if others:
                names = ", ".join(f"{info.name} ({info.count})" for info in others[:10])
                text += f"\nYour other lists: {names} — /saved list:<name> shows one."
            return Notice(text)
        return SavedListPage(
            saved=first, page=0, pages=page_count(first.total, self.page_size), other_lists=tuple(lists)
        )

    async def saved_page(
        self, user_id: int, list_name: str, page: int, *, other_lists: tuple[ListInfo, ...] = ()
    ) -> SavedListPage:
        """Page ``page`` of the list ``list_name``, read now (clamped if the list shrank meanwhile)."""
        store, size = self.ctx.store, self.page_size
        index = max(0, page)
        saved = await store.get_list(user_id, list_name, offset=index * size, limit=size)
        pages = page_count(saved.total, size)
        if not saved.items and saved.total and index > 0:
            index = pages - 1
            saved = await store.get_list(user_id, list_name, offset=index * size, limit=size)
        notice = None
        if not saved.items:
            notice = f"Your list {list_label(saved.list_name)} is empty now. {HOW_TO_SAVE}"
            index, pages = 0, 1
        return SavedListPage(saved=saved, page=index, pages=pages, other_lists=other_lists, notice=notice)

    async def lists(self, user_id: int) -> ListsOverview | Notice:
        """/lists: the user's lists with their counts."""
        lists = await self.ctx.store.list_lists(user_id)
        if not lists:
            return Notice(f"You have no lists yet. {HOW_TO_SAVE}")
        return ListsOverview(tuple(lists))

    # -- managing lists -----------------------------------------------------------------------

    async def create_list(self, user_id: int, name: str) -> Notice:
        """/list create."""
        display = await self.ctx.store.create_list(user_id, name)
        return Notice(f"Created the list {list_label(display)}. Save into it with /save list:{display}.")

    async def rename_list(self, user_id: int, old: str, new: str) -> Notice:
        """/list rename (a new name equal to the old one, case included, changes nothing)."""
        before = await self.find_list(user_id, old)
        if before is not None and " ".join(new.split()) == before.name:
            return Notice(f"Your list is already called {list_label(before.name)}; nothing changed.")
        await self.ctx.store.rename_list(user_id, old, new)
        found = await self.find_list(user_id, new)
        shown = found.name if found is not None else new.strip()
        was = before.name if before is not None else old.strip()
        return Notice(f"Renamed {list_label(was)} to {list_label(shown)}.")

    async def delete_list(self, user_id: int, name: str) -> Confirmation | Notice:
        """/list delete: asks first; the list and its saved papers go only on confirmation."""
        found = await self.find_list(user_id, name)
        if found is None:
            return Notice(f"You have no list named {list_label(name.strip())}. /lists shows yours.")

        async def delete() -> str:
            removed = await self.ctx.store.delete_list(user_id, found.name)
            log.info("user %s deleted a list (%d items)", user_id, removed)
            return (
                f"Deleted the list {list_label(found.name)} and the {plural(removed, 'paper')} saved in it."
            )

        return Confirmation(
            question=(
                f"Delete the list {list_label(found.name)} and the {plural(found.count, 'paper')} saved "
                "in it? This cannot be undone (tip: /export it first)."
            ),
            confirm=delete,
        )

    async def move(self, user_id: int, paper_id: str, to: str, from_list: str | None = None) -> Notice:
        """/list move: from the only list holding it unless ``from_list`` says which."""
        store = self.ctx.store
        pid = paper_id.strip()
        if from_list is None:
            holding = await store.lists_holding(user_id, pid)
            if not holding:
                raise NotSavedError(pid)
            if len(holding) > 1:
                names = ", ".join(list_label(name) for name in holding[:10])
                return Notice(f"{self.ctx.title(pid)} is in {names}: say which with from:<list>.")
            from_list = holding[0]
        if list_key(" ".join(from_list.split())) == list_key(" ".join(to.split())):
            holding = await store.lists_holding(user_id, pid)
            same = next((name for name in holding if list_key(name) == list_key(" ".join(to.split()))), None)
            if same is None:
                raise NotSavedError(pid, " ".join(from_list.split()))
            return Notice(f"{self.ctx.title(pid)} is already in {list_label(same)}; nothing moved.")
        await store.move_paper(user_id, pid, from_list, to)
        target = await self.find_list(user_id, to)
        shown = target.name if target is not None else to.strip()
        return Notice(
            f"Moved {self.ctx.title(pid)} from {list_label(from_list.strip())} to {list_label(shown)}."
        )

    async def set_note(
        self, user_id: int, paper_id: str, note: str | None = None, list_name: str | None = None
    ) -> Notice:
        """/list note: set the note, or clear it when ``note`` is empty."""
        pid = paper_id.strip()
        note = note or ""
        await self.ctx.store.set_note(user_id, pid, note, list_name)
        where = f" in {list_label(list_name.strip())}" if list_name else ""
        verb = "Note saved" if note.strip() else "Note cleared"
        return Notice(f"{verb} for {self.ctx.title(pid)}{where}.")

    async def forget(self, user_id: int) -> Confirmation | Notice:
        """/forgetme: asks first; then deletes every row paperbot stores about the user.

        Papers the user added to a server's reading list belong to that server: they stay there, no
        longer naming the user (the reply says so).
        """
        store = self.ctx.store
        held = await store.user_footprint(user_id)
        if held.total == 0:
            return Notice(
                "paperbot stores nothing about you: you have no lists, saved papers or watches, and "
                "added no paper to a server's reading list."
            )
        watches = held.watches

        async def forget() -> str:
            result = await store.forget_user(user_id)
            log.info("user %s asked to be forgotten: %s", user_id, result)
            deleted = []
            if result.lists:
                saved = plural(result.saved_items, "saved paper")
                deleted.append(f"{saved} in {plural(result.lists, 'list')}")
            if watches:
                deleted.append(plural(watches, "watch", "watches"))
            if result.snapshots:
                copies = plural(result.snapshots, "stored paper copy", "stored paper copies")
                deleted.append(f"{copies} nobody else had saved")
            if len(deleted) > 1:
                deleted[-1] = "and " + deleted[-1]
            text = "Done: "
            if result.total:
                what = ", ".join(deleted) or "what it held"
                text += f"deleted {what} ({plural(result.total, 'row')} in all)."
            if result.club_entries:
                one = result.club_entries == 1
                text += (
                    f"{' ' if result.total else ''}The {plural(result.club_entries, 'paper')} you added to a "
                    f"server's reading list {'stays' if one else 'stay'} on it, shown as added by a former "
                    f"member: your name is no longer on {'it' if one else 'them'}."
                )
            return text + " paperbot keeps nothing else about you."

        parts = []
        if held.lists:
            saved = plural(held.saved_items, "saved paper")
            parts.append(f"{plural(held.lists, 'list')} holding {saved}, with their notes")
        if watches:
            parts.append(plural(watches, "watch", "watches"))
        if held.club_entries:
            parts.append(
                f"your name on the {plural(held.club_entries, 'paper')} you added to a server's reading "
                f"list (the server keeps {'it' if held.club_entries == 1 else 'them'}, shown as added by a "
                "former member)"
            )
        what = "; ".join(parts) or plural(held.total, "row")
        tip = " (tip: /export format:json first)" if held.saved_items else ""
        return Confirmation(
            question=f"Delete all your data — {what}? This cannot be undone{tip}.",
            confirm=forget,
        )

    # -- autocomplete -------------------------------------------------------------------------

    async def saved_suggestions(self, user_id: int, typed: str) -> list[Suggestion]:
        """The user's saved papers whose id starts with (else whose title contains) what was typed."""
        engine = self.ctx.engine
        needle = typed.strip().casefold()
        scored: list[tuple[int, str, str]] = []
        for pid in await self.ctx.store.saved_ids(user_id):
            paper = engine.get(pid)
            title = paper.title if paper is not None else "(no longer in the corpus)"
            if not needle or pid.casefold().startswith(needle):
                scored.append((0, pid, title))
            elif needle in title.casefold() or needle in pid.casefold():
                scored.append((1, pid, title))
        scored.sort()
        return [Suggestion(f"{pid} — {title}", pid) for _, pid, title in scored[:MAX_CHOICES]]

    async def list_suggestions(self, user_id: int, typed: str, *, new: bool = False) -> list[Suggestion]:
        """The user's lists containing what was typed, with their counts.

        ``new=True`` (where a list is created on demand) adds what was typed as a new list, or the
        default list when nothing was typed and the user has none by that name.
        """
        lists = await self.ctx.store.list_lists(user_id)
        needle = typed.strip().casefold()
        matches = [info for info in lists if needle in info.name.casefold()]
        matches.sort(key=lambda info: (not info.name.casefold().startswith(needle), info.name.casefold()))
        found = [
            Suggestion(f"{info.name} ({plural(info.count, 'paper')})", info.name)
            for info in matches[:MAX_CHOICES]
        ]
        if not new:
            return found
        known = {list_key(s.value) for s in found}
        shown = " ".join(typed.split())[:LIST_NAME_MAX]
        extra = []
        if shown and list_key(shown) not in known:
            extra.append(Suggestion(f"{shown} (new list)", shown))
        elif not shown and list_key(DEFAULT_LIST) not in known:
            extra.append(Suggestion(f"{DEFAULT_LIST} (default list)", DEFAULT_LIST))
        return (extra + found)[:MAX_CHOICES]
