"""The one tokenizer used for documents and queries alike.

Pipeline per word: drop LaTeX commands (``\\textit``, ``\\epsilon``; their ``{argument}`` words stay),
case-fold, strip accents, drop English stopwords, Snowball-stem (PyStemmer ``english``). A hyphenated
word is indexed both joined and split (``flow-matching`` -> ``flowmatch flow match``) so that either
spelling finds it; numbers and alphanumerics (``3d``, ``m3dt``, ``qwen3-30b-a3b``) are kept.

Documents and queries are normalised alike before that: NFC (an NFD ``Nu\u0303n\u0303ez`` is
``Núñez``), invisible characters inside words deleted (zero-width space/joiners, soft hyphen, BOM),
and typographic apostrophes (``’ ‘ ʼ``) read as ``'``, so a query typed ``O’Brien’s`` finds
``O'Brien's`` and the other way round.

Speed: every distinct surface word is analysed once and memoised (surface -> tokens), so tokenizing a
document is one regex scan plus one dict look-up per word. Changing anything that alters the output
must bump :data:`TOKENIZER_VERSION`, which is part of the index cache fingerprint.
"""

from __future__ import annotations

import itertools
import re
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

import Stemmer

__all__ = [
    "SERVING_MEMO_MAX",
    "STOPWORDS",
    "TOKENIZER_VERSION",
    "WordTokens",
    "analyze_word",
    "iter_words",
    "match_spans",
    "memo_limit",
    "phrase_tokens",
    "stem",
    "surface_bytes",
    "surface_words",
    "tokenize",
]

#: Bump whenever the output of :func:`tokenize` can change (it invalidates every index cache).
TOKENIZER_VERSION = f"2026.2-nltk-snowball-hyphen-nfc-invisible-cjk2-unicode{unicodedata.unidata_version}"

#: NLTK's English stopword list (179 words), the most widely used "standard" list. Kept in code so the
#: tokenizer has no data-file dependency.
STOPWORDS: frozenset[str] = frozenset(
    """
    i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves
    he him his himself she she's her hers herself it it's its itself they them their theirs themselves
    what which who whom this that that'll these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on off over
    under again further then once here there when where why how all any both each few more most other
    some such no nor not only own same so than too very s t can will just don don't should should've
    now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn
    hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn
    shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
    """.split()
)

def _mark_class() -> str:
    """A regex character-class body of every combining mark (Unicode category M*): accents of NFD
    text, Indic vowel signs, Thai tone marks. Python's ``\\w`` leaves them out, which would split
    ``Nu + U+0303 + nez`` or हिन्दी in two. Blocks known to hold no mark (CJK ideographs, Hangul
    syllables, surrogates, private use) are skipped to keep the import cheap (~15 ms)."""
    spans = ((0x300, 0x3400), (0xA000, 0xAC00), (0xD7B0, 0xD800), (0xF900, 0x20000), (0xE0100, 0xE01F0))
    out: list[str] = []
    start = prev = -2
    category = unicodedata.category
    for cp in itertools.chain.from_iterable(range(a, b) for a, b in spans):
        if category(chr(cp))[0] != "M":
            continue
        if cp != prev + 1:
            if start >= 0:
                out.append(f"{re.escape(chr(start))}-{re.escape(chr(prev))}")
            start = cp
        prev = cp
    out.append(f"{re.escape(chr(start))}-{re.escape(chr(prev))}")
    return "".join(out)


