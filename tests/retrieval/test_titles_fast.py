"""The title rules' shortcuts equal what they stand for.

retrieval/text.py skips a regex when a cheap test (a word, a prefix, a character) shows it cannot
match, and matches some patterns in a faster but equal form. Each shortcut is checked here against
its definition (the plain regex or the rule as first written), on the bundled and pasted abstracts
at every position where it is used and on generated text made of the words and marks each one
tells apart: a shortcut that skipped a real match, or answered differently, fails.
"""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval import keyphrase
from retrieval import titles as text
from tests.support.compiled import require_compiled
from tests.support.corpora import ICLR, bundled_and_pasted_abstracts, iclr_abstracts

ROOT = Path(__file__).resolve().parents[2]

# the patterns as first written (the faster forms in text.py must find the same)
_NAME = r"[A-Z][a-z]*[A-Z0-9][\w+*-]*|[A-Z][a-z]+-[A-Z][\w-]*"
_CUT = (
    r",\s*(?:which|that|where|while|and|but|thus|so|achieving|allowing|enabling|leading|resulting)\b"
    r"|\s(?:which|that|where|whereby|while|whereas|so\s+that|such\s+that|because|since|achieving|"
    r"allowing|enabling|in\s+order\s+to|thereby)\b|[;:.!?](?:\s|$)|\s[-–—]\s"
)
_STATEMENT = (
    r"(?:(?:first|then|further|also|here|thus|therefore|newly|formally|systematically|empirically|"
    r"theoretically) )?(?P<v>propos|introduc|present|develop|design|devis|build|construct|creat|contribut|"
    r"releas|stud(?:y|ie)|investigat|show|demonstrat|analy[sz]|explor|address|tackl|consider|examin|"
    r"revisit|formulat|establish|provid|offer|deriv|prov|identif(?:y|ie)|leverag|focus(?:e)?(?:s)? on|"
    r"put(?:s)? forward|characteri[sz]|unveil|curat|collect|pioneer)(?:e?s|e)?(?=[\s:,])[\s:]*"
)


def _head_as_first_written(abstract: str) -> str:
    head = abstract[: text._TITLE_HEAD]
    if len(abstract) > text._TITLE_HEAD:
        head = head[: head.rfind(" ") + 1] or head
    if "\n" in head or "\t" in head:
        head = head.replace("\n", " ").replace("\t", " ")
    if "\\" in head or "**" in head or "__" in head:
        head = text._T_MARKUP.sub(text._t_markup_words, head)
        if "\\" in head:
            head = text._T_MARKUP.sub(text._t_markup_words, head)
        head = text._T_DOLLAR_WORD.sub(r"\1", head)
    return " " + text._t_unglue(head)


def _introduced_as_first_written(head: str, at: int) -> re.Match[str] | None:
    n = text._T_INTRODUCED.match(head, at)
    if n is not None and n.group("k") and n.group("s").endswith("ed") and head[at - 11 : at - 6] != " our ":
        return None
    return n


def _same(a: re.Match[str] | None, b: re.Match[str] | None) -> bool:
    return (a is None) == (b is None) and (a is None or (a.span(), a.groups()) == (b.span(), b.groups()))


_WORDS = (
    "we propose proposed introduce introducing present a an the The A An our Our that how way to "
    "novel Novel new simple general first straightforward straightforwardness several two three "
    "framework method model approach algorithm benchmark dataset methods models "
    "particle guidance extension learning graph sparse attention and yet then thus further also "
    "study studies show shows demonstrate focus focuses on put puts forward characterize analyze "
    "FooNet GraphChef ClimODE LLM-CXR Mayfly PARL T-MARS iTransformer dLLMs SAEs MOO X XY "
    "\\textbf{DoLa} {\\bf FreeDyG} **BaDExpert** __init__ \\emph{x} \\mathrm{d} \\mathcal{B} $\\alpha$ "
    "$\\textit{Open-endedness via Models}$ $x$ \\cite{a} ſeveral K ǅemal ﬁrst Ñandú İs ıt naïve"
).split()
_SEPS = [" ", " ", " ", " ", ", ", ". ", ": ", "; ", " (", ") ", ", a ", ", an ", "\u00a0", "\u2009", "\x1c",
         " “", "” ", " *", "* ", "-", " — ", ".", "\n", "\t", ",,"]


