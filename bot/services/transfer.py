"""/export (a file of the user's saved papers) and /import (merge a JSON export into their lists)."""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass

from anyascii import anyascii

from bot.export import export_text, import_file
from bot.render import truncate
from bot.services.base import Context, Notice
from bot.services.library import HOW_TO_SAVE, find_list, list_label
from bot.store import ImportFormatError
from retrieval.english import plural

log = logging.getLogger(__name__)

#: Export formats and how they are named to users.
FORMATS: dict[str, str] = {
    "bib": "BibTeX (.bib)",
    "md": "Markdown (.md)",
    "json": "JSON (.json, re-importable)",
}
#: Largest /import file accepted before downloading it (an export of 1000 papers is ~2 MB).
IMPORT_MAX_BYTES = 8 * 1024 * 1024
#: How many per-record import problems are listed in the reply.
IMPORT_ERRORS_SHOWN = 5


def export_filename(list_name: str | None, fmt: str) -> str:
    """``paperbot-<list or all>.<fmt>``: an ASCII slug, since clients mangle other file names.

    Names in other scripts are transliterated (anyascii: 阅读清单 -> ``yueduqingdan``, Статьи ->
    ``stati``), so every list exports under a name that says which list it is.
    """
    if list_name is None:
        return f"paperbot-all.{fmt}"
    ascii_name = anyascii(unicodedata.normalize("NFKC", list_name)).replace("'", "")
    slug = re.sub(r"[^a-z0-9_-]+", "-", ascii_name.casefold()).strip("-_") or "list"
    return f"paperbot-{slug[:40].rstrip('-_')}.{fmt}"


@dataclass(frozen=True)
class ExportFile:
    """A file to hand the user, and the sentence that goes with it."""

    filename: str
    data: bytes
    text: str


class TransferService:
    """Saved papers out to a file, and back in."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def export(
        self, user_id: int, fmt: str, list_name: str | None = None, *, size_limit: int | None = None
    ) -> ExportFile | Notice:
        """The user's saved papers (one list, or all) as ``bib``, ``md`` or ``json``.

        ``size_limit`` is the largest file the user can receive (Discord's upload limit there).
        """
        store = self.ctx.store
        lists = await store.list_lists(user_id)
        if list_name is not None:
            found = find_list(lists, list_name)
            if found is None:
                return Notice(f"You have no list named {list_label(list_name.strip())}. /lists shows yours.")
            count, name = found.count, found.name
        else:
            count, name = sum(info.count for info in lists), None
        if count == 0:
            where = f"Your list {list_label(name)} is empty" if name else "You have no saved papers yet"
            return Notice(f"{where}, so there is nothing to export. {HOW_TO_SAVE}")
        data = (await export_text(store, user_id, fmt, name, corpus=self.ctx.engine.get)).encode("utf-8")
        if size_limit is not None and len(data) > size_limit:
            return Notice(
                f"That export is {len(data) / 1e6:.1f} MB, over Discord's {size_limit / 1e6:.0f} MB upload "
                "limit here; export one list at a time (list:<name>)."
            )
        filled = [info.name for info in lists if info.count]
        where = (
            f"your {len(filled)} lists" if name is None and len(filled) > 1 else list_label(name or filled[0])
        )
        return ExportFile(
            filename=export_filename(name, fmt),
            data=data,
            text=f"{plural(count, 'saved item')} from {where}, as {FORMATS.get(fmt, fmt)}.",
        )

    def check_import(self, filename: str, size: int) -> Notice | None:
        """Why a file cannot be imported, judged before downloading it (None when it may be)."""
        if not filename.lower().endswith(".json"):
            return Notice("Import takes the .json file that /export format:json gives you.")
        if size > IMPORT_MAX_BYTES:
            return Notice(
                f"That file is {size / 1e6:.1f} MB; imports are limited to {IMPORT_MAX_BYTES // 10**6} MB."
            )
        return None

    async def import_json(self, user_id: int, data: bytes, list_name: str | None = None) -> Notice:
        """Merge a paperbot JSON export into the user's lists; duplicates are skipped."""
        try:
            result = await import_file(self.ctx.store, user_id, data, list_name, corpus=self.ctx.engine.get)
        except ImportFormatError as exc:
            return Notice(f"That file can't be imported: {exc}")
        text = f"Imported {plural(result.added, 'paper')}"
        if result.skipped:
            were = "was" if result.skipped == 1 else "were"
            text += f"; {plural(result.skipped, 'paper')} already in your lists {were} skipped"
        text += "."
        if result.errors:
            shown = "\n".join(f"• {truncate(err, 180)}" for err in result.errors[:IMPORT_ERRORS_SHOWN])
            more = len(result.errors) - IMPORT_ERRORS_SHOWN
            text += f"\n{plural(len(result.errors), 'record')} could not be imported:\n{shown}"
            if more > 0:
                text += f"\n… +{more} more"
        return Notice(text)
