"""What the store takes and returns: plain frozen dataclasses, limits and the naming rules.

No I/O here. Every backend returns these records, so callers never see which database runs.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.store.errors import InvalidListNameError, NoteTooLongError, NotSavedError

#: The list used when a command names none. Created on the first save into it.
DEFAULT_LIST = "reading"
#: Longest list name, in characters, after trimming.
LIST_NAME_MAX = 32
#: Longest note, in characters, after trimming.
NOTE_MAX = 500
#: Default caps (arguments of :func:`bot.store.open_store`).
MAX_SAVED_PER_USER = 1000
MAX_LISTS_PER_USER = 50
#: Largest page :meth:`bot.store.Store.get_list` returns.
MAX_PAGE = 1000
#: Longest paper id the store accepts.
PAPER_ID_MAX = 200


# -------------------------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class PaperSnapshot:
    """What the store keeps of a saved paper (a row of its ``papers`` or ``imported`` table).

    Attributes:
        paper_id: The paper's id.
        title, authors, et_al, area, abstract, url: The paper as it was when saved (or last reconciled).
    """

    paper_id: str
    title: str
    authors: tuple[str, ...]
    et_al: bool
    area: str
    abstract: str
    url: str | None


@dataclass(frozen=True, slots=True)
class SavedItem(PaperSnapshot):
    """One paper in one of a user's lists: the snapshot of the paper and the user's side of it.

    The snapshot comes from the corpus (refreshed on save and on reconcile) whenever paperbot has ever
    seen the paper in its corpus; only otherwise from the user's own import (``imported=True``), which
    no other user ever sees.

    Attributes:
        list_name: Display name of the list holding it.
        note: The user's note (``""`` when none).
        saved_at: When it was saved into this list (tz-aware UTC).
        in_corpus: False when the paper is not in the corpus (the snapshot is what remains).
        imported: True when the fields shown come from this user's import file, not from the corpus.
    """

    list_name: str
    note: str
    saved_at: datetime
    in_corpus: bool
    imported: bool = False


@dataclass(frozen=True, slots=True)
class SavedPage:
    """A page of one list, newest save first, plus what is needed to page further."""

    items: tuple[SavedItem, ...]
    total: int
    offset: int
    list_name: str

    def __len__(self) -> int:
        return len(self.items)


@dataclass(frozen=True, slots=True)
class SaveResult:
    """What :meth:`bot.store.Store.save_paper` did.

    Attributes:
        created: False when the paper was already in the list (the note may have been updated).
        list_name: Display name of the list it is in.
        list_created: True when the list did not exist and was created by this save.
    """

    created: bool
    list_name: str
    list_created: bool = False


@dataclass(frozen=True, slots=True)
class ListInfo:
    """One of a user's lists."""

    name: str
    count: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class StoreStats:
    """Whole-database counts (for an owner's status command; no per-user data)."""

    saved_items: int
    users: int
    lists: int
    snapshots: int
    missing_from_corpus: int


@dataclass(frozen=True, slots=True)
class ImportedItem(PaperSnapshot):
    """One validated record of an import file: the snapshot, the note, and when it was saved (None
    when the file does not say). Built by :mod:`bot.export`; the store only merges it."""

    note: str
    saved_at: datetime | None


@dataclass(frozen=True, slots=True)
class ImportedList:
    """A list of an import file (``name`` None: a bare array of items, list chosen by the caller)."""

    name: str | None
    created_at: datetime | None
    items: tuple[ImportedItem, ...]


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import did: items added, duplicates skipped, records rejected (why)."""

    added: int
    skipped: int
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ForgetResult:
    """What :meth:`bot.store.Store.forget_user` did: rows deleted per table (snapshots: those no one
    else saved; watches: the watches and the pause), and the server reading-list entries it kept for
    their server but no longer naming the user (``club_entries``, not deleted: not in ``total``)."""

    saved_items: int
    lists: int
    snapshots: int
    watches: int = 0
    club_entries: int = 0

    @property
    def total(self) -> int:
        """All rows deleted."""
        return self.saved_items + self.lists + self.snapshots + self.watches


@dataclass(frozen=True, slots=True)
class UserFootprint:
    """The rows that name a user, per table (see :meth:`bot.store.Store.user_footprint`).

    ``imported``: the user's own fields of papers imported from a file; ``club_entries``: papers the
    user added to a server's reading list (the ``added by`` of the entry).
    """

    lists: int
    saved_items: int
    imported: int
    watches: int
    watch_pauses: int
    club_entries: int

    @property
    def total(self) -> int:
        """Every row that names the user."""
        deleted = self.lists + self.saved_items + self.imported + self.watches + self.watch_pauses
        return deleted + self.club_entries


#: Most papers in one server's /club list unless the caller gives another cap.
MAX_CLUB_PAPERS = 200


@dataclass(frozen=True, slots=True)
class ClubEntry(PaperSnapshot):
    """One paper of a server's /club reading list: its snapshot, the note, who added it and when."""

    note: str
    added_by: int
    added_at: datetime


#: Most watches per user unless the store is opened with another cap.
MAX_WATCHES_PER_USER = 10
#: Longest watch query, in characters.
WATCH_QUERY_MAX = 300