@st.composite
def texts(draw) -> str:
    n = draw(st.integers(min_value=0, max_value=40))
    parts = []
    for _ in range(n):
        parts.append(draw(st.sampled_from(_WORDS)))
        parts.append(draw(st.sampled_from(_SEPS)))
    return "".join(parts)


_abstracts = bundled_and_pasted_abstracts


def _hits_by_regex(lower: str) -> list[tuple[int, int, int]]:
    return [(m.start(), m.end(), text._T_MATCH_KIND[m.group()]) for m in text._T_KEYWORDS.finditer(lower)]


@pytest.fixture(scope="module")
def scan():
    """The compiled keyword scan (retrieval/_titlescan.c); under CI it must be built."""
    return require_compiled(text._t_scan(), "retrieval._titlescan is not built (pip install -e .)")


def _check_scan(sample: str) -> None:
    for lower in (sample, text._t_lower(text._t_head(sample)), sample.lower()):
        assert text._t_keyword_hits(lower) == _hits_by_regex(lower), lower


_KEYWORD_PARTS = list(text._T_KEYWORD_WORDS) + [
    "wee", "th", "to", "as", "referred", "refer", "calle", "propose", "présent", "ĳ", "é", "we\u0100",
    "𝒳", "We", "THIS", "",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([" ", "", "  ", "\u00a0", ","]), st.sampled_from(_KEYWORD_PARTS)),
                max_size=30))
def test_the_compiled_keyword_scan_finds_what_the_regex_finds(scan, parts):
    _check_scan("".join(a + b for a, b in parts))


def test_the_compiled_keyword_scan_on_the_bundled_and_pasted_abstracts(scan):
    for abstract in _abstracts():
        _check_scan(abstract)


def _check_site_hits(sample: str) -> None:
    """site_hits() is _t_site_hits' loop, and _t_sites finds the same over every keyword hit."""
    for lower in (sample, sample.lower()):
        assert text._t_site_hits_c(lower) == _site_hits_by_loop(lower), lower
    for head in (sample, text._t_head(sample)):
        lower = text._t_lower(head)
        assert text._t_site_hits_c(lower) == _site_hits_by_loop(lower), lower
        assert text._t_sites(head, lower) == _sites_over_every_hit(head, lower), head


def _site_hits_by_loop(lower: str) -> list[tuple[int, int, int]]:
    saved = text._t_site_hits_c
    text._t_site_hits_c = None
    try:
        return text._t_site_hits(lower)
    finally:
        text._t_site_hits_c = saved


def _sites_over_every_hit(head: str, lower: str):  # noqa: ANN202
    saved = text._t_site_hits
    text._t_site_hits = text._t_keyword_hits  # (what _t_sites read before the filter)
    try:
        return text._t_sites(head, lower)
    finally:
        text._t_site_hits = saved


_SITE_PARTS = _KEYWORD_PARTS + [
    "paper", "work", "study", "article", "papers", "propose", "proposes", "show", "first", "then",
    "sho", "stu", "pro", "a", "x", "WE", "Paper",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([" ", "", "  ", "\u00a0", ",", " é"]),
                          st.sampled_from(_SITE_PARTS)), max_size=30))
def test_the_compiled_site_scan_finds_what_the_loop_finds(scan, parts):
    _check_site_hits("".join(a + b for a, b in parts))


@settings(max_examples=200, deadline=None)
@given(texts())
def test_the_compiled_site_scan_on_generated_text(scan, sample):
    _check_site_hits(sample)


def test_the_compiled_site_scan_on_the_bundled_and_pasted_abstracts(scan):
    for abstract in _abstracts():
        _check_site_hits(abstract)
        _check_site_hits(abstract.replace("We ", "This paper ").replace("we ", "this work "))


def _check_head_noun(head: str) -> None:
    for obj in range(len(head) + 2):
        assert text._t_head_noun_c(head, obj) == text._t_head_noun_at(head, obj), (head, obj)


