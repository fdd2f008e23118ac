"""The query parser: words, phrases, exclusions, filters, errors with positions, limits, fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval.errors import EmptyQueryError, QueryError
from retrieval.query import MAX_QUERY_CHARS, MAX_QUERY_WORDS, parse_query, plain_query


def test_free_words_keep_surface_forms_and_tokens():
    q = parse_query("Sparse Autoencoders flow-matching")
    assert [w.surface for w in q.words] == ["sparse", "autoencoders", "flow-matching"]
    assert q.terms == ["spars", "autoencod", "flowmatch", "flow", "match"]


def test_phrase_is_required_and_searched():
    q = parse_query('"offline reinforcement learning" policies')
    assert q.phrases == (("offlin", "reinforc", "learn"),)
    assert q.terms == ["offlin", "reinforc", "learn", "polici"]


def test_smart_quotes_are_quotes():
    assert parse_query("\u201cflow matching\u201d").phrases == (("flow", "match"),)


def test_exclusions():
    q = parse_query('diffusion -image -"large language" -flow-matching')
    assert q.terms == ["diffus"]
    assert q.excluded_terms == ("imag",)
    assert q.excluded_phrases == (("larg", "languag"), ("flow", "match"))


def test_filters_and_their_values():
    q = parse_query('bounds area:theory AUTHOR:"Neel Nanda" area:"large language models" -author:smith')
    assert q.areas == ("theory", "large language models")
    assert q.authors == ("Neel Nanda",)
    assert q.not_authors == ("smith",)
    assert q.terms == ["bound"]


def test_unknown_operator_is_text():
    q = parse_query("foo:bar models")
    assert q.terms == ["foo", "bar", "model"]
    assert not q.areas and not q.authors


def test_hyphen_inside_a_word_is_not_an_exclusion():
    assert parse_query("state-of-the-art").excluded_terms == ()


@pytest.mark.parametrize(
    ("query", "position", "fragment", "example"),
    [
        ('models "unclosed phrase', 7, "quote at character 8 is never closed", 'models "unclosed phrase"'),
        ("“reward model", 0, "character 1 is never closed: end the phrase with ”", "“reward model”"),
        ("models area:", 7, "“area:” at character 8 needs a value", 'models area:"reinforcement learning"'),
        ('models author:""', 7, "“author:” at character 8", "models author:smith"),
        ("models area:   theory", 7, "needs a value right after the colon", "models area:theory"),
        ('x area:"" y', 2, "needs a value", 'x area:"reinforcement learning" y'),
        ("models - theory", 7, "“-” at character 8 must touch the word", "models -theory"),
        ("models -", 7, "“-” at character 8", "models"),
        # closed, these still need a word to search for: the suggestion adds one, so that it runs
        ('area:"theory', 5, "quote at character 6 is never closed", 'learning area:"theory"'),
        ('-"unclosed', 1, "quote at character 2 is never closed", 'learning -"unclosed"'),
    ],
)
def test_malformed_queries_say_what_where_1_based_and_how_to_fix(query, position, fragment, example):
    with pytest.raises(QueryError) as info:
        parse_query(query)
    assert not isinstance(info.value, EmptyQueryError)
    assert info.value.position == position  # 0-based, for interfaces that point at it
    assert fragment in info.value.message and "position" not in info.value.message
    assert info.value.example == example
    assert parse_query(example).terms  # the suggestion is a query that runs
    assert str(info.value) == f"{info.value.message} Try: {example}"


@pytest.mark.parametrize(
    ("query", "example"),
    [
        ('"', None),  # was ``""``: an empty phrase, itself "no word to search for"
        ('"""', None),  # was ``""""``
        ('models "', "models"),  # was ``models ""``: the lone quote goes, the words stay
        ('models " ', "models"),
        ('"" "reward', '"" "reward"'),
        ('-"', None),
        ('area:"', 'learning area:"reinforcement learning"'),
    ],
)
def test_a_suggestion_is_a_query_that_runs_or_none(query, example):
    """Issue 30 item 5: a lone quote was told to try two quotes (an empty phrase), and three quotes
    to try four: suggestions that fail again."""
    with pytest.raises(QueryError) as info:
        parse_query(query)
    assert info.value.example == example
    if example is not None:
        assert parse_query(example).terms


def test_too_long_queries():
    with pytest.raises(QueryError, match="too long") as info:
        parse_query("model " * 200)
    assert info.value.position == MAX_QUERY_CHARS
    with pytest.raises(QueryError, match="too many words"):
        parse_query(" ".join(f"w{i}" for i in range(MAX_QUERY_WORDS + 1)))
    parse_query(" ".join(f"w{i}" for i in range(MAX_QUERY_WORDS)))  # the limit itself is fine


def test_plain_query_ignores_operators():
    q = plain_query('What is "flow matching" -really? area:theory')
    assert q.phrases == () and q.areas == () and q.excluded_terms == ()
    assert "realli" in q.terms and "theori" in q.terms


QUERY_ALPHABET = st.sampled_from(list('ab -":“”\'\\ area author:xyz \t\nÉé模*_') + ["area:", "author:", "-"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=80), st.lists(QUERY_ALPHABET, max_size=40).map("".join)))
def test_parser_never_raises_anything_but_query_errors(text):
    try:
        q = parse_query(text)
    except QueryError as exc:
        assert exc.position is None or 0 <= exc.position <= len(text)
        assert str(exc)
    else:
        assert q.terms


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=60), st.lists(QUERY_ALPHABET, max_size=30).map("".join)))
def test_search_on_arbitrary_text_gives_results_or_query_error(seed_index, text):
    try:
        results = seed_index.search(text, 5)
    except QueryError:
        return
    assert results.total >= len(results.hits)
    for hit in results.hits:
        assert hit.score > 0 and hit.snippet is not None


_PIECES = st.sampled_from(
    ['"', "“", "”", "„", "-", "- ", "area:", "author:", "area:\"", 'author:""', " ", "  ", "the",
     "of", "model", "reward", "x", "模型", "!!", "-model", '"reward model"', ":", "Area:", "AUTHOR: "]
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.lists(_PIECES, min_size=1, max_size=12).map("".join),
        st.lists(_PIECES, min_size=1, max_size=12).map(" ".join),
        st.lists(QUERY_ALPHABET, max_size=40).map("".join),
        st.text(max_size=60),
    )
)
def test_every_suggestion_parses_and_searches_a_word(text):
    """For any malformed query, the suggested correction (when there is one) parses without error
    and has a word to search for: ``Try:`` never shows a query that fails again."""
    try:
        parse_query(text)
    except QueryError as exc:
        if exc.example is not None:
            assert exc.example != text
            assert parse_query(exc.example).terms, exc.example


@pytest.mark.parametrize("query", ["", "   ", "the of and", "!!! ???", '""'])
def test_queries_without_searchable_words(query):
    with pytest.raises(EmptyQueryError, match="no word to search for") as info:
        parse_query(query)
    assert info.value.example is None


@pytest.mark.parametrize("query", ["-reward", "-models -data", "area:theory", '-"reward model"'])
def test_exclusions_and_filters_alone_need_a_word_to_search_for(query):
    with pytest.raises(EmptyQueryError, match="only narrow a search: add a word to search for") as info:
        parse_query(query)
    assert info.value.example == f"learning {query}"
    parse_query(info.value.example)
