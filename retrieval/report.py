"""How an ingest report is worded: one place for the CLI (``paperbot index``) and the bot's
``/admin reindex`` reply, which only lay the same lines out (plain text, or embed fields and pages).

The counts add up, and the wording says how: ``papers loaded + duplicates + blocks skipped = blocks
read``; files rejected are named apart and read no block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from retrieval.english import plural
from retrieval.models import IngestReport

__all__ = ["Section", "counts_line", "sections"]


@dataclass(frozen=True, slots=True)
class Section:
    """One list of a report (skipped blocks, duplicates…): its heading, how many, one line each."""

    title: str
    count: int
    lines: tuple[str, ...]


def counts_line(report: IngestReport) -> str:
    """``"43 blocks read from 2 files: 40 papers loaded (1 with a note), 2 duplicates, 1 skipped;
    1 file rejected"``."""
    noted = f" ({report.noted_papers:,} with a note)" if report.notes else ""
    text = (
        f"{plural(report.blocks, 'block')} read from {plural(len(report.files_read), 'file')}: "
        f"{plural(report.papers, 'paper')} loaded{noted}, {plural(report.duplicates, 'duplicate')}, "
        f"{len(report.skipped_blocks):,} skipped"
    )
    if report.rejected_files:
        text += f"; {plural(len(report.rejected_files), 'file')} rejected"
    return text


def sections(report: IngestReport, rel: Callable[[str], str] = str) -> list[Section]:
    """The report's non-empty lists, each line whole; ``rel`` shortens the file paths in them (the
    bot names the corpus folder once and shows paths relative to it)."""
    rejected = [s for s in report.skipped if s.field == "file"]
    out = [
        Section("Files rejected", len(rejected), tuple(rel(f"{s.path}: {s.why}") for s in rejected)),
        Section(
            "Skipped blocks",
            len(report.skipped_blocks),
            tuple(rel(f"{s.path}:{s.line}: {s.reason}") for s in report.skipped_blocks),
        ),
        Section(
            "Papers loaded with a note",
            report.noted_papers,
            tuple(rel(f"{s.path}:{s.line}: {s.reason}") for s in report.notes),
        ),
        Section(
            "Duplicates dropped",
            report.duplicates,
            tuple(rel(line) for line in report.duplicate_details) or ("(no details)",),
        ),
        Section(
            "Not UTF-8, read as Windows-1252",
            len(report.cp1252_files),
            tuple(rel(f) for f in report.cp1252_files),
        ),
        Section(
            "Files ignored (not .txt, .jsonl, .bib, .ris or .json)",
            len(report.ignored_files),
            tuple(rel(f) for f in report.ignored_files),
        ),
    ]
    return [section for section in out if section.count]
