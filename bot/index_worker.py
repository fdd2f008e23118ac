"""Build an index in a separate process and hand it to the bot without stalling its event loop.

Why: building 100k abstracts in a worker *thread* stalls the bot's event loop for up to ~0.6 s,
because a few long C calls (numpy passes, big joins) hold the GIL. So :func:`build_in_subprocess`
runs ``python -m bot.index_worker``, which calls :func:`retrieval.index.open_index`: that writes the
ordinary cache file, and the parent then opens that very file (memory-mapped: no copy, no parse,
milliseconds). There is one on-disk format, whoever builds.

The worker dies with the bot: on Linux it asks the kernel for SIGKILL when its parent dies
(``prctl(PR_SET_PDEATHSIG)``), and everywhere a watchdog thread exits when its stdin (a pipe from
the parent) reaches end of file. A cache file it was writing when killed is a ``.tmp`` carrying its
pid; :func:`retrieval.index.sweep_leftovers` removes it at the next start.

Protocol on the worker's stdout: one JSON object per line, ``{"progress": [stage, done, total]}``,
then ``{"done": {report summary}}`` or ``{"error": "<one-line reason>"}``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bot.threads import to_thread_releasing
from retrieval._libc import die_with_parent as _die_with_parent
from retrieval.index import BM25Params, Index, id_diff, open_index
from retrieval.models import IngestReport


def die_with_parent(parent_pid: int) -> None:
    """Make this process end when ``parent_pid`` does: the kernel's parent-death signal where there
    is one (Linux), and a thread that exits when stdin (the parent's pipe) closes."""
    _die_with_parent(parent_pid)

    fd = sys.stdin.fileno()

    def watch() -> None:
        # os.read, not sys.stdin: a daemon thread blocked inside a buffered reader holds its lock and
        # makes the interpreter's shutdown abort.
        try:
            while os.read(fd, 1 << 16):
                pass
        except OSError:
            pass
        os._exit(1)  # end of file: the parent is gone (or closed the pipe to stop us)

    threading.Thread(target=watch, name="paperbot-parent-watchdog", daemon=True).start()


def _summary(report: IngestReport) -> dict[str, Any]:
    return {
        "build_seconds": report.build_seconds,
        "from_cache": report.from_cache,
        "extra": {k: v for k, v in report.extra.items() if isinstance(v, str | int | float | bool | None)},
    }


def worker_main(argv: list[str] | None = None) -> int:
    """``python -m bot.index_worker CORPUS --params JSON --parent PID [--cache-dir DIR] [--headers JSON]``."""
    parser = argparse.ArgumentParser(prog="python -m bot.index_worker")
    parser.add_argument("corpus")
    parser.add_argument("--params", required=True)
    parser.add_argument("--parent", type=int, required=True)
    parser.add_argument("--cache-dir")
    parser.add_argument("--headers", default="[]", help="JSON list of extra header lines")
    args = parser.parse_args(argv)
    die_with_parent(args.parent)

    def emit(payload: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(payload) + "\n")
        sys.stdout.flush()

    try:
        raw = {k: v for k, v in json.loads(args.params).items() if v is not None}
        params = BM25Params(**raw)
        cache_dir = Path(args.cache_dir) if args.cache_dir else None
        headers = tuple(str(h) for h in json.loads(args.headers))
        _, report = open_index(
            args.corpus,
            params,
            cache_dir=cache_dir,
            progress=lambda s, d, t: emit({"progress": [s, d, t]}),
            headers=headers,
        )
        if not report.extra.get("cache"):
            raise RuntimeError("the index could not be saved, so it cannot be handed over")
    except Exception as exc:  # any failure is reported as one line; the parent keeps the old index
        emit({"error": f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc)})
        return 1
    emit({"done": _summary(report)})
    return 0


async def build_in_subprocess(
    corpus: Path,
    params: BM25Params,
    *,
    cache_dir: Path | None,
    previous: Index | None,
    progress: Callable[[str, int, int], None] | None = None,
    headers: Sequence[str] = (),
) -> tuple[Index, IngestReport]:
    """Build (or find the cache of) ``corpus`` in a child process, then open its cache file here.

    Raises:
        RuntimeError: The worker failed; ``str()`` is its one-line reason.
    """
    started = time.perf_counter()
    param_json = json.dumps(dataclasses.asdict(params))
    command = [sys.executable, "-m", "bot.index_worker", str(corpus), "--params", param_json,
               "--parent", str(os.getpid())]  # fmt: skip
    if cache_dir is not None:
        command += ["--cache-dir", str(cache_dir)]
    if headers:
        command += ["--headers", json.dumps(list(headers))]
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,  # held open while we wait: its end tells the worker we are gone
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(Path(__file__).resolve().parents[1]),
    )
    error: str | None = None
    summary: dict[str, Any] | None = None
    # stderr is drained beside stdout, not after it: a worker that writes more than the pipe holds
    # (~64 KiB of warnings) to stderr would otherwise block, and both sides would wait for ever.
    assert process.stderr is not None  # noqa: S101 - PIPE was requested
    stderr_read = asyncio.ensure_future(process.stderr.read())
    try:
        assert process.stdout is not None  # noqa: S101 - PIPE was requested
        async for raw in process.stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue  # a stray print from a library
            if not isinstance(message, dict):
                continue
            if "progress" in message and progress is not None:
                progress(*message["progress"])
            elif "error" in message:
                error = str(message["error"])
            elif isinstance(message.get("done"), dict):
                summary = message["done"]
        stderr = (await stderr_read).decode("utf-8", "replace")
        code = await process.wait()
    finally:
        if process.returncode is None:  # cancelled: stop the worker, do not leave it running
            process.kill()
            await process.wait()
        if not stderr_read.done():
            stderr_read.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stderr_read
        if process.stdin is not None:
            process.stdin.close()
    if summary is None or code != 0:
        last = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit code {code}"
        raise RuntimeError(error or f"the index worker failed: {last}")

    # The worker left a current cache file: opening it maps the arrays (no copy) in a thread.
    index, loaded = await asyncio.to_thread(open_index, corpus, params, cache_dir=cache_dir, headers=headers)
    added, removed, unchanged = await to_thread_releasing(id_diff, index.papers, previous)
    extra = dict(loaded.extra, **summary["extra"])
    extra.update(worker="subprocess", swap_seconds=time.perf_counter() - started)
    report = dataclasses.replace(
        loaded,
        added=added,
        removed=removed,
        unchanged=unchanged,
        build_seconds=float(summary["build_seconds"]),
        from_cache=bool(summary["from_cache"]),
        extra=extra,
    )
    return index, report


if __name__ == "__main__":
    raise SystemExit(worker_main())