# Invisible characters that people's copy-paste leaves inside words (soft hyphen, zero-width space,
# non-joiner, joiner, word joiner, BOM): part of the word they sit in, deleted before analysis.
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")
# Scripts written without spaces between words (and Hangul, whose words carry attached particles):
# indexed as character bigrams. Kana, CJK ideographs (with extension A and compatibility), Hangul.
_CJK_RE = re.compile(
    "[\u3041-\u3096\u30a1-\u30fa\u30fc\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7a3]+"
)
_MARKS = _mark_class()
# A LaTeX command such as \textit or \epsilon (its braces and argument are ordinary text).
_LATEX_COMMAND = r"\\[A-Za-z]+(?![" + _MARKS + "])"  # "\\U" + U+0300 is no command: NFC makes it "\\Ù"
# A word: letters/digits (any script) with inner apostrophes (' ’ ‘), optionally joined by hyphens.
# [^\W_] is "alphanumeric" in every script; the underscore separates (``\ell_p`` -> ``p``). The full
# pattern also lets combining marks and invisible characters continue a word and reads ’ ‘ as
# apostrophes; on text without any of those the plain one finds the same words, 2x faster.
_PART = r"[^\W_]+(?:'[^\W_]+)*"
_PLAIN_WORD = rf"{_PART}(?:[-\u2010\u2011]{_PART})*"
_RUN = rf"[^\W_]+(?:[{_MARKS}{_INVISIBLE}]+[^\W_]*)*"
_PART_FULL = rf"{_RUN}(?:['\u2019\u2018][{_INVISIBLE}]*{_RUN})*"
_WORD = rf"{_PART_FULL}(?:[-\u2010\u2011][{_INVISIBLE}]*{_PART_FULL})*"
_PLAIN_WORD_RE = re.compile(_PLAIN_WORD)
# The plain pattern for ASCII text: on ASCII, [^\W_] is exactly [A-Za-z0-9] and the only hyphen is
# "-", so it finds the same words; spelled out with re.ASCII it runs ~1.8x faster (the index build
# scans every abstract with it).
_ASCII_PART = r"[A-Za-z0-9]+(?:'[A-Za-z0-9]+)*"
_ASCII_WORD_RE = re.compile(rf"{_ASCII_PART}(?:-{_ASCII_PART})*", re.ASCII)
_ASCII_BYTES_WORD_RE = re.compile(_ASCII_WORD_RE.pattern.encode())
# Text without these reads the same with the plain pattern.
_SPECIAL_RE = re.compile(f"[{_MARKS}{_INVISIBLE}\u2019\u2018]")
_WORD_RE = re.compile(_WORD)
_LATEX_RE = re.compile(_LATEX_COMMAND)
# For spans over the original text: LaTeX commands are matched (and skipped) so they never yield words.
_SPAN_RE = re.compile(rf"({_LATEX_COMMAND})|{_WORD}")
_HYPHEN_RE = re.compile(r"[-\u2010\u2011]")
# Typographic apostrophes folded to ASCII before matching, so the memo keys stay canonical.
_FOLD = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})

_stemmer = Stemmer.Stemmer("english")
_stemmer.maxCacheSize = 0  # stem() memoises; PyStemmer's own cache costs ~6x on mostly new words
# PyStemmer objects keep internal state per call; serialise the (rare) cache misses.
_stem_lock = threading.Lock()
_STEM_CACHE: dict[str, str] = {}
_WORD_CACHE: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
# Bound the memo so a long-running bot fed arbitrary queries cannot grow it forever. A build wants
# every surface word of the corpus memoised; a serving process lowers it (memo_limit).
_WORD_CACHE_MAX = 2_000_000
#: The bound a serving process sets (bot.engine): the words of the queries and of the abstracts its
#: snippets analyse. ~100 B an entry: ~6 MB per memo, held privately by each bot process.
SERVING_MEMO_MAX = 65_536


def memo_limit(limit: int) -> None:
    """Bound the word and stem memos at ``limit`` entries from now on (each is emptied when full);
    a memo already past it (the words of a build this process ran) is emptied now."""
    global _WORD_CACHE_MAX
    _WORD_CACHE_MAX = max(1, int(limit))
    for memo in (_WORD_CACHE, _STEM_CACHE):
        if len(memo) > _WORD_CACHE_MAX:
            memo.clear()


def stem(word: str) -> str:
    """Snowball-stem one already case-folded word (memoised).

    Args:
        word: A lowercase word without hyphens.

    Returns:
        Its English Snowball stem.
    """
    cached = _STEM_CACHE.get(word)
    if cached is None:
        with _stem_lock:
            cached = _stemmer.stemWord(word)
        if len(_STEM_CACHE) >= _WORD_CACHE_MAX:
            _STEM_CACHE.clear()
        _STEM_CACHE[word] = cached
    return cached


