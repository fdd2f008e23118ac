"""Errors the store raises on purpose. ``str()`` is always a short sentence fit for whoever reads it.

Two audiences: a Discord user (no paths, no URLs) and the operator starting the bot (name the
database and the cause). An error raised while opening, or any :class:`DatabaseError`, carries
``target`` (the file, or the URL with its password masked) and ``cause`` (what went wrong, in words),
so start-up can print one line ``cannot write the database TARGET: CAUSE``.
"""

from __future__ import annotations

from pathlib import Path


class StoreError(Exception):
    """Base of every error the store raises on purpose; ``str()`` is a short sentence fit for a user."""


class DatabaseError(StoreError):
    """The database cannot be used: newer schema, busy for too long, closed, or an I/O failure.

    Attributes:
        target: The file or (password-masked) URL, when known; for operator messages only.
        cause: What went wrong, in words (e.g. "the file is read-only"); for operator messages only.
    """

    def __init__(self, message: str, *, target: str | None = None, cause: str | None = None) -> None:
        super().__init__(message)
        self.target = target
        self.cause = cause or message


def cause_of(exc: BaseException) -> str:
    """What went wrong, on one line: a :class:`DatabaseError`'s ``cause``, else the error's text."""
    cause = getattr(exc, "cause", None) or str(exc)
    return " ".join(str(cause).split()).rstrip(".")


class DatabaseBusyError(DatabaseError):
    """Another process held the write lock for longer than the busy timeout; retrying may work."""


class DatabaseUnavailableError(DatabaseError):
    """The database server cannot be reached (down, restarting, network); retrying later may work."""

    MESSAGE = "The database is unavailable, try again in a moment."

    def __init__(
        self, message: str = MESSAGE, *, target: str | None = None, cause: str | None = None
    ) -> None:
        # (``message`` only so that copy.copy works: each caller of a failed batch gets its own copy)
        super().__init__(message, target=target, cause=cause)


class DatabaseCorruptError(DatabaseError):
    """The file is not a SQLite database or fails ``PRAGMA quick_check``; it was left untouched."""

    def __init__(self, path: Path, detail: str, *, at_open: bool = True) -> None:
        if at_open:  # seen by the operator starting the bot: name the file and what to do
            message = (
                f"The saved-papers database {path} is damaged or not a database ({detail}); "
                "it was left untouched: restore a backup or move it aside."
            )
        else:  # seen by a Discord user: no server paths
            message = "The saved-papers database is damaged; please tell the bot's owner."
        super().__init__(message, target=str(path), cause=f"damaged or not a database ({detail})")
        self.path = path
        self.detail = detail


class CopyConflictError(StoreError):
    """A copy would have to change rows the target already holds (another watch under one of the
    source's watch numbers); nothing was written.

    Attributes:
        watch_ids: The source's watch numbers the target gives to other watches.
    """

    def __init__(self, message: str, *, watch_ids: tuple[int, ...]) -> None:
        super().__init__(message)
        self.watch_ids = watch_ids


class InvalidListNameError(StoreError, ValueError):
    """A list name breaks the naming rules (1-32 letters, digits, spaces, ``-`` or ``_``)."""


class ListExistsError(InvalidListNameError):
    """Creating or renaming would give the user two lists with the same (case-insensitive) name."""


class ListNotFoundError(StoreError, LookupError):
    """The user has no list of that name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"You have no list named “{name}”.")
        self.name = name


class ListLimitError(StoreError):
    """The user already has the most lists allowed."""


class SavedLimitError(StoreError):
    """The user already has the most saved items allowed."""


class ClubLimitError(StoreError):
    """The server's reading list already holds the most papers allowed."""


class WatchLimitError(StoreError):
    """The user already has the most watches allowed."""


class WatchNotFoundError(StoreError, LookupError):
    """The user has no watch with that number."""


class NoteTooLongError(StoreError, ValueError):
    """A note is longer than the store's note limit."""


class NotSavedError(StoreError, LookupError):
    """The paper is not saved (in that list, or at all) for this user."""

    def __init__(self, paper_id: str, list_name: str | None = None) -> None:
        where = f"in your list “{list_name}”" if list_name else "in any of your lists"
        super().__init__(f"Paper {paper_id} is not saved {where}.")
        self.paper_id = paper_id
        self.list_name = list_name


class ImportFormatError(StoreError, ValueError):
    """An import document is not paperbot JSON at all (bad JSON, wrong shape, too large)."""
