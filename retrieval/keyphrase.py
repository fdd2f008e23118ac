"""Keyphrase descriptions for derived titles: the words of an abstract a title would use.

A real title is mostly the abstract's key words: the ones it repeats, the ones in its first
sentence and in its contribution statement ("we propose ..."), the technical ones it capitalises.
:func:`describe` scores every content word of the abstract so, cuts the text into noun-phrase-like
chunks (runs of words between stopwords, verbs and punctuation), and returns the chunk that covers
the best-scoring words (ranked also by where it starts, how evenly its words score and what they
look like: an acronym in parentheses, a hyphen, capitals, initials that spell the name), joined to a
second one of two words or more by the preposition the text puts before it ("... for ...", "... via
..."; a word alone is not joined: "Representation space of learning" reads as nonsense).

Contract (``retrieval.titles._t_description`` calls it when the rules' phrase misses the topic, see
:func:`names_the_topic`; an acronym's long form is always kept)::

    describe(head: str, name: str | None = None) -> str

* ``head``: the abstract's opening as ``derive_title`` prepares it (one line, markup stripped, a
  leading space). Any string is accepted; only the first 1,500 characters count.
* ``name``: the name the title leads with (``SAEBench``), or None. It is a break word (and a
  subject: the word after it is read as a verb), so the description says what the name does not.
* Returns a phrase of 2 to :data:`MAX_WORDS` words, every word taken from ``head`` in its own
  spelling (connectors included), not capitalised, ending on a content word (never on "of", "for",
  "and" ...); or ``""`` when no phrase scores or the text has fewer than 60 words (no word repeats
  enough to tell: the caller's rules decide).

Pure and synchronous; no data file, no corpus statistics: the break and generic words are written
by hand, and the word weights are a handful of numbers fitted (a logistic model of "this word is in
the real title") on the even half of the ICLR 2024 title benchmark and checked on the odd half.

Cost: the compiled pass (retrieval/_keyphrase.c, built by ``pip install``) answers in about two
``str.split`` of the abstract; without it (or for a text with a character it leaves to Python: a CJK
one, İ, Σ ...) the Python pass here costs about 25 of them. Both give the same phrase (tested). Titles
are derived for every paper when a corpus is parsed.
"""

from __future__ import annotations

import math
import re
from collections import Counter

__all__ = [
    "KEYPHRASE_VERSION",
    "MAX_WORDS",
    "coins_a_word_missed",
    "describe",
    "names_the_topic",
    "opens_with_a_name",
    "opens_with_a_term",
    "opens_with_its_subject",
]

#: Changes whenever :func:`describe` or :func:`names_the_topic` can answer differently: it is part of
#: ``retrieval.titles.TITLE_RULES_VERSION``, which bench/titles.py prints with its figures.
KEYPHRASE_VERSION = "keyphrase-2026.15"

#: The longest description returned (real titles have 8 to 12 words; the name takes some of them).
MAX_WORDS = 14
_CHUNK_WORDS = 8  # a chunk longer than this is cut (a run of 9 content words is rarely one phrase)
_HEAD = 1500  # characters looked at
_MIN_WORDS = 60  # in a shorter text no word repeats enough to tell: the caller's rules decide

