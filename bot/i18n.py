"""Simplified Chinese (zh-CN) descriptions for every slash command and option.

Replies stay English; only what Discord shows in the command picker is translated. Cogs written by
other engineers add their own strings without touching this file::

    from bot.i18n import register
    register({"Save a paper to one of your lists": "将论文保存到你的列表"})

The translator looks strings up by their English text, so a description and its translation live
side by side; a string without a translation is simply shown in English.
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands

log = logging.getLogger(__name__)

ZH_CN: dict[str, str] = {
    # /search
    "Search the paper abstracts (BM25)": "检索论文摘要（BM25）",
    "Words to look for; quotes for phrases, -word to exclude": "要检索的词；用引号表示短语，-词 表示排除",
    "Only papers in this area": "只看该领域的论文",
    "Only papers with an author whose name contains this": "只看作者姓名包含此文本的论文",
    "Results per page (1-10)": "每页结果数（1-10）",
    "Show the results to everyone in the channel": "让频道里的所有人都能看到结果",
    # /paper
    "Show a paper's full abstract": "显示论文的完整摘要",
    "The paper's id (start typing to search titles)": "论文编号（输入文字以搜索标题）",
    # /similar
    "Papers similar to a given paper": "与指定论文相似的论文",
    # /ask
    "Ask a research question; get quoted sentences with citations": "提出研究问题，得到带引用的原文句子",
    "Your question, in plain words": "你的问题，用平常的话写",
    "Show the answer to everyone in the channel": "让频道里的所有人都能看到回答",
}


def register(translations: dict[str, str]) -> None:
    """Add (English → Simplified Chinese) pairs; call at import time of a cog module."""
    ZH_CN.update(translations)


class PaperTranslator(app_commands.Translator):
    """Translates command/option descriptions to Simplified Chinese; everything else stays as is."""

    async def load(self) -> None:
        log.debug("zh-CN translator loaded with %d strings", len(ZH_CN))

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        if locale is not discord.Locale.chinese:
            return None
        # Names must stay lowercase ASCII-ish identifiers users can type; only describe in Chinese.
        if context.location in (
            app_commands.TranslationContextLocation.command_name,
            app_commands.TranslationContextLocation.group_name,
            app_commands.TranslationContextLocation.parameter_name,
        ):
            return None
        return ZH_CN.get(string.message)
