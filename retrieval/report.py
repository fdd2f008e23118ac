"""How an ingest report is worded: one place for the CLI (``paperbot index``) and the bot's
``/admin reindex`` reply, which only lay the same lines out (plain text, or embed fields).

The counts add up, and the wording says how: ``papers loaded + duplicates + blocks skipped = blocks
read``; files rejected are named apart and read no block.
"""

from __future__ import annotations

from dataclasses import dataclass

from retrieval.english import plural
from retrieval.models import IngestReport

__all__ = ["Section", "counts_line", "sections"]


@dataclass(frozen=True, slots=True)
class Section:
    """A part of the report: its heading (with its count) and one line per item."""

    title: str
    lines: tuple[str, ...]


def counts_line(report: IngestReport) -> str:
    """``"43 blocks read from 2 files: 40 papers loaded (1 with a note), 2 duplicates, 1 skipped;
    1 file rejected"``."""
    noted = f" ({len(report.notes):,} with a note)" if report.notes else ""
    text = (
        f"{plural(report.blocks, 'block')} read from {plural(len(report.files), 'file')}: "
        f"{plural(report.papers, 'paper')} loaded{noted}, {plural(report.duplicates, 'duplicate')}, "
        f"{report.blocks - report.papers - report.duplicates:,} skipped"
    )
    if report.rejected_files:
        text += f"; {plural(len(report.rejected_files), 'file')} rejected"
    return text


def sections(report: IngestReport) -> list[Section]:
    """The report's non-empty parts, in the order they are shown."""
    out: list[Section] = []
    if report.rejected_files:
        rejected = tuple(map(str, report.rejected_files))
        out.append(Section(f"Files rejected: {len(rejected):,}", rejected))
    if report.skipped:
        out.append(Section(f"Skipped blocks: {len(report.skipped):,}", tuple(map(str, report.skipped))))
    if report.duplicates:
        details = report.duplicate_details or ("(no details)",)
        out.append(Section(f"Duplicates dropped: {report.duplicates:,}", tuple(details)))
    if report.notes:
        out.append(Section(f"Loaded with a note: {len(report.notes):,}", tuple(map(str, report.notes))))
    if report.cp1252_files:
        title = f"Not UTF-8, read as Windows-1252: {len(report.cp1252_files):,}"
        out.append(Section(title, report.cp1252_files))
    if report.ignored_files:
        title = f"Files ignored (not .txt, .jsonl, .bib, .ris or .json): {len(report.ignored_files):,}"
        out.append(Section(title, report.ignored_files))
    return out