# Words that end a chunk: English function words, and verbs/adverbs frequent in abstracts.
_BREAK = frozenset(
    """
    i me my myself we our ours ourselves you your yours he him his she her it its itself they them their
    theirs what which who whom whose this that these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for with about against
    between into through during before after above below to from up down in out on off over under again
    further then once here there when where why how all any both each few more most other some such no nor
    not only own same so than too very can will just should now also however yet thus therefore whereas
    although though us one via within without across among upon per towards toward based using used use
    uses i.e e.g etc e.g. i.e. respectively namely called termed named dubbed known
    propose proposes proposed introduce introduces introduced present presents presented show shows shown
    showed achieve achieves achieved outperform outperforms outperformed demonstrate demonstrates
    demonstrated leverage leverages leveraged enable enables enabled allow allows allowed provide provides
    provided improve improves improved require requires required could may might would must remains remain
    exist exists existing often still even make makes made find finds found study studies studied consider
    considers considered develop develops developed address addresses addressed explore explores explored
    investigate investigates investigated apply applies applied yields yield lead leads led suffer suffers
    give gives given take takes taken obtain obtains obtained perform performs performed exhibit exhibits
    offer offers learns become becomes becoming contain contains containing need needs needed lack lacks
    produce produces generate generates excel excels vary varies fail fails struggle struggles tend tends
    rely relies capture captures empower empowers depend depends aims possess possesses
    since unless whether despite instead thereby hence rather due every later earlier together alone
    respect contrast
    significantly substantially effectively efficiently particularly specifically typically generally
    recently notably especially widely largely mainly highly usually commonly well many much new novel
    first paper work approach method methods results experiments extensive various different several
    involving including leveraging utilizing exploiting combining incorporating integrating requiring
    comprising yielding providing considering regarding concerning following
    """.split()
)
# the subjects after which the next word is a verb ("we design ...", "it remains ...")
# (and the modals: "SAE metrics can distinguish ...")
_SUBJECTS = frozenset("we they it i which who can could may might would must should will cannot".split())
_THEN = frozenset("then also further first thus therefore here now still finally additionally".split())
_ADVERB_NOT = frozenset("anomaly family assembly supply reply apply italy rely fly ally only".split())
# the connectors a second phrase may be joined with (the word the text itself puts before it)
_CONNECTORS = frozenset("for of via with in on from under over through".split())
# words that say what kind of thing a paper is or how well it does, not what it is about
_GENERIC = frozenset(
    """
    approach approaches method methods framework frameworks model models algorithm algorithms technique
    techniques strategy strategies scheme system systems module setting settings problem problems task
    tasks way results result performance experiments experiment state-of-the-art sota art prior previous
    works data benchmark benchmarks baseline baselines dataset datasets analysis accuracy effectiveness
    efficiency superior significant improvements improvement challenge challenges issue issues limitation
    limitations important key crucial critical fundamental remarkable impressive promising comprehensive
    simple effective efficient general recent large wide range variety number set ability capability
    capabilities
    """.split()
)
_PUNCT = ".,;:!?()[]{}\"'“”‘’*"
_GLUED = re.compile(r"(?<=[a-z]{3})\.(?=[A-Z][a-z])")
_STATEMENT = re.compile(
    r"\b(?:we|paper|work|study)\s+(?:\w+\s+)?(?:propose|introduce|present|develop|design|devise|build|"
    r"construct|create)s?\b",
    re.I,
)
# weights of the word score (a logistic model: the probability the word is in the real title), of:
# the log of its count, whether it is capitalised mid-sentence, in the statement's words ("we propose
# ..."), generic, of three letters or fewer; where it is first said (its first word's index over the
# text's words), the log of its length, whether it is ever hyphenated ("self-supervised"), ever an
# acronym in parentheses ("(SSL)"), the share of its uses that end a chunk (a head noun: "... policy
# learning"), whether it is first said within the first _EARLY words, and whether it is in the first
# chunk after the statement's verb (its object). Fitted on the even half of the ICLR 2024 title
# benchmark (log-loss on the odd half 0.2889 -> 0.2725 against the model of count, first sentence,
# capital, statement, generic, short alone).
_W_BIAS, _W_LOG_COUNT, _W_CAPITAL, _W_STATEMENT = -3.903, 1.567, 0.950, 0.870
_W_GENERIC, _W_SHORT, _W_AT, _W_LENGTH = -0.531, -0.598, -0.670, 0.738
_W_HYPHEN, _W_PAREN, _W_HEAD, _W_EARLY, _W_OBJECT = 0.757, -1.644, -0.541, 0.621, 0.441
_EARLY = 12
_W_PLAIN = 0.054  # a chunk of words all below this probability is no candidate
_STATEMENT_WORDS = 15  # words after "we propose" that are the statement's
_THRESHOLD = 0.1  # a word adds to a phrase by its probability above this
_LENGTH, _LENGTH_UP_TO = 0.02, 4  # a small prior for phrases of up to 4 words
_TOPIC_TIMES = 3  # a word the text says this often is one it is about
_SECOND_MIN = 0.1  # a second phrase (of two words or more) is joined when it adds at least this much
# Scores are integers in units of 2**-20: a phrase's value is then an exact sum, the same in whatever
# order its words are added (a set's order is not fixed) and in the C path.
_QUANTUM = 1048576.0
_LENGTH_Q = round(_LENGTH * _QUANTUM)
_SECOND_MIN_Q = round(_SECOND_MIN * _QUANTUM)
_SHARE_Q = math.floor(_THRESHOLD * _QUANTUM + 0.5)  # a word's probability less its score, times 2**20
# The phrase is the candidate of the highest rank: its value (above, in units of 1), plus these times
# its words' probabilities summed, their number, the highest and the mean probability, and where it
# starts (its first word's index over the text's words), plus these when it is two chunks joined, has
# a connector before it, or is one word. Fitted (a softmax over each abstract's candidates, of their
# Jaccard with the real title) on the even half of the ICLR 2024 title benchmark, checked on the odd.
# And, for its words (each chunk's first _CHUNK_WORDS, not the connector), these when the last one
# ends in "ing" ("... for policy learning"), one is an acronym in parentheses ("(SSL)"), it starts
# within the statement's words ("we propose ..."), one is hyphenated, their initials spell the
# title's name ("Gradual Optimization Learning Framework" for GOLF: the name's capitals, in order,
# among the initials of the words and of their hyphenated parts, the first on the first), and this
# times how many open with a capital (A-Z). Fitted with the others, on the even half only.
_R_SUM, _R_WORDS, _R_TOP, _R_MEAN = 0.261, -0.0233, -0.480, -0.412
_R_AT, _R_JOINED, _R_BEFORE, _R_ONE = -0.460, -0.282, -0.174, -0.182
_R_ING, _R_PAREN, _R_STATEMENT, _R_HYPHEN = 0.222, 0.433, 0.167, 0.146
_R_CAPITALS, _R_ACRONYM = 0.0718, 0.654


