"""Build an index in a separate process and hand it to the bot without stalling its event loop.

Why: building (and even loading the cache of) 100k abstracts in a worker *thread* stalls the bot's
event loop for up to ~0.6 s, because a few long C calls (``json.dumps``/``json.loads`` of the papers,
numpy passes) hold the GIL. So :func:`build_in_subprocess` runs ``python -m bot.index_worker`` which
calls :func:`retrieval.index.open_index` (writing the cache as usual) and writes a *transfer folder*:
one ``.npy`` per index array, the papers as JSON lines, the terms and a summary. The parent memory-maps
the arrays (no copy, no long call), parses the papers a few hundred lines at a time between event-loop
turns, and constructs the :class:`~retrieval.index.Index` in a thread from those pieces.

Protocol on the worker's stdout: one JSON object per line, ``{"progress": [stage, done, total]}``,
then ``{"done": true}`` or ``{"error": "<one-line reason>"}``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from retrieval.index import BM25Params, Index, id_diff, open_index, paper_from_row, paper_row
from retrieval.models import IngestReport, Paper, SkippedBlock

PAPERS_PER_TURN = 500  # papers parsed between two event-loop turns (≈ 5 ms each)


def _write_transfer(index: Index, report: IngestReport, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, array in index.arrays().items():
        np.save(folder / f"{name}.npy", np.ascontiguousarray(array))
    with (folder / "papers.jsonl").open("w", encoding="utf-8") as handle:
        for p in index.papers:
            handle.write(json.dumps(paper_row(p), ensure_ascii=False) + "\n")
    (folder / "terms.txt").write_text("\n".join(index.terms), encoding="utf-8")
    summary = {
        "params": dataclasses.asdict(index.params),
        "avgdl": index.avgdl,
        "fingerprint": index.fingerprint,
        "built_at": index.built_at,
        "build_seconds": index.build_seconds,
        "report": {
            "files": list(report.files),
            "duplicates": report.duplicates,
            "duplicate_details": list(report.duplicate_details),
            "skipped": [[s.path, s.line, s.reason] for s in report.skipped],
            "build_seconds": report.build_seconds,
            "from_cache": report.from_cache,
            "extra": {
                k: v for k, v in report.extra.items() if isinstance(v, str | int | float | bool | None)
            },
        },
    }
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")


def worker_main(argv: list[str] | None = None) -> int:
    """``python -m bot.index_worker CORPUS OUT --params JSON [--cache-dir DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m bot.index_worker")
    parser.add_argument("corpus")
    parser.add_argument("out")
    parser.add_argument("--params", required=True)
    parser.add_argument("--cache-dir")
    args = parser.parse_args(argv)

    def emit(payload: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(payload) + "\n")
        sys.stdout.flush()

    try:
        raw = {k: v for k, v in json.loads(args.params).items() if v is not None}
        params = BM25Params(**raw)
        cache_dir = Path(args.cache_dir) if args.cache_dir else None
        index, report = open_index(
            args.corpus, params, cache_dir=cache_dir, progress=lambda s, d, t: emit({"progress": [s, d, t]})
        )
        _write_transfer(index, report, Path(args.out))
    except Exception as exc:  # any failure is reported as one line; the parent keeps the old index
        emit({"error": f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc)})
        return 1
    emit({"done": True})
    return 0


async def _read_papers(path: Path) -> tuple[Paper, ...]:
    papers: list[Paper] = []
    with path.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle, 1):
            papers.append(paper_from_row(json.loads(line)))
            if n % PAPERS_PER_TURN == 0:
                await asyncio.sleep(0)  # let the bot answer interactions between chunks
    return tuple(papers)


async def build_in_subprocess(
    corpus: Path,
    params: BM25Params,
    *,
    cache_dir: Path | None,
    previous: Index | None,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[Index, IngestReport]:
    """Build (or load the cache of) ``corpus`` in a child process and return the index here.

    Raises:
        RuntimeError: The worker failed; ``str()`` is its one-line reason.
    """
    started = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="paperbot-transfer-"))
    try:
        param_json = json.dumps(dataclasses.asdict(params))
        command = [sys.executable, "-m", "bot.index_worker", str(corpus), str(folder), "--params", param_json]
        if cache_dir is not None:
            command += ["--cache-dir", str(cache_dir)]
        process = await asyncio.create_subprocess_exec(
            *command,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(Path(__file__).resolve().parents[1]),
        )
        error: str | None = None
        done = False
        assert process.stdout is not None  # noqa: S101 - PIPE was requested
        async for raw in process.stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue  # a stray print from a library
            if "progress" in message and progress is not None:
                progress(*message["progress"])
            elif "error" in message:
                error = str(message["error"])
            elif message.get("done"):
                done = True
        stderr = (await process.stderr.read()).decode("utf-8", "replace") if process.stderr else ""
        code = await process.wait()
        if not done or code != 0:
            last = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit code {code}"
            raise RuntimeError(error or f"the index worker failed: {last}")

        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        # A full collection over the millions of new objects would hold the GIL for ~100 ms; the
        # engine freezes them after the swap instead (they are acyclic: refcounting frees them).
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            papers = await _read_papers(folder / "papers.jsonl")
            terms_text = (folder / "terms.txt").read_text(encoding="utf-8")
            terms = terms_text.split("\n") if terms_text else []
            # Memory-mapped: no copy, no long GIL-holding call; the mapping outlives the deleted file.
            arrays = {path.stem: np.load(path, mmap_mode="r") for path in folder.glob("*.npy")}

            def construct() -> tuple[Index, tuple[str, ...], tuple[str, ...], int]:
                index = Index.from_saved(
                    papers=papers, params=params, terms=terms, arrays=arrays, meta=summary
                )
                return (index, *id_diff(papers, previous))

            index, added, removed, unchanged = await asyncio.to_thread(construct)
        finally:
            if gc_was_enabled:
                gc.enable()
        info = summary["report"]
        extra = dict(info["extra"], worker="subprocess", swap_seconds=time.perf_counter() - started)
        report = IngestReport(
            files=tuple(info["files"]),
            papers=len(papers),
            duplicates=int(info["duplicates"]),
            duplicate_details=tuple(info["duplicate_details"]),
            skipped=tuple(SkippedBlock(str(f), int(line), str(why)) for f, line, why in info["skipped"]),
            added=added,
            removed=removed,
            unchanged=unchanged,
            build_seconds=float(info["build_seconds"]),
            from_cache=bool(info["from_cache"]),
            extra=extra,
        )
        return index, report
    finally:
        # Unlinking a few hundred MB of files is slow enough to stall the loop: do it in a thread.
        await asyncio.to_thread(shutil.rmtree, folder, True)


if __name__ == "__main__":
    raise SystemExit(worker_main())
