"""The query language: free words, ``"exact phrases"``, ``-exclusions`` and ``area:`` / ``author:`` filters.

Grammar (whitespace separates items; ``“ ”`` are accepted as quotes too)::

    query   := item*
    item    := ["-"] ( '"' phrase '"' | ("area" | "author") ":" value | word )
    value   := bare-text | '"' text '"'

Only ``area:`` and ``author:`` are operators (case-insensitive); any other ``foo:bar`` is plain text.
A leading ``-`` excludes the word, phrase or filter that follows it. Errors carry the 0-based position
of the problem so a user interface can point at it.
"""

from __future__ import annotations

from dataclasses import dataclass

from retrieval.errors import EmptyQueryError, QueryError
from retrieval.tokenize import iter_words, phrase_tokens

__all__ = ["MAX_QUERY_CHARS", "MAX_QUERY_WORDS", "ParsedQuery", "QueryWord", "parse_query", "plain_query"]

#: Longest accepted query, in characters (a Discord slash option allows 6,000; nobody types that much).
MAX_QUERY_CHARS = 1000
#: Most words (searched plus excluded) accepted in one query.
MAX_QUERY_WORDS = 64

_OPEN_QUOTES = '"\u201c\u201d\u201e'
_CLOSE_QUOTES = '"\u201c\u201d'
_OPERATORS = ("area", "author")
EMPTY_MESSAGE = "the query has no searchable word"


@dataclass(frozen=True, slots=True)
class QueryWord:
    """One searched word of the query: its lowercased surface form and its index tokens."""

    surface: str
    tokens: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A parsed query.

    Attributes:
        text: The query as given.
        words: Searched words (free words and the words of required phrases), in query order.
        phrases: Required phrases as phrase-token tuples (a paper must contain each consecutively).
        excluded_terms: Index tokens that a paper must not contain.
        excluded_phrases: Phrase-token tuples that a paper must not contain.
        areas: ``area:`` values (a paper's area or sub-area must match every one).
        authors: ``author:`` values (some author of the paper must match every one).
        not_areas: ``-area:`` values (a paper matching any is dropped).
        not_authors: ``-author:`` values (a paper matching any is dropped).
    """

    text: str
    words: tuple[QueryWord, ...]
    phrases: tuple[tuple[str, ...], ...] = ()
    excluded_terms: tuple[str, ...] = ()
    excluded_phrases: tuple[tuple[str, ...], ...] = ()
    areas: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    not_areas: tuple[str, ...] = ()
    not_authors: tuple[str, ...] = ()

    @property
    def terms(self) -> list[str]:
        """All searched index tokens in order, repeats kept (rank-bm25 scores a repeated term twice)."""
        return [t for w in self.words for t in w.tokens]


def _check_length(text: str) -> None:
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(
            f"the query is too long ({len(text)} characters; at most {MAX_QUERY_CHARS})", MAX_QUERY_CHARS
        )


def _find_close(text: str, start: int) -> int:
    """Index of the quote closing the one at ``start``, or raise QueryError."""
    for i in range(start + 1, len(text)):
        if text[i] in _CLOSE_QUOTES:
            return i
    raise QueryError(f"unclosed quote at position {start}", start)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.words: list[QueryWord] = []
        self.phrases: list[tuple[str, ...]] = []
        self.excluded_terms: list[str] = []
        self.excluded_phrases: list[tuple[str, ...]] = []
        self.filters: dict[tuple[str, bool], list[str]] = {}
        self.word_count = 0

    def _count(self, n: int, position: int) -> None:
        self.word_count += n
        if self.word_count > MAX_QUERY_WORDS:
            raise QueryError(f"the query has too many words (at most {MAX_QUERY_WORDS})", position)

    def _add_text(self, chunk: str, position: int, negated: bool, phrase: bool) -> None:
        words = [w for w in iter_words(chunk) if w.tokens]
        self._count(max(len(words), 1 if negated or phrase else 0), position)
        if negated:
            tokens = tuple(phrase_tokens(chunk))
            if len(tokens) == 1 and not phrase and len(words) == 1 and len(words[0].tokens) == 1:
                self.excluded_terms.append(tokens[0])
            elif tokens:
                # A multi-token exclusion (``-flow-matching``) excludes the sequence, not each token.
                self.excluded_phrases.append(tokens)
            return
        self.words.extend(QueryWord(w.surface, w.tokens) for w in words)
        if phrase:
            tokens = tuple(phrase_tokens(chunk))
            if tokens:
                self.phrases.append(tokens)

    def parse(self) -> ParsedQuery:
        text = self.text
        n = len(text)
        i = 0
        while i < n:
            if text[i].isspace():
                i += 1
                continue
            start = i
            negated = text[i] == "-"
            if negated:
                i += 1
                if i >= n or text[i].isspace():
                    raise QueryError(f"'-' at position {start} must be followed by a word or a phrase", start)
            if text[i] in _OPEN_QUOTES:
                close = _find_close(text, i)
                self._add_text(text[i + 1 : close], start, negated, phrase=True)
                i = close + 1
                continue
            j = i
            while j < n and not text[j].isspace() and text[j] not in _OPEN_QUOTES:
                j += 1
            bare = text[i:j]
            op, sep, value = bare.partition(":")
            if sep and op.casefold() in _OPERATORS:
                op = op.casefold()
                if not value:
                    if j < n and text[j] in _OPEN_QUOTES:
                        close = _find_close(text, j)
                        value = text[j + 1 : close]
                        j = close + 1
                    if not value.strip():
                        raise QueryError(f"{op}: at position {start} needs a value", start)
                self._count(1, start)
                self.filters.setdefault((op, negated), []).append(value.strip())
            else:
                self._add_text(bare, start, negated, phrase=False)
            i = j
        if not self.words:
            raise EmptyQueryError(EMPTY_MESSAGE)
        return ParsedQuery(
            text=text,
            words=tuple(self.words),
            phrases=tuple(self.phrases),
            excluded_terms=tuple(self.excluded_terms),
            excluded_phrases=tuple(self.excluded_phrases),
            areas=tuple(self.filters.get(("area", False), ())),
            authors=tuple(self.filters.get(("author", False), ())),
            not_areas=tuple(self.filters.get(("area", True), ())),
            not_authors=tuple(self.filters.get(("author", True), ())),
        )


def parse_query(text: str) -> ParsedQuery:
    """Parse a search query.

    Args:
        text: The query as typed.

    Returns:
        The parsed query.

    Raises:
        QueryError: Malformed query (unclosed quote, ``area:``/``author:`` without a value, a lone
            ``-``, too long); ``.position`` is the 0-based offset of the problem.
        EmptyQueryError: No searchable word (empty, only stopwords/punctuation, only exclusions or
            filters).
    """
    if not isinstance(text, str):
        raise QueryError("the query must be text", 0)
    _check_length(text)
    return _Parser(text).parse()


def plain_query(text: str) -> ParsedQuery:
    """Read ``text`` as plain words (no operators), as the extractive answer does for questions.

    Args:
        text: A natural-language question.

    Returns:
        A query of its words.

    Raises:
        QueryError: The text is too long.
        EmptyQueryError: No searchable word.
    """
    _check_length(text)
    words = tuple(QueryWord(w.surface, w.tokens) for w in iter_words(text) if w.tokens)
    if not words:
        raise EmptyQueryError(EMPTY_MESSAGE)
    if len(words) > MAX_QUERY_WORDS:
        raise QueryError(f"the question has too many words (at most {MAX_QUERY_WORDS})", None)
    return ParsedQuery(text=text, words=words)
