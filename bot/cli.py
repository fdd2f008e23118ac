"""The ``paperbot`` command: ``run`` (the Discord bot), ``console`` (offline), ``search``, ``ask``, ``index``.

Settings are resolved here once (defaults -> config -> environment -> flags); a bad setting is one
line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from bot.logs import setup_logging
from bot.settings import LOG_LEVELS, Settings, SettingsError, load_settings

log = logging.getLogger(__name__)

USAGE = """\
paperbot run [--processes N]      start the Discord bot (needs DISCORD_TOKEN); N forked shard processes
paperbot console [--out FOLDER] [--log-file FILE]
                                  the bot's commands offline, in this terminal (/export saves to FOLDER;
                                  logs go to FILE, default console.log beside the SQLite database)
paperbot search QUERY [...]       ranked papers (--json, --top K, --queries FILE)
paperbot ask QUESTION [...]       an extractive answer with citations
paperbot index                    (re)build the index and print the ingest report
paperbot db copy --from A --to B  copy everything users saved (lists, watches, servers' /club lists)
                                  from one database to another (path or URL); --config FILE with only
                                  one of them: the configured database is the other
Every command takes --config FILE; all but db copy also --corpus PATH, --database PATH, --log-level LEVEL.
See README.md."""


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="TOML config file (default: config/paperbot.toml)")
    parser.add_argument("--corpus", help="corpus file or folder (overrides CORPUS_PATH)")
    parser.add_argument("--database", help="SQLite file of saved lists (overrides DATABASE_PATH)")
    parser.add_argument("--log-level", choices=LOG_LEVELS, type=str.upper, help="overrides LOG_LEVEL")


def _settings(args: argparse.Namespace, *, processes: int | None = None) -> Settings:
    if processes is not None and not 1 <= processes <= 64:
        raise SettingsError(f"--processes must be between 1 and 64, got {processes}")
    overrides = {
        "corpus_path": Path(args.corpus).expanduser() if args.corpus else None,
        "database_path": Path(args.database).expanduser() if args.database else None,
        "log_level": args.log_level,
        "processes": processes,
    }
    return load_settings(config_path=args.config, overrides=overrides)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``paperbot`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in {"-h", "--help", "help"}:
        print(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]

    if command in {"search", "ask", "index"}:
        # The retrieval command line owns these flags; pull out the shared ones first.
        pre = argparse.ArgumentParser(add_help=False)
        _common(pre)
        args, remaining = pre.parse_known_args(rest)
        try:
            settings = _settings(args)
        except SettingsError as exc:
            print(f"paperbot: {exc}", file=sys.stderr)
            return 2
        setup_logging(settings.log_level if args.log_level else "WARNING")
        from bot import render
        from retrieval import cli as retrieval_cli

        # --corpus goes first: after a "--" in the remaining words it would be read as query text
        forwarded = [command, *(["--corpus", str(settings.corpus_path)] if args.corpus else []), *remaining]
        return retrieval_cli.main(
            forwarded,
            default_corpus=settings.corpus_path,
            params=settings.bm25,
            cache_dir=settings.index_cache_dir,
            render_snippet=render.snippet,
            headers=settings.corpus_headers,
        )

    if command == "db":
        return _db(rest)

    if command not in {"run", "console"}:
        print(f"paperbot: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
        return 2

    parser = argparse.ArgumentParser(prog=f"paperbot {command}")
    _common(parser)
    if command == "console":
        parser.add_argument(
            "--out",
            metavar="FOLDER",
            help="where /export saves its files (default: the working folder; made if missing)",
        )
        parser.add_argument(
            "--log-file",
            metavar="FILE",
            help="where the log goes (default: console.log in the folder of the SQLite database)",
        )
    if command == "run":
        parser.add_argument(
            "--processes",
            type=int,
            metavar="N",
            help="bot processes forked on this host (overrides PROCESSES)",
        )
    args = parser.parse_args(rest)
    try:
        settings = _settings(args, processes=getattr(args, "processes", None))
        if command == "run":
            settings.require_token()
    except SettingsError as exc:
        print(f"paperbot: {exc}", file=sys.stderr)
        return 2

    if command == "console":
        # The console's screen is the conversation: log lines (a failed reindex's WARNING…) go to a
        # file, not over the replies; WARNING and up unless --log-level asks for more.
        log_file = Path(args.log_file).expanduser() if args.log_file else console_log_file(settings)
        try:
            setup_logging(settings.log_level if args.log_level else "WARNING", file=log_file)
        except OSError as exc:
            print(f"paperbot: cannot write the log file {log_file}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        from bot.console import run_console

        return run_console(settings, out_dir=args.out)

    setup_logging(settings.log_level)
    if settings.processes > 1:
        from bot.supervisor import Supervisor

        return Supervisor(settings).run()
    from bot.app import run_bot

    return run_bot(settings)


def console_log_file(settings: Settings) -> Path:
    """The console's log file when --log-file is not given: ``console.log`` in the folder of the
    SQLite database (DATABASE_PATH, data/ by default; also with DATABASE_URL set)."""
    return Path(settings.database_path).expanduser().parent / "console.log"


def _db(argv: Sequence[str]) -> int:
    """``paperbot db copy --from SOURCE --to TARGET``: merge every row of user data of SOURCE into TARGET."""
    parser = argparse.ArgumentParser(
        prog="paperbot db",
        description="Database maintenance. SOURCE and TARGET are SQLite paths or postgresql:// URLs.",
    )
    commands = parser.add_subparsers(dest="action", required=True)
    copy = commands.add_parser(
        "copy",
        help="copy every list, saved item, note, snapshot, watch, watch pause and server reading-list entry, "
        "with their timestamps, in one transaction (rows already in TARGET are kept: safe to rerun)",
    )
    copy.add_argument("--from", dest="source", help="the database to read (not changed)")
    copy.add_argument("--to", dest="target", help="the database to write (created/migrated)")
    copy.add_argument(
        "--config",
        metavar="FILE",
        help="the configured database (this config, the environment, .env) is the side not given",
    )
    args = parser.parse_args(argv)
    setup_logging("WARNING")
    try:
        args.source, args.target = _copy_sides(args.source, args.target, args.config)
    except SettingsError as exc:
        print(f"paperbot: {exc}", file=sys.stderr)
        return 2
    import asyncio

    from bot.settings import mask_url as label  # a path is shown as it is
    from bot.store import CopyConflictError, DatabaseError, StoreError, open_store
    from bot.store.base import is_url
    from bot.store.errors import cause_of

    async def copy_all() -> int:
        if not is_url(args.source) and not Path(args.source).exists():
            print(f"paperbot: cannot copy from {args.source}: no such file", file=sys.stderr)
            return 2
        try:
            source = await open_store(args.source)
        except (StoreError, OSError) as exc:
            where = label(args.source)
            print(f"paperbot: cannot open the database {where}: {cause_of(exc)}", file=sys.stderr)
            return 2
        try:
            try:
                target = await open_store(args.target)
            except (StoreError, OSError) as exc:
                where = label(args.target)
                print(f"paperbot: cannot open the database {where}: {cause_of(exc)}", file=sys.stderr)
                return 2
            try:
                counts = await target.copy_from(source)
            except CopyConflictError as exc:
                sides = f"{label(args.source)} -> {label(args.target)}"
                print(f"paperbot: cannot copy {sides}, nothing was written: {exc}", file=sys.stderr)
                return 2
            except DatabaseError as exc:
                print(f"paperbot: the copy failed, nothing was written: {cause_of(exc)}", file=sys.stderr)
                return 2
            finally:
                await target.close()
        finally:
            await source.close()
        print(f"copied {label(args.source)} -> {label(args.target)}")
        width = max(len(t.rows) for t in counts.tables)
        for t in counts.tables:
            line = f"  {t.rows:<{width}} {t.in_source:>8,} in the source, {t.written:>8,} written"
            print(line + (" (the rest were there)" if t.written < t.in_source else ""))
        return 0

    return asyncio.run(copy_all())


def _copy_sides(source: str | None, target: str | None, config: str | None) -> tuple[str, str]:
    """``(--from, --to)`` of ``db copy``: with ``--config``, the configured database is the one left out.

    Raises:
        SettingsError: Not exactly one side with --config, not both without it, one database twice,
            or a malformed setting.
    """
    if config is None:
        if source is None or target is None:
            raise SettingsError("db copy needs --from and --to (or --config and one of them)")
        return source, target
    if (source is None) == (target is None):
        both = "not both" if source is not None else "one of them"
        raise SettingsError(f"with --config, give --from or --to ({both}): --config names the other side")
    configured = str(load_settings(config_path=config).database_target)
    source, target = source or configured, target or configured
    from bot.settings import mask_url
    from bot.store.base import is_url

    if is_url(source) or is_url(target):
        same = source == target
    else:
        same = Path(source).expanduser().resolve() == Path(target).expanduser().resolve()
    if same:
        raise SettingsError(f"--from and --to are the same database ({mask_url(source)})")
    return source, target


if __name__ == "__main__":
    raise SystemExit(main())
