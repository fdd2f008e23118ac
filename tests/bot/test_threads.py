"""A thread's work lets go of its arguments before the coroutine that awaits it resumes."""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
import time

import pytest

from bot.threads import to_thread_releasing


class SlowToForget(concurrent.futures.ThreadPoolExecutor):
    """An executor whose worker thread is descheduled between setting a result and deleting its work
    item, as a loaded machine's can be: the call's arguments stay referenced a while longer."""

    def submit(self, fn, /, *args, **kwargs):
        future: concurrent.futures.Future = concurrent.futures.Future()
        item = [fn, args, kwargs]

        def work() -> None:
            try:
                future.set_result(item[0](*item[1], **item[2]))
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting side
                future.set_exception(exc)
            time.sleep(0.5)
            item.clear()

        threading.Thread(target=work, daemon=True).start()
        return future


@pytest.fixture
async def slow_executor():
    loop = asyncio.get_running_loop()
    executor = SlowToForget()
    loop.set_default_executor(executor)
    return executor


class Payload:
    pass


async def test_plain_to_thread_still_holds_the_argument_when_it_returns(slow_executor):
    # The race the helper exists for (if this stops holding, the helper is no longer needed).
    payload = Payload()
    alone = sys.getrefcount(payload)
    await asyncio.to_thread(lambda p: None, payload)
    assert sys.getrefcount(payload) > alone


async def test_the_helper_lets_go_of_args_and_kwargs_before_it_returns(slow_executor):
    payload, other = Payload(), Payload()
    alone, other_alone = sys.getrefcount(payload), sys.getrefcount(other)
    result = await to_thread_releasing(lambda p, *, q: (type(p).__name__, q is other), payload, q=other)
    assert result == ("Payload", True)
    assert sys.getrefcount(payload) == alone and sys.getrefcount(other) == other_alone


async def test_the_helper_passes_exceptions_through(slow_executor):
    def fail(_p: Payload) -> None:
        raise ValueError("no")

    payload = Payload()
    alone = sys.getrefcount(payload)
    with pytest.raises(ValueError, match="no"):
        await to_thread_releasing(fail, payload)
    assert sys.getrefcount(payload) <= alone + 1  # at most the traceback's frame, never the thread's