# what the head-noun scan tells apart: a noun form (and one not: capitalised, a prefix, "s" twice),
# commas after it, its place among the first seven words, spaces str.split splits at (not U+200B)
_NOUN_PARTS = [
    "framework", "frameworks", "model", "models", "Model", "mode", "methodss", "suite", "x", "ab", "PARL",
    "é", "Ω",
]
_NOUN_SEPS = [" ", " ", ", ", ",, ", ",", "  ", "\u00a0", "\u2009", "\u200b", "\n", "\x1c", " (", ""]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_NOUN_PARTS), st.sampled_from(_NOUN_SEPS)), max_size=14))
def test_the_compiled_head_noun_scan_finds_what_the_split_finds(scan, parts):
    _check_head_noun("".join(a + b for a, b in parts))


def test_the_compiled_head_noun_scan_on_the_bundled_and_pasted_abstracts(scan):
    for abstract in _abstracts():
        _check_head_noun(text._t_head(abstract))


def _openings_by_regex(head: str, hi: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    return (
        [m.span() for m in text._T_NAME.finditer(head, 0, hi)],
        [m.span() for m in text._T_LOWER_CAMEL.finditer(head, 0, hi)],
    )


def _check_openings(head: str) -> None:
    openings = text._t_openings_c
    for hi in sorted({len(head), 400, len(head) // 2, len(head) - 1, 0}):
        assert openings(head, hi) == _openings_by_regex(head, hi), (head, hi)


# what the two patterns tell apart: capitals, lowercase runs, digits, "-" "+" "*" "_", \w beyond
# ASCII (é, Ω, the Arabic digit three, the superscript two: str.isalnum), a space before a lowercase
_NAME_PARTS = [
    "A", "Z", "a", "z", "ab", "abc", "0", "9", "-", "+", "*", "_", " ", "  ", ",", ".", "(", "é", "Ω",
    "٣", "²", "Net", "iT", "dLLM", "GeneOH", "x-Y", "Ab-Cd", "É", " ",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_NAME_PARTS), max_size=40))
def test_the_compiled_opening_scan_finds_what_the_regexes_find(scan, parts):
    _check_openings("".join(parts))
    _check_openings(" " + "".join(parts))


def test_the_compiled_opening_scan_on_every_short_text(scan):
    """Every text of up to five characters over the marks the patterns tell apart."""
    openings = text._t_openings_c
    for n in range(1, 6):
        for chars in itertools.product(" aA0-+*_é.\u0663", repeat=n):
            sample = "".join(chars)
            assert openings(sample, n) == _openings_by_regex(sample, n), sample


def test_the_compiled_opening_scan_on_the_bundled_and_pasted_abstracts(scan):
    for abstract in _abstracts():
        _check_openings(text._t_head(abstract))
        _check_openings(abstract)


def _cut_by_regex(sample: str, pos: int) -> int:
    m = text._T_CUT.search(sample, pos)
    return -1 if m is None else m.start()


def _check_cut(sample: str, positions: range | None = None) -> None:
    cut = text._t_cut_c
    for pos in positions if positions is not None else range(len(sample) + 1):
        assert cut(sample, pos) == _cut_by_regex(sample, pos), (sample, pos)


# what _T_CUT tells apart: its words (whole, cut short, run on, capitalised), the marks, \s beyond
# ASCII (a no-break space, a tab), \w beyond ASCII (é, the Arabic digit three) and "_"
_CUT_PARTS = [
    " ", "  ", "\t", "\u00a0", ",", ";", ":", ".", "!", "?", "-", "–", "—", "_", "é", "\u0663", "x",
    *text._T_CUT_AFTER_COMMA, *text._T_CUT_AFTER_SPACE, "Which", "whic", "thatx", "so  that", "in order",
    "to", "order", "such", "in", "where\u00a0", "which_",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_CUT_PARTS), max_size=25))
def test_the_compiled_cut_finds_what_the_regex_finds(scan, parts):
    _check_cut("".join(parts))


def test_the_compiled_cut_on_every_short_text(scan):
    """Every text of up to four characters over the marks, from every position; every text of up to
    four of these parts (words, runs of spaces between a phrase's words), from its start and its
    second character."""
    for n in range(1, 5):
        for chars in itertools.product(" ,;.?-—\t\u00a0a_é", repeat=n):
            _check_cut("".join(chars))
    parts = [
        " ", ",", ".", "-", "\u00a0", "_", "é", "which", "whereby", "so", "that", "in order", "to", "Which",
        "so\u00a0 that", "in \torder  to",
    ]
    for n in range(1, 5):
        for chosen in itertools.product(parts, repeat=n):
            _check_cut("".join(chosen), range(2))


