"""``python -m bot`` starts the Discord bot, like ``paperbot run``."""

from bot.cli import main

raise SystemExit(main(["run", *__import__("sys").argv[1:]]))
