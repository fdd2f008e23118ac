"""One typed, validated settings object: defaults -> config file -> environment -> command-line flags.

Secrets (the Discord token) come only from the environment or a ``.env`` file and never appear in
``repr`` or logs.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from retrieval.index import BM25Params

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = PROJECT_ROOT / "config" / "paperbot.toml"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
BM25_VARIANTS = ("okapi", "l", "plus")


def mask_url(url: str) -> str:
    """A database URL with its password replaced by ``***`` (safe for logs and messages)."""
    return re.sub(r"(://[^/@:]*:)[^/@]*@", r"\1***@", url)


def _database_url(value: object, name: str) -> str:
    text = str(value).strip()
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme not in {"postgresql", "postgres"}:
        raise SettingsError(
            f"{name} must be a postgresql://user:password@host:port/database URL, not {mask_url(text)!r}"
        )
    return text


class SettingsError(Exception):
    """A setting is missing or malformed; the message names the variable and fits on one line."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the bot, the console and the command line are configured with."""

    corpus_path: Path = PROJECT_ROOT / "data" / "corpus"
    #: Lines that are a corpus file's header, besides ``论文检索`` (read as a header, never an area).
    corpus_headers: tuple[str, ...] = ()
    database_path: Path = PROJECT_ROOT / "data" / "paperbot.db"
    index_cache_dir: Path | None = PROJECT_ROOT / "data" / "cache"
    bm25_variant: str = "plus"
    bm25_k1: float = 1.5
    bm25_b: float = 0.75
    bm25_epsilon: float = 0.25
    bm25_delta: float | None = None
    dev_guild_id: int | None = None
    admin_user_ids: frozenset[int] = frozenset()
    page_size: int = 5
    view_timeout: float = 600.0
    cooldown_rate: int = 5
    cooldown_per: float = 30.0
    max_saved_per_user: int = 1000
    max_lists_per_user: int = 50
    #: Gateway shards in all (every process the same); None: discord.py asks Discord how many.
    shard_count: int | None = None
    #: The shards this process runs (of ``shard_count``); None: all of them.
    shard_ids: tuple[int, ...] | None = None
    #: Bot processes ``paperbot run`` forks on this host, this host's shards split among them (1: one
    #: process, no supervisor). See bot/supervisor.py.
    processes: int = 1
    recommend_pool: int = 50
    max_watches_per_user: int = 10
    max_club_papers: int = 200
    club_editor_role_ids: frozenset[int] = frozenset()
    #: The privileged Message Content intent is switched on for the application in the developer portal:
    #: ask Discord for it, so replies to the bot's answers that do not mention it carry their text too.
    message_content_intent: bool = False
    log_level: str = "INFO"
    discord_token: str | None = field(default=None, repr=False)
    #: ``postgresql://user:password@host:port/db``: use PostgreSQL instead of ``database_path``.
    database_url: str | None = field(default=None, repr=False)

    @property
    def bm25(self) -> BM25Params:
        """The ranking parameters as the retrieval library takes them."""
        kwargs: dict[str, Any] = {
            "variant": self.bm25_variant,
            "k1": self.bm25_k1,
            "b": self.bm25_b,
            "epsilon": self.bm25_epsilon,
        }
        if self.bm25_delta is not None:
            kwargs["delta"] = self.bm25_delta
        return BM25Params(**kwargs)

    @property
    def database_target(self) -> str | Path:
        """What the store opens: ``database_url`` when set, else the SQLite file ``database_path``."""
        return self.database_url or self.database_path

    @property
    def database_label(self) -> str:
        """The database for logs and messages (the URL's password masked)."""
        return mask_url(self.database_url) if self.database_url else str(self.database_path)

    def require_token(self) -> str:
        """Return the Discord token or raise SettingsError naming DISCORD_TOKEN."""
        if not self.discord_token:
            raise SettingsError(
                "DISCORD_TOKEN is not set: put it in .env (see config/.env.example) or the environment"
            )
        return self.discord_token


