"""Parse speed of the plain-text loader, and where deriving titles is paid, per paper.

The ICLR 2024 corpus (``../shared/corpora/iclr2024/abstracts.txt``, 1,996 title-less papers)
repeated ``--copies`` times is written to a file and read as an index build reads each file
(``retrieval.build.process_file``: fields by position, catalogue part, tokens), while every call
of ``retrieval.titles.derive_title`` is counted. Printed, per paper, best of three:

* ``parse``: the parser alone (``retrieval.corpus._parse_text``);
* ``build's work``: everything the build does with a file, and the titles it derived in it (the
  target: title derivation no longer dominates parsing; the build derives none);
* ``derive a title``: what each title-less paper costs once the index is handed over, when its
  title file is written in the background (``retrieval/titlefile.py``), or when a paper is shown
  before that file is there;
* a calibration (``str.split`` of every abstract) so that runs on a loaded machine can be compared.

Usage::

    PYTHONPATH=. python bench/parse.py [--copies 10]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import retrieval.corpus
import retrieval.titles
from retrieval.build import ChunkTokenizer, process_file
from retrieval.corpus import HEADER, _parse_text
from retrieval.titles import derive_title

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "iclr2024" / "abstracts.txt"


def best_of(runs: int, fn) -> float:  # noqa: ANN001
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--file", type=Path, default=DEFAULT)
    parser.add_argument("--copies", type=int, default=10)
    args = parser.parse_args()
    text = args.file.read_text(encoding="utf-8") * args.copies
    records, skipped = _parse_text(text, "bench")
    n = len(records)
    abstracts = [r.abstract for r in records[: len(records) // args.copies]]
    calls = 0
    real = retrieval.titles.derive_title

    def counted(abstract: str) -> str:
        nonlocal calls
        calls += 1
        return real(abstract)

    tokenizer = ChunkTokenizer()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "corpus.txt"
        path.write_text(text, encoding="utf-8")
        # every name it is reached by (the corpus module imported it)
        retrieval.titles.derive_title = retrieval.corpus.derive_title = counted
        try:
            build = best_of(3, lambda: process_file(path, "bench", (HEADER,), tokenizer=tokenizer)) / n * 1e6
        finally:
            retrieval.titles.derive_title = retrieval.corpus.derive_title = real
    parse = best_of(3, lambda: _parse_text(text, "bench")) / n * 1e6
    titles = best_of(3, lambda: [derive_title(a) for a in abstracts]) / len(abstracts) * 1e6
    split = best_of(3, lambda: [a.split() for a in abstracts]) / len(abstracts) * 1e6
    per_build = calls / 3 / n
    print(f"{n:,} papers ({args.copies} copies of {args.file.name}), {len(skipped)} skipped")
    print(f"parse (by position)        {parse:7.1f} µs/paper")
    print(f"build's work with a file   {build:7.1f} µs/paper (parse, catalogue, tokens)")
    print(f"titles derived by it       {per_build:7.2f} per paper ({calls:,} in 3 runs)")
    print(f"titles' share of it        {per_build * titles / build:7.1%}   target: not dominant")
    print(f"derive a title             {titles:7.1f} µs/paper: after the build, in the background "
          "(the title file), or when shown before it is written")
    print(f"calibration str.split      {split:7.1f} µs/abstract")


if __name__ == "__main__":
    main()