def test_the_compiled_cut_on_the_bundled_and_pasted_abstracts(scan):
    for abstract in _abstracts():
        head = text._t_head(abstract)
        _check_cut(head)
        _check_cut(" ".join(head.split()[:15]))


def _glued_by_regex(sample: str) -> list[int]:
    dots = text._T_DOT_CAPITAL.finditer(sample, 1)
    return [m.end() for m in dots if sample[m.start() - 1] in _BEFORE_GLUED]


_BEFORE_GLUED = ")abcdefghijklmnopqrstuvwxyz"


def test_the_compiled_glued_stops_on_every_short_text(scan):
    """Every text of up to six characters over what the test tells apart (a capital and a letter
    beyond ASCII, a digit, a space), as a 1-byte str and as a wider one."""
    glued = text._t_glued_c
    for n in range(1, 7):
        for chars in itertools.product(".aZ)é0 ", repeat=n):
            sample = "".join(chars)
            assert glued(sample) == _glued_by_regex(sample), sample
            assert glued(sample + "Ω") == _glued_by_regex(sample + "Ω"), sample
    assert text._t_glued(" one.Two ().Ab.Cd") == _glued_by_regex(" one.Two ().Ab.Cd") == [5, 12, 15]


def test_the_compiled_glued_stops_on_the_bundled_and_pasted_abstracts(scan):
    for abstract in _abstracts():
        for sample in (abstract, abstract.replace(". ", "."), abstract.replace(". ", ".") + "—"):
            assert text._t_glued_c(sample) == _glued_by_regex(sample) == text._t_glued(sample)


def test_without_the_compiled_scan_the_rules_find_the_same(monkeypatch):
    abstracts = _abstracts()
    abstracts += [a.replace(". ", ".") for a in abstracts]
    titles = [text.derive_title(a) for a in abstracts]
    monkeypatch.setattr(text, "_t_scan_c", None)
    monkeypatch.setattr(text, "_t_site_hits_c", None)
    monkeypatch.setattr(text, "_t_head_noun_c", None)
    monkeypatch.setattr(text, "_t_openings_c", None)
    monkeypatch.setattr(text, "_t_cut_c", None)
    monkeypatch.setattr(text, "_t_glued_c", None)
    monkeypatch.setattr(text, "_t_sites_c", None)
    monkeypatch.setattr(text, "_t_front_c", None)
    monkeypatch.setattr(text, "_t_long_form_c", None)
    monkeypatch.setattr(text, "_t_clip_c", None)
    text._long_form.cache_clear()  # (its answers by the compiled pass are cached)
    assert [text.derive_title(a) for a in abstracts] == titles


def test_without_the_compiled_module_the_rules_find_the_same(monkeypatch):
    """retrieval._titlescan not built (its import fails): every scan falls back to its regex."""
    abstracts = _abstracts()[:60]
    titles = [text.derive_title(a) for a in abstracts]
    import retrieval

    monkeypatch.delattr(retrieval, "_titlescan", raising=False)
    monkeypatch.setitem(sys.modules, "retrieval._titlescan", None)  # (its import raises ImportError)
    scans = (
        "_t_scan_c", "_t_site_hits_c", "_t_head_noun_c", "_t_openings_c", "_t_cut_c", "_t_glued_c",
        "_t_sites_c", "_t_front_c", "_t_long_form_c", "_t_clip_c",
    )
    for scan_c in scans:
        monkeypatch.setattr(text, scan_c, text._UNSET)
    text._long_form.cache_clear()
    assert [text.derive_title(a) for a in abstracts] == titles
    assert all(getattr(text, scan_c) is None for scan_c in scans)