def _key(word: str) -> str:
    """The word's key: lowercased, a plural 's' dropped (not from 'loss', 'bus', 'analysis')."""
    k = word.lower()
    if len(k) > 3 and k[-1] == "s" and k[-2] not in "sui":
        k = k[:-1]
    return k


def _score(
    count: int, capital: bool, statement: bool, generic: bool, length: int, at: float, hyphen: bool,
    paren: bool, head: float, early: bool, obj: bool,
) -> int:
    """The probability that the word is in the real title, less :data:`_THRESHOLD`, in units of
    1/:data:`_QUANTUM` (an integer, so that a phrase's value is the same sum in any order). ``at``:
    where it is first said over the text's words; ``head``: the share of its uses ending a chunk."""
    z = _W_BIAS + _W_LOG_COUNT * math.log(count)
    z = z + (_W_CAPITAL if capital else 0.0)
    z = z + (_W_STATEMENT if statement else 0.0)
    z = z + (_W_GENERIC if generic else 0.0)
    z = z + (_W_SHORT if length <= 3 else 0.0)
    z = z + _W_AT * at
    z = z + _W_LENGTH * math.log(length)
    z = z + (_W_HYPHEN if hyphen else 0.0)
    z = z + (_W_PAREN if paren else 0.0)
    z = z + _W_HEAD * head
    z = z + (_W_EARLY if early else 0.0)
    z = z + (_W_OBJECT if obj else 0.0)
    return math.floor((1.0 / (1.0 + math.exp(-z)) - _THRESHOLD) * _QUANTUM + 0.5)


_PLAIN = math.floor((_W_PLAIN - _THRESHOLD) * _QUANTUM + 0.5)


# A chunk: its words, its keys, the connector just before it in the text (or None), whether that
# connector directly follows the chunk before ("... learning for robust policy ..."), and the index
# of its first word in the text's words.
_Chunk = tuple[list[str], list[str], "str | None", bool, int]