# (config section, key, environment variable, settings field, parser)
def _path(value: object, name: str) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{name} must be a non-empty path")
    return Path(value.strip()).expanduser()


def _opt_path(value: object, name: str) -> Path | None:
    if isinstance(value, str) and not value.strip():
        return None
    return _path(value, name)


def _int(value: object, name: str, lo: int, hi: int) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise SettingsError(f"{name} must be a whole number, got {value!r}") from None
    if not lo <= number <= hi:
        raise SettingsError(f"{name} must be between {lo} and {hi}, got {number}")
    return number


def _float(value: object, name: str, lo: float, hi: float) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {value!r}") from None
    if not lo <= number <= hi:
        raise SettingsError(f"{name} must be between {lo} and {hi}, got {number}")
    return number


def _snowflake(value: object, name: str) -> int:
    text = str(value).strip()
    if not text.isdigit() or not 15 <= len(text) <= 20:
        raise SettingsError(f"{name} must be a Discord id (15-20 digits), got {text!r}")
    return int(text)


def _opt_snowflake(value: object, name: str) -> int | None:
    if value is None or str(value).strip() == "":
        return None
    return _snowflake(value, name)


def _snowflakes(value: object, name: str) -> frozenset[int]:
    items = value if isinstance(value, list) else str(value).replace(" ", "").split(",")
    return frozenset(_snowflake(item, name) for item in items if str(item).strip())


def _opt_count(value: object, name: str) -> int | None:
    text = str(value).strip()
    return None if text in {"", "0"} else _int(text, name, 1, 100_000)


def _shard_ids(value: object, name: str) -> tuple[int, ...] | None:
    """``"0-3"``, ``"0,2,5"``, ``"0-1,4"`` (or a list of ints in the config file) -> sorted unique ids."""
    if isinstance(value, list):
        parts = [str(v) for v in value]
    else:
        parts = [p.strip() for p in str(value).split(",") if p.strip()]
    if not parts:
        return None
    ids: set[int] = set()
    for part in parts:
        low, dash, high = part.partition("-")
        try:
            first, last = int(low), int(high) if dash else int(low)
        except ValueError:
            raise SettingsError(f"{name}: {part!r} is not a shard id or a range such as 0-3") from None
        if first < 0 or last < first:
            raise SettingsError(f"{name}: {part!r} is not a shard id or a range such as 0-3")
        ids.update(range(first, last + 1))
    return tuple(sorted(ids))


def _headers(value: object, name: str) -> tuple[str, ...]:
    """Header lines: a list in the config file, ``|``-separated in the environment."""
    items = value if isinstance(value, list) else str(value).split("|")
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise SettingsError(f"{name} must be a list of header lines, got {item!r}")
        line = " ".join(item.split())
        if len(line) > 200:
            raise SettingsError(f"{name}: a header line is at most 200 characters, got {len(line)}")
        if line and line not in out:
            out.append(line)
    return tuple(out)