def _strip_accents(word: str) -> str:
    if word.isascii():
        return word
    decomposed = unicodedata.normalize("NFKD", word)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def analyze_word(surface: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Tokens of one surface word as matched by the word pattern (memoised).

    Args:
        surface: One word as matched in the text (any case; may contain inner hyphens/apostrophes).

    Returns:
        ``(index_tokens, phrase_tokens)``: the index tokens (joined form first for a hyphenated word,
        then its parts) and the phrase tokens (the parts only, in order), stopwords removed.
    """
    cached = _WORD_CACHE.get(surface)
    if cached is not None:
        return cached
    # Fold twice: NFKD can produce capitals (mathematical 𝑨 -> A) and casefold can produce
    # combining marks (İ -> i + U+0307).
    word = _strip_accents(_strip_accents(surface).casefold())
    if not word.isascii() and _CJK_RE.search(word) is not None:
        return _remember(surface, _cjk_tokens(word))
    parts = _HYPHEN_RE.split(word) if ("-" in word or "\u2010" in word or "\u2011" in word) else [word]
    split = tuple(stem(p) for p in parts if p and p not in STOPWORDS)
    if len(parts) > 1:
        joined = "".join(parts)
        index = ((stem(joined),) if joined not in STOPWORDS else ()) + split
    else:
        index = split
    return _remember(surface, (index, split))


def _remember(
    surface: str, result: tuple[tuple[str, ...], tuple[str, ...]]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if len(_WORD_CACHE) >= _WORD_CACHE_MAX:
        _WORD_CACHE.clear()
    _WORD_CACHE[surface] = result
    return result


def _cjk_tokens(word: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Tokens of a word holding CJK characters: each run of Han, kana or Hangul as overlapping
    character bigrams (a lone character as itself), the rest of the word as usual. Chinese and
    Japanese are written without spaces, so a "word" here is a whole clause; bigrams find a query
    word inside it without a dictionary (see bench/cjk.py for the measurement against jieba)."""
    index: list[str] = []
    phrase: list[str] = []
    pos = 0
    for m in _CJK_RE.finditer(word):
        if m.start() > pos:
            rest_index, rest_phrase = analyze_word(word[pos : m.start()].strip("-\u2010\u2011'"))
            index += rest_index
            phrase += rest_phrase
        run = m.group(0)
        grams = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        index += grams
        phrase += grams
        pos = m.end()
    if pos < len(word):
        rest_index, rest_phrase = analyze_word(word[pos:].strip("-\u2010\u2011'"))
        index += rest_index
        phrase += rest_phrase
    return tuple(index), tuple(phrase)


def _prepare(text: str) -> str:
    """Documents and queries alike: invisible characters deleted, NFC (so NFD input matches),
    typographic apostrophes folded to ``'``. ASCII text is returned as is."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", _INVISIBLE_RE.sub("", text)).translate(_FOLD)
    return text


def tokenize(text: str) -> list[str]:
    """Tokenize a document or a query into index terms.

    Args:
        text: Any text (LaTeX and markdown allowed).

    Returns:
        The terms in order: lowercase, accent-free, stopwords removed, Snowball-stemmed, hyphenated
        words both joined and split (``"Flow-Matching models"`` -> ``["flowmatch", "flow", "match",
        "model"]``).
    """
    out: list[str] = []
    for index, _ in _analyzed_words(text):
        if index:
            out += index
    return out


def phrase_tokens(text: str) -> list[str]:
    """Tokens used for phrase matching: like :func:`tokenize` but hyphenated words only split.

    ``"flow-matching"`` and ``"flow matching"`` both give ``["flow", "match"]``, so a quoted phrase
    matches either spelling.

    Args:
        text: Any text.

    Returns:
        The phrase tokens in order.
    """
    out: list[str] = []
    for _, phrase in _analyzed_words(text):
        if phrase:
            out += phrase
    return out


def surface_words(text: str) -> list[str]:
    """The surface words of ``text`` as :func:`tokenize` reads them (LaTeX commands removed), each
    to be passed to :func:`analyze_word`; ``tokenize(text)`` is the concatenation of their index
    tokens. Lets a caller memoise per surface word (the index builder maps them to term ids).

    Args:
        text: Any text.

    Returns:
        The words in order.
    """
    if "\\" in text:
        text = _LATEX_RE.sub(" ", text)
    if text.isascii():
        return _ASCII_WORD_RE.findall(text)
    # Words are found on the text as given (as iter_words finds them, for spans), then normalised.
    words = (_PLAIN_WORD_RE if _SPECIAL_RE.search(text) is None else _WORD_RE).findall(text)
    return [w if w.isascii() else _prepare(w) for w in words]


# For surface_bytes: ASCII bytes -> b" " except word characters (letters, digits, ' and -), and a
# second table that also reads every word character as "a" except ' and - (read as "-").
_KEEP_WORD_CHARS = bytes(c if chr(c).isalnum() or chr(c) in "'-" else 32 for c in range(128)) + b" " * 128
_JOINERS = bytes(45 if chr(c) in "'-" else (97 if chr(c).isalnum() else 32) for c in range(128)) + b" " * 128


def surface_bytes(text: str) -> bytes:
    """The surface words of ``text`` (as :func:`surface_words` finds them) as one ``bytes``, the
    words separated by spaces (``b" "``, which no word holds), each word a memo key for
    :func:`analyze_word`: ASCII words lowercased (ASCII case does not change a word's tokens),
    other words in UTF-8. ASCII text is read without the regex when every ``'`` and ``-`` of it
    joins two letters or digits (then each run of word characters is one word, and every other
    character becomes a space: runs of spaces then separate the words). The index build finds the
    words of a whole chunk of papers at once in these bytes (numpy), instead of one by one.

    Args:
        text: Any text.

    Returns:
        The words, separated by one or more spaces (maybe with spaces before and after).
    """
    if not text.isascii():
        return b" ".join(
            w.lower().encode("ascii") if w.isascii() else w.encode("utf-8", "surrogatepass")
            for w in surface_words(text)
        )
    if "\\" in text:
        text = _LATEX_RE.sub(" ", text)
    raw = text.encode("ascii").lower()
    if b"'" in raw or b"-" in raw:
        shape = raw.translate(_JOINERS)
        if b" -" in shape or b"- " in shape or b"--" in shape or shape[:1] == b"-" or shape[-1:] == b"-":
            return b" ".join(_ASCII_BYTES_WORD_RE.findall(raw))
    return raw.translate(_KEEP_WORD_CHARS)


def _analyzed_words(text: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """:func:`analyze_word` of every surface word of ``text`` (the memo look-up inlined: hot path)."""
    cache = _WORD_CACHE
    return [cache.get(word) or analyze_word(word) for word in surface_words(text)]


def analyze_document(text: str) -> tuple[list[str], list[str]]:
    """Both token streams of a document in one pass: ``(tokenize(text), phrase_tokens(text))``.

    Args:
        text: Any text.

    Returns:
        The index tokens and the phrase tokens.
    """
    index: list[str] = []
    phrase: list[str] = []
    for word_index, word_phrase in _analyzed_words(text):
        if word_index:
            index += word_index
            phrase += word_phrase
    return index, phrase


@dataclass(frozen=True, slots=True)
class WordTokens:
    """One word of a text with its character span in the original text and its tokens."""

    start: int
    end: int
    surface: str
    tokens: tuple[str, ...]
    parts: tuple[tuple[int, int, tuple[str, ...]], ...]


def iter_words(text: str) -> Iterator[WordTokens]:
    """Words of ``text`` with spans into ``text`` itself (for highlighting and query parsing).

    The concatenated ``tokens`` of all words equal :func:`tokenize` ``(text)``. ``parts`` gives, for a
    hyphenated word, each part's span and its tokens (so one part can be bolded alone).

    Args:
        text: Any text.

    Yields:
        One :class:`WordTokens` per word that the tokenizer reads (stopwords included, with empty
        tokens).
    """
    for match in _SPAN_RE.finditer(text):
        if match.group(1) is not None:
            continue
        raw = match.group(0)
        surface = _prepare(raw)
        index, _ = analyze_word(surface)
        start = match.start()
        if _HYPHEN_RE.search(raw):
            parts = []
            pos = start
            for piece in _HYPHEN_RE.split(raw):
                piece_tokens = analyze_word(_prepare(piece))[1]
                parts.append((pos, pos + len(piece), piece_tokens))
                pos += len(piece) + 1
            part_spans = tuple(parts)
        else:
            part_spans = ((start, match.end(), index),)
        yield WordTokens(start, match.end(), surface.casefold(), index, part_spans)


def match_spans(
    text: str, stems: set[str] | frozenset[str], cores: tuple[str, ...] | None = None
) -> list[tuple[int, int, tuple[str, ...]]]:
    """Spans of ``text`` whose tokens are in ``stems`` (for highlighting), in text order.

    A hyphenated word whose joined form matches is one span; otherwise each matching part is its
    own span (``flow-**matching**``). Same tokens as :func:`iter_words`, about 3x faster.

    Args:
        text: Any text (NFC).
        stems: Tokens to find.
        cores: ``retrieval.search.stem_cores(stems)``: an ASCII word holding none of them
            (lowercased, hyphens removed) cannot match, so it is not analysed (same result).

    Returns:
        ``(start, end, matched_tokens)`` triples.
    """
    out: list[tuple[int, int, tuple[str, ...]]] = []
    cache = _WORD_CACHE
    for match in _SPAN_RE.finditer(text):
        if match.group(1) is not None:
            continue
        raw = match.group(0)
        if cores is not None and raw.isascii():
            low = raw.lower().replace("-", "")
            if not any(core in low for core in cores):
                continue
        key = raw if raw.isascii() else _prepare(raw)
        tokens = cache.get(key)
        if tokens is None:
            tokens = analyze_word(key)
        index = tokens[0]
        if not index:
            continue
        hit = tuple(t for t in index if t in stems)
        if not hit:
            continue
        start = match.start()
        if not raw.isascii() and _CJK_RE.search(raw) is not None:
            out += _cjk_spans(raw, start, stems)
            continue
        if len(index) == 1 or index[0] in stems or not _HYPHEN_RE.search(raw):
            out.append((start, match.end(), hit))
            continue
        pos = start
        for piece in _HYPHEN_RE.split(raw):
            piece_hit = tuple(t for t in analyze_word(_prepare(piece))[1] if t in stems)
            if piece_hit:
                out.append((pos, pos + len(piece), piece_hit))
            pos += len(piece) + 1
    return out


def _cjk_spans(
    raw: str, start: int, stems: set[str] | frozenset[str]
) -> list[tuple[int, int, tuple[str, ...]]]:
    """Spans of the matching parts of a word holding CJK text: the matched bigrams of each CJK run
    (overlapping ones merged, so 强化学习 is one span), and any other part whose tokens match."""
    spans: list[tuple[int, int, tuple[str, ...]]] = []

    def add(a: int, b: int, tokens: tuple[str, ...]) -> None:
        if spans and a <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(b, spans[-1][1]), spans[-1][2] + tokens)
        else:
            spans.append((a, b, tokens))

    pos = 0
    for m in _CJK_RE.finditer(raw):
        if m.start() > pos:
            piece = raw[pos : m.start()]
            hit = tuple(t for t in analyze_word(_prepare(piece.strip("-\u2010\u2011'")))[0] if t in stems)
            if hit:
                add(start + pos, start + m.start(), hit)
        run = m.group(0)
        for i in range(max(1, len(run) - 1)):
            gram = _strip_accents(run[i : i + 2].casefold())
            if gram in stems:
                add(start + m.start() + i, start + m.start() + min(i + 2, len(run)), (gram,))
        pos = m.end()
    if pos < len(raw):
        hit = tuple(t for t in analyze_word(_prepare(raw[pos:].strip("-\u2010\u2011'")))[0] if t in stems)
        if hit:
            add(start + pos, start + len(raw), hit)
    return spans
