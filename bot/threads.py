"""Work in a thread that lets go of its arguments before the awaiting coroutine resumes."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def to_thread_releasing(func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """:func:`asyncio.to_thread`, except that the thread drops its references to ``args`` and
    ``kwargs`` before the result is handed back.

    ``asyncio.to_thread`` keeps the call's arguments in the executor's work item, which the worker
    thread deletes only after it has set the result; under load the awaiting coroutine can resume
    first, still seeing them referenced from the thread. The engine frees a replaced index in small
    pieces only when nothing else holds it (``sys.getrefcount``), so the index passed as
    ``previous`` to a build must be let go of by the time the build returns.
    """
    call = [functools.partial(func, *args, **kwargs)]
    del args, kwargs

    def run() -> T:
        return call.pop()()  # the partial (and what it holds) dies with this frame, before set_result

    return await asyncio.to_thread(run)
