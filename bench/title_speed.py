"""How fast the derived titles' file is written after a build, at 100k and 1M synthetic abstracts.

For each size, a synthetic title-less corpus (bench/_synth.py, seeded) is written and opened with
``open_index`` (a fresh build, its cache in a temporary folder); the build hands the index over and
starts the title writer (``python -m retrieval.titlewriter``: a process at a low priority with a
worker per core, retrieval/titlefile.py). Printed: the build's seconds, the seconds from then until
the titles' file is there, titles per second, the machine's load average (``os.getloadavg``)
before and after, since other work on the machine shares its cores, and the CPU seconds the writer
and its workers used (what the wall time would be on idle cores: CPU / cores). Targets (issue 31): 60 s at
100k, 10 minutes at 1M. The cost of a title on the real ICLR 2024 abstracts (µs/paper, one process)
is printed beside it, since synthetic abstracts are not real ones.

Usage::

    python bench/title_speed.py [--sizes 100000,1000000] [--sample]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synth import Generator, write_corpus  # noqa: E402
from titles import DEFAULT_DATA, load  # noqa: E402

from retrieval.index import open_index  # noqa: E402
from retrieval.titlefile import wait_for_writers  # noqa: E402
from retrieval.titles import derive_title  # noqa: E402

TARGETS = {100_000: 60.0, 1_000_000: 600.0}


def children_cpu() -> float:
    """CPU seconds of the waited-for child processes (the writer and its workers, once done)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def verdict_of(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument(
        "--sample", action="store_true",
        help="no build: the CPU cost of a title on 3,000 papers from the middle of each size's corpus "
        "(its vocabulary as big as that corpus makes it), and the wall time that gives on idle cores",
    )
    args = parser.parse_args()
    if DEFAULT_DATA.exists():
        abstracts = [a for _, a in load(DEFAULT_DATA)]
        started = time.perf_counter()
        for a in abstracts:
            derive_title(a)
        print(
            f"ICLR 2024 abstracts: {(time.perf_counter() - started) / len(abstracts) * 1e6:.0f} µs/title "
            f"(one process, load {load_average()})"
        )
    for n in (int(s) for s in args.sizes.split(",")):
        if args.sample:
            sample = [p.abstract for p in Generator(n).papers(n // 2, n // 2 + 3000)]
            started = time.process_time()
            for a in sample:
                derive_title(a)
            cpu = (time.process_time() - started) / len(sample)
            wall = cpu * n / (os.cpu_count() or 1)
            target = TARGETS.get(n)
            verdict = "" if target is None else f"   target <= {target:.0f} s  {verdict_of(wall <= target)}"
            print(f"{n:>9,} abstracts: {cpu * 1e6:.0f} µs CPU/title (a sample of 3,000, load "
                  f"{load_average()}): {wall:.0f} s of titles on {os.cpu_count()} idle cores{verdict}")
            continue
        with tempfile.TemporaryDirectory() as folder:
            corpus, cache = Path(folder) / "corpus", Path(folder) / "cache"
            write_corpus(Generator(n).papers(), corpus)
            before = load_average()
            started = time.perf_counter()
            index, _ = open_index(corpus, cache_dir=cache)
            built = time.perf_counter() - started
            cpu0 = children_cpu()
            while index.papers.title_file() is None:
                time.sleep(0.05)
            seconds = time.perf_counter() - started - built
            wait_for_writers()
            cpu = children_cpu() - cpu0
            target = TARGETS.get(n)
            verdict = (
                ""
                if target is None
                else f"   target <= {target:.0f} s  {'PASS' if seconds <= target else 'FAIL'}"
            )
            print(
                f"{n:>9,} abstracts: build {built:.0f} s; titles' file {seconds:.1f} s after it, "
                f"{n / seconds:,.0f} titles/s (load before {before}, after {load_average()}; "
                f"{os.cpu_count()} cores){verdict}"
            )
            print(
                f"{'':>20} the writer's CPU: {cpu:.0f} s ({cpu / n * 1e6:.0f} µs/title): "
                f"{cpu / (os.cpu_count() or 1):.0f} s "
                f"of wall time on {os.cpu_count()} cores with nothing else running"
            )
            del index


if __name__ == "__main__":
    main()