def _check_text(abstract: str) -> None:
    head = text._t_head(abstract)
    assert head == _head_as_first_written(abstract)
    lower = text._t_lower(head)
    name, cut, statement = re.compile(_NAME), re.compile(_CUT), re.compile(_STATEMENT)
    assert [m.span() for m in text._T_NAME.finditer(head)] == [m.span() for m in name.finditer(head)]
    assert [m.span() for m in text._T_CUT.finditer(head)] == [m.span() for m in cut.finditer(head)]
    assert text._T_STATEMENT.pattern == _STATEMENT
    for at in range(len(head) + 1):
        assert text._t_lead_end(head, at) == text._T_LEAD.match(head, at).end(), (head, at)
        assert _same(text._t_lower_apposed(head, at), text._T_LOWER_APPOSED.match(head, at)), (head, at)
        assert _same(text._t_introduced(head, at), _introduced_as_first_written(head, at)), (head, at)
        if lower[at : at + 3] not in text._T_STATEMENT_STARTS:
            assert statement.match(lower, at) is None, (lower, at)
    for word in head.split():
        assert text._t_camel(word) == bool(text._T_CAMEL.search(word)), word
        for w in (word, word.lower(), word.rstrip(",")):
            assert (w in text._T_HEAD_NOUN_FORMS) == (w.removesuffix("s") in text._T_HEAD_NOUNS), w
            assert (w in text._T_HEAD_NOUN_ANY) == (
                w in text._T_HEAD_NOUNS or w.removesuffix("s") in text._T_HEAD_NOUNS
            ), w


def test_every_statement_word_opens_with_three_letters():
    for word in text._T_STATEMENT_ADVERBS + text._T_STATEMENT_VERBS:
        assert word[:3].isalpha() and word[:3].islower(), word


def test_the_head_nouns_in_every_form():
    for noun in text._T_HEAD_NOUNS:
        assert noun in text._T_HEAD_NOUN_ANY and noun + "s" in text._T_HEAD_NOUN_FORMS
    assert "methodss" not in text._T_HEAD_NOUN_FORMS and "" not in text._T_HEAD_NOUN_ANY


@pytest.mark.parametrize(
    "sample",
    [
        "We propose ſeveral novel models.",  # ſ matches s only in a case-insensitive regex
        "We propose \u212aey ideas, a plan.",  # the Kelvin sign
        "Our straightforwardness, a virtue. We introduce the Mayfly, the first thing.",
        "we propose particle guidance, an extension of it. We proposed MOO framework, which fails.",
        "Methods called \\textbf{\\textit{Thought Propagation} (TP)} and $\\alpha$-nets, $x$ and **Y**.",
        "We present, “FooNet”, a model: GraphChef.This works; so that it stays — or not.",
    ],
)
def test_the_shortcuts_on_chosen_texts(sample):
    _check_text(sample)


def test_the_shortcuts_on_the_bundled_and_pasted_abstracts():
    for abstract in _abstracts():
        _check_text(abstract)


@settings(max_examples=300, deadline=None)
@given(texts())
def test_the_shortcuts_on_generated_text(sample):
    _check_text(sample)


# -- the substring test that looks for the needle's first character first (text._t_has)

_NEEDLES = (": ", "://", "**", "__", "x:", "é*", ":\u0100")


def test_the_first_character_substring_test_on_every_short_text():
    """Every text of up to four characters over the needles' characters and two others: _t_has is
    ``in`` for each needle the rules ask it about and a few more (1-, 2- and 4-byte strings)."""
    for n in range(5):
        for chars in itertools.product(": /*_xé\u0100", repeat=n):
            sample = "".join(chars)
            for needle in _NEEDLES:
                assert text._t_has(sample, needle) == (needle in sample), (sample, needle)


@settings(max_examples=300, deadline=None)
@given(texts(), st.sampled_from(_NEEDLES))
def test_the_first_character_substring_test_on_generated_text(sample, needle):
    for s in (sample, text._t_head(sample)):
        assert text._t_has(s, needle) == (needle in s), (s, needle)


def test_the_first_character_substring_test_on_the_bundled_and_pasted_abstracts():
    for abstract in _abstracts():
        head = text._t_head(abstract)
        for needle in _NEEDLES:
            assert text._t_has(head, needle) == (needle in head), needle
            assert text._t_has(abstract, needle) == (needle in abstract), needle


# -- the coined-word test's shortcut (keyphrase.coins_a_word_missed)


def test_a_text_the_coined_word_shortcut_passes_over_has_no_coined_word():
    """Every text of up to five characters over the marks _COINED tells apart (a decimal digit that
    is not ASCII, a superscript that is no decimal, a letter that is not ASCII, a title-case letter):
    where the shortcut says no, _COINED finds nothing."""
    for n in range(1, 6):
        for chars in itertools.product("aZ0 -,é\u0663²\u01c5", repeat=n):
            sample = "".join(chars)
            if not keyphrase._may_coin(sample):
                assert keyphrase._COINED.search(sample) is None, sample