def _chunks(head: str, name: str = "") -> tuple[list[_Chunk], dict[str, int], set[str], int, int]:
    """The text's chunks (runs of content words between break words and punctuation), the score of
    every key, the keys scored above a word said once in none of the places that count, the number
    of words, and the index of the first word after the statement's verb ("we propose", -1 when
    there is none). ``name`` (lowercased) is a break word, and a subject: "MoFit constructs ..."."""
    if "—" in head or "–" in head:
        head = head.replace("—", " — ").replace("–", " – ")
    head = _GLUED.sub(". ", head)  # "performance.To improve": a sentence end without its space
    words = head.split()
    if len(words) < _MIN_WORDS:
        return [], {}, set(), len(words), -1
    chunks: list[_Chunk] = []
    surface: list[str] = []
    keys: list[str] = []
    every: list[str] = []  # every word's key ("" for a break word), in order
    capitals: list[str] = []
    gap: str | None = None  # the connector just read, if the last word was one
    adjacent = ended = linked = False
    before: str | None = None
    at = 0  # the index of the chunk's first word
    starts = True  # a sentence starts here (its capital says nothing)
    breaks, connectors, punct = _BREAK, _CONNECTORS, _PUNCT
    after_subject = after_that = False
    for i, w in enumerate(words):
        core = w.strip(punct)
        lower = core.lower()
        if (
            lower in breaks
            or lower == name
            or not (core[:1].isalnum() or core[:1] == "$" and "$-" in core)  # ($\epsilon$-greedy)
            or "'" in w
            or "’" in w  # a possessive ("voters' preferences") is not one phrase
            or after_subject  # "we design ...": a verb
            or (after_that and lower[-1:] == "s" and lower[-2:-1] not in "sui")  # "that constructs"
            or (lower[-2:] == "ly" and len(lower) > 4 and lower not in _ADVERB_NOT)  # an adverb
        ):
            every.append("")
            if surface:
                chunks.append((surface, keys, before, linked, at))
                surface, keys = [], []
                ended = True
            if lower in connectors:
                gap, adjacent = lower, ended
            else:
                gap, adjacent = None, False
            ended = False
        else:
            if surface and w[0] in "([" and w.rstrip(".,;:")[-1] not in ")]":
                # "Human Feedback (Safe RLHF)": a parenthesis of several words is a chunk of its own
                chunks.append((surface, keys, before, linked, at))
                surface, keys = [], []
                gap, adjacent = None, False
            if not surface:
                before, linked, at = gap, adjacent, i
            if lower[-1] == "s" and len(lower) > 3 and lower[-2] not in "sui":
                lower = lower[:-1]  # plurals count with their singular
            if core[0] != lower[0] or not core[1:].islower():
                if not starts:
                    capitals.append(lower)
                if w[0] in "([" and w.rstrip(".,;:")[-1] in ")]":
                    core = f"({core})"  # an acronym in parentheses keeps them: "interactions (HOI)"
            surface.append(core)
            keys.append(lower)
            every.append(lower)
        # "we design", "we then design", "MoFit constructs": a verb comes next
        after_subject = lower in _SUBJECTS or lower == name or (after_subject and lower in _THEN)
        after_that = lower == "that"
        last = w[-1]
        starts = last in ".!?"
        if starts or last in ",;:)]":
            if surface:
                chunks.append((surface, keys, before, linked, at))
                surface, keys = [], []
            gap, adjacent, ended = None, False, False
    if surface:
        chunks.append((surface, keys, before, linked, at))
    counts = Counter(every)
    m = _STATEMENT.search(head)
    if m:
        start = len(head[: m.end()].split())
        statements = set(every[start : start + _STATEMENT_WORDS])
    else:
        start = -1
        statements = set()
    caps = set(capitals)
    first_at: dict[str, int] = {}
    for i, k in enumerate(every):
        if k and k not in first_at:
            first_at[k] = i
    hyphens: set[str] = set()
    parens: set[str] = set()
    ends: Counter[str] = Counter()
    objects: list[str] | None = None
    for surface, keys, _, _, at in chunks:
        for w, k in zip(surface, keys, strict=True):
            if "-" in w:
                hyphens.add(k)
            if w[0] == "(":
                parens.add(k)
        ends[keys[-1]] += 1
        if objects is None and 0 <= start <= at:
            objects = keys
    obj = set(objects or ())
    n = len(words)
    scores: dict[str, int] = {}
    scored = set()
    for k, c in counts.items():
        if not k:
            continue
        score = scores[k] = _score(
            c, k in caps, k in statements, k in _GENERIC, len(k), first_at[k] / n, k in hyphens,
            k in parens, ends[k] / c, first_at[k] < _EARLY, k in obj,
        )
        if score > _PLAIN:
            scored.add(k)
    return chunks, scores, scored, len(words), start


