"""Two glibc/Linux process settings used by paperbot's processes, and a liveness check, in one place.

- :func:`die_with_parent`: the kernel kills this process when its parent dies (``PR_SET_PDEATHSIG``),
  so a killed build, reindex worker or bench leaves nothing running.
- :func:`mallopt`: malloc's thresholds, which the build's workers and a serving process set
  differently (see their callers).

Both do nothing where there is no glibc (the process then keeps the platform's defaults).
:func:`process_alive` tells whether a process (the writer a temp file names) still runs.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (glibc's malloc.h)


def _libc():  # noqa: ANN202
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def die_with_parent(parent_pid: int) -> None:
    """End this process when ``parent_pid`` ends: SIGKILL from the kernel on Linux, and an immediate
    exit if the parent is already gone (it died before the setting took effect)."""
    libc = _libc()
    if libc is not None:
        try:
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except AttributeError:
            pass
    if os.getppid() != parent_pid:
        os._exit(1)


def mallopt(*settings: tuple[int, int]) -> None:
    """Set glibc malloc parameters, e.g. ``mallopt((M_MMAP_THRESHOLD, 128 * 1024))``."""
    libc = _libc()
    if libc is None:
        return
    try:
        for param, value in settings:
            libc.mallopt(param, value)
    except AttributeError:  # not glibc
        pass


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (this one does; one owned by another user counts)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True