_COIN_PARTS = [*_NAME_PARTS, "Of", "the", "x3", "\u0663d", "GPT-4", "(", "'"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_COIN_PARTS), max_size=30))
def test_the_coined_word_shortcut_on_generated_text(parts):
    sample = "".join(parts)
    if not keyphrase._may_coin(sample):
        assert keyphrase._COINED.search(sample) is None, sample


def test_the_coined_word_test_is_the_same_without_its_shortcut(monkeypatch):
    """Every sentence of the bundled and pasted abstracts (and its lowercase) as the phrase, the next
    one as the key phrase, with and without a name: the same answers with the shortcut switched off."""
    cases = []
    for abstract in _abstracts():
        sentences = [s for s in abstract.split(". ") if s]
        for phrase, key in zip(sentences, sentences[1:] + sentences[:1], strict=True):
            for p in (phrase, phrase.lower(), phrase[1:]):
                for name in (None, p.split()[0] if p.split() else None):
                    cases.append((p, key, name))
    fast = [keyphrase.coins_a_word_missed(*case) for case in cases]
    monkeypatch.setattr(keyphrase, "_MAY_COIN", re.compile(""))  # (always "may": the full search)
    assert [keyphrase.coins_a_word_missed(*case) for case in cases] == fast
    assert any(fast) and not all(fast)


# -- the compiled rules (retrieval/_titlescan.c): each equals the Python rule it stands for

_iclr_abstracts = iclr_abstracts


def _spelled_out(pattern: str) -> list[str]:
    """Every string a regex of literals, classes, optional parts and alternations matches, in the
    order the engine tries them."""
    import re._parser as parser  # (sre_parse)

    def strings(items) -> list[str]:  # noqa: ANN001
        out = [""]
        for op, arg in items:
            if op is parser.LITERAL:
                options = [chr(arg)]
            elif op is parser.IN:
                options = [chr(v) for o, v in arg if o is parser.LITERAL]
                assert len(options) == len(arg), arg
            elif op is parser.SUBPATTERN:
                options = strings(arg[-1])
            elif op is parser.BRANCH:
                options = [w for branch in arg[1] for w in strings(branch)]
            elif op is parser.MAX_REPEAT and arg[:2] == (0, 1):
                options = strings(arg[2]) + [""]
            else:
                raise AssertionError(op)
            out = [a + b for a in out for b in options]
        return out

    return strings(parser.parse(pattern))


def test_the_statement_forms_are_the_verbs_spelled_out_in_order():
    forms = [w for verb in text._T_STATEMENT_VERBS for w in _spelled_out(verb)]
    assert tuple(forms) == text._T_STATEMENT_FORMS
    assert _spelled_out("stud(?:y|ie)") == ["study", "studie"]  # (the expansion itself)
    assert _spelled_out("focus(?:e)?(?:s)? on") == ["focuses on", "focuse on", "focuss on", "focus on"]


def _sites_c(head: str, lower: str):  # noqa: ANN202
    return text._t_sites_c(head, lower, 3)


def _sites_disagree(samples: list[str]) -> tuple[int, int]:
    """(texts where the compiled sites() decided and differs from the rules, texts it decided)."""
    differ = decided = 0
    for sample in samples:
        for head in (text._t_head(sample), " " + sample):
            lower = text._t_lower(head)
            for limit in (3, 1):
                got = text._t_sites_c(head, lower, limit)
                if got is not None:
                    decided += 1
                    differ += got != text._t_sites_rules(head, lower, limit)
    return differ, decided


def _variants(abstract: str) -> list[str]:
    return [
        abstract,
        abstract.replace("We ", "This paper ").replace("we ", "this work "),
        abstract.replace(", ", ",").replace(". ", "."),
        abstract.lower(),
    ]


def test_the_compiled_sites_on_the_bundled_and_pasted_abstracts(scan):
    samples = [v for a in _abstracts() for v in _variants(a)]
    differ, decided = _sites_disagree(samples)
    assert differ == 0
    assert decided > 0.8 * 4 * len(samples)  # (it decides most: agreeing by passing is no test)


def test_the_compiled_sites_on_the_iclr_abstracts(scan):
    samples = _iclr_abstracts()
    if not samples:
        pytest.skip(f"no {ICLR}")
    differ, decided = _sites_disagree(samples + [a.upper() for a in samples[:300]])
    assert differ == 0 and decided > 0.8 * 4 * len(samples)


