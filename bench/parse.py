"""Parse speed of the plain-text loader: reading by position, and deriving titles, per paper.

The ICLR 2024 corpus (``../shared/corpora/iclr2024/abstracts.txt``, 1,996 papers) repeated
``--copies`` times is parsed in memory (``retrieval.corpus._parse_text``: fields, author lines,
re-synchronisation), then every abstract gets its title (``retrieval.text.derive_title``). Printed:
µs per paper for each stage, best of three, the ratio of titles to parsing (target: titles cost no
more than parsing, ratio <= 1), and a calibration (``str.split`` of every abstract) so that runs on a
loaded machine can be compared by ratio.

Usage::

    PYTHONPATH=. python bench/parse.py [--copies 10]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from retrieval.corpus import _parse_text
from retrieval.text import derive_title

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
    parse = best_of(3, lambda: _parse_text(text, "bench")) / n * 1e6
    titles = best_of(3, lambda: [derive_title(a) for a in abstracts]) / len(abstracts) * 1e6
    split = best_of(3, lambda: [a.split() for a in abstracts]) / len(abstracts) * 1e6
    print(f"{n:,} papers ({args.copies} copies of {args.file.name}), {len(skipped)} skipped")
    print(f"parse (by position)   {parse:7.1f} µs/paper")
    print(f"derive titles         {titles:7.1f} µs/paper")
    print(f"titles / parse        {titles / parse:7.2f}   target <= 1")
    print(f"calibration str.split {split:7.1f} µs/abstract")


if __name__ == "__main__":
    main()