def describe(head: str, name: str | None = None) -> str:
    """The description words of a title for this abstract (see the module's contract)."""
    c = _c if _c is not _UNSET else _c_pass()
    if c is not None and type(head) is str:
        phrase = c.describe(head, name)
        if phrase is not None:  # None: a character the C path leaves to this one
            return _without_leading_verb(phrase, head)
    return _without_leading_verb(_describe(head, name), head)


# verbs the text puts after "to" ("to learn transferable representations"), not nouns too ("model",
# "design", "scale"): a title does not open with one
_TO_VERBS = frozenset(
    """
    learn solve extract compose complete harness conduct replace exploit identify mitigate reduce enhance
    capture generate detect predict estimate infer build evaluate understand quantify construct address
    tackle overcome align adapt discover recover reconstruct generalize accelerate improve achieve
    provide enable facilitate perform obtain assess analyze encode decode find explore leverage
    """.split()
)


def _without_leading_verb(phrase: str, head: str) -> str:
    """``phrase`` less a first word that is a verb after "to" in the text ("learn transferable
    representations for RGB-D segmentation" -> "transferable representations for ..."), when at
    least two words are left and the next one is not a break word."""
    first, _, rest = phrase.partition(" ")
    lower = first.lower()
    if (
        lower in _TO_VERBS
        and rest.count(" ") >= 1
        and rest.split(" ", 1)[0].lower() not in _BREAK
        and f" to {lower} " in head.lower()
    ):
        return rest
    return phrase


def _spells(letters: list[str], words: list[str]) -> bool:
    """Whether the initials of ``words`` (of each hyphenated part: "Self-supervised representation
    learning" -> s, s, r, l; an ASCII letter; a word in parentheses has none) hold ``letters`` in
    order, the first initial being the first letter ("SSRL")."""
    parts = [p for w in words if w[0] != "(" for p in w.split("-")]
    initials = [p[0].lower() for p in parts if p[:1].isascii() and p[:1].isalpha()]
    if not initials or initials[0] != letters[0]:
        return False
    rest = iter(initials)
    return all(c in rest for c in letters)