# the words and marks the compiled rules tell apart: statements and their adverbs, lead words (and
# letters a case-insensitive regex matches beyond ASCII: ſ, the Kelvin sign), names in every shape
# the patterns know, the words around them, quotes and dashes
_RULE_WORDS = (
    "we We this This paper work study article our Our resulting propose proposes proposed proposing "
    "introduce introduces presenting present design develop study studies studied identifies focuses "
    "focus on put puts forward characterize analyses first then also thus that how a way to an the The "
    "our two several novel new simple first straightforward and yet called named namely dubbed termed "
    "coined denoted as is refer referred framework method model models approach algorithm benchmark "
    "dataset suite methods FooNet GraphChef ClimODE LLM LLMs LLM-CXR LLM-based KW-Design Foo-Bar "
    "Tree-of-Thought "
    "iTransformer dLLMs MIntRec2.0 PixArt-$\\alpha$ X XY SAEs Mayfly PARL particle guidance, an extension "
    "ſeveral \u212aey ﬁrst İs ıt naïve Ω é"
).split()
_RULE_SEPS = [" ", " ", " ", ", ", ",", ". ", ": ", " (", ") ", ", a ", ", an ", "\u00a0", " “", "” ", " *",
              "* ", "-", " — ", "—", " -- ", "\x1c", "  ", " ,", "_"]


@st.composite
def joined(draw, words: list[str]) -> str:
    """Up to 30 of ``words``, each followed by one of the separators the rules tell apart."""
    n = draw(st.integers(min_value=0, max_value=30))
    return "".join(draw(st.sampled_from(words)) + draw(st.sampled_from(_RULE_SEPS)) for _ in range(n))


def rule_texts() -> st.SearchStrategy[str]:
    return joined(_RULE_WORDS)


@settings(max_examples=500, deadline=None)
@given(rule_texts())
def test_the_compiled_sites_on_generated_text(scan, sample):
    for head in (" " + sample, text._t_head(sample)):
        lower = text._t_lower(head)
        got = text._t_sites_c(head, lower, 3)
        if got is not None:
            assert got == text._t_sites_rules(head, lower, 3), head


@pytest.mark.parametrize(
    "sample",
    [
        "We propose ſeveral novel models.",  # (ſ, K: what only the case-insensitive lead may match)
        "We propose \u212aey ideas, a plan.",
        "We propose the Mayfly, the first thing. Our method, FLATTEN, works. We proposed MOO framework.",
        "In this paper we first introduce “FooNet” — a model called ClimODE: the resulting framework VQG.",
        "This work focuses on a way to  novel,and simple  models named as “Tree-of-Thought”.",
        "We present a novel method, Calibrated Sampling (CS), and our LLM-based KW-Design method.",
    ],
)
def test_the_compiled_sites_on_chosen_texts(scan, sample):
    head = text._t_head(sample)
    lower = text._t_lower(head)
    got = text._t_sites_c(head, lower, 3)
    assert got is None or got == text._t_sites_rules(head, lower, 3)


def _broken(pattern: text._LazyRe, old: str, new: str) -> re.Pattern[str]:
    pattern.match  # (compiled)  # noqa: B018
    assert old in pattern.pattern
    return re.compile(pattern.pattern.replace(old, new), pattern.flags)


@pytest.mark.parametrize(
    ("rule", "old", "new"),
    [
        ("_T_LEAD", "|several", ""),  # a lead word missed
        ("_T_STATEMENT", "(?=[\\s:,])", "(?=[\\s:])"),  # a mark the lookahead misses
        ("_T_INTRODUCED", "[,:(—]", "[,:(]"),  # a mark the lookahead misses
        ("_T_NAMED", "(?:as\\s+)?", ""),  # "as" not skipped
        ("_T_NAME_AT", "(?:\\.\\d\\w*|", "(?:"),  # a version number not read
    ],
)
def test_the_comparison_finds_a_broken_rule(scan, monkeypatch, rule, old, new):
    """What the tests above compare on tells each rule's parts apart: a rule broken on purpose (on
    the Python side) disagrees with the compiled one somewhere in the bundled and pasted abstracts."""
    samples = [v for a in _abstracts() for v in _variants(a)]
    samples += [
        "In our MIntRec2.0 model, ", "our model — named as FooNet", "We show, first, that X.",
        "We introduce Graph Foo—a model.",
    ]
    pattern = getattr(text, rule)
    monkeypatch.setattr(pattern, "match", _broken(pattern, old, new).match)
    differ, _ = _sites_disagree(samples)
    assert differ > 0


