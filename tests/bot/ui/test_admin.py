"""bot/ui/admin.py: the reindex report and durations as an admin sees them, within Discord's limits."""

from __future__ import annotations

import dataclasses

from bot.services.admin import ReindexOutcome, ReindexPlan
from bot.store import ReconcileResult, StoreStats
from bot.ui.admin import duration, reindex_pages
from retrieval.models import IngestReport, SkippedBlock


def outcome(report, *, corpus="c", elapsed=1.0, before=None, after=None, reconcile=None):
    plan = ReindexPlan(corpus=corpus, shown=corpus[:200])
    return ReindexOutcome(
        plan=plan, elapsed=elapsed, report=report, before=before, after=after, reconcile=reconcile
    )


def test_duration_is_short():
    assert duration(4.25) == "4.2 s"
    assert duration(125) == "2 min 05 s"
    assert duration(3 * 3600 + 60) == "3 h 01 min"
    assert duration(2 * 86400 + 7200) == "2 d 2 h"


def test_reindex_embed_respects_limits():
    report = IngestReport(
        files=("a.txt",),
        papers=5000,
        duplicates=400,
        duplicate_details=tuple(f"a.txt:{i}: same as {'x' * 200}" for i in range(400)),
        skipped=tuple(SkippedBlock("a" * 300, i, "r" * 300) for i in range(400)),
        added=tuple(f"id{i:05d}" * 5 for i in range(3000)),
        removed=tuple(f"old{i:05d}" * 5 for i in range(3000)),
        unchanged=2000,
        build_seconds=12.5,
    )
    embed = reindex_pages(outcome(report, corpus="/x" * 300, elapsed=13.0))[0]
    assert len(embed) <= 6000
    for field in embed.fields:
        assert 0 < len(field.name) <= 256 and 0 < len(field.value) <= 1024
    assert embed.fields[1].value.endswith("+2990 more")


def test_reindex_embed_names_saved_papers_when_the_reconcile_result_is_known():
    report = IngestReport(files=("a.txt",), papers=3, added=("n1",), removed=("g1", "g2"), unchanged=2)
    reconcile = ReconcileResult(gone=["g1"], returned=["r1", "r2"], refreshed=0)
    embed = reindex_pages(outcome(report, reconcile=reconcile))[0]
    saved = next(f.value for f in embed.fields if f.name == "Saved papers")
    assert "1 left the corpus" in saved and "`g1`" in saved
    assert "2 are back in the corpus" in saved and "`r1`, `r2`" in saved


def test_reindex_embed_without_a_reconcile_result_gives_the_net_change():
    report = IngestReport(files=("a.txt",), papers=3, removed=("g1",), unchanged=2)
    before = StoreStats(saved_items=3, users=1, lists=1, snapshots=3, missing_from_corpus=0)
    after = dataclasses.replace(before, missing_from_corpus=2)
    embed = reindex_pages(outcome(report, before=before, after=after))[0]
    saved = next(f.value for f in embed.fields if f.name == "Saved papers")
    assert saved.startswith("2 left the corpus with this reindex")
    assert "2 saved papers in all are not in the corpus now." in saved
    quiet = reindex_pages(outcome(report, before=before, after=before))[0]
    assert "Saved papers" not in {f.name for f in quiet.fields}


def test_reindex_pages_keep_every_line_whole_within_discords_limits():
    """Issue 30 item 2: paths relative to the corpus folder, reasons whole, the rest paged; every page
    one embed within Discord's limits, however long the lists."""
    import discord


    folder = "/srv/corpora/" + "a-long-folder-name/" * 3 + "iclr"
    files = tuple(f"{folder}/part{i}.txt" for i in range(4)) + (f"{folder}/bad.bin.txt",)
    skipped = [SkippedBlock(files[i % 4], i, f"block: {'why ' * 40}#{i}") for i in range(300)]
    skipped += [SkippedBlock(files[4], 1, "file: binary (contains NUL bytes), not a corpus file")]
    skipped += [SkippedBlock(files[0], 7, "url: dropped 'ftp://x': not an http(s) link")]
    report = IngestReport(
        files=files,
        papers=5000,
        duplicates=120,
        duplicate_details=tuple(
            f"{files[1]}:{i}: duplicate of x{i} (first seen {files[0]}:{i})" for i in range(120)
        ),
        skipped=tuple(skipped),
        added=tuple(f"id{i:05d}" * 5 for i in range(3000)),
        removed=tuple(f"old{i:05d}" * 5 for i in range(3000)),
        unchanged=2000,
        cp1252_files=files[:3],
        ignored_files=tuple(f"{folder}/notes{i}.pdf" for i in range(30)),
    )
    gone, back = [f"g{i}" for i in range(50)], [f"r{i}" for i in range(50)]
    reconcile = ReconcileResult(gone=gone, returned=back, refreshed=0)
    after = StoreStats(saved_items=3, users=1, lists=1, snapshots=3, missing_from_corpus=50)
    pages = reindex_pages(outcome(report, corpus=folder, reconcile=reconcile, after=after))
    assert len(pages) > 5
    text = []
    for page in pages:
        assert isinstance(page, discord.Embed) and len(page) <= 6000
        assert len(page.description or "") <= 4096 and len(page.title or "") <= 256
        assert all(0 < len(f.name) <= 256 and 0 < len(f.value) <= 1024 for f in page.fields)
        text += [line for f in page.fields for line in f.value.split("\n")]
        if page is not pages[0]:
            text += page.description.split("\n")
    lines = [line.removeprefix("• ").replace("\\", "") for line in text if line.startswith("• ")]
    assert folder not in "\n".join(lines)  # the folder is in the description, once
    assert folder in pages[0].description and "4 files (1 more rejected)" in pages[0].description
    for s in skipped:
        expected = f"part{files.index(s.path)}.txt:{s.line}: {s.reason}" if s.field != "file" else None
        if expected:
            assert lines.count(expected) == 1, expected  # whole, once
    assert lines.count("bad.bin.txt: binary (contains NUL bytes), not a corpus file") == 1
    assert lines.count("part1.txt:119: duplicate of x119 (first seen part0.txt:119)") == 1
    fields = {f.name for f in pages[0].fields}
    assert {"Skipped blocks: 300", "Papers loaded with a note: 1", "Files rejected: 1"} <= fields
    assert "Saved papers" in fields


def test_reindex_embed_says_how_the_counts_add_up():
    """5 blocks and a rejected file: 2 papers (one repaired), 1 duplicate, 2 skipped."""
    report = IngestReport(
        files=("a.txt", "b.jsonl", "c.txt"),
        papers=2,
        blocks=5,
        duplicates=1,
        duplicate_details=("a.txt:9: duplicate of abc (loaded from a.txt:3)",),
        skipped=(
            SkippedBlock("a.txt", 12, "block: one line"),
            SkippedBlock("b.jsonl", 1, "url: dropped 'x': not an http(s) link"),
            SkippedBlock("b.jsonl", 2, "record: x"),
            SkippedBlock("c.txt", 1, "file: not text (40 % control characters)"),
        ),
    )
    embed = reindex_pages(outcome(report))[0]
    fields = {f.name: f.value for f in embed.fields}
    assert fields["Papers"].endswith(
        "5 blocks read from 2 files: 2 papers loaded (1 with a note), 1 duplicate, 2 skipped; 1 file rejected"
    )
    assert "c.txt: not text" in fields["Files rejected: 1"]
    assert "b.jsonl:1: url: dropped" in fields["Papers loaded with a note: 1"]
    assert fields["Skipped blocks: 2"].count("•") == 2