def _describe(head: str, name: str | None = None) -> str:
    """:func:`describe` in Python: the definition, and the path for any text the C one declines."""
    chunks, scores, scored, n_words, stated = _chunks(head[:_HEAD], name.lower() if name else "")
    skip = _key(name) if name else None
    get = scores.__getitem__
    letters = [c.lower() for c in name if "A" <= c <= "Z"] if name else []

    def value(keys: set[str]) -> int:  # the words' scores, and a small prior for a few words
        return sum(map(get, keys)) + _LENGTH_Q * min(len(keys), _LENGTH_UP_TO)

    def rank(
        v: int, keys: set[str], at: int, joined: bool, before: str | None, one: bool, words: list[str]
    ) -> float:
        # the value and the candidate's shape: where it starts, how its words' probabilities spread,
        # what its words look like
        n = len(keys)
        total = (sum(map(get, keys)) + n * _SHARE_Q) / _QUANTUM
        top = (max(map(get, keys)) + _SHARE_Q) / _QUANTUM if n else 0.0
        mean = total / n if n else 0.0
        r = v / _QUANTUM + _R_SUM * total
        r = r + _R_WORDS * n
        r = r + _R_TOP * top
        r = r + _R_MEAN * mean
        r = r + _R_AT * (at / n_words)
        if joined:
            r = r + _R_JOINED
        if before is not None:
            r = r + _R_BEFORE
        if one:
            r = r + _R_ONE
        if words[-1].endswith("ing"):
            r = r + _R_ING
        if any(w[0] == "(" for w in words):
            r = r + _R_PAREN
        if 0 <= stated <= at < stated + _STATEMENT_WORDS:
            r = r + _R_STATEMENT
        if any("-" in w for w in words):
            r = r + _R_HYPHEN
        r = r + _R_CAPITALS * sum("A" <= w[0] <= "Z" for w in words)
        if len(letters) >= 2 and _spells(letters, words):
            r = r + _R_ACRONYM
        return r

    # candidates: a chunk, or a chunk, its connector and the next chunk, as the text has them
    cands: list[tuple[int, list[str], set[str], str | None, float]] = []
    previous: tuple[list[str], set[str], str | None, int] | None = None
    for surface, keys, before, linked, at in chunks:
        distinct = set(keys[:_CHUNK_WORDS])
        if distinct.isdisjoint(scored):  # only words said once elsewhere: it cannot add anything
            previous = None
            continue
        words = surface[:_CHUNK_WORDS]
        distinct.discard(skip)  # type: ignore[arg-type]
        v = value(distinct)
        rk = rank(v, distinct, at, False, before, len(words) == 1, words)
        cands.append((v, words, distinct, before, rk))
        if linked and previous is not None:
            joined = previous[1] | distinct
            v = value(joined)
            rk = rank(v, joined, previous[3], True, previous[2], False, [*previous[0], *words])
            cands.append((v, [*previous[0], before, *words], joined, previous[2], rk))
        previous = (words, distinct, before, at)
    if not cands:
        return ""
    best = max(cands, key=lambda c: c[4])
    if best[0] <= 0:
        return ""
    phrase = list(best[1])
    used = best[2]
    second = None
    for cand in cands:
        # (not a word alone: joined by the connector it had in the text it reads as nonsense, "Deep
        # neural network (DNN) of interactions", "Representation space of learning")
        if (
            cand[3] is not None
            and len(cand[1]) > 1
            and cand[0] > _SECOND_MIN_Q
            and (second is None or cand[0] > second[0])
        ):
            if used.isdisjoint(cand[2]):
                second = cand
    if second is not None and len(phrase) + 1 + len(second[1]) <= MAX_WORDS:
        phrase += [second[3], *second[1]]
    phrase = phrase[:MAX_WORDS]
    while phrase and (
        phrase[-1].lower() in _BREAK
        # a participle after a plural noun takes an object that is not there ("mechanisms selecting")
        or (
            len(phrase) > 2
            and phrase[-1].endswith(("ing", "ed"))
            and phrase[-2].endswith("s")
            and not phrase[-2].endswith("series")  # "time series forecasting": not a plural
        )
    ):
        phrase.pop()
    return " ".join(phrase) if len(phrase) >= 2 else ""


# a coined word: a capital or a digit after its first letter (HyperAttention, SWE-bench, Magic123, GPT-4)
_COINED = re.compile(r"\b(?:[A-Za-z]+[A-Z0-9][\w-]*|[\w-]*\d[\w-]*[A-Za-z][\w-]*)")
# a character that may be part of a coined word's mark: anything but a lowercase ASCII letter, a space
# or plain punctuation. _COINED needs a letter then [A-Z0-9], or a digit (\d): a phrase with none of
# these after its first character (nor a digit first) holds no coined word. The search for one costs
# a tenth of _COINED's, which is tried only then.
_MAY_COIN = re.compile(r"[^a-z ,.;:()'\"-]")


def _may_coin(phrase: str) -> bool:
    """False when ``phrase`` holds no coined word for sure (see :data:`_MAY_COIN`)."""
    return _MAY_COIN.search(phrase, 1) is not None or phrase[:1].isdecimal()


