"""Personal saved-paper lists: /save /unsave /saved /lists /export /import /forgetme and the /list group.

A thin adapter: each command parses its options, calls one method of :mod:`bot.services.library` or
:mod:`bot.services.transfer` with ``interaction.user.id`` (no command takes another user's id) and
renders the result ephemerally — everything a user saves is theirs alone. Known store errors
(:class:`~bot.store.StoreError`: caps, bad names, unknown lists...) propagate to the tree error
handler, which shows their sentence ephemerally.
"""

from __future__ import annotations

import io
import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.cogs import Cog, ShortText, corpus_papers, user_lists, user_lists_or_new, user_saved_papers
from bot.i18n import register
from bot.services.base import Confirmation, Notice
from bot.services.club import NOT_IN_A_SERVER
from bot.services.transfer import FORMATS, ExportFile
from bot.store import NOTE_MAX
from bot.ui import respond
from bot.ui.library import LIST_NOT_YOURS, ConfirmView, SavedListSource, lists_embed
from bot.ui.paginator import Paginator

if TYPE_CHECKING:
    from bot.app import PaperBot

log = logging.getLogger(__name__)

EXPORT_FORMATS = [app_commands.Choice(name=name, value=value) for value, name in FORMATS.items()]
EXPORT_SCOPES = [
    app_commands.Choice(name="Your lists", value="mine"),
    app_commands.Choice(name="This server's /club reading list", value="club"),
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
    # export format choices (bot.services.transfer.FORMATS)
    "BibTeX (.bib)": "BibTeX（.bib）",
    "Markdown (.md)": "Markdown（.md）",
    "JSON (.json, re-importable)": "JSON（.json，可重新导入）",
    "Your lists (default) or this server's /club reading list": "你的列表（默认）或本服务器的 /club 阅读列表",
    "Your lists": "你的列表",
    "This server's /club reading list": "本服务器的 /club 阅读列表",
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


class LibraryCog(Cog, name="Library"):
    """Saving papers into personal lists, and getting them back out."""

    list_group = app_commands.Group(name="list", description="Manage your saved-paper lists")

    async def _confirm(self, interaction: discord.Interaction, asked: Confirmation | Notice) -> None:
        """Ask the service's question with Confirm / Cancel, or say why there is nothing to ask."""
        if isinstance(asked, Notice):
            await self.reply(interaction, asked)
            return
        view = ConfirmView(owner=interaction.user, confirmation=asked, timeout=self.bot.settings.view_timeout)
        await view.start(interaction)

    # -- /save /unsave --------------------------------------------------------------------------

    @app_commands.command(name="save", description="Save a paper to one of your lists")
    @app_commands.describe(
        paper_id="The paper's id (start typing to search titles)",
        list_name="List to save into (default: reading)",
        note="A short note to keep with the paper",
    )
    @app_commands.rename(paper_id="id", list_name="list")
    @app_commands.autocomplete(paper_id=corpus_papers, list_name=user_lists_or_new)
    async def save(
        self,
        interaction: discord.Interaction,
        paper_id: ShortText,
        list_name: ShortText | None = None,
        note: app_commands.Range[str, 1, NOTE_MAX] | None = None,
    ) -> None:
        """Save a paper to one of your lists."""
        notice = await self.services.library.save(interaction.user.id, paper_id, list_name, note)
        await self.reply(interaction, notice)

    @app_commands.command(name="unsave", description="Remove a paper from your lists")
    @app_commands.describe(
        paper_id="The id of a paper you saved (start typing to pick one)",
        list_name="Only this list (default: every list holding it)",
    )
    @app_commands.rename(paper_id="id", list_name="list")
    @app_commands.autocomplete(paper_id=user_saved_papers, list_name=user_lists)
    async def unsave(
        self,
        interaction: discord.Interaction,
        paper_id: ShortText,
        list_name: ShortText | None = None,
    ) -> None:
        """Remove a paper from your lists."""
        notice = await self.services.library.unsave(interaction.user.id, paper_id, list_name)
        await self.reply(interaction, notice)

    # -- /saved /lists ----------------------------------------------------------------------------

    @app_commands.command(name="saved", description="Show the papers in one of your lists")
    @app_commands.describe(list_name="Which list to show (default: reading)")
    @app_commands.rename(list_name="list")
    @app_commands.autocomplete(list_name=user_lists)
    async def saved(
        self, interaction: discord.Interaction, list_name: ShortText | None = None
    ) -> None:
        """Show the papers in one of your lists."""
        user_id = interaction.user.id
        library = self.services.library
        first = await library.saved(user_id, list_name)
        if isinstance(first, Notice):
            await self.reply(interaction, first)
            return

        async def fetch(index: int):  # noqa: ANN202 - returns SavedListPage
            return await library.saved_page(user_id, first.list_name, index, other_lists=first.other_lists)

        view = Paginator(
            SavedListSource(fetch, first),
            owner=interaction.user,
            timeout=self.bot.settings.view_timeout,
            not_owner_message=LIST_NOT_YOURS,
        )
        await view.start(interaction, ephemeral=True)

    @app_commands.command(name="lists", description="Show your lists and how many papers each holds")
    async def lists(self, interaction: discord.Interaction) -> None:
        """Show your lists and how many papers each holds."""
        overview = await self.services.library.lists(interaction.user.id)
        if isinstance(overview, Notice):
            await self.reply(interaction, overview)
            return
        await respond.send(interaction, embed=lists_embed(overview), ephemeral=True)

    # -- /list … ----------------------------------------------------------------------------------

    @list_group.command(name="create", description="Create an empty list")
    @app_commands.describe(name="Name of the new list (letters, digits, spaces, - and _)")
    async def list_create(
        self, interaction: discord.Interaction, name: ShortText
    ) -> None:
        """Create an empty list."""
        notice = await self.services.library.create_list(interaction.user.id, name)
        await self.reply(interaction, notice)

    @list_group.command(name="rename", description="Rename one of your lists")
    @app_commands.describe(old="The list to rename", new="The new name")
    @app_commands.autocomplete(old=user_lists)
    async def list_rename(
        self,
        interaction: discord.Interaction,
        old: ShortText,
        new: ShortText,
    ) -> None:
        """Rename one of your lists."""
        notice = await self.services.library.rename_list(interaction.user.id, old, new)
        await self.reply(interaction, notice)

    @list_group.command(name="delete", description="Delete a list and the papers saved in it")
    @app_commands.describe(name="The list to delete")
    @app_commands.autocomplete(name=user_lists)
    async def list_delete(
        self, interaction: discord.Interaction, name: ShortText
    ) -> None:
        """Delete a list and the papers saved in it."""
        await self._confirm(interaction, await self.services.library.delete_list(interaction.user.id, name))

    @list_group.command(name="move", description="Move a saved paper to another list")
    @app_commands.describe(
        paper_id="The id of a paper you saved (start typing to pick one)",
        to="The list to move it to (created if needed)",
        from_list="The list it is in now (default: the only list holding it)",
    )
    @app_commands.rename(paper_id="id", from_list="from")
    @app_commands.autocomplete(paper_id=user_saved_papers, to=user_lists_or_new, from_list=user_lists)
    async def list_move(
        self,
        interaction: discord.Interaction,
        paper_id: ShortText,
        to: ShortText,
        from_list: ShortText | None = None,
    ) -> None:
        """Move a saved paper to another list."""
        notice = await self.services.library.move(interaction.user.id, paper_id, to, from_list)
        await self.reply(interaction, notice)

    @list_group.command(name="note", description="Set or clear the note on a saved paper")
    @app_commands.describe(
        paper_id="The id of a paper you saved (start typing to pick one)",
        note="The note (leave it out to clear the note)",
        list_name="Only in this list (default: every list holding it)",
    )
    @app_commands.rename(paper_id="id", list_name="list")
    @app_commands.autocomplete(paper_id=user_saved_papers, list_name=user_lists)
    async def list_note(
        self,
        interaction: discord.Interaction,
        paper_id: ShortText,
        note: app_commands.Range[str, 1, NOTE_MAX] | None = None,
        list_name: ShortText | None = None,
    ) -> None:
        """Set or clear the note on a saved paper."""
        notice = await self.services.library.set_note(interaction.user.id, paper_id, note, list_name)
        await self.reply(interaction, notice)

    # -- /export /import ------------------------------------------------------------------------

    @app_commands.command(name="export", description="Download your saved papers as BibTeX, Markdown or JSON")
    @app_commands.describe(
        fmt="File format",
        list_name="Only this list (default: all your lists)",
        scope="Your lists (default) or this server's /club reading list",
    )
    @app_commands.rename(fmt="format", list_name="list")
    @app_commands.choices(fmt=EXPORT_FORMATS, scope=EXPORT_SCOPES)
    @app_commands.autocomplete(list_name=user_lists)
    async def export(
        self,
        interaction: discord.Interaction,
        fmt: app_commands.Choice[str],
        list_name: ShortText | None = None,
        scope: app_commands.Choice[str] | None = None,
    ) -> None:
        """Download your saved papers as BibTeX, Markdown or JSON."""
        if scope is not None and scope.value == "club":
            if interaction.guild_id is None:
                await self.reply(interaction, NOT_IN_A_SERVER)
                return
            result = await self.services.club.export(
                interaction.guild_id, fmt.value, size_limit=interaction.filesize_limit
            )
        else:
            result = await self.services.transfer.export(
                interaction.user.id, fmt.value, list_name, size_limit=interaction.filesize_limit
            )
        if isinstance(result, ExportFile):
            file = discord.File(io.BytesIO(result.data), filename=result.filename)
            await self.reply(interaction, result.text, file=file)
        else:
            await self.reply(interaction, result.text)

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
        list_name: ShortText | None = None,
    ) -> None:
        """Add papers from a paperbot JSON export to your lists."""
        transfer = self.services.transfer
        refused = transfer.check_import(file.filename, file.size)
        if refused is not None:
            await self.reply(interaction, refused)
            return
        await respond.defer(interaction, ephemeral=True, thinking=True)
        try:
            data = await file.read()
        except discord.HTTPException as exc:
            log.warning("could not download import attachment %s: %s", file.id, exc)
            await self.reply(interaction, "I couldn't download that file from Discord; please try again.")
            return
        notice = await transfer.import_json(interaction.user.id, data, list_name)
        await self.reply(interaction, notice)

    # -- /forgetme ----------------------------------------------------------------------------

    @app_commands.command(name="forgetme", description="Delete everything paperbot stores about you")
    async def forgetme(self, interaction: discord.Interaction) -> None:
        """Delete everything paperbot stores about you."""
        await self._confirm(interaction, await self.services.library.forget(interaction.user.id))


async def setup(bot: PaperBot) -> None:
    """Load the library cog and its zh-CN descriptions."""
    register(TRANSLATIONS_ZH)
    await bot.add_cog(LibraryCog(bot))