def _bool(value: object, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off", ""}:
        return False
    raise SettingsError(f"{name} must be true or false, got {value!r}")


def _choice(options: tuple[str, ...], upper: bool = False) -> Callable[[object, str], str]:
    def parse(value: object, name: str) -> str:
        text = str(value).strip()
        text = text.upper() if upper else text.lower()
        if text not in options:
            raise SettingsError(f"{name} must be one of {', '.join(options)}, got {value!r}")
        return text

    return parse


_Parser = Callable[[object, str], Any]
_KEYS: tuple[tuple[str, str, str, str, _Parser], ...] = (
    ("paths", "corpus", "CORPUS_PATH", "corpus_path", _path),
    ("corpus", "headers", "CORPUS_HEADERS", "corpus_headers", _headers),
    ("paths", "database", "DATABASE_PATH", "database_path", _path),
    ("paths", "index_cache", "INDEX_CACHE_DIR", "index_cache_dir", _opt_path),
    ("bm25", "variant", "BM25_VARIANT", "bm25_variant", _choice(BM25_VARIANTS)),
    ("bm25", "k1", "BM25_K1", "bm25_k1", lambda v, n: _float(v, n, 0.0, 10.0)),
    ("bm25", "b", "BM25_B", "bm25_b", lambda v, n: _float(v, n, 0.0, 1.0)),
    ("bm25", "epsilon", "BM25_EPSILON", "bm25_epsilon", lambda v, n: _float(v, n, 0.0, 10.0)),
    ("bm25", "delta", "BM25_DELTA", "bm25_delta", lambda v, n: _float(v, n, 0.0, 10.0)),
    ("discord", "dev_guild_id", "DEV_GUILD_ID", "dev_guild_id", _opt_snowflake),
    ("discord", "admin_user_ids", "ADMIN_USER_IDS", "admin_user_ids", _snowflakes),
    ("discord", "page_size", "PAGE_SIZE", "page_size", lambda v, n: _int(v, n, 1, 10)),
    ("discord", "view_timeout", "VIEW_TIMEOUT", "view_timeout", lambda v, n: _float(v, n, 10.0, 86400.0)),
    ("discord", "cooldown_rate", "COOLDOWN_RATE", "cooldown_rate", lambda v, n: _int(v, n, 1, 1000)),
    ("discord", "cooldown_per", "COOLDOWN_PER", "cooldown_per", lambda v, n: _float(v, n, 0.0, 86400.0)),
    ("lists", "max_saved_per_user", "MAX_SAVED_PER_USER", "max_saved_per_user",
     lambda v, n: _int(v, n, 1, 1_000_000)),
    ("lists", "max_lists_per_user", "MAX_LISTS_PER_USER", "max_lists_per_user",
     lambda v, n: _int(v, n, 1, 1000)),
    ("discover", "recommend_pool", "RECOMMEND_POOL", "recommend_pool", lambda v, n: _int(v, n, 5, 100)),
    ("discover", "max_watches_per_user", "MAX_WATCHES_PER_USER", "max_watches_per_user",
     lambda v, n: _int(v, n, 1, 10)),
    ("discord", "shard_count", "SHARD_COUNT", "shard_count", _opt_count),
    ("discord", "shard_ids", "SHARD_IDS", "shard_ids", _shard_ids),
    ("discord", "processes", "PROCESSES", "processes", lambda v, n: _int(v, n, 1, 64)),
    ("club", "max_papers", "MAX_CLUB_PAPERS", "max_club_papers", lambda v, n: _int(v, n, 1, 10_000)),
    ("club", "editor_role_ids", "CLUB_EDITOR_ROLE_IDS", "club_editor_role_ids", _snowflakes),
    ("discord", "message_content_intent", "MESSAGE_CONTENT_INTENT", "message_content_intent", _bool),
    ("logging", "level", "LOG_LEVEL", "log_level", _choice(LOG_LEVELS, upper=True)),
)
_PATH_FIELDS = {"corpus_path", "database_path", "index_cache_dir"}


def _read_config(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise SettingsError(f"PAPERBOT_CONFIG: no config file at {path}") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"PAPERBOT_CONFIG: cannot read {path}: {exc}") from None


def load_settings(
    *,
    env: Mapping[str, str] | None = None,
    config_path: str | os.PathLike[str] | None = None,
    overrides: Mapping[str, object] | None = None,
    dotenv: bool = True,
) -> Settings:
    """Resolve the settings: defaults -> config file -> environment (and ``.env``) -> overrides.

    Args:
        env: The environment to read; ``os.environ`` when omitted.
        config_path: A TOML config file; else ``PAPERBOT_CONFIG`` from the environment, else
            ``config/paperbot.toml`` (skipped silently only if that default file is absent).
        overrides: Command-line values keyed by settings field name (``None`` values are ignored).
        dotenv: Load ``.env`` from the working directory and the project root first (never
            overriding variables already set). Only applies when ``env`` is omitted.

    Raises:
        SettingsError: A value is malformed; the message names the variable.
    """
    if env is None:
        if dotenv:
            from dotenv import load_dotenv

            load_dotenv(Path.cwd() / ".env", override=False)
            load_dotenv(PROJECT_ROOT / ".env", override=False)
        env = os.environ

    values: dict[str, Any] = {}
    chosen = config_path or env.get("PAPERBOT_CONFIG") or None
    path = Path(chosen).expanduser() if chosen else DEFAULT_CONFIG
    base = PROJECT_ROOT if path.resolve() == DEFAULT_CONFIG.resolve() else path.resolve().parent
    config = _read_config(path) if (chosen or path.exists()) else {}

    known = {(section, key) for section, key, *_ in _KEYS}
    for section, table in config.items():
        if not isinstance(table, dict):
            raise SettingsError(f"{path}: [{section}] must be a table")
        for key in table:
            if (section, key) not in known:
                raise SettingsError(f"{path}: unknown setting [{section}] {key}")

    for section, key, var, name, parse in _KEYS:
        if key in config.get(section, {}):
            value = parse(config[section][key], f"[{section}] {key} in {path.name}")
            if name in _PATH_FIELDS and isinstance(value, Path) and not value.is_absolute():
                value = base / value
            values[name] = value
        if env.get(var, "").strip():
            values[name] = parse(env[var], var)
    for name, value in (overrides or {}).items():
        if value is not None:
            values[name] = value

    token = env.get("DISCORD_TOKEN", "").strip() or None
    if token is not None and (len(token) < 20 or any(ch.isspace() for ch in token)):
        raise SettingsError("DISCORD_TOKEN does not look like a bot token (too short or has spaces)")
    values["discord_token"] = token
    # Like the token, the URL carries a password: environment (or .env) only, never the config file.
    if env.get("DATABASE_URL", "").strip():
        values["database_url"] = _database_url(env["DATABASE_URL"], "DATABASE_URL")
    settings = replace(Settings(), **values)
    if settings.shard_ids is not None:
        if settings.shard_count is None:
            raise SettingsError("SHARD_IDS needs SHARD_COUNT (every process must agree on the total)")
        count, highest = settings.shard_count, settings.shard_ids[-1]
        if highest >= count:
            raise SettingsError(
                f"SHARD_IDS: shard {highest} does not exist with SHARD_COUNT={count} (ids are 0..{count - 1})"
            )
    if settings.processes > 1:
        shards = settings.shard_ids or range(settings.shard_count or settings.processes)
        if len(shards) < settings.processes:
            raise SettingsError(
                f"PROCESSES={settings.processes} needs at least as many shards, this host has {len(shards)} "
                "(SHARD_COUNT / SHARD_IDS): each process runs shards of its own"
            )
    try:  # BM25Params validates its own ranges; fail at start-up rather than at the first search
        settings.bm25  # noqa: B018
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"[bm25]: {exc}") from None
    return settings


def shard_plan(settings: Settings) -> tuple[int, list[tuple[int, ...]]]:
    """``(shard_count, the shard ids of each process)`` for ``settings.processes`` processes.

    The host's shards (``shard_ids``, else all ``shard_count``; with neither, one shard per process)
    go to the processes in contiguous ranges whose sizes differ by at most one: 4 shards over 2
    processes are ``0-1`` and ``2-3``.
    """
    count = settings.shard_count or settings.processes
    ids = settings.shard_ids or tuple(range(count))
    size, extra = divmod(len(ids), settings.processes)
    plan, start = [], 0
    for i in range(settings.processes):
        end = start + size + (1 if i < extra else 0)
        plan.append(tuple(ids[start:end]))
        start = end
    return count, plan