_TERM_STRIP = ".,;:()\"'`"
# coined words any paper of a field uses, not a paper's own: an acronym of up to four capitals or its
# plural (SGD, RLHF, LLMs, GNNs), a compound of one (LLM-based, NeRF-based, MLP-like), a model or data
# set and its number (GPT-4, CIFAR-10, LLaMA-2), a quantity (60k, 2-layer)
_ANY_PAPERS = re.compile(
    r"[A-Z]{2,4}s?|\w+-(?:based|driven|like|level|modeled|style|guided|specific|free|aware)"
    r"|[A-Za-z]+-\d+(?:\.\d+)?|\d+[a-z-]*\w*"
)


def opens_with_a_term(phrase: str, head: str, times: int = _TOPIC_TIMES) -> bool:
    """Whether ``phrase`` opens with two words the text says together ``times`` times ("Beam
    Enumeration to exhaustively enumerate ...", "shadow cones framework, ..."): the rules' phrase
    then starts with the paper's own term, which a title keeps."""
    first = [w.strip(_TERM_STRIP).lower() for w in phrase.split()[:2]]
    if len(first) < 2 or len(first[0]) < 2 or len(first[1]) < 2:
        return False
    return head.lower().count(" ".join(first)) >= times


# the abstract's opening subject and its acronym: "Sparse autoencoders (SAEs) are ..."
_OPENING = re.compile(r"\s*((?:[\w-]+ ){0,5}[\w-]+) \(([A-Z][\w-]*[A-Z][\w-]*)\)")
# a phrase that opens with a term and its appositive: "motion guidance, a zero-shot technique ..."
_APPOSITIVE = re.compile(r"((?:[^\s,]+ ){0,3}[^\s,]+), an? \w")


def opens_with_its_subject(phrase: str, head: str, times: int = _TOPIC_TIMES) -> bool:
    """Whether the text opens with a term and its acronym ("Sparse autoencoders (SAEs) are ..."),
    the acronym is said ``times`` times or more, and ``phrase`` starts with that term: the rules'
    phrase then is about what the whole abstract is about, which a title keeps."""
    m = _OPENING.match(head)
    if m is None or not phrase[: len(m.group(1))].lower() == m.group(1).lower():
        return False
    acronym = m.group(2)
    return head.count(acronym[:-1] if acronym[-1] == "s" else acronym) >= times


def opens_with_a_name(phrase: str, name: str | None) -> str | None:
    """The term ``phrase`` opens with, before its appositive ("∞-Diff" of "∞-Diff, a generative
    diffusion model ...", "motion guidance" of "motion guidance, a zero-shot technique"), when the
    rules found no name: the paper's own term, which a title keeps; else None."""
    if name is not None:
        return None
    m = _APPOSITIVE.match(phrase)
    if m is None or m.group(1).split()[0].lower() in _BREAK:  # "a tool, a model and ..."
        return None
    return m.group(1).strip(_QUOTES) or None  # "``Bespoke solvers''" -> "Bespoke solvers"


_QUOTES = "`'\"“”‘’"


def coins_a_word_missed(phrase: str, key: str, name: str | None = None) -> bool:
    """Whether ``phrase`` holds a coined word of three characters or more (see :data:`_COINED`)
    that the key phrase ``key`` lacks and that is not the title's ``name``: the rules' phrase names
    something (SWE-bench, HyperAttention, Magic123) the key words do not. A word any paper of the
    field uses (:data:`_ANY_PAPERS`: LLMs, GPT-4, NeRF-based, SGD) does not count."""
    if not _may_coin(phrase):
        return False
    lower = key.casefold()
    own = name.casefold() if name else None
    short = phrase.count(" ") < 4
    for m in _COINED.finditer(phrase):
        word = m.group(0)
        if _ANY_PAPERS.fullmatch(word) and (not word.isupper() or own is not None and not short):
            # a field's word; but an acronym may be the paper's own when the rules found no name
            # ("`VDP' framework") or when it is in a short phrase ("Caption-free MIA framework")
            continue
        word = word.casefold()
        if len(word) > 2 and word not in lower and word != own:
            return True
    return False


