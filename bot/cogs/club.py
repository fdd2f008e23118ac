"""/club add|remove|show: the server's shared reading list (rules: bot/services/club.py)."""

from __future__ import annotations

import discord
from discord import app_commands

from bot.app import PaperBot
from bot.cogs import Cog, ShortText, club_papers, corpus_papers
from bot.i18n import register
from bot.services.base import Notice
from bot.services.club import NOT_IN_A_SERVER
from bot.store import NOTE_MAX
from bot.ui import respond
from bot.ui.club import club_embed

TRANSLATIONS_ZH: dict[str, str] = {
    "This server's shared reading list": "本服务器共享的阅读列表",
    "Add a paper to this server's reading list": "将论文加入本服务器的阅读列表",
    "Remove a paper from this server's reading list": "从本服务器的阅读列表中移除论文",
    "Show this server's reading list": "查看本服务器的阅读列表",
    "A note for the group (why read it, which week)": "给大家的备注（为什么读、哪一周读）",
    "A paper on the reading list (start typing to pick one)": "阅读列表中的论文（输入文字以选择）",
    "Show the list to everyone in the channel": "让频道里的所有人都能看到该列表",
}


def _editor_args(interaction: discord.Interaction) -> dict[str, object]:
    """What the service's editor rule needs: Manage Server, and the member's role ids."""
    member = interaction.user
    roles = [role.id for role in getattr(member, "roles", [])]
    raw = getattr(member, "_roles", None)  # roles not cached (no GUILD_CREATE seen) are still ids
    if raw is not None:
        roles += [int(r) for r in raw]
    return {"manage_guild": interaction.permissions.manage_guild, "role_ids": roles}


class ClubCog(Cog, name="Club"):
    """A reading list per server."""

    club = app_commands.Group(name="club", description="This server's shared reading list")

    @club.command(name="add", description="Add a paper to this server's reading list")
    @app_commands.describe(
        paper_id="The paper's id (start typing to search titles)",
        note="A note for the group (why read it, which week)",
    )
    @app_commands.rename(paper_id="id")
    @app_commands.autocomplete(paper_id=corpus_papers)
    async def add(
        self,
        interaction: discord.Interaction,
        paper_id: ShortText,
        note: app_commands.Range[str, 1, NOTE_MAX] | None = None,
    ) -> None:
        """Add a paper to this server's reading list."""
        if interaction.guild_id is None:
            await self.reply(interaction, NOT_IN_A_SERVER)
            return
        notice = await self.services.club.add(
            interaction.guild_id, interaction.user.id, paper_id, note, **_editor_args(interaction)
        )
        await self.reply(interaction, notice)

    @club.command(name="remove", description="Remove a paper from this server's reading list")
    @app_commands.describe(paper_id="A paper on the reading list (start typing to pick one)")
    @app_commands.rename(paper_id="id")
    @app_commands.autocomplete(paper_id=club_papers)
    async def remove(
        self, interaction: discord.Interaction, paper_id: ShortText
    ) -> None:
        """Remove a paper from this server's reading list."""
        if interaction.guild_id is None:
            await self.reply(interaction, NOT_IN_A_SERVER)
            return
        notice = await self.services.club.remove(interaction.guild_id, paper_id, **_editor_args(interaction))
        await self.reply(interaction, notice)

    @club.command(name="show", description="Show this server's reading list")
    @app_commands.describe(public="Show the list to everyone in the channel")
    async def show(self, interaction: discord.Interaction, public: bool = False) -> None:
        """Show this server's reading list."""
        if interaction.guild_id is None:
            await self.reply(interaction, NOT_IN_A_SERVER)
            return
        page = await self.services.club.show(interaction.guild_id)
        if isinstance(page, Notice):
            await self.reply(interaction, page)
            return
        name = interaction.guild.name if interaction.guild is not None else None
        await respond.send(interaction, embed=club_embed(page, name), ephemeral=not public)


async def setup(bot: PaperBot) -> None:
    """Load the club cog and its zh-CN descriptions."""
    register(TRANSLATIONS_ZH)
    await bot.add_cog(ClubCog(bot))
