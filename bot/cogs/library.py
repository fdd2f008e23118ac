"""Personal saved-paper lists: /save /unsave /saved /lists /export /import /forgetme and the /list group.

Everything a user saves is theirs alone, so every reply here is ephemeral and every store call is
scoped by ``interaction.user.id`` — no command takes another user's id. Known store errors
(:class:`~bot.store.StoreError`: caps, bad names, unknown lists...) propagate to the tree error
handler, which shows their sentence ephemerally; nothing is half-done because each store method is
one transaction.
"""

from __future__ import annotations

import io
import logging
import re
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.i18n import register
from bot.store import (
    DEFAULT_LIST,
    LIST_NAME_MAX,
    NOTE_MAX,
    ImportFormatError,
    ListInfo,
    NotSavedError,
    StoreError,
    list_key,
)
from bot.ui import embeds as E
from bot.ui.choices import MAX_CHOICES, id_choices, paper_choice
from bot.ui.library import (
    HOW_TO_SAVE,
    LIST_NOT_YOURS,
    ConfirmView,
    SavedListSource,
    list_label,
    lists_embed,
)
from bot.ui.paginator import Paginator
from retrieval.text import plural

if TYPE_CHECKING:
    from bot.app import PaperBot
    from bot.store import Store

log = logging.getLogger(__name__)

#: Largest /import attachment accepted before downloading it (an export of 1000 papers is ~2 MB).
IMPORT_MAX_BYTES = 8 * 1024 * 1024
#: How many per-record import problems are listed in the reply.
IMPORT_ERRORS_SHOWN = 5
EXPORT_FORMATS = [
    app_commands.Choice(name="BibTeX (.bib)", value="bib"),
    app_commands.Choice(name="Markdown (.md)", value="md"),
    app_commands.Choice(name="JSON (.json, re-importable)", value="json"),
]

# English descriptions (as written below) → Simplified Chinese, registered with bot.i18n in setup().
TRANSLATIONS_ZH: dict[str, str] = {
    "Save a paper to one of your lists": "将论文保存到你的某个列表",
    "Remove a paper from your lists": "从你的列表中移除论文",
    "Show the papers in one of your lists": "查看你某个列表中的论文",
    "Show your lists and how many papers each holds": "查看你的所有列表及其论文数量",
    "Download your saved papers as BibTeX, Markdown or JSON": "以 BibTeX、Markdown 或 JSON 下载你保存的论文",
    "Add papers from a paperbot JSON export to your lists": "从 paperbot 导出的 JSON 文件导入论文到你的列表",
    "Delete everything paperbot stores about you": "删除 paperbot 保存的关于你的全部数据",
    "Manage your saved-paper lists": "管理你的论文列表",
    "Create an empty list": "新建一个空列表",
    "Rename one of your lists": "重命名你的某个列表",
    "Delete a list and the papers saved in it": "删除一个列表及其中保存的论文",
    "Move a saved paper to another list": "将已保存的论文移动到另一个列表",
    "Set or clear the note on a saved paper": "设置或清除已保存论文的备注",
    "The paper's id (start typing to search titles)": "论文编号（输入文字以搜索标题）",
    "The id of a paper you saved (start typing to pick one)": "你已保存论文的编号（输入文字以选择）",
    "List to save into (default: reading)": "保存到的列表（默认：reading）",
    "A short note to keep with the paper": "与论文一起保存的简短备注",
    "Only this list (default: every list holding it)": "只从该列表移除（默认：所有包含它的列表）",
    "Which list to show (default: reading)": "要查看的列表（默认：reading）",
    "Only this list (default: all your lists)": "只导出该列表（默认：你的所有列表）",
    "File format": "文件格式",
    "A .json file made by /export format:json": "由 /export format:json 生成的 .json 文件",
    "Put every paper into this list (default: the lists named in the file)": (
        "把所有论文放入该列表（默认：文件中记录的列表）"
    ),
    "Name of the new list (letters, digits, spaces, - and _)": "新列表的名称（字母、数字、空格、- 和 _）",
    "The list to rename": "要重命名的列表",
    "The new name": "新名称",
    "The list to delete": "要删除的列表",
    "The list to move it to (created if needed)": "移动到的列表（不存在时自动创建）",
    "The list it is in now (default: the only list holding it)": "它当前所在的列表（默认：唯一包含它的列表）",
    "The note (leave it out to clear the note)": "备注内容（不填则清除备注）",
    "Only in this list (default: every list holding it)": "只修改该列表中的（默认：所有包含它的列表）",
}


