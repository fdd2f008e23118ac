"""``python -m retrieval.titlewriter CACHE``: derive and write the title file of a cache file (see
:mod:`retrieval.titlefile`), in a process of its own at a low priority, with a worker process per
core (forked: they read the same memory-mapped index). Started by
:func:`retrieval.titlefile.ensure_titles` once a big corpus's index is handed over; nothing imports
this module (it reads the index, which imports :mod:`retrieval.titlefile`)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from retrieval.index import BM25Params, load_cache_file
from retrieval.titlefile import TitleFile, title_file_path, write_title_file


def main(argv: list[str] | None = None) -> int:
    """Write the title file of the cache file ``CACHE``; 0 when it is written (or already whole). The
    process started as ``python -m retrieval.titlewriter`` lowers its own priority first; a caller
    of this function keeps its own."""
    parser = argparse.ArgumentParser(prog="python -m retrieval.titlewriter")
    parser.add_argument("cache")
    args = parser.parse_args(argv)
    cache_file = Path(args.cache)
    path = title_file_path(cache_file)
    try:
        for _ in range(3):  # the cache replaced by another build meanwhile: that build's titles
            index = load_cache_file(cache_file, BM25Params())
            identity = index.title_identity()
            if TitleFile.open(path, identity) is not None:
                return 0

            def same_build(identity: dict[str, object] = identity) -> bool:
                try:
                    return load_cache_file(cache_file, BM25Params()).title_identity() == identity
                except ValueError:
                    return False

            if write_title_file(index, path, still_current=same_build, workers=os.cpu_count() or 1):
                return 0
    except (OSError, ValueError) as exc:
        print(f"paperbot: could not write the titles of {cache_file}: {exc}", file=sys.stderr)  # noqa: T201
        return 1
    return 0


if __name__ == "__main__":
    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)  # background work: the bot serving the index comes first (the process, not main())
    raise SystemExit(main())
