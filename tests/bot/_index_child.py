"""Child process of the shared-index tests: one bot process's services (store, index, the shared-index
follower), as ``paperbot run`` opens them, driven over stdin.

Usage: ``python tests/bot/_index_child.py`` with the settings in the environment (``CORPUS_PATH``,
``INDEX_CACHE_DIR``, ``DATABASE_PATH`` or ``DATABASE_URL``). ``PAPERBOT_TEST_SLOW_BUILD=SECONDS`` makes
every index build sleep that long first, so a test can kill a builder in the middle of a build.

Prints one JSON object per line on stdout:

* ``{"built": N}`` each time this process builds an index (N counts them), ``{"log": "..."}`` for the
  bot's INFO (and louder) log lines, ``{"building": ...}`` when a build starts;
* ``{"ready": STATE}`` once the services are open; then one answer per command read from stdin:
  ``state`` → ``{"state": STATE}``, ``reindex [PATH]`` → ``{"reindex": {"papers": N} | {"error": "..."}}``,
  ``search WORDS`` → ``{"search": [ids]}``, ``quit`` → closes the services and exits.

STATE is ``{"generation", "fingerprint", "papers", "corpus", "pid"}``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

# Run as a script: make the project root importable without relying on the caller's environment.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import retrieval.index as index_module  # noqa: E402
from bot.services.registry import open_services  # noqa: E402
from bot.settings import load_settings  # noqa: E402


def emit(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


class _Relay(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            emit({"log": record.getMessage(), "level": record.levelname, "logger": record.name})
        except Exception:  # noqa: S110 - a broken pipe at exit
            pass


def _count_builds() -> None:
    real = index_module._build_and_save  # what open_index calls when it has to build
    slow = float(os.environ.get("PAPERBOT_TEST_SLOW_BUILD", "0") or 0)
    builds = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        emit({"building": os.getpid()})
        if slow:
            time.sleep(slow)
        result = real(*args, **kwargs)
        builds[0] += 1
        emit({"built": builds[0]})
        return result

    index_module._build_and_save = counted


def state(services: Any) -> dict[str, Any]:
    engine = services.context.engine
    return {
        "generation": engine.share.generation if engine.share is not None else None,
        "fingerprint": engine.index.fingerprint,
        "papers": len(engine),
        "corpus": str(engine.corpus_path),
        "pid": os.getpid(),
    }


async def main() -> None:
    handler = _Relay()
    handler.setLevel(logging.INFO)
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    _count_builds()
    settings = load_settings(env=os.environ, dotenv=False)
    services = await open_services(settings)
    emit({"ready": state(services)})
    try:
        while True:
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line or line.strip() == "quit":
                return
            command, _, rest = line.strip().partition(" ")
            if command == "state":
                emit({"state": state(services)})
            elif command == "search":
                results = services.context.engine.search(rest, k=10)
                emit({"search": [hit.paper.id for hit in results.hits]})
            elif command == "reindex":
                admin = services.admin
                try:
                    plan = admin.plan_reindex(rest or None)
                except Exception as exc:  # ReindexInProgress
                    emit({"reindex": {"error": str(exc)}})
                    continue
                outcome = await admin.reindex(plan)
                if outcome.error is not None:
                    emit({"reindex": {"error": outcome.error}})
                else:
                    gone = outcome.reconcile.gone if outcome.reconcile is not None else None
                    emit({"reindex": {"papers": outcome.report.papers, "gone": gone}})
    finally:
        await services.close()


if __name__ == "__main__":
    asyncio.run(main())
