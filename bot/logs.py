"""The one logging set-up, done once at start-up by the command line."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def setup_logging(level: str = "INFO", *, file: Path | None = None) -> None:
    """Send every logger to stderr (or, given ``file``, append to that file) in one readable format;
    keep discord.py's HTTP chatter at WARNING.

    Raises:
        OSError: ``file`` cannot be opened for appending (its folder is made if missing).
    """
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler: logging.Handler
    if file is None:
        handler = logging.StreamHandler(sys.stderr)
    else:
        file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(file, encoding="utf-8")
    handler.setFormatter(logging.Formatter(FORMAT, datefmt="%Y-%m-%d %H:%M:%S"))
    handler.addFilter(_drop_voice_warnings)
    root.addHandler(handler)
    root.setLevel(level)
    # discord.http logs every request at DEBUG and rate-limit notes at INFO; the gateway is chatty too.
    logging.getLogger("discord.http").setLevel(logging.WARNING)
    logging.getLogger("discord.gateway").setLevel(max(logging.getLevelName(level), logging.INFO))


def label_process(label: str) -> None:
    """Put ``label`` (e.g. ``shards 0-1``) in every log line of this process: the processes a
    supervisor forks share its stderr."""
    formatter = logging.Formatter(
        FORMAT.replace("%(name)s", f"[{label}] %(name)s"), datefmt="%Y-%m-%d %H:%M:%S"
    )
    for handler in logging.getLogger().handlers:
        handler.setFormatter(formatter)


def _drop_voice_warnings(record: logging.LogRecord) -> bool:
    """paperbot has no voice features; discord.py's "PyNaCl is not installed" warnings only confuse."""
    return not (record.name == "discord.client" and "voice will NOT be supported" in record.getMessage())
