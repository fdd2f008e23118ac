"""The query language: free words, ``"exact phrases"``, ``-exclusions`` and ``area:`` / ``author:`` filters.

Grammar (whitespace separates items; ``“ ”`` are accepted as quotes too)::

    query   := item*
    item    := ["-"] ( '"' phrase '"' | ("area" | "author") ":" value | word )
    value   := bare-text | '"' text '"'

Only ``area:`` and ``author:`` are operators (case-insensitive); any other ``foo:bar`` is plain text.
A leading ``-`` excludes the word, phrase or filter that follows it. Errors say what is wrong in words,
counting characters from 1, carry the 0-based ``position`` of the problem so a user interface can point
at it, and an ``example``: the query corrected, when a correction is clear.
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
_QUOTE_PAIRS = {"\u201c": "\u201d", "\u201e": "\u201d"}
EMPTY_MESSAGE = "The query has no word to search for, only common words (the, of, and) or punctuation."
ONLY_NARROWING_MESSAGE = (
    "Exclusions (-word) and filters (area:, author:) only narrow a search: add a word to search for."
)
#: The word put in front of a query that only excludes or filters, to show a corrected example.
EXAMPLE_WORD = "learning"
_OPERATOR_EXAMPLES = {"area": 'area:"reinforcement learning"', "author": "author:smith"}


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
            f"The query is too long: {len(text):,} characters, at most {MAX_QUERY_CHARS:,}.", MAX_QUERY_CHARS
        )


def _find_close(text: str, start: int) -> int:
    """Index of the quote closing the one at ``start``, or raise QueryError."""
    for i in range(start + 1, len(text)):
        if text[i] in _CLOSE_QUOTES:
            return i
    closer = _QUOTE_PAIRS.get(text[start], '"')
    # Closing a quote with nothing after it would suggest an empty phrase: drop the quote instead.
    fixed = text.rstrip() + closer if text[start + 1 :].strip() else text[:start]
    raise QueryError(
        f"The quote at character {start + 1} is never closed: end the phrase with {closer}.",
        start,
        example=" ".join(fixed.split()) or None,
    )


def _next_item(text: str, end: int) -> int | None:
    """Index of the next non-space character at or after ``end``, or None."""
    for k in range(end, len(text)):
        if not text[k].isspace():
            return k
    return None


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
            raise QueryError(
                f"The query has too many words: at most {MAX_QUERY_WORDS}, and word "
                f"{MAX_QUERY_WORDS + 1} starts at character {position + 1}.",
                position,
                example=self.text[:position].rstrip() or None,
            )

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
                    after = _next_item(text, i)
                    # "models - theory" meant -theory; a dash at the end is dropped.
                    fixed = text[:start] + ("-" + text[after:] if after is not None else "")
                    raise QueryError(
                        f"The “-” at character {start + 1} must touch the word or \"phrase\" to leave "
                        "out, as in -quantum.",
                        start,
                        example=" ".join(fixed.split()) or None,
                    )
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
                    quoted = j < n and text[j] in _OPEN_QUOTES
                    if quoted:
                        close = _find_close(text, j)
                        value = text[j + 1 : close]
                        j = close + 1
                    if not value.strip():
                        after = _next_item(text, j)
                        if not quoted and after is not None and text[after] not in _OPEN_QUOTES:
                            fixed = text[:j] + text[after:]  # "area:   theory" meant area:theory
                        else:
                            minus = "-" if negated else ""
                            fixed = f"{text[:start]}{minus}{_OPERATOR_EXAMPLES[op]}{text[j:]}"
                        raise QueryError(
                            f"“{op}:” at character {start + 1} needs a value right after the colon, "
                            f"as in {_OPERATOR_EXAMPLES[op]}.",
                            start,
                            example=" ".join(fixed.split()),
                        )
                self._count(1, start)
                self.filters.setdefault((op, negated), []).append(value.strip())
            else:
                self._add_text(bare, start, negated, phrase=False)
            i = j
        if not self.words:
            if self.excluded_terms or self.excluded_phrases or self.filters:
                raise EmptyQueryError(
                    ONLY_NARROWING_MESSAGE, example=f"{EXAMPLE_WORD} {' '.join(text.split())}"
                )
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
            ``-``, too long); ``.position`` is the 0-based offset of the problem, ``.example`` a
            corrected query when one is clear.
        EmptyQueryError: No searchable word (empty, only stopwords/punctuation, only exclusions or
            filters).
    """
    if not isinstance(text, str):
        raise QueryError("The query must be text.", 0)
    _check_length(text)
    try:
        return _Parser(text).parse()
    except QueryError as exc:
        exc.example = _runnable(exc.example, text)
        raise


#: How many corrections in a row a suggestion may take (an unclosed quote that, closed, leaves a filter
#: alone, which then needs a word: two); past that there is no suggestion.
_MAX_FIXES = 4


def _runnable(example: str | None, text: str) -> str | None:
    """``example`` if it is a query that runs (parses, with a word to search for), else the query its
    own error suggests, and so on; None when no suggestion runs. A "Try:" must never fail again."""
    for _ in range(_MAX_FIXES):
        if not example or example == text or len(example) > MAX_QUERY_CHARS:
            return None
        try:
            _Parser(example).parse()
        except QueryError as exc:
            example = exc.example
        else:
            return example
    return None


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
        raise QueryError(f"The question has too many words: at most {MAX_QUERY_WORDS}.", None)
    return ParsedQuery(text=text, words=words)