@dataclass(frozen=True, slots=True)
class WatchInfo:
    """One saved watch: a query (the query language) and the /search filters, numbered per store."""

    id: int
    user_id: int
    query: str
    area: str
    author: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class IndexGeneration:
    """The index every process on one database serves (the ``index_generation`` row).

    Attributes:
        generation: Counts up by one per publication (a start that built or found a new corpus, a
            reindex).
        corpus_path: The corpus it was built from (absolute).
        params: The ranking parameters' key (``BM25Params.key()``): a process only follows its own.
        cache_file: The memory-mapped ``.pbindex`` file to open (absolute).
        fingerprint: The corpus fingerprint the file must carry (corpus content + settings).
        papers: How many papers it holds.
        built_by: ``host:pid`` of the process that published it.
        published_at: When.
        reconciled: The last generation whose reconcile of saved snapshots ran.
    """

    generation: int
    corpus_path: str
    params: str
    cache_file: str
    fingerprint: str
    papers: int
    built_by: str
    published_at: datetime
    reconciled: int


@dataclass(frozen=True, slots=True)
class ReconcileResult:
    """What :meth:`bot.store.Store.reconcile` changed.

    Attributes:
        gone: Saved paper ids that were in the corpus and now are not (sorted).
        returned: Saved paper ids that were missing and are back (sorted).
        refreshed: Snapshots whose metadata (title, authors, area, abstract, url) changed.
    """

    gone: list[str]
    returned: list[str]
    refreshed: int

    def __str__(self) -> str:
        """A one-line summary for logs (the id lists can be long)."""
        return f"{len(self.gone)} gone, {len(self.returned)} returned, {self.refreshed} refreshed"


@dataclass(frozen=True, slots=True)
class CopiedTable:
    """One table of :meth:`bot.store.Store.copy_from`.

    Attributes:
        table: Its name in the schema.
        rows: What one row is, for people ("saved items", "watches"...).
        in_source: Rows the source holds.
        written: Rows written (rows already in the target are kept, so a second copy writes 0).
    """

    table: str
    rows: str
    in_source: int
    written: int


@dataclass(frozen=True, slots=True)
class CopyCounts:
    """What :meth:`bot.store.Store.copy_from` did to every table of user data (in the order of
    ``bot.store.sql.TABLES``)."""

    tables: tuple[CopiedTable, ...]

    def __getitem__(self, table: str) -> CopiedTable:
        """The counts of ``table`` (its name in the schema)."""
        for counts in self.tables:
            if counts.table == table:
                return counts
        raise KeyError(table)


# ---------------------------------------------------------------------------------------- validation

_SPACE_RUN = re.compile(" {2,}")
_NAME_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Mn", "Mc"})


def clean_text(text: str) -> str:
    """Replace lone surrogates (JSON can carry them) so the text always encodes as UTF-8; drop NULs
    (PostgreSQL text cannot hold them)."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def normalize_list_name(name: str) -> str:
    """Return the display form of a list name, or raise :class:`InvalidListNameError`.

    Rules: NFC-normalised, trimmed, runs of spaces collapsed; 1-32 characters; only letters, digits,
    spaces, ``-`` and ``_``, with at least one letter or digit. Uniqueness is case-insensitive (see
    :func:`list_key`) but the name is shown as first written.
    """
    if not isinstance(name, str):
        raise InvalidListNameError("A list name must be text.")
    text = _SPACE_RUN.sub(" ", unicodedata.normalize("NFC", name).strip())
    if not text:
        raise InvalidListNameError("A list name cannot be empty.")
    if len(text) > LIST_NAME_MAX:
        raise InvalidListNameError(f"A list name can be at most {LIST_NAME_MAX} characters long.")
    if not all(ch in " -_" or unicodedata.category(ch) in _NAME_CATEGORIES for ch in text):
        raise InvalidListNameError("A list name may only use letters, digits, spaces, “-” and “_”.")
    if not any(ch.isalnum() for ch in text):
        raise InvalidListNameError("A list name needs at least one letter or digit.")
    return text


def list_key(display_name: str) -> str:
    """The case-insensitive identity of a (normalised) list name."""
    return unicodedata.normalize("NFC", display_name.casefold())


def normalize_note(note: str) -> str:
    """Return a note trimmed, or raise :class:`NoteTooLongError` past :data:`NOTE_MAX` characters."""
    if not isinstance(note, str):
        raise NoteTooLongError("A note must be text.")
    text = clean_text(note).strip()
    if len(text) > NOTE_MAX:
        raise NoteTooLongError(f"A note can be at most {NOTE_MAX} characters long (yours has {len(text)}).")
    return text


def clean_paper_id(paper_id: str) -> str:
    """Trim a user-typed paper id; an empty or absurd id can never be saved, so say "not saved"."""
    if not isinstance(paper_id, str):
        raise TypeError(f"paper id must be a str, not {type(paper_id).__name__}")
    text = paper_id.strip()
    if not text or len(text) > PAPER_ID_MAX:
        raise NotSavedError(text[:40] or "(empty)")
    return clean_text(text)


def check_user(user_id: int) -> int:
    """Reject ids that are not ints in the 64-bit range (a caller bug, hence not a StoreError)."""
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        raise TypeError(f"user id must be an int, not {type(user_id).__name__}")
    if not -(2**63) <= user_id < 2**63:
        raise ValueError(f"user id {user_id} is outside the 64-bit range")
    return user_id


def utc(moment: datetime) -> datetime:
    """A moment as tz-aware UTC (naive means UTC)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def iso(moment: datetime) -> str:
    """Fixed-width ISO-8601 UTC text (microseconds), so that text order is time order."""
    return utc(moment).isoformat(timespec="microseconds")
