"""bench/store.py's worker processes die with the bench: a killed bench leaves nothing saving."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# A stand-in for the bench's parent: it starts one worker exactly as throughput() does, prints the
# worker's pid once the worker is ready, then sleeps until it is killed. The worker has 50M saves to
# make: one that outlived its parent would keep saving (its stdin closes and it starts).
PARENT = """
import os, subprocess, sys, time
bench, target = sys.argv[1], sys.argv[2]
worker = subprocess.Popen([sys.executable, bench, "--worker", target, "0", "50000000", str(os.getpid())],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
assert worker.stdout.readline().strip() == "ready"
print(worker.pid, flush=True)
time.sleep(600)
"""


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")  # a zombie has exited
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_killed_bench_leaves_no_worker_running(tmp_path: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(ROOT / "bench" / "store.py"), str(tmp_path / "bench.db")],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    worker = 0
    try:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        assert not _gone(worker)  # waiting for "go"
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 20
        while not _gone(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(worker), "the worker outlived the bench that started it"
    finally:
        parent.kill()
        parent.wait(timeout=30)
        if worker and not _gone(worker):
            os.kill(worker, signal.SIGKILL)
