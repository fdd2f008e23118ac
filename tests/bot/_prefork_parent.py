"""A supervised deployment for the supervisor's tests: ``paperbot run``'s supervisor (bot/supervisor.py)
whose children open the bot exactly as ``paperbot run`` does (the PaperBot and its setup hook: store,
index, shared-index follower, cogs) but never connect to Discord.

Usage: ``python tests/bot/_prefork_parent.py STATE_DIR`` with the settings in the environment
(``PROCESSES``, ``SHARD_COUNT``, ``CORPUS_PATH``, ``INDEX_CACHE_DIR``, ``DATABASE_PATH``), and
``PAPERBOT_TEST_PROBE=WORD`` (a word whose hits each child reports).

Each child writes ``STATE_DIR/PID.json`` every 0.1 s: ``{"pid", "ppid", "shard_ids", "shard_count",
"generation", "fingerprint", "papers", "probe" (hits of the probe word), "inherited" (it serves the
index the supervisor mapped), "builds" (index builds in this process)}``; a file
``STATE_DIR/PID.reindex`` makes that child reindex (the result goes to ``"reindexed"``). On SIGTERM a
child closes the bot, writes ``STATE_DIR/PID.closed`` and exits 0.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import retrieval.index as index_module  # noqa: E402
from bot.errors import StartupError  # noqa: E402
from bot.logs import setup_logging  # noqa: E402
from bot.settings import Settings, load_settings  # noqa: E402
from bot.supervisor import Supervisor  # noqa: E402

STATE = Path(sys.argv[1]) if __name__ == "__main__" else Path(".")
BUILDS = [0]


def _count_builds() -> None:
    real = index_module._build_and_save  # what open_index calls when it has to build

    def counted(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        BUILDS[0] += 1
        return result

    index_module._build_and_save = counted


def _write(path: Path, payload: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload), encoding="utf-8")
    os.replace(tmp, path)


def child(settings: Settings) -> int:
    """A bot process without the gateway: what ``run_bot`` would serve, driven through STATE."""
    from bot.app import PaperBot

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        bot = PaperBot(settings, sync_commands=False)
        await bot._async_setup_hook()  # what ``async with bot`` does before the login
        try:
            await bot.setup_hook()  # what the login runs
        except StartupError as exc:  # as bot.app.serve reports it
            print(f"paperbot cannot start: {exc}", file=sys.stderr)
            await bot.close()
            return 2
        engine = bot.services.context.engine
        me = os.getpid()
        reindexed: Any = None
        probe = os.environ.get("PAPERBOT_TEST_PROBE", "sparse")
        try:
            while not stop.is_set():
                order = STATE / f"{me}.reindex"
                if order.exists():
                    order.unlink()
                    try:
                        report = await engine.reindex()
                        reindexed = {"papers": report.papers}
                    except Exception as exc:  # ReindexInProgress, ReindexFailed
                        reindexed = {"error": str(exc)}
                _write(STATE / f"{me}.json", {
                    "pid": me, "ppid": os.getppid(), "shard_ids": list(settings.shard_ids or ()),
                    "shard_count": settings.shard_count, "processes": settings.processes,
                    "generation": engine.share.generation if engine.share else None,
                    "fingerprint": engine.index.fingerprint, "papers": len(engine),
                    "probe": engine.search(probe, k=5).total, "inherited": engine.inherited,
                    "builds": BUILDS[0], "reindexed": reindexed, "cogs": len(bot.cogs),
                })  # fmt: skip
                try:
                    await asyncio.wait_for(stop.wait(), 0.1)
                except TimeoutError:
                    pass
        finally:
            await bot.close()
        (STATE / f"{me}.closed").write_text("closed")
        return 0

    return asyncio.run(main())


if __name__ == "__main__":
    setup_logging("INFO")
    _count_builds()
    settings = load_settings(env=os.environ, dotenv=False)
    restart = float(os.environ.get("PAPERBOT_TEST_RESTART", "0.2"))
    supervisor = Supervisor(settings, target=child, restart_first=restart, stop_grace=20.0)
    (STATE / "supervisor.pid").write_text(str(os.getpid()))
    raise SystemExit(supervisor.run())