def _statement_lists(head: str, lower: str) -> list[list[tuple[int, int, str]]]:
    """The head's own statements, the first alone, and made-up ones (an object at every tenth
    place, introducing or not)."""
    statements, _ = text._t_sites_rules(head, lower)
    places = range(1, len(head), 10)
    made = [(max(0, at - 8), at, ["propos", "show"][k % 2]) for k, at in enumerate(places)]
    return [statements, statements[:1], made]


def _front_disagree(samples: list[str]) -> int:
    differ = 0
    for sample in samples:
        for head in (text._t_head(sample), " " + sample):
            lower = text._t_lower(head)
            for statements in _statement_lists(head, lower):
                fast = text._t_front_c(head, lower, statements)
                differ += fast != text._t_front_rules(head, lower, statements)
    return differ


# texts with what front() leaves to the rules: a word beyond ASCII before ", X" that lowercases to a
# head noun (the Kelvin sign: "network"), a name-like word before "(" with its long form inside
_FRONT_CHOSEN = [
    "We propose a new networ\u212a, FooNet, for it. We introduce T-MARS (Text Masking and Re-Scoring).",
    "We propose a model: GraphChef. Our dataset, *EQA-MX*, and İstanbul, FooNet (F-N) hold.",
]


def test_the_compiled_front_on_the_bundled_and_pasted_abstracts(scan):
    assert _front_disagree([v for a in _abstracts() for v in _variants(a)] + _FRONT_CHOSEN) == 0


def test_the_compiled_front_on_the_iclr_abstracts(scan):
    samples = _iclr_abstracts()
    if not samples:
        pytest.skip(f"no {ICLR}")
    assert _front_disagree(samples + [a.upper() for a in samples[:300]]) == 0


_FRONT_WORDS = _RULE_WORDS + (
    "T-MARS (Text Masking and Re-Scoring) Context-Aware Multi-Granularity PINN Adaptive ( ) (SSCP) "
    "(e.g. dataset, model: EQA-MX Claude 2 GraphChef İ K"
).split()


def front_texts() -> st.SearchStrategy[str]:
    return joined(_FRONT_WORDS)


@settings(max_examples=500, deadline=None)
@given(front_texts())
def test_the_compiled_front_on_generated_text(scan, sample):
    assert _front_disagree([sample]) == 0


@pytest.mark.parametrize(
    ("rule", "method", "old", "new"),
    [
        ("_T_NAME_AT", "match", "(?:\\.\\d\\w*|", "(?:"),  # a version number not read
        ("_T_NAME_WORD", "match", "[A-Z][a-z]+-", "[A-Z][a-z]-"),  # one letter before the hyphen only
        ("_T_TITLE_COMPOUND", "fullmatch", "(?:-[A-Z][a-z]+)+", "(?:-[A-Z][a-z]+)"),  # two parts only
        ("_T_COMMA_CAPITAL", "finditer", '[\\"“*_]*', ""),  # no quote marks before the capital
    ],
)
def test_the_front_comparison_finds_a_broken_rule(scan, monkeypatch, rule, method, old, new):
    """As for sites(): each rule front() reads by hand, broken on purpose on the Python side, makes
    a difference on the bundled and pasted abstracts (and a few chosen texts)."""
    samples = [v for a in _abstracts() for v in _variants(a)]
    samples += [
        "We present MIntRec2.0 to do. Our method, FooNet-Bar-Baz, a model. Our dataset, *EQA-MX*, holds.",
        "We propose Context-Aware-Multi-Granularity, a tool. We address it with Tree-Planner, a planner.",
    ]
    pattern = getattr(text, rule)
    getattr(pattern, method)  # (compiled)
    broken = re.compile(pattern.pattern.replace(old, new), pattern.flags)
    assert broken.pattern != pattern.pattern
    monkeypatch.setattr(pattern, method, getattr(broken, method))
    assert _front_disagree(samples) > 0