def names_the_topic(phrase: str, head: str, times: int = _TOPIC_TIMES) -> bool:
    """Whether a word of ``phrase`` is one ``head`` repeats: some content word of four letters or
    more (its stem: the word less a plural 's' and its last two letters, at least four letters) is
    found ``times`` times in the lowercased text. A cheap test (a few ``str.count``), so that the
    caller asks :func:`describe` only when its own phrase misses what the abstract is about."""
    lower = head.lower()
    for word in phrase.lower().split():
        word = word.strip(_PUNCT)
        if len(word) > 3 and word not in _BREAK and word not in _GENERIC:
            # (retrieval.titles.stem_count's count, inline: this module imports nothing of retrieval's,
            # so that text's lazy look-up of it never meets a half-imported module)
            stem = word[:-1] if word[-1] == "s" else word
            if lower.count(stem[: max(4, len(stem) - 2)]) >= times:
                return True
    return False


def _compiled():  # noqa: ANN202
    """retrieval._keyphrase configured with this module's words and numbers, or None and why not."""
    try:
        from retrieval import _keyphrase  # type: ignore[attr-defined]
    except ImportError as exc:
        return None, f"the C keyphrase pass is not built ({exc}); run pip install -e ."
    built = (getattr(_keyphrase, name, None) for name in ("VERSION", "HEAD", "BELOW"))
    if tuple(built) != (_C_VERSION, _HEAD, _C_BELOW):
        return None, "the C keyphrase pass is stale (built from an older _keyphrase.c); run pip install -e ."
    # characters the C pass leaves to this one: a lowercase of several characters (İ) or an ASCII one
    # (K, the Kelvin sign), the letters a case-insensitive regex matches with an ASCII one (ı, ſ), and
    # Σ, whose lowercase depends on the next character
    exclude = [c for c in range(128, _C_BELOW) if len(chr(c).lower()) != 1 or chr(c).lower() < "\x80"]
    exclude += [0x131, 0x17F, 0x3A3]
    _keyphrase.configure(
        exclude,
        _BREAK,
        _SUBJECTS,
        _THEN,
        _ADVERB_NOT,
        _CONNECTORS,
        _GENERIC,
        (_MIN_WORDS, _CHUNK_WORDS, MAX_WORDS, _STATEMENT_WORDS, _LENGTH_UP_TO),
        (_W_BIAS, _W_LOG_COUNT, _W_CAPITAL, _W_STATEMENT, _W_GENERIC, _W_SHORT, _W_AT, _W_LENGTH),
        (_W_HYPHEN, _W_PAREN, _W_HEAD, _W_EARLY, _W_OBJECT, _EARLY),
        (_THRESHOLD, _QUANTUM, _W_PLAIN),
        (_LENGTH_Q, _SECOND_MIN_Q),
        (_R_SUM, _R_WORDS, _R_TOP, _R_MEAN, _R_AT, _R_JOINED, _R_BEFORE, _R_ONE),
        (_R_ING, _R_PAREN, _R_STATEMENT, _R_HYPHEN, _R_CAPITALS, _R_ACRONYM),
    )
    return _keyphrase, None


def _c_pass():  # noqa: ANN202
    """The C pass, configured on first use (None without it: :data:`C_UNAVAILABLE` says why)."""
    global _c, C_UNAVAILABLE
    if _c is _UNSET:
        _c, C_UNAVAILABLE = _compiled()
    return _c


# The C pass (retrieval/_keyphrase.c, built by pip install; optional): the same describe() ~15x
# faster, for texts of characters below U+3000 (others: this module's path). It mirrors _PUNCT,
# _GLUED, _STATEMENT and the word loop of _chunks; tests compare the two paths on the same texts.
_C_VERSION = 7
_C_BELOW = 0x3000
_UNSET = object()
_c: object = _UNSET
C_UNAVAILABLE: str | None = None
