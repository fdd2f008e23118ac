"""Small frozen records shared by every layer: papers, hits, answers and ingest reports.

These are the only types that cross the boundary between ``retrieval`` and ``bot``; they are
plain data (no behaviour beyond cheap derived properties) so they pickle, compare and print well.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

AREA_SEPARATOR = " · "


@dataclass(frozen=True, slots=True)
class Paper:
    """One paper of the corpus.

    Attributes:
        id: Short, typeable, stable identifier (content-derived, or the source's own id).
        title: Display title, plain text (the source's, or one derived from the abstract).
        authors: Author names in source order.
        et_al: True when the source list was truncated (a trailing ``等``).
        area: Canonical display spelling of the area, ``"Area · Subarea"``, ``"Area"`` or ``""``.
        abstract: The abstract exactly as the source gave it (LaTeX and markdown included).
        url: Optional link given by the source.
        source: Where the paper was read, as ``"file:line"``.
        title_derived: The source gave no title, so ``title`` was derived from the abstract
            (:func:`retrieval.titles.derive_title`). Such a title is shown, not indexed (the words are
            the abstract's), and an index derives it when the paper is asked for, not when it is
            built. Not part of equality: a saved snapshot of the paper equals it.
    """

    id: str
    title: str
    authors: tuple[str, ...]
    et_al: bool
    area: str
    abstract: str
    url: str | None = None
    source: str = ""
    title_derived: bool = field(default=False, compare=False)

    @property
    def indexed_title(self) -> str:
        """The title as the index reads it: the source's own, or ``""`` for a derived one."""
        return "" if self.title_derived else self.title

    @property
    def top_area(self) -> str:
        """The part of the area before the `` · `` separator."""
        return self.area.split(AREA_SEPARATOR, 1)[0]

    @property
    def sub_area(self) -> str:
        """The part of the area after the `` · `` separator, or ``""``."""
        parts = self.area.split(AREA_SEPARATOR, 1)
        return parts[1] if len(parts) == 2 else ""


@dataclass(frozen=True, slots=True)
class Styled:
    """Display text as data: plain text and the emphasis its source gave (``bot.render`` draws it).

    Attributes:
        text: Plain display text (LaTeX turned into Unicode, no markup characters of the source's
            pairs, spaces collapsed).
        spans: ``(start, end, style)`` in ``text``, sorted; ``style`` is ``"italic"``, ``"bold"``,
            ``"bold italic"``, ``"strike"`` or ``"code"``. Spans nest, never cross.
    """

    text: str
    spans: tuple[tuple[int, int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Snippet:
    """What a hit's snippet is made of, as data: ``bot.render`` turns it into Discord text.

    Attributes:
        text: The paper's abstract as plain display text (LaTeX already turned into Unicode, no
            markdown), its sentences joined by single spaces.
        sentences: ``(start, end)`` spans in ``text`` of the one or two sentences chosen, in text order.
        matches: ``(start, end)`` spans in ``text`` of the query words found in those sentences.
    """

    text: str
    sentences: tuple[tuple[int, int], ...]
    matches: tuple[tuple[int, int], ...]

    @property
    def plain(self) -> str:
        """The chosen sentences as plain text (non-adjacent ones joined by `` … ``)."""
        parts: list[str] = []
        last = -2
        for a, b in self.sentences:
            if parts and a != last + 1:
                parts.append("\u2026")
            parts.append(self.text[a:b])
            last = b
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked search result.

    Attributes:
        paper: The paper.
        score: BM25 score (equal to rank-bm25's ``get_scores`` for the same tokens).
        rank: 1-based rank in the full result list (offset included).
        matched_terms: Query words (as the user typed them, lowercased) that occur in the paper.
        snippet: The best one or two sentences and the query words in them, as spans (render them
            with ``bot.render.snippet``); None when not computed.
    """

    paper: Paper
    score: float
    rank: int
    matched_terms: tuple[str, ...]
    snippet: Snippet | None = None

    @property
    def id(self) -> str:
        """The paper's id."""
        return self.paper.id


@dataclass(frozen=True, slots=True)
class SearchResults:
    """A page of hits plus what is needed to page further.

    Attributes:
        hits: The hits of this page, best first.
        total: How many papers matched in all (after filters): every paper holding a query word.
        offset: Index of the first hit of this page in the full result list.
        query: The query text as given.
    """

    hits: tuple[Hit, ...]
    total: int
    offset: int
    query: str

    def __len__(self) -> int:
        return len(self.hits)


@dataclass(frozen=True, slots=True)
class AnswerSentence:
    """A sentence quoted from a paper as part of an extractive answer."""

    text: str
    paper: Paper
    score: float


@dataclass(frozen=True, slots=True)
class Answer:
    """An extractive answer: the sentences that best answer a question, and the papers used."""

    question: str
    sentences: tuple[AnswerSentence, ...]
    papers: tuple[Paper, ...]


#: Fields whose problem is repaired while the paper still loads (a JSON Lines id over the length a
#: Discord control holds is replaced, a link that is no http(s) link is dropped): a note, not a skip.
REPAIRED_FIELDS = frozenset({"id", "url"})


@dataclass(frozen=True, slots=True)
class SkippedBlock:
    """A block of a corpus file that could not be read, or (``loaded``) a note on one whose paper
    loaded with a field repaired; ``field`` ``file``: the whole file was rejected."""

    path: str
    line: int
    reason: str  # "field: why" (area, authors, abstract, title, block, record, id, url or file)

    @property
    def field(self) -> str:
        """What was wrong: ``area``, ``authors``, ``abstract``, ``block``, ``record``, ``id``, ``url``
        or ``file``."""
        head, sep, _ = self.reason.partition(": ")
        return head if sep and " " not in head else ""

    @property
    def why(self) -> str:
        """The reason without the field."""
        return self.reason.partition(": ")[2] if self.field else self.reason

    @property
    def loaded(self) -> bool:
        """The paper of this block loaded anyway, with the field repaired (see :data:`REPAIRED_FIELDS`)."""
        return self.field in REPAIRED_FIELDS

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass(frozen=True, slots=True)
class IngestReport:
    """What loading (and indexing) a corpus did.

    The counts add up: ``papers + duplicates + len(skipped_blocks) == blocks``. How a report is
    worded (by ``paperbot index`` and the reindex reply) is :mod:`retrieval.report`'s.

    Attributes:
        files: The corpus files opened, in the order read (:attr:`files_read` leaves out the rejected ones).
        papers: Number of distinct papers loaded.
        duplicates: Number of blocks/records dropped because the same paper (the same abstract, or an
            explicit id) was loaded from another one.
        duplicate_details: One human-readable line per duplicate (``"file:line: duplicate of <id>
            (loaded from file:line)"``, or ``"duplicate id <id>"`` when only an explicit id repeats).
        skipped: Everything the parse reported, with its reason: blocks that could not be parsed
            (:attr:`skipped_blocks`), files rejected whole (:attr:`rejected_files`), and notes on papers
            that loaded with a field repaired (:attr:`notes`).
        added: Ids present now but not in the previous index (all ids when there was none: then a
            tuple-like sequence read from the index on demand).
        removed: Ids of the previous index that are gone.
        unchanged: Number of ids present in both.
        build_seconds: Time spent building (0.0 when the cache was used).
        from_cache: True when the index was loaded from a valid cache file.
        cp1252_files: Files that were not valid UTF-8 and were decoded as Windows-1252.
        ignored_files: Files of a corpus folder that were not read because of their extension.
        blocks: Blocks and records read from the files read (papers, duplicates, skipped blocks).
    """

    files: tuple[str, ...]
    papers: int
    duplicates: int = 0
    duplicate_details: tuple[str, ...] = ()
    skipped: tuple[SkippedBlock, ...] = ()
    added: Sequence[str] = ()
    removed: tuple[str, ...] = ()
    unchanged: int = 0
    build_seconds: float = 0.0
    from_cache: bool = False
    extra: dict[str, object] = field(default_factory=dict)
    cp1252_files: tuple[str, ...] = ()
    ignored_files: tuple[str, ...] = ()
    blocks: int = 0

    @property
    def rejected_files(self) -> tuple[str, ...]:
        """Files of :attr:`files` that gave nothing (binary, empty, unreadable, no paper in them)."""
        return tuple(dict.fromkeys(s.path for s in self.skipped if s.field == "file"))

    @property
    def files_read(self) -> tuple[str, ...]:
        """The files papers were read from: :attr:`files` but the rejected ones."""
        rejected = set(self.rejected_files)
        return tuple(f for f in self.files if f not in rejected)

    @property
    def skipped_blocks(self) -> tuple[SkippedBlock, ...]:
        """Blocks of the files read that gave no paper (not the rejected files, not the notes)."""
        return tuple(s for s in self.skipped if not s.loaded and s.field != "file")

    @property
    def notes(self) -> tuple[SkippedBlock, ...]:
        """Notes on papers that loaded with a field repaired (a replaced id, a dropped link)."""
        return tuple(s for s in self.skipped if s.loaded)

    @property
    def noted_papers(self) -> int:
        """How many papers loaded with a note (one may have two)."""
        return len({(s.path, s.line) for s in self.notes})
