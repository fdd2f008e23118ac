"""``python -m bot`` starts the Discord bot, like ``paperbot run``."""

import sys

from bot.cli import main

raise SystemExit(main(["run", *sys.argv[1:]]))