def export_filename(list_name: str | None, fmt: str) -> str:
    """``paperbot-<list or all>.<fmt>``: an ASCII slug, since clients mangle other file names."""
    if list_name is None:
        return f"paperbot-all.{fmt}"
    slug = re.sub(r"[^a-z0-9_-]+", "-", list_name.casefold()).strip("-") or "list"
    return f"paperbot-{slug[:40]}.{fmt}"


class LibraryCog(commands.Cog, name="Library"):
    """Saving papers into personal lists, and getting them back out."""

    list_group = app_commands.Group(name="list", description="Manage your saved-paper lists")

    def __init__(self, bot: PaperBot) -> None:
        self.bot = bot

    @property
    def store(self) -> Store:
        """The bot's store (opened in setup_hook before any cog loads)."""
        return self.bot.store

    # -- helpers --------------------------------------------------------------------------------

    async def _reply(self, interaction: discord.Interaction, text: str, **kwargs: object) -> None:
        """Answer ephemerally, whether or not the interaction was deferred."""
        if interaction.response.is_done():
            await interaction.followup.send(E.fit_content(text) or "", ephemeral=True, **kwargs)  # type: ignore[arg-type]
        else:
            await interaction.response.send_message(E.fit_content(text), ephemeral=True, **kwargs)  # type: ignore[arg-type]

    def _title(self, paper_id: str, fallback: str | None = None) -> str:
        """A paper's title for messages: from the corpus, else the given snapshot title, else the id."""
        paper = self.bot.engine.get(paper_id) if self.bot.engine is not None else None
        title = (paper.title if paper is not None else (fallback or paper_id)).strip()
        return f"**{E.truncate(E.plain(title), 150)}** (`{paper_id}`)"

    async def _find_list(self, user_id: int, name: str) -> ListInfo | None:
        """The user's list called ``name`` (ignoring case), or None."""
        key = list_key(name.strip())
        return next(
            (info for info in await self.store.list_lists(user_id) if list_key(info.name) == key), None
        )

    # -- autocomplete ---------------------------------------------------------------------------

    async def corpus_id_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Paper ids of the corpus starting with what was typed, then titles containing its words."""
        return id_choices(self.bot.engine, current)

    async def saved_id_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """The user's own saved papers matching what was typed (id prefix or words of the title)."""
        try:
            ids = await self.store.saved_ids(interaction.user.id)
        except StoreError as exc:  # autocomplete can't show an error; an empty list is the honest answer
            log.warning("saved-id autocomplete failed: %s", exc)
            return []
        needle = current.strip().casefold()
        scored: list[tuple[int, str, str]] = []
        for pid in ids:
            paper = self.bot.engine.get(pid) if self.bot.engine is not None else None
            title = E.plain(paper.title) if paper is not None else "(no longer in the corpus)"
            if not needle or pid.casefold().startswith(needle):
                scored.append((0, pid, title))
            elif needle in title.casefold() or needle in pid.casefold():
                scored.append((1, pid, title))
        scored.sort()
        return [paper_choice(pid, title) for _, pid, title in scored[:MAX_CHOICES]]

    async def list_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """The user's lists containing what was typed, with their counts."""
        try:
            lists = await self.store.list_lists(interaction.user.id)
        except StoreError as exc:
            log.warning("list autocomplete failed: %s", exc)
            return []
        needle = current.strip().casefold()
        matches = [info for info in lists if needle in info.name.casefold()]
        matches.sort(key=lambda info: (not info.name.casefold().startswith(needle), info.name.casefold()))
        return [
            app_commands.Choice(name=E.label(f"{info.name} ({plural(info.count, 'paper')})"), value=info.name)
            for info in matches[:25]
        ]

    async def new_or_existing_list_autocomplete(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        """Like :meth:`list_autocomplete`, plus what was typed (as a new list) and the default list."""
        choices = await self.list_autocomplete(interaction, current)
        known = {list_key(c.value) for c in choices}
        typed = " ".join(current.split())[:LIST_NAME_MAX]
        extra = []
        if typed and list_key(typed) not in known:
            extra.append(app_commands.Choice(name=E.label(f"{typed} (new list)"), value=typed))
        elif not typed and list_key(DEFAULT_LIST) not in known:
            extra.append(app_commands.Choice(name=f"{DEFAULT_LIST} (default list)", value=DEFAULT_LIST))
        return (extra + choices)[:25]

    # -- /save /unsave --------------------------------------------------------------------------

    @app_commands.command(name="save", description="Save a paper to one of your lists")
    @app_commands.describe(
        paper_id="The paper's id (start typing to search titles)",
        list_name="List to save into (default: reading)",
        note="A short note to keep with the paper",
    )
    @app_commands.rename(paper_id="id", list_name="list")
    async def save(
        self,
        interaction: discord.Interaction,
        paper_id: app_commands.Range[str, 1, 100],
        list_name: app_commands.Range[str, 1, 100] | None = None,
        note: app_commands.Range[str, 1, NOTE_MAX] | None = None,
    ) -> None:
        """Save a paper to one of your lists."""
        paper = self.bot.engine.get(paper_id.strip())
        if paper is None:
            await self._reply(
                interaction,
                f"There is no paper with id `{E.truncate(paper_id.strip(), 60)}` in the corpus. "
                "Start typing in the id option to pick one by title, or find it with /search.",
            )
            return
        result = await self.store.save_paper(interaction.user.id, paper, list_name, note)
        where = list_label(result.list_name)
        title = self._title(paper.id)
        if result.created:
            text = f"Saved {title} to {where}" + (" (a new list)." if result.list_created else ".")
            if note:
                text += " Note kept."
        elif note is not None:
            text = f"{title} is already in {where}; note updated."
        else:
            text = f"{title} is already in {where}; nothing changed. Add note:… to change its note."
        await self._reply(interaction, text)

    @save.autocomplete("paper_id")
    async def _save_id_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.corpus_id_autocomplete(interaction, current)

    @save.autocomplete("list_name")
    async def _save_list_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.new_or_existing_list_autocomplete(interaction, current)

    @app_commands.command(name="unsave", description="Remove a paper from your lists")
    @app_commands.describe(
        paper_id="The id of a paper you saved (start typing to pick one)",
        list_name="Only this list (default: every list holding it)",
    )
    @app_commands.rename(paper_id="id", list_name="list")
    async def unsave(
        self,
        interaction: discord.Interaction,
        paper_id: app_commands.Range[str, 1, 100],
        list_name: app_commands.Range[str, 1, 100] | None = None,
    ) -> None:
        """Remove a paper from your lists."""
        pid = paper_id.strip()
        removed = await self.store.unsave_paper(interaction.user.id, pid, list_name)
        where = f"from {list_label(list_name.strip())}" if list_name else f"from {plural(removed, 'list')}"
        await self._reply(interaction, f"Removed {self._title(pid)} {where}.")

    @unsave.autocomplete("paper_id")
    async def _unsave_id_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.saved_id_autocomplete(interaction, current)

    @unsave.autocomplete("list_name")
    async def _unsave_list_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.list_autocomplete(interaction, current)

    # -- /saved /lists ----------------------------------------------------------------------------

    @app_commands.command(name="saved", description="Show the papers in one of your lists")
    @app_commands.describe(list_name="Which list to show (default: reading)")
    @app_commands.rename(list_name="list")
    async def saved(
        self, interaction: discord.Interaction, list_name: app_commands.Range[str, 1, 100] | None = None
    ) -> None:
        """Show the papers in one of your lists."""
        user_id = interaction.user.id
        lists = await self.store.list_lists(user_id)
        page_size = self.bot.settings.page_size
        first = await self.store.get_list(user_id, list_name, limit=page_size)
        if first.total == 0:
            others = [info for info in lists if info.count and info.name != first.list_name]
            text = f"Your list {list_label(first.list_name)} is empty. {HOW_TO_SAVE}"
            if others:
                names = ", ".join(f"{info.name} ({info.count})" for info in others[:10])
                text += f"\nYour other lists: {names} — /saved list:<name> shows one."
            await self._reply(interaction, text)
            return
        name = first.list_name

        async def fetch(offset: int, limit: int):  # noqa: ANN202 - returns SavedPage
            return await self.store.get_list(user_id, name, offset=offset, limit=limit)

        source = SavedListSource(fetch, page_size=page_size, other_lists=lists)
        view = Paginator(
            source,
            owner=interaction.user,
            timeout=self.bot.settings.view_timeout,
            not_owner_message=LIST_NOT_YOURS,
        )
        await view.start(interaction, ephemeral=True)

    @saved.autocomplete("list_name")
    async def _saved_list_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.list_autocomplete(interaction, current)

    @app_commands.command(name="lists", description="Show your lists and how many papers each holds")
    async def lists(self, interaction: discord.Interaction) -> None:
        """Show your lists and how many papers each holds."""
        lists = await self.store.list_lists(interaction.user.id)
        if not lists:
            await self._reply(interaction, f"You have no lists yet. {HOW_TO_SAVE}")
            return
        await interaction.response.send_message(
            embed=lists_embed(lists, default_list=DEFAULT_LIST), ephemeral=True
        )

    # -- /list … ----------------------------------------------------------------------------------

    @list_group.command(name="create", description="Create an empty list")
    @app_commands.describe(name="Name of the new list (letters, digits, spaces, - and _)")
    async def list_create(
        self, interaction: discord.Interaction, name: app_commands.Range[str, 1, 100]
    ) -> None:
        """Create an empty list."""
        display = await self.store.create_list(interaction.user.id, name)
        await self._reply(
            interaction, f"Created the list {list_label(display)}. Save into it with /save list:{display}."
        )

    @list_group.command(name="rename", description="Rename one of your lists")
    @app_commands.describe(old="The list to rename", new="The new name")
    async def list_rename(
        self,
        interaction: discord.Interaction,
        old: app_commands.Range[str, 1, 100],
        new: app_commands.Range[str, 1, 100],
    ) -> None:
        """Rename one of your lists."""
        await self.store.rename_list(interaction.user.id, old, new)
        found = await self._find_list(interaction.user.id, new)
        shown = found.name if found is not None else new.strip()
        await self._reply(interaction, f"Renamed {list_label(old.strip())} to {list_label(shown)}.")

    @list_rename.autocomplete("old")
    async def _rename_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.list_autocomplete(interaction, current)

    @list_group.command(name="delete", description="Delete a list and the papers saved in it")
    @app_commands.describe(name="The list to delete")
    async def list_delete(
        self, interaction: discord.Interaction, name: app_commands.Range[str, 1, 100]
    ) -> None:
        """Delete a list and the papers saved in it."""
        user = interaction.user
        found = await self._find_list(user.id, name)
        if found is None:
            await self._reply(
                interaction, f"You have no list named {list_label(name.strip())}. /lists shows yours."
            )
            return

        async def delete() -> str:
            removed = await self.store.delete_list(user.id, found.name)
            log.info("user %s deleted a list (%d items)", user.id, removed)
            return (
                f"Deleted the list {list_label(found.name)} and the {plural(removed, 'paper')} saved in it."
            )

        view = ConfirmView(owner=user, action=delete, timeout=self.bot.settings.view_timeout)
        await view.start(
            interaction,
            f"Delete the list {list_label(found.name)} and the {plural(found.count, 'paper')} saved in it? "
            "This cannot be undone (tip: /export it first).",
        )

    @list_delete.autocomplete("name")
    async def _delete_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.list_autocomplete(interaction, current)

    @list_group.command(name="move", description="Move a saved paper to another list")
    @app_commands.describe(
        paper_id="The id of a paper you saved (start typing to pick one)",
        to="The list to move it to (created if needed)",
        from_list="The list it is in now (default: the only list holding it)",
    )
    @app_commands.rename(paper_id="id", from_list="from")
    async def list_move(
        self,
        interaction: discord.Interaction,
        paper_id: app_commands.Range[str, 1, 100],
        to: app_commands.Range[str, 1, 100],
        from_list: app_commands.Range[str, 1, 100] | None = None,
    ) -> None:
        """Move a saved paper to another list."""
        user_id = interaction.user.id
        pid = paper_id.strip()
        if from_list is None:
            holding = await self.store.lists_holding(user_id, pid)
            if not holding:
                raise NotSavedError(pid)
            if len(holding) > 1:
                names = ", ".join(list_label(name) for name in holding[:10])
                await self._reply(
                    interaction, f"{self._title(pid)} is in {names}: say which with from:<list>."
                )
                return
            from_list = holding[0]
        await self.store.move_paper(user_id, pid, from_list, to)
        target = await self._find_list(user_id, to)
        shown = target.name if target is not None else to.strip()
        await self._reply(
            interaction,
            f"Moved {self._title(pid)} from {list_label(from_list.strip())} to {list_label(shown)}.",
        )

    @list_move.autocomplete("paper_id")
    async def _move_id_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.saved_id_autocomplete(interaction, current)

    @list_move.autocomplete("to")
    async def _move_to_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.new_or_existing_list_autocomplete(interaction, current)

    @list_move.autocomplete("from_list")
    async def _move_from_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.list_autocomplete(interaction, current)

    @list_group.command(name="note", description="Set or clear the note on a saved paper")
    @app_commands.describe(
        paper_id="The id of a paper you saved (start typing to pick one)",
        note="The note (leave it out to clear the note)",
        list_name="Only in this list (default: every list holding it)",
    )
    @app_commands.rename(paper_id="id", list_name="list")
    async def list_note(
        self,
        interaction: discord.Interaction,
        paper_id: app_commands.Range[str, 1, 100],
        note: app_commands.Range[str, 1, NOTE_MAX] | None = None,
        list_name: app_commands.Range[str, 1, 100] | None = None,
    ) -> None:
        """Set or clear the note on a saved paper."""
        pid = paper_id.strip()
        note = note or ""
        await self.store.set_note(interaction.user.id, pid, note, list_name)
        where = f" in {list_label(list_name.strip())}" if list_name else ""
        verb = "Note saved" if note.strip() else "Note cleared"
        await self._reply(interaction, f"{verb} for {self._title(pid)}{where}.")

    @list_note.autocomplete("paper_id")
    async def _note_id_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.saved_id_autocomplete(interaction, current)

    @list_note.autocomplete("list_name")
    async def _note_list_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.list_autocomplete(interaction, current)

    # -- /export /import ------------------------------------------------------------------------

    @app_commands.command(name="export", description="Download your saved papers as BibTeX, Markdown or JSON")
    @app_commands.describe(fmt="File format", list_name="Only this list (default: all your lists)")
    @app_commands.rename(fmt="format", list_name="list")
    @app_commands.choices(fmt=EXPORT_FORMATS)
    async def export(
        self,
        interaction: discord.Interaction,
        fmt: app_commands.Choice[str],
        list_name: app_commands.Range[str, 1, 100] | None = None,
    ) -> None:
        """Download your saved papers as BibTeX, Markdown or JSON."""
        user_id = interaction.user.id
        lists = await self.store.list_lists(user_id)
        if list_name is not None:
            key = list_key(list_name.strip())
            found = next((info for info in lists if list_key(info.name) == key), None)
            if found is None:
                await self._reply(
                    interaction,
                    f"You have no list named {list_label(list_name.strip())}. /lists shows yours.",
                )
                return
            count, name = found.count, found.name
        else:
            count, name = sum(info.count for info in lists), None
        if count == 0:
            where = f"Your list {list_label(name)} is empty" if name else "You have no saved papers yet"
            await self._reply(interaction, f"{where}, so there is nothing to export. {HOW_TO_SAVE}")
            return
        text = await self.store.export(user_id, fmt.value, name)
        data = text.encode("utf-8")
        limit = interaction.filesize_limit
        if len(data) > limit:
            await self._reply(
                interaction,
                f"That export is {len(data) / 1e6:.1f} MB, over Discord's {limit / 1e6:.0f} MB upload "
                "limit here; export one list at a time (list:<name>).",
            )
            return
        filename = export_filename(name, fmt.value)
        filled = [info.name for info in lists if info.count]
        if name is None and len(filled) > 1:
            where = f"your {len(filled)} lists"
        else:
            where = list_label(name or filled[0])
        await self._reply(
            interaction,
            f"{plural(count, 'saved item')} from {where}, as {fmt.name}.",
            file=discord.File(io.BytesIO(data), filename=filename),
        )

    @export.autocomplete("list_name")
    async def _export_list_ac(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.list_autocomplete(interaction, current)

    @app_commands.command(name="import", description="Add papers from a paperbot JSON export to your lists")
    @app_commands.describe(
        file="A .json file made by /export format:json",
        list_name="Put every paper into this list (default: the lists named in the file)",
    )
    @app_commands.rename(list_name="list")
    async def import_(
        self,
        interaction: discord.Interaction,
        file: discord.Attachment,
        list_name: app_commands.Range[str, 1, 100] | None = None,
    ) -> None:
        """Add papers from a paperbot JSON export to your lists."""
        if not file.filename.lower().endswith(".json"):
            await self._reply(interaction, "Import takes the .json file that /export format:json gives you.")
            return
        if file.size > IMPORT_MAX_BYTES:
            await self._reply(
                interaction,
                f"That file is {file.size / 1e6:.1f} MB; imports are limited to "
                f"{IMPORT_MAX_BYTES // 10**6} MB.",
            )
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            data = await file.read()
        except discord.HTTPException as exc:
            log.warning("could not download import attachment %s: %s", file.id, exc)
            await self._reply(interaction, "I couldn't download that file from Discord; please try again.")
            return
        try:
            result = await self.store.import_json(interaction.user.id, data, list_name)
        except ImportFormatError as exc:
            await self._reply(interaction, f"That file can't be imported: {exc}")
            return
        text = f"Imported {plural(result.added, 'paper')}"
        if result.skipped:
            were = "was" if result.skipped == 1 else "were"
            text += f"; {plural(result.skipped, 'paper')} already in your lists {were} skipped"
        text += "."
        if result.errors:
            shown = "\n".join(f"• {E.truncate(err, 180)}" for err in result.errors[:IMPORT_ERRORS_SHOWN])
            more = len(result.errors) - IMPORT_ERRORS_SHOWN
            text += f"\n{plural(len(result.errors), 'record')} could not be imported:\n{shown}"
            if more > 0:
                text += f"\n… +{more} more"
        await self._reply(interaction, text)

    # -- /forgetme ----------------------------------------------------------------------------

    @app_commands.command(name="forgetme", description="Delete everything paperbot stores about you")
    async def forgetme(self, interaction: discord.Interaction) -> None:
        """Delete everything paperbot stores about you."""
        user = interaction.user
        lists = await self.store.list_lists(user.id)
        if not lists:
            await self._reply(
                interaction, "paperbot stores nothing about you: you have no lists or saved papers."
            )
            return
        saved = sum(info.count for info in lists)

        async def forget() -> str:
            result = await self.store.forget_user(user.id)
            log.info("user %s asked to be forgotten: %s", user.id, result)
            copies = plural(result.snapshots, "stored paper copy", "stored paper copies")
            return (
                f"Done: deleted {plural(result.saved_items, 'saved paper')} in "
                f"{plural(result.lists, 'list')}, and {copies} nobody else had saved "
                f"({plural(result.total, 'row')} in all). paperbot keeps nothing else about you."
            )

        view = ConfirmView(owner=user, action=forget, timeout=self.bot.settings.view_timeout)
        await view.start(
            interaction,
            f"Delete all your data — {plural(len(lists), 'list')} holding {plural(saved, 'saved paper')}, "
            "with their notes? This cannot be undone (tip: /export format:json first).",
        )


async def setup(bot: PaperBot) -> None:
    """Load the library cog and its zh-CN descriptions."""
    register(TRANSLATIONS_ZH)
    await bot.add_cog(LibraryCog(bot))
